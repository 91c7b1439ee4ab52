"""The texts of the shapes panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/shapes.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "shapes.title": {"en": "Shapes", "pt_BR": "Dimensões"},
        "shapes.explain": {
            "en": "<b>The dimensions, in practice.</b> What one attention block of <b>{model}</b> really produced "
            "for your {n} tokens ({heads} heads of d<sub>k</sub> = {dk}).<!--more--> One matmul (c_attn) gives Q, K and V; "
            "a reshape splits the {d} dimensions into {heads} slices of {dk}; each head makes its own "
            "{n}×{n} map; concat regroups the slices and c_proj (W<sup>O</sup>) mixes them. "
            "The output has the same shape as the input.",
            "pt_BR": "<b>As dimensões, na prática.</b> O que um bloco de atenção de <b>{model}</b> produziu de fato "
            "para os seus {n} tokens ({heads} cabeças de d<sub>k</sub> = {dk}).<!--more--> Uma matmul só (c_attn) gera Q, K e V; "
            "um reshape divide as {d} dimensões em {heads} fatias de {dk}; cada cabeça faz o seu próprio mapa "
            "{n}×{n}; o concat reagrupa as fatias e o c_proj (W<sup>O</sup>) as mistura. "
            "A saída tem a mesma forma da entrada.",
        },
        "shapes.empty": {
            "en": "<b>The dimensions, in practice.</b> Analyse a text to see the shapes.",
            "pt_BR": "<b>As dimensões, na prática.</b> Analise um texto para ver as formas.",
        },
        "shapes.col.step": {"en": "Step", "pt_BR": "Etapa"},
        "shapes.col.shape": {"en": "Shape", "pt_BR": "Forma"},
        "shapes.col.note": {"en": "What it is", "pt_BR": "O que é"},
        "shapes.note.h": {"en": "token + position embeddings", "pt_BR": "embeddings de token + posição"},
        "shapes.step.scores": {"en": "scores", "pt_BR": "scores"},
        "shapes.step.attention": {"en": "attention", "pt_BR": "atenção"},
        "shapes.step.per head": {"en": "per head", "pt_BR": "por cabeça"},
        "shapes.step.block output": {"en": "block output", "pt_BR": "saída do bloco"},
        "shapes.note.c_attn": {"en": "a single matmul: Q, K, V fused", "pt_BR": "uma matmul só: Q, K, V juntos"},
        "shapes.note.Q, K, V": {
            "en": "reshaped into heads: {heads} heads in parallel",
            "pt_BR": "reshape em cabeças: {heads} cabeças em paralelo",
        },
        "shapes.note.scores": {
            "en": "Q·Kᵀ/√d_k: {heads} independent {n}×{n} maps",
            "pt_BR": "Q·Kᵀ/√d_k: {heads} mapas {n}×{n} independentes",
        },
        "shapes.note.attention": {"en": "after the mask and the softmax", "pt_BR": "depois da máscara e do softmax"},
        "shapes.note.per head": {"en": "weighted sum of V, per head", "pt_BR": "soma ponderada de V, por cabeça"},
        "shapes.note.concat": {"en": "concat: regroups the slices", "pt_BR": "concat: reagrupa as fatias"},
        "shapes.note.c_proj": {"en": "c_proj (W^O) mixes the heads", "pt_BR": "c_proj (W^O) mistura as cabeças"},
        "shapes.note.block output": {
            "en": "output: same shape as the input",
            "pt_BR": "saída: mesma forma da entrada",
        },
        "shapes.note.logits": {"en": "ln_f, then × wteᵀ: one score per vocabulary entry", "pt_BR": "ln_f, depois × wteᵀ: um score por item do vocabulário"},
        "shapes.cost.title": {
            "en": "Multi-head costs no more than one head",
            "pt_BR": "Multi-head não custa mais que uma cabeça",
        },
        "shapes.cost.explain": {
            "en": "Divide, don't multiply: the model splits its {d} dimensions into {heads} slices of {dk} "
            "instead of running {heads} heads of {d} each. c_attn is d×3d either way, c_proj d×d either way.",
            "pt_BR": "Dividir, não multiplicar: o modelo divide as suas {d} dimensões em {heads} fatias de {dk} "
            "em vez de rodar {heads} cabeças de {d} cada. O c_attn é d×3d de qualquer jeito, e o c_proj, d×d.",
        },
        "shapes.cost.col.multi": {"en": "{heads} heads × {dk}", "pt_BR": "{heads} cabeças × {dk}"},
        "shapes.cost.col.single": {"en": "1 head × {d}", "pt_BR": "1 cabeça × {d}"},
        "shapes.cost.col.multiplied": {
            "en": "{heads} heads × {d} (multiplying)",
            "pt_BR": "{heads} cabeças × {d} (multiplicando)",
        },
        "shapes.cost.row.width": {"en": "Q/K/V width (heads × d_k)", "pt_BR": "Largura de Q/K/V (cabeças × d_k)"},
        "shapes.cost.row.c_attn": {"en": "c_attn weights + biases", "pt_BR": "c_attn: pesos + vieses"},
        "shapes.cost.row.c_proj": {"en": "c_proj (W^O) weights + biases", "pt_BR": "c_proj (W^O): pesos + vieses"},
        "shapes.cost.row.layer": {"en": "attention parameters per layer", "pt_BR": "parâmetros de atenção por camada"},
        "shapes.cost.row.model": {
            "en": "attention parameters, all {layers} layers",
            "pt_BR": "parâmetros de atenção, as {layers} camadas",
        },
        "shapes.cost.row.scores": {
            "en": "multiply-adds for Q·Kᵀ ({n} tokens)",
            "pt_BR": "multiplicações-somas de Q·Kᵀ ({n} tokens)",
        },
        "shapes.cost.verdict": {
            "en": "{heads} heads × {dk} = {d} = 1 head × {d}: the same {per_layer} parameters per layer. "
            "Multiplying instead ({heads} heads of {d}) would cost {ratio}× more.",
            "pt_BR": "{heads} cabeças × {dk} = {d} = 1 cabeça × {d}: os mesmos {per_layer} parâmetros por camada. "
            "Multiplicar ({heads} cabeças de {d}) custaria {ratio}× mais.",
        },
    }
)
