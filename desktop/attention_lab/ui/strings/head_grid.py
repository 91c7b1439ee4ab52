"""The texts of the attention heads panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/head_grid.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "head_grid.title": {"en": "Attention heads", "pt_BR": "Cabeças de atenção"},
        "head_grid.explain": {
            "en": "<b>Multi-head: divide, don't multiply.</b> Layer {layer} splits its {d} dimensions into {heads} "
            "heads of {dk}; each head makes its own map. Row = <b>query</b> (destination: the token that "
            "looks), column = <b>key</b> (source: the token looked at); every row sums to 1. Under the causal"
            " mask the future (hatched) gets −∞ before the softmax: weight exactly 0. Click a head to enlarge"
            " it.",
            "pt_BR": "<b>Multi-head: dividir, não multiplicar.</b> A camada {layer} divide as suas {d} dimensões em "
            "{heads} cabeças de {dk}; cada cabeça faz o seu próprio mapa. Linha = <b>consulta</b> (destino: o"
            " token que olha), coluna = <b>chave</b> (origem: o token olhado); cada linha soma 1. Com a "
            "máscara causal o futuro (hachurado) recebe −∞ antes do softmax: peso exatamente 0. Clique numa "
            "cabeça para ampliá-la.",
        },
        "head_grid.layer": {"en": "Layer", "pt_BR": "Camada"},
        "head_grid.of_layers": {"en": "of 0–{last}", "pt_BR": "de 0–{last}"},
        "head_grid.causal": {"en": "Causal (GPT-2, with mask)", "pt_BR": "Causal (GPT-2, com máscara)"},
        "head_grid.designed": {"en": "With the mask {spec}", "pt_BR": "Com a máscara {spec}"},
        "head_grid.bidirectional": {"en": "Bidirectional (no mask)", "pt_BR": "Bidirecional (sem máscara)"},
        "head_grid.tab.grid": {"en": "Heads of layer {layer}", "pt_BR": "Cabeças da camada {layer}"},
        "head_grid.tab.head": {"en": "One head", "pt_BR": "Uma cabeça"},
        "head_grid.tab.overview": {"en": "All layers × heads", "pt_BR": "Todas as camadas × cabeças"},
        "head_grid.head": {"en": "head {head}", "pt_BR": "cabeça {head}"},
        "head_grid.head_label": {"en": "Head", "pt_BR": "Cabeça"},
        "head_grid.view": {"en": "Show", "pt_BR": "Mostrar"},
        "head_grid.view.mode": {"en": "the mode above", "pt_BR": "o modo acima"},
        "head_grid.view.side": {
            "en": "side by side: causal | bidirectional",
            "pt_BR": "lado a lado: causal | bidirecional",
        },
        "head_grid.back": {"en": "Back to the grid", "pt_BR": "Voltar à grade"},
        "head_grid.query_axis": {"en": "query (destination) ↓", "pt_BR": "consulta (destino) ↓"},
        "head_grid.key_axis": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "head_grid.weight": {"en": "weight", "pt_BR": "peso"},
        "head_grid.pooled": {
            "en": "each pixel: the largest weight of {pool} × {pool} cells (open one head for every cell)",
            "pt_BR": "cada pixel: o maior peso de {pool} × {pool} células (abra uma cabeça para ver todas)",
        },
        "head_grid.hover": {
            "en": "{head}: “{q}” (query {qi}) → “{k}” (key {ki}): {w}",
            "pt_BR": "{head}: “{q}” (consulta {qi}) → “{k}” (chave {ki}): {w}",
        },
        "head_grid.masked": {"en": "0 (masked: the future)", "pt_BR": "0 (mascarado: o futuro)"},
        "head_grid.exact_zero": {"en": "0 (exact)", "pt_BR": "0 (exato)"},
        "head_grid.hover_hint": {
            "en": "Hover a cell to read “query → key: weight”.",
            "pt_BR": "Passe o mouse numa célula para ler “consulta → chave: peso”.",
        },
        "head_grid.mode.causal": {"en": "causal", "pt_BR": "causal"},
        "head_grid.mode.bidirectional": {"en": "bidirectional", "pt_BR": "bidirecional"},
        "head_grid.metric": {"en": "Colour by", "pt_BR": "Colorir por"},
        "head_grid.metric.mean_distance": {"en": "mean distance", "pt_BR": "distância média"},
        "head_grid.metric.entropy": {"en": "entropy", "pt_BR": "entropia"},
        "head_grid.metric.sink_mass": {"en": "sink mass (weight on token 0)", "pt_BR": "massa na vala (peso no token 0)"},
        "head_grid.metric.previous_token": {"en": "previous-token score", "pt_BR": "score de token anterior"},
        "head_grid.metric.current_token": {"en": "current-token score", "pt_BR": "score de token atual"},
        "head_grid.overview_explain": {
            "en": "Every head of every layer (causal), coloured by a head metric. Positional heads put most of "
            "their weight on one token back; sink heads park most of theirs on token 0 (low entropy, high "
            "sink mass). Click a head to open it.",
            "pt_BR": "Todas as cabeças de todas as camadas (causal), coloridas por uma métrica. Cabeças posicionais "
            "põem a maior parte do peso num só token para trás; cabeças de vala estacionam a maior parte do "
            "seu no token 0 (entropia baixa, massa na vala alta). Clique numa cabeça para abri-la.",
        },
        "head_grid.overview_hover": {
            "en": "layer {layer} · head {head}: {metric} = {value} (role: {role})",
            "pt_BR": "camada {layer} · cabeça {head}: {metric} = {value} (papel: {role})",
        },
        "head_grid.layer_axis": {"en": "layer", "pt_BR": "camada"},
        "head_grid.head_axis": {"en": "head", "pt_BR": "cabeça"},
    }
)
