"""The texts of the leakage panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/leakage.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "leakage.title": {"en": "Leakage diff", "pt_BR": "Vazamento"},
        "leakage.explain": {
            "en": "<b>Proving causality instead of asserting it.</b> Change one token late in the sentence and "
            "measure how much each position's representation moved. With the causal mask, positions before "
            "the edit change by <b>exactly 0</b>.<!--more--> The change is ‖h′ − h‖ / ‖h‖. The future can't reach the past, so training "
            "on all positions at once doesn't leak the labels. Without the mask (bidirectional) the edit leaks "
            "everywhere.",
            "pt_BR": "<b>Demonstrar a causalidade em vez de afirmá-la.</b> Troque um token no fim da frase e meça "
            "quanto a representação de cada posição mudou. Com a máscara causal, as posições antes da edição "
            "mudam <b>exatamente 0</b>.<!--more--> A mudança é ‖h′ − h‖ / ‖h‖. O futuro não alcança o passado, então treinar todas as "
            "posições de uma vez não vaza os rótulos. Sem a máscara (bidirecional) a edição vaza para todo lado.",
        },
        "leakage.position": {"en": "Edited position", "pt_BR": "Posição editada"},
        "leakage.replace": {"en": "“{token}” →", "pt_BR": "“{token}” →"},
        "leakage.replacement_tip": {
            "en": "Pick one of the model's guesses, or type a word and press Enter.",
            "pt_BR": "Escolha um dos palpites do modelo, ou digite uma palavra e tecle Enter.",
        },
        "leakage.at": {"en": "Measured at", "pt_BR": "Medido em"},
        "leakage.at.final": {"en": "final state (after ln_f)", "pt_BR": "estado final (após ln_f)"},
        "leakage.at.embeddings": {"en": "embeddings", "pt_BR": "embeddings"},
        "leakage.at.layer": {"en": "after layer {layer}", "pt_BR": "após a camada {layer}"},
        "leakage.causal": {"en": "causal (GPT-2)", "pt_BR": "causal (GPT-2)"},
        "leakage.bidirectional": {"en": "bidirectional (no mask)", "pt_BR": "bidirecional (sem máscara)"},
        "leakage.exact_zero": {"en": "0 (exact)", "pt_BR": "0 (exato)"},
        "leakage.edited": {"en": "edited", "pt_BR": "editado"},
        "leakage.y": {"en": "relative change", "pt_BR": "mudança relativa"},
        "leakage.x": {"en": "position", "pt_BR": "posição"},
        "leakage.summary.causal_zero": {
            "en": "<b>Causal:</b> the {k} positions before #{pos} changed by <b>exactly 0</b>.",
            "pt_BR": "<b>Causal:</b> as {k} posições antes de #{pos} mudaram <b>exatamente 0</b>.",
        },
        "leakage.summary.causal_leak": {
            "en": "<b>Causal:</b> positions before #{pos} changed by up to {max}: this mask mode leaks!",
            "pt_BR": "<b>Causal:</b> posições antes de #{pos} mudaram até {max}: este modo de máscara vaza!",
        },
        "leakage.summary.designed": {
            "en": "(“Causal” here is the mask designer's mask {spec}.)",
            "pt_BR": "(“Causal” aqui é a máscara {spec} desenhada no painel de máscaras.)",
        },
        "leakage.summary.bidirectional": {
            "en": "<b>Bidirectional:</b> they changed by up to {max} (mean {mean}).",
            "pt_BR": "<b>Bidirecional:</b> elas mudaram até {max} (média {mean}).",
        },
        "leakage.summary.first": {
            "en": "Nothing comes before position 0: pick a later token to see leakage.",
            "pt_BR": "Nada vem antes da posição 0: escolha um token posterior para ver o vazamento.",
        },
        "leakage.summary.edit": {
            "en": "Replacing #{pos} “{old}” by “{new}”.",
            "pt_BR": "Trocando #{pos} “{old}” por “{new}”.",
        },
        "leakage.layers_title": {
            "en": "Layer by layer (rows: embeddings, then after each layer; hatched = exactly 0)",
            "pt_BR": "Camada a camada (linhas: embeddings, depois após cada camada; hachurado = exatamente 0)",
        },
        "leakage.layer_axis": {"en": "layer", "pt_BR": "camada"},
        "leakage.hover_bar": {
            "en": "#{pos} “{token}”: causal {causal} · bidirectional {bidirectional}",
            "pt_BR": "#{pos} “{token}”: causal {causal} · bidirecional {bidirectional}",
        },
        "leakage.hover_cell": {
            "en": "{mode}, {layer}, #{pos} “{token}”: {value}",
            "pt_BR": "{mode}, {layer}, #{pos} “{token}”: {value}",
        },
        "leakage.emb_short": {"en": "emb", "pt_BR": "emb"},
    }
)
