"""The texts of the head knockout panel, English and Brazilian Portuguese (Portuguese terms as
in the chapter's Portuguese edition: cabeça(s), camada, perda).  Imported by
``ui/panels/knockout.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "knockout.title": {"en": "Head knockout", "pt_BR": "Desligar cabeças"},
        "knockout.explain": {
            "en": "<b>Heads specialise, and W^O mixes them.</b> Click heads in the map to knock them out before "
            "W^O: <b>zero</b> (the head outputs 0) or <b>mean</b> (its output replaced by its mean over the "
            "text). <b>Rank the heads</b> knocks each one out alone: which heads does this text "
            "need?<!--more--> Shift+click on a head in the head grid or the portrait does the same. The "
            "heatmaps then show the other heads as they are without it.",
            "pt_BR": "<b>As cabeças se especializam, e W^O as mistura.</b> Clique em cabeças no mapa para desligá-las "
            "antes de W^O: <b>zero</b> (a cabeça devolve 0) ou <b>média</b> (sua saída trocada pela média no "
            "texto). <b>Ordenar as cabeças</b> desliga cada uma sozinha: de quais cabeças este texto "
            "precisa?<!--more--> Shift+clique numa cabeça da grade de cabeças ou do retrato faz o mesmo. Os "
            "mapas então mostram as outras cabeças como ficam sem ela.",
        },
        "knockout.empty": {"en": "Type a text to knock heads out on it.", "pt_BR": "Digite um texto para desligar cabeças nele."},
        "knockout.mode": {"en": "Knockout", "pt_BR": "Desligar com"},
        "knockout.mode.zero": {"en": "zero", "pt_BR": "zero"},
        "knockout.mode.mean": {"en": "mean", "pt_BR": "média"},
        "knockout.clear": {"en": "Restore all heads", "pt_BR": "Religar todas"},
        "knockout.position": {"en": "Next token after position", "pt_BR": "Próximo token após a posição"},
        "knockout.knocked": {"en": "Knocked out: {heads}", "pt_BR": "Desligadas: {heads}"},
        "knockout.none": {"en": "No head knocked out: click heads in the map.", "pt_BR": "Nenhuma cabeça desligada: clique em cabeças no mapa."},
        "knockout.map": {"en": "Layers × heads: click to knock out", "pt_BR": "Camadas × cabeças: clique para desligar"},
        "knockout.map.ranked": {"en": "Change in loss, each head alone", "pt_BR": "Mudança na perda, cada cabeça sozinha"},
        "knockout.map.key": {
            "en": "Red: the loss rose without the head (the text needs it); blue: it fell.",
            "pt_BR": "Vermelho: a perda subiu sem a cabeça (o texto precisa dela); azul: ela caiu.",
        },
        "knockout.layer": {"en": "layer", "pt_BR": "camada"},
        "knockout.head": {"en": "head", "pt_BR": "cabeça"},
        "knockout.col.before": {"en": "before", "pt_BR": "antes"},
        "knockout.col.after": {"en": "after", "pt_BR": "depois"},
        "knockout.col.p": {"en": "p", "pt_BR": "p"},
        "knockout.loss": {
            "en": "Mean next-token loss of the text: {before} → {after} ({delta})",
            "pt_BR": "Perda média do próximo token no texto: {before} → {after} ({delta})",
        },
        "knockout.waiting": {"en": "Measuring…", "pt_BR": "Medindo…"},
        "knockout.unserved": {"en": "No one measures the knockout here.", "pt_BR": "Ninguém mede o desligamento aqui."},
        "knockout.failed": {"en": "The measurement failed: {reason}", "pt_BR": "A medição falhou: {reason}"},
        "knockout.rank": {"en": "Rank the heads", "pt_BR": "Ordenar as cabeças"},
        "knockout.cancel": {"en": "Cancel", "pt_BR": "Cancelar"},
        "knockout.ranking": {"en": "Knocking out head {done} of {total}…", "pt_BR": "Desligando a cabeça {done} de {total}…"},
        "knockout.ranking_cancelled": {"en": "Ranking cancelled.", "pt_BR": "Ordenação cancelada."},
        "knockout.top": {
            "en": "Heads this text needs most (loss without it − loss with it, baseline {baseline}): {heads}",
            "pt_BR": "Cabeças de que o texto mais precisa (perda sem ela − perda com ela, base {baseline}): {heads}",
        },
        "knockout.one_token": {"en": "The loss needs at least 2 tokens.", "pt_BR": "A perda precisa de pelo menos 2 tokens."},
    }
)
