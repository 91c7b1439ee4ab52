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
            "en": "Where “{token}” (query {query}) spends its budget in each head of layer {layer}",
            "pt_BR": "Onde “{token}” (consulta {query}) gasta o seu orçamento em cada cabeça da camada {layer}",
        },
        "budget.key_axis": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "budget.explain": {
            "en": "<b>A fixed budget is why there are many heads.</b> Every row of attention sums to 1, so one "
            "head must <i>choose</i> where its weight goes. Here the row of “{token}” in each of the {heads} heads "
            "of layer {layer}: their largest weights land on {chosen} different tokens, at up to {top} "
            "(H{top_head} on “{top_token}”). The bottom row is their average — the single blurred row one head "
            "would have to settle for: its largest weight is {avg_top} (on “{avg_token}”), its entropy {avg_entropy} "
            "nats against {head_entropy} for a head on average. Many heads attend to several things at once.",
            "pt_BR": "<b>Um orçamento fixo é o motivo de haver muitas cabeças.</b> Cada linha de atenção soma 1, "
            "então uma cabeça precisa <i>escolher</i> para onde vai o seu peso. Aqui a linha de “{token}” em cada "
            "uma das {heads} cabeças da camada {layer}: os seus maiores pesos caem em {chosen} tokens diferentes, "
            "até {top} (H{top_head} em “{top_token}”). A última linha é a média delas — a única linha borrada com "
            "que uma só cabeça teria de se contentar: o seu maior peso é {avg_top} (em “{avg_token}”), a sua "
            "entropia {avg_entropy} nats contra {head_entropy} de uma cabeça em média. Muitas cabeças atendem a "
            "várias coisas ao mesmo tempo.",
        },
        "budget.first": {
            "en": "<b>A fixed budget.</b> Query 0 can only look at itself: its whole budget (1) goes to token 0 in "
            "every head. Pick a later token.",
            "pt_BR": "<b>Um orçamento fixo.</b> A consulta 0 só pode olhar para si mesma: todo o seu orçamento (1) "
            "vai para o token 0 em todas as cabeças. Escolha um token posterior.",
        },
    }
)
