"""The texts of the head grid's fixed-budget view, English and Brazilian Portuguese (Portuguese terms
as in the chapter's Portuguese edition).  Imported by ``ui/panels/budget_view.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "budget.view": {"en": "fixed budget: one query, every head", "pt_BR": "orçamento fixo: uma consulta, todas as cabeças"},
        "budget.query": {"en": "Query token", "pt_BR": "Token de consulta"},
        "budget.query.item": {"en": "{i}: “{token}”", "pt_BR": "{i}: “{token}”"},
        "budget.average": {"en": "average", "pt_BR": "média"},
        "budget.head": {"en": "H{head}", "pt_BR": "H{head}"},
        "budget.title": {
            "en": "row of “{token}” (query {query}), layer {layer}",
            "pt_BR": "linha de “{token}” (consulta {query}), camada {layer}",
        },
        "budget.key_axis": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "budget.explain": {
            "en": "<b>A fixed budget.</b> Every row sums to 1, so one head must <i>choose</i>. The {heads} heads of "
            "layer {layer} spend the budget of “{token}” on {chosen} different tokens, up to {top} (H{top_head} on "
            "“{top_token}”). Top row: their average, the blurred row one head would settle for — at most {avg_top} "
            "(on “{avg_token}”), entropy {avg_entropy} nats against {head_entropy} per head. Many heads attend to "
            "several things at once.",
            "pt_BR": "<b>Um orçamento fixo.</b> Cada linha soma 1, então uma cabeça precisa <i>escolher</i>. As "
            "{heads} cabeças da camada {layer} gastam o orçamento de “{token}” em {chosen} tokens diferentes, até "
            "{top} (H{top_head} em “{top_token}”). Primeira linha: a média delas, a linha borrada com que uma só cabeça "
            "se contentaria — no máximo {avg_top} (em “{avg_token}”), entropia {avg_entropy} nats contra "
            "{head_entropy} por cabeça. Muitas cabeças atendem a várias coisas ao mesmo tempo.",
        },
        "budget.first": {
            "en": "<b>A fixed budget.</b> Query 0 can only look at itself: its whole budget (1) goes to token 0 in "
            "every head. Pick a later token.",
            "pt_BR": "<b>Um orçamento fixo.</b> A consulta 0 só pode olhar para si mesma: todo o seu orçamento (1) "
            "vai para o token 0 em todas as cabeças. Escolha um token posterior.",
        },
    }
)
