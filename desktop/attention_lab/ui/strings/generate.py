"""The texts of the Generate panel (one token at a time), English and Brazilian Portuguese (Portuguese
terms as in the chapter's Portuguese edition: consulta, chave, valor, cabeça, camada, o cache KV,
recalcular).  Imported by ``ui/panels/generate.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "generate.title": {"en": "Generate", "pt_BR": "Gerar"},
        "generate.explain": {
            "en": "<b>Watch the mask make the cache possible.</b> <b>Next token</b> appends the model's choice; the new "
            "query's row appears at the bottom of the map.",
            "pt_BR": "<b>Veja a máscara tornar o cache possível.</b> <b>Próximo token</b> acrescenta a escolha do "
            "modelo; a linha da nova consulta aparece embaixo no mapa.",
        },
        "generate.explain_more": {
            "en": "The new query (the last token) reads the keys of every position so far. Under the causal mask the "
            "rows above never change, so their K and V can stay in the cache and each step computes one row instead "
            "of the whole triangle. Each step is also recomputed from scratch, and the two are compared: every "
            "number here is measured on the model.",
            "pt_BR": "A nova consulta (o último token) lê as chaves de todas as posições até aqui. Com a máscara "
            "causal as linhas de cima nunca mudam, então os seus K e V podem ficar no cache KV e cada passo calcula "
            "uma linha em vez do triângulo inteiro. Cada passo também é recalculado do zero, e os dois são "
            "comparados: cada número aqui é medido no modelo.",
        },
        "generate.empty": {"en": "Type a text to generate from it.", "pt_BR": "Digite um texto para gerar a partir dele."},
        "generate.unserved": {"en": "No one generates here.", "pt_BR": "Ninguém gera aqui."},
        "generate.next": {"en": "Next token", "pt_BR": "Próximo token"},
        "generate.play": {"en": "Play", "pt_BR": "Reproduzir"},
        "generate.pause": {"en": "Pause", "pt_BR": "Pausar"},
        "generate.back": {"en": "Back", "pt_BR": "Voltar"},
        "generate.reset": {"en": "Reset", "pt_BR": "Recomeçar"},
        "generate.pace": {"en": "Pace", "pt_BR": "Ritmo"},
        "generate.pace.suffix": {"en": " ms/token", "pt_BR": " ms/token"},
        "generate.layer": {"en": "Layer", "pt_BR": "Camada"},
        "generate.head": {"en": "Head", "pt_BR": "Cabeça"},
        "generate.sample": {"en": "Sample", "pt_BR": "Amostrar"},
        "generate.temperature": {"en": "temperature", "pt_BR": "temperatura"},
        "generate.seed": {"en": "seed", "pt_BR": "semente"},
        "generate.greedy_tip": {
            "en": "Off: greedy, the likeliest token every time (the same text always gives the same tokens). On: "
            "drawn from the distribution at this temperature; the same seed draws the same tokens again.",
            "pt_BR": "Desligado: guloso, o token mais provável a cada vez (o mesmo texto sempre dá os mesmos tokens). "
            "Ligado: sorteado da distribuição nesta temperatura; a mesma semente sorteia os mesmos tokens de novo.",
        },
        "generate.stale": {"en": "Without the mask, with a cache anyway", "pt_BR": "Sem a máscara, com cache mesmo assim"},
        "generate.stale_tip": {
            "en": "The same weights run bidirectionally, but generating with a K/V cache: the cache keeps K and V from "
            "before the later tokens existed, which a bidirectional model would have changed. Watch how far they drift.",
            "pt_BR": "Os mesmos pesos rodando de forma bidirecional, mas gerando com cache KV: o cache guarda K e V de "
            "antes dos tokens seguintes existirem, que um modelo bidirecional teria mudado. Veja o quanto se afastam.",
        },
        "generate.status": {
            "en": "Step {steps} · {tokens} tokens · room for {room} more",
            "pt_BR": "Passo {steps} · {tokens} tokens · cabem mais {room}",
        },
        "generate.waiting": {"en": "Computing the step…", "pt_BR": "Calculando o passo…"},
        "generate.failed": {"en": "The step failed: {reason}", "pt_BR": "O passo falhou: {reason}"},
        "generate.full": {"en": "The context is full: no token fits.", "pt_BR": "O contexto está cheio: não cabe nenhum token."},
        "generate.map": {"en": "Layer {layer}, head {head}", "pt_BR": "Camada {layer}, cabeça {head}"},
        "generate.query": {"en": "query (destination) ↓", "pt_BR": "consulta (destino) ↓"},
        "generate.key": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "generate.rows.before": {
            "en": "Before the first step: the text's rows. Press Next token.",
            "pt_BR": "Antes do primeiro passo: as linhas do texto. Aperte Próximo token.",
        },
        "generate.rows.zero": {
            "en": "New row at the bottom (query {query}). The {rows} rows above, compared with the previous step in "
            "every layer: changed by exactly 0.",
            "pt_BR": "Linha nova embaixo (consulta {query}). As {rows} linhas de cima, comparadas com o passo anterior "
            "em todas as camadas: mudaram exatamente 0.",
        },
        "generate.rows.changed": {
            "en": "New row at the bottom (query {query}). The {rows} rows above, compared with the previous step: "
            "changed by up to {change} (in layer {layer}): without the mask the earlier tokens see the new one.",
            "pt_BR": "Linha nova embaixo (consulta {query}). As {rows} linhas de cima, comparadas com o passo anterior: "
            "mudaram até {change} (na camada {layer}): sem a máscara os tokens anteriores veem o novo.",
        },
        "generate.rows.first": {
            "en": "New row (query {query}): the first query has no rows above it.",
            "pt_BR": "Linha nova (consulta {query}): a primeira consulta não tem linhas acima.",
        },
        "generate.text": {"en": "Text and generated tokens", "pt_BR": "Texto e tokens gerados"},
        "generate.top": {"en": "Next token after position {position}: the top 5", "pt_BR": "Próximo token após a posição {position}: os 5 mais prováveis"},
        "generate.col.token": {"en": "token", "pt_BR": "token"},
        "generate.col.p": {"en": "p", "pt_BR": "p"},
        "generate.chosen": {"en": "Chosen: {token} (p = {p})", "pt_BR": "Escolhido: {token} (p = {p})"},
        "generate.cache": {"en": "The K/V cache, per layer", "pt_BR": "O cache KV, por camada"},
        "generate.cache.axis": {"en": "position", "pt_BR": "posição"},
        "generate.cache.layer": {"en": "layer", "pt_BR": "camada"},
        "generate.cache.bytes": {
            "en": "{positions} positions: 2 (K and V) × {layers} layers × {heads} heads × {dk} (d_k) × {positions} × 4 "
            "bytes = {bytes}",
            "pt_BR": "{positions} posições: 2 (K e V) × {layers} camadas × {heads} cabeças × {dk} (d_k) × {positions} "
            "× 4 bytes = {bytes}",
        },
        "generate.work": {"en": "The work of this step, both ways", "pt_BR": "O trabalho deste passo, dos dois jeitos"},
        "generate.work.row.cached": {"en": "with the cache: one row", "pt_BR": "com o cache: uma linha"},
        "generate.work.row.recompute": {"en": "recomputed: every row", "pt_BR": "recalculado: todas as linhas"},
        "generate.work.col.attention": {"en": "attention", "pt_BR": "atenção"},
        "generate.work.col.total": {"en": "all", "pt_BR": "tudo"},
        "generate.work.col.ms": {"en": "ms", "pt_BR": "ms"},
        "generate.work.col.totals": {"en": "since Reset", "pt_BR": "desde Recomeçar"},
        "generate.work.note": {
            "en": "Multiply-adds of the matrix products (attention, and all of the step), counted from the model's sizes: with the cache the new query "
            "meets {n} keys; recomputed, every position's projections and MLP run again, with the triangle's "
            "{pairs} query-key pairs.",
            "pt_BR": "Multiplicações-somas dos produtos de matrizes (da atenção, e de todo o passo), contadas a partir dos tamanhos do modelo: com o "
            "cache a nova consulta encontra {n} chaves; recalculando, as projeções e o MLP de cada posição rodam de "
            "novo, com os {pairs} pares consulta-chave do triângulo.",
        },
        "generate.diff": {
            "en": "Cached vs recomputed: the logits differ by at most {logits} (rounding only); the probabilities by {probs}.",
            "pt_BR": "Com cache vs recalculado: os logits diferem no máximo {logits} (só arredondamento); as "
            "probabilidades, {probs}.",
        },
        "generate.diff.stale": {
            "en": "Stale cache vs recomputed: the logits differ by up to {logits}; the probabilities by {probs}.",
            "pt_BR": "Cache desatualizado vs recalculado: os logits diferem até {logits}; as probabilidades, {probs}.",
        },
        "generate.work.note.stale": {
            "en": "Multiply-adds of the matrix products (attention, and all of the step), counted from the model's "
            "sizes: with the cache the new query meets {n} keys; recomputed without the mask, every position's "
            "projections and MLP run again, with all {pairs} query-key pairs of the square.",
            "pt_BR": "Multiplicações-somas dos produtos de matrizes (da atenção, e de todo o passo), contadas a partir "
            "dos tamanhos do modelo: com o cache a nova consulta encontra {n} chaves; recalculando sem a máscara, as "
            "projeções e o MLP de cada posição rodam de novo, com todos os {pairs} pares consulta-chave do quadrado.",
        },
        "generate.stale.title": {"en": "What goes wrong: the stale cache", "pt_BR": "O que dá errado: o cache desatualizado"},
        "generate.stale.drift": {
            "en": "This step, each layer's cached K/V against a full recompute (largest relative change): {layers}.",
            "pt_BR": "Neste passo, o K/V em cache de cada camada comparado com um recálculo completo (maior mudança "
            "relativa): {layers}.",
        },
        "generate.stale.agree": {
            "en": "The stale cache's top token agrees with the recompute in {agree} of {steps} steps; the next-token "
            "probabilities differ by up to {probs}.",
            "pt_BR": "O token mais provável do cache desatualizado concorda com o recálculo em {agree} de {steps} "
            "passos; as probabilidades do próximo token diferem até {probs}.",
        },
        "generate.stale.off": {
            "en": "Under the causal mask the cached K/V are the recomputed ones (largest relative change this step: {drift}, "
            "rounding).",
            "pt_BR": "Com a máscara causal o K/V em cache é o recalculado (maior mudança relativa neste passo: {drift}, "
            "arredondamento).",
        },
        "generate.inside": {"en": "Inside this head", "pt_BR": "Dentro desta cabeça"},
        "generate.inside.intro": {
            "en": "Step {step}: the new query (position {position}) through head {head} of layer {layer}, d_k = {dk}. "
            "Hover a row for every value in full precision.",
            "pt_BR": "Passo {step}: a nova consulta (posição {position}) pela cabeça {head} da camada {layer}, "
            "d_k = {dk}. Passe o mouse numa linha para ver todos os valores com precisão total.",
        },
        "generate.inside.none": {"en": "Make a step to look inside a head.", "pt_BR": "Dê um passo para olhar dentro de uma cabeça."},
        "generate.inside.col.what": {"en": "quantity", "pt_BR": "grandeza"},
        "generate.inside.col.values": {"en": "values", "pt_BR": "valores"},
        "generate.inside.q": {"en": "q: the query", "pt_BR": "q: a consulta"},
        "generate.inside.k": {"en": "k{j} {token}", "pt_BR": "k{j} {token}"},
        "generate.inside.scores": {"en": "q·k", "pt_BR": "q·k"},
        "generate.inside.scaled": {"en": "÷ √d_k = × {scale}", "pt_BR": "÷ √d_k = × {scale}"},
        "generate.inside.mask": {"en": "mask", "pt_BR": "máscara"},
        "generate.inside.mask.none": {
            "en": "nothing to hide: no key lies in the newest query's future (an earlier row would get −∞ for its future)",
            "pt_BR": "nada a esconder: nenhuma chave está no futuro da consulta mais nova (uma linha anterior "
            "receberia −∞ no seu futuro)",
        },
        "generate.inside.weights": {"en": "softmax: the weights (sum {total})", "pt_BR": "softmax: os pesos (soma {total})"},
        "generate.inside.v": {"en": "v{j} {token}", "pt_BR": "v{j} {token}"},
        "generate.inside.output": {"en": "Σ weight × v: this head's output", "pt_BR": "Σ peso × v: a saída desta cabeça"},
        "generate.inside.concat": {"en": "all heads concatenated ({d})", "pt_BR": "todas as cabeças concatenadas ({d})"},
        "generate.inside.projected": {"en": "× W^O + b: what attention adds to the token's vector", "pt_BR": "× W^O + b: o que a atenção soma ao vetor do token"},
        "generate.inside.check": {
            "en": "Check: recomposed from these numbers, the layer's output differs from the model's own by at most {error}.",
            "pt_BR": "Conferência: recomposta a partir destes números, a saída da camada difere da do próprio modelo "
            "no máximo {error}.",
        },
    }
)
