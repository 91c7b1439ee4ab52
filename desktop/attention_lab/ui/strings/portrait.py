"""The texts of the head-portrait panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/portrait.py`` for its registrations."""

from attention_lab.core.roles import ROLE_TEXTS
from attention_lab.ui.i18n import register

register(ROLE_TEXTS)  # the roles' names and "where" words, shared with the lab (core.roles)

register(
    {
        "portrait.title": {"en": "Head portrait", "pt_BR": "Retrato das cabeças"},
        "portrait.explain": {
            "en": "<b>Step 4: portrait of the {heads} heads of layer {layer}.</b> Nobody assigns roles: they emerge "
            "from training. Each row: how far back a head looks, how spread its weight is (entropy), and its roles. "
            "Click a head to open it in the head grid.<!--more--> The chapter's <i>positional</i> heads look back a "
            "fixed distance: most of their weight goes to one offset, such as the previous token (the chapter's "
            "distance ≈ 1). A mean distance of 1 alone does not say that: a head split between itself and two "
            "tokens back averages 1 too. <i>Sink</i> heads park most of their weight on token 0.",
            "pt_BR": "<b>Passo 4: retrato das {heads} cabeças da camada {layer}.</b> Ninguém atribui papéis: eles "
            "emergem do treino. Cada linha: a que distância para trás a cabeça olha, o quanto o peso se espalha "
            "(entropia) e os papéis dela. Clique numa cabeça para abri-la na grade de cabeças.<!--more--> As cabeças "
            "<i>posicionais</i> da apostila olham uma distância fixa para trás: a maior parte do peso vai para uma "
            "só posição relativa, como o token anterior (a distância ≈ 1 da apostila). Distância média 1 sozinha não "
            "diz isso: uma cabeça dividida entre si mesma e o token de duas posições atrás também dá média 1. As "
            "cabeças de <i>vala</i> estacionam a maior parte do peso no token 0.",
        },
        "portrait.knockout_hint": {
            "en": "Shift+click a head (or right-click its row) to knock it out, as in the head grid; ✕ marks it.",
            "pt_BR": "Shift+clique numa cabeça (ou clique com o botão direito na linha dela) para desligá-la, como na "
            "grade de cabeças; ✕ a marca.",
        },
        "portrait.knock_out": {
            "en": "Knock out layer {layer}, head {head}",
            "pt_BR": "Desligar camada {layer}, cabeça {head}",
        },
        "portrait.put_back": {
            "en": "Put layer {layer}, head {head} back",
            "pt_BR": "Religar camada {layer}, cabeça {head}",
        },
        "portrait.empty": {
            "en": "<b>Step 4: head portrait.</b> Analyse a text to see what each head does.",
            "pt_BR": "<b>Passo 4: retrato das cabeças.</b> Analise um texto para ver o que cada cabeça faz.",
        },
        "portrait.too_short": {
            "en": "<b>Step 4: head portrait.</b> A portrait needs at least 2 tokens: with one, every head can only "
            "look at itself.",
            "pt_BR": "<b>Passo 4: retrato das cabeças.</b> Um retrato precisa de pelo menos 2 tokens: com um só, "
            "toda cabeça só pode olhar para si mesma.",
        },
        "portrait.col.head": {"en": "Head", "pt_BR": "Cabeça"},
        "portrait.col.mean_distance": {"en": "Mean distance", "pt_BR": "Distância média"},
        "portrait.col.entropy": {"en": "Entropy", "pt_BR": "Entropia"},
        "portrait.col.sink_mass": {"en": "Weight on token 0", "pt_BR": "Peso no token 0"},
        "portrait.col.previous_token": {"en": "Previous-token", "pt_BR": "Token anterior"},
        "portrait.col.induction": {"en": "Induction", "pt_BR": "Indução"},
        "portrait.col.roles": {"en": "Roles", "pt_BR": "Papéis"},
        "portrait.role.none": {"en": "—", "pt_BR": "—"},
        "portrait.legend.none": {"en": "no role", "pt_BR": "sem papel"},
        "portrait.where.title": {
            "en": "Where the chapter's roles are",
            "pt_BR": "Onde estão os papéis da apostila",
        },
        "portrait.where.pending": {"en": "{role}: measuring…", "pt_BR": "{role}: medindo…"},
        "portrait.where.show": {"en": "Show layer {layer}, head {head}", "pt_BR": "Mostrar camada {layer}, cabeça {head}"},
        "portrait.thresholds": {"en": "Role thresholds", "pt_BR": "Limiares dos papéis"},
        "portrait.reset": {"en": "Defaults", "pt_BR": "Padrões"},
        "portrait.scatter.x": {"en": "mean distance (tokens back)", "pt_BR": "distância média (para trás)"},
        "portrait.scatter.y": {"en": "entropy (0: one token)", "pt_BR": "entropia (0: um só token)"},
        "portrait.induction.pending": {"en": "computing…", "pt_BR": "calculando…"},
        "portrait.induction.failed": {
            "en": "Induction scores failed: {message}",
            "pt_BR": "Os scores de indução falharam: {message}",
        },
        "portrait.induction.note": {
            "en": "Induction: on a random sequence repeated twice, the weight a head puts on the token right "
            "after the earlier copy of the current one (computed once per model).",
            "pt_BR": "Indução: numa sequência aleatória repetida duas vezes, o peso que a cabeça dá ao token logo "
            "depois da cópia anterior do token atual (calculado uma vez por modelo).",
        },
        "portrait.threshold.positional_share": {
            "en": "positional: share on one offset back ≥",
            "pt_BR": "posicional: fração numa distância para trás ≥",
        },
        "portrait.threshold.previous_token": {"en": "previous-token: i−1 ≥", "pt_BR": "token anterior: i−1 ≥"},
        "portrait.threshold.sink": {"en": "sink: token 0 ≥", "pt_BR": "vala: token 0 ≥"},
        "portrait.threshold.induction": {"en": "induction: score ≥", "pt_BR": "indução: score ≥"},
    }
)
