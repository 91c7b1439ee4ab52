"""The texts of the head grid's fixed-budget view, English and Brazilian Portuguese (Portuguese terms
as in the chapter's Portuguese edition).  Imported by ``ui/panels/budget_view.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "budget.view": {"en": "fixed budget: one query, every head", "pt_BR": "orçamento fixo: uma consulta, todas as cabeças"},
        "budget.query": {"en": "Query token", "pt_BR": "Token de consulta"},
        "budget.query.item": {"en": "{i}: “{token}”", "pt_BR": "{i}: “{token}”"},
        "budget.average": {"en": "average", "pt_BR": "média"},
        "budget.head": {
            "en": "head {head}",
            "pt_BR": "cabeça {head}",
        },
        "budget.title": {
            "en": "row of “{token}” (query {query}), layer {layer}",
            "pt_BR": "linha de “{token}” (consulta {query}), camada {layer}",
        },
        "budget.key_axis": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "budget.explain": {
            "en": "<b>A fixed budget.</b> Every row sums to 1, so one head must <i>choose</i>. The {heads} heads of"
            " layer {layer} spend the budget of “{token}” on {chosen} different tokens. Top row: their "
            "average, the blurred row one head would settle for.<!--more--> One head puts up to {top} on one "
            "token (head {top_head} on “{top_token}”); the average puts at most {avg_top} anywhere (on "
            "“{avg_token}”). Its entropy, {avg_entropy} against {head_entropy} for a head on average, says "
            "how spread it is: 0 means all on one token. Many heads attend to several things at once.",
            "pt_BR": "<b>Um orçamento fixo.</b> Cada linha soma 1, então uma cabeça precisa <i>escolher</i>. As "
            "{heads} cabeças da camada {layer} gastam o orçamento de “{token}” em {chosen} tokens diferentes."
            " Primeira linha: a média delas, a linha borrada com que uma só cabeça se contentaria.<!--more-->"
            " Uma cabeça põe até {top} num só token (cabeça {top_head} em “{top_token}”); a média põe no "
            "máximo {avg_top} em qualquer lugar (em “{avg_token}”). A entropia dela, {avg_entropy} contra "
            "{head_entropy} de uma cabeça em média, diz o quanto ela se espalha: 0 quer dizer tudo num só "
            "token. Muitas cabeças atendem a várias coisas ao mesmo tempo.",
        },
        "budget.first": {
            "en": "<b>A fixed budget.</b> Query 0 can only look at itself: its whole budget (1) goes to token 0 in "
            "every head. Pick a later token.",
            "pt_BR": "<b>Um orçamento fixo.</b> A consulta 0 só pode olhar para si mesma: todo o seu orçamento (1) "
            "vai para o token 0 em todas as cabeças. Escolha um token posterior.",
        },
    }
)
