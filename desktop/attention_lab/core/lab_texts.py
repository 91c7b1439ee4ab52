"""The headless lab's words (``attention-lab lab`` in text mode), in English and Brazilian Portuguese.

The Portuguese follows the course's own material: "apostila", "cabeça", "máscara causal", "cache KV",
"vazamento", the sink heads as the ones "de vala".  Numbers inside a sentence are written the way
its language writes them (:func:`attention_lab.core.numbers.words`).
"""

from __future__ import annotations

from .numbers import words

LANGUAGES = ("en", "pt_BR")

LAB_TEXTS: dict[str, dict[str, str]] = {
    "title": {
        "en": "Attention Lab — {name}: {layers} layer(s) × {heads} heads, d = {d} (= {heads} × {d_k}), context {ctx}",
        "pt_BR": "Attention Lab — {name}: {layers} camada(s) × {heads} cabeças, d = {d} (= {heads} × {d_k}), contexto {ctx}",
    },
    "chapter.same": {
        "en": "The chapter's numbers: d = {d} split into {heads} heads of {d_k}.",
        "pt_BR": "Os números da apostila: d = {d} dividido em {heads} cabeças de {d_k}.",
    },
    "chapter.other": {
        "en": "The chapter's GPT-2 small splits d = {d} into {heads} heads of {d_k}; this model splits {m_d} into "
              "{m_heads} heads of {m_d_k}: the same rule, d = heads × d_k.",
        "pt_BR": "O GPT-2 small da apostila divide d = {d} em {heads} cabeças de {d_k}; este modelo divide {m_d} em "
                 "{m_heads} cabeças de {m_d_k}: a mesma regra, d = cabeças × d_k.",
    },
    "bos.yes": {"en": "after <|endoftext|>", "pt_BR": "depois de <|endoftext|>"},
    "bos.no": {"en": "no <|endoftext|> prepended", "pt_BR": "sem <|endoftext|> no início"},
    "text": {
        "en": "Text: {text} -> {n} token(s) ({bos}): {tokens}",
        "pt_BR": "Texto: {text} -> {n} token(s) ({bos}): {tokens}",
    },
    "cut": {"en": "  (first {shown} of {n} tokens shown)", "pt_BR": "  (os primeiros {shown} de {n} tokens)"},
    "step1": {
        "en": "Step 1 — the causal mask: row = query, column = key, \".\" = forbidden (the future)",
        "pt_BR": "Passo 1 — a máscara causal: linha = query, coluna = key, \".\" = proibido (o futuro)",
    },
    "step2": {
        "en": "Step 2 — layer {layer}, head {head}: causal | bidirectional ({model}'s weights, mask removed)",
        "pt_BR": "Passo 2 — camada {layer}, cabeça {head}: causal | bidirecional (os pesos de {model}, sem a máscara)",
    },
    "step2.rows": {
        "en": "Each row sums to 1. With the mask the upper triangle is exactly 0; without it, every token sees the future.",
        "pt_BR": "Cada linha soma 1. Com a máscara o triângulo de cima é exatamente 0; sem ela, todo token vê o futuro.",
    },
    "step2.bidirectional": {
        "en": "\"Bidirectional\" here is this model's own weights run without the mask: it shows what the mask does. "
              "A real RoBERTa was trained without the mask, so its heads learned to use both sides; these weights "
              "never saw the future during training.",
        "pt_BR": "\"Bidirecional\" aqui são os pesos deste mesmo modelo rodados sem a máscara: mostra o que a máscara "
                 "faz. Um RoBERTa de verdade foi treinado sem a máscara, e suas cabeças aprenderam a usar os dois "
                 "lados; estes pesos nunca viram o futuro no treino.",
    },
    "step3": {
        "en": "Step 3 — leakage: position {p} {original} replaced by {replacement}; relative change ‖h′ − h‖/‖h‖ "
              "of the final hidden state",
        "pt_BR": "Passo 3 — vazamento: posição {p} {original} trocado por {replacement}; mudança relativa "
                 "‖h′ − h‖/‖h‖ do estado final",
    },
    "step3.edited": {"en": "<- edited", "pt_BR": "<- trocado"},
    "step3.exactly_zero": {"en": "exactly 0", "pt_BR": "exatamente 0"},
    "step3.up_to": {"en": "up to {x}", "pt_BR": "até {x}"},
    "step3.before": {
        "en": "Before position {p}: causal {causal}; bidirectional up to {bidirectional}.",
        "pt_BR": "Antes da posição {p}: causal {causal}; bidirecional até {bidirectional}.",
    },
    "step3.first": {
        "en": "The edited token is the first one: there is no 'before' to protect.",
        "pt_BR": "O token trocado é o primeiro: não há 'antes' a proteger.",
    },
    "step4": {
        "en": "Step 4 — portrait of layer {layer}'s heads{rows}",
        "pt_BR": "Passo 4 — retrato das cabeças da camada {layer}{rows}",
    },
    "step4.rows": {
        "en": " (query rows 1..{last}; entropy 0: all weight on one token)",
        "pt_BR": " (linhas de query 1..{last}; entropia 0: todo o peso num token só)",
    },
    "step4.rules": {"en": "Rules: {rules}.", "pt_BR": "Regras: {rules}."},
    "step4.positional": {
        "en": "Positional: most of the weight on one offset back, judged by where the weight goes; a mean distance "
              "near 1 can also be a head split between the token itself and two back. Previous-token is the "
              "chapter's picture of distance ≈ 1.",
        "pt_BR": "Posicional: a maior parte do peso num só deslocamento para trás, julgada por onde o peso vai; uma "
                 "distância média perto de 1 também pode ser uma cabeça dividida entre o próprio token e dois para "
                 "trás. Token anterior é a imagem da apostila de distância ≈ 1.",
    },
    "step4.induction": {
        "en": "Induction is measured on a random sequence repeated twice ({n} tokens): the most a head can score "
              "there is {maximum:.2f}, a head spreading evenly scores {uniform:.2f}.",
        "pt_BR": "A indução é medida numa sequência aleatória repetida duas vezes ({n} tokens): o máximo que uma "
                 "cabeça pode marcar ali é {maximum:.2f}; uma cabeça que se espalha por igual marca {uniform:.2f}.",
    },
    "step4.too_short": {"en": "(a portrait needs at least 2 tokens)", "pt_BR": "(um retrato precisa de pelo menos 2 tokens)"},
    "step5": {
        "en": "Step 5 — the KV cache: {new} new tokens, greedy, on {model}",
        "pt_BR": "Passo 5 — o cache KV: {new} tokens novos, escolha gulosa, em {model}",
    },
    "step5.timing": {
        "en": "Timing: {reps} runs each way, with and without the cache alternating, after a warm-up; torch on "
              "{threads} thread(s); each position's fastest run (noise only ever adds time).",
        "pt_BR": "Tempo: {reps} execuções de cada jeito, com e sem o cache alternando, depois de um aquecimento; "
                 "torch em {threads} thread(s); a execução mais rápida de cada posição (o ruído só acrescenta tempo).",
    },
    "step5.with": {"en": "with cache", "pt_BR": "com cache"},
    "step5.without": {"en": "without cache", "pt_BR": "sem cache"},
    "step5.identical": {
        "en": "Identical tokens in both runs: {same}; the cache holds {positions} positions = "
              "2 × {layers} × {heads} × {d_k} × {positions} × 4 bytes = {size}",
        "pt_BR": "Tokens idênticos nas duas execuções: {same}; o cache guarda {positions} posições = "
                 "2 × {layers} × {heads} × {d_k} × {positions} × 4 bytes = {size}",
    },
    "step5.generated": {"en": "Generated: {text}", "pt_BR": "Gerado: {text}"},
    "step5.valid": {
        "en": "Why the cache is valid: K and V of positions 0..{last} with {appended} appended, compared with "
              "{reference} appended instead (both fully recomputed, in one batch; max relative change per layer)",
        "pt_BR": "Por que o cache vale: K e V das posições 0..{last} com {appended} acrescentado, comparados com "
                 "{reference} acrescentado no lugar (ambos recalculados por inteiro, num lote só; maior mudança "
                 "relativa por camada)",
    },
    "step5.layer0": {
        "en": "Layer 0's K and V see only their own token and position, so they agree in both modes; from "
              "layer 1 on, without the mask, every earlier position hears about the new token.",
        "pt_BR": "K e V da camada 0 só veem o próprio token e a posição, então concordam nos dois modos; da "
                 "camada 1 em diante, sem a máscara, toda posição anterior fica sabendo do token novo.",
    },
    "step5.layer0.single": {
        "en": "Layer 0's K and V see only their own token and position, so they agree in both modes; this model "
              "has a single layer, so no later layer shows the leak.",
        "pt_BR": "K e V da camada 0 só veem o próprio token e a posição, então concordam nos dois modos; este "
                 "modelo tem uma camada só, então nenhuma camada seguinte mostra o vazamento.",
    },
    "step5.drift": {
        "en": "\"n vs n+1\": the same K and V computed from the {n} tokens alone and with {appended} appended "
              "(causal): {drift}. ",
        "pt_BR": "\"n vs n+1\": os mesmos K e V calculados só com os {n} tokens e com {appended} acrescentado "
                 "(causal): {drift}. ",
    },
    "step5.drift.rounding": {
        "en": "Any difference there, typically ~1e-7, is floating-point rounding: matrices of n and n+1 rows may "
              "be summed in a different order; it carries no information.",
        "pt_BR": "Qualquer diferença ali, em geral ~1e-7, é arredondamento de ponto flutuante: matrizes de n e n+1 "
                 "linhas podem ser somadas em outra ordem; não carrega informação.",
    },
    "step5.drift.exact": {
        "en": "Here even the rounding agreed; on other lengths or machines ~1e-7 can appear: floating-point "
              "rounding from matrices of different shapes, not information.",
        "pt_BR": "Aqui até o arredondamento concordou; em outros tamanhos ou máquinas pode aparecer ~1e-7: "
                 "arredondamento de ponto flutuante de matrizes de formatos diferentes, não informação.",
    },
    "modes": {
        "en": "Why −∞ and not zero? Five ways to hide the future, layer {layer}, the edit of step 3",
        "pt_BR": "Por que −∞ e não zero? Cinco jeitos de esconder o futuro, camada {layer}, a troca do passo 3",
    },
    "modes.header.mode": {"en": "how the future is hidden", "pt_BR": "como o futuro é escondido"},
    "modes.header.future": {"en": "future's weight", "pt_BR": "peso do futuro"},
    "modes.header.leak": {"en": "leak before the edit", "pt_BR": "vazamento antes da troca"},
    "modes.header.rows": {"en": "rows off 1 by", "pt_BR": "linhas longe de 1 por"},
    "modes.-inf": {"en": "score −∞ (the chapter)", "pt_BR": "score −∞ (a apostila)"},
    "modes.finfo.min": {"en": "score = float32's minimum", "pt_BR": "score = o mínimo do float32"},
    "modes.-1e9": {"en": "score −1e9", "pt_BR": "score −1e9"},
    "modes.zero-score": {"en": "score 0", "pt_BR": "score 0"},
    "modes.zero-after-softmax": {"en": "0 after the softmax", "pt_BR": "0 depois do softmax"},
    "modes.summary": {
        "en": "Zeroing after the softmax gives the future weight 0, yet the earlier positions still change with it "
              "(through the softmax's sum) and the rows no longer sum to 1; a score of 0 lets the future in.",
        "pt_BR": "Zerar depois do softmax dá peso 0 ao futuro, mas as posições anteriores ainda mudam com ele "
                 "(pela soma do softmax) e as linhas deixam de somar 1; um score 0 deixa o futuro entrar.",
    },
    "shapes": {"en": "Shapes (layer 0; every layer has the same)", "pt_BR": "Formatos (camada 0; toda camada tem os mesmos)"},
    "yes": {"en": "yes", "pt_BR": "sim"},
    "none": {"en": "none", "pt_BR": "nenhuma"},
    "no": {"en": "no", "pt_BR": "não"},
    "NO": {"en": "NO", "pt_BR": "NÃO"},
    "col.pos": {"en": "pos", "pt_BR": "pos"},
    "col.token": {"en": "token", "pt_BR": "token"},
    "col.causal": {"en": "causal", "pt_BR": "causal"},
    "col.bidirectional": {"en": "bidirectional", "pt_BR": "bidirecional"},
    "col.head": {"en": "head", "pt_BR": "cabeça"},
    "col.roles": {"en": "roles", "pt_BR": "papéis"},
    "col.mean_distance": {"en": "mean dist", "pt_BR": "dist. média"},
    "col.entropy": {"en": "entropy", "pt_BR": "entropia"},
    "col.uniform": {"en": "÷ uniform", "pt_BR": "÷ uniforme"},
    "col.sink": {"en": "sink", "pt_BR": "vala"},
    "col.previous": {"en": "prev", "pt_BR": "anterior"},
    "col.induction": {"en": "induction", "pt_BR": "indução"},
    "col.seconds": {"en": "seconds", "pt_BR": "segundos"},
    "col.tokens_per_s": {"en": "tokens/s", "pt_BR": "tokens/s"},
    "col.slope": {"en": "ms more per position", "pt_BR": "ms a mais por posição"},
    "col.layer": {"en": "layer", "pt_BR": "camada"},
    "col.tensor": {"en": "tensor", "pt_BR": "tensor"},
    "col.shape": {"en": "shape", "pt_BR": "formato"},
    # the mask designer's and the knockout's sections
    "designer": {
        "en": "Mask designer — {mask}: the mask | reach after {layers} layers (█ = may look / can influence; row = query){cut}",
        "pt_BR": "Desenho da máscara — {mask}: a máscara | o alcance depois de {layers} camadas (█ = pode olhar / pode "
                 "influenciar; linha = query){cut}",
    },
    "designer.cut": {"en": " (first {shown} of {n} tokens)", "pt_BR": " (os primeiros {shown} de {n} tokens)"},
    "designer.leaks": {
        "en": "Leaks the labels in parallel training: {reach} (reach); measured by editing {probed} positions: "
              "{measured}; measured grid equals reach: {confirmed}",
        "pt_BR": "Vaza os rótulos no treino em paralelo: {reach} (alcance); medido trocando {probed} posições: "
                 "{measured}; a grade medida é igual ao alcance: {confirmed}",
    },
    "designer.prefix": {
        "en": "That is with the loss at every position (leaking: {leaking}); with the loss only after the prefix, as "
              "a prefix-LM is trained: {after}",
        "pt_BR": "Isso com a loss em toda posição (vazam: {leaking}); com a loss só depois do prefixo, como um "
                 "prefix-LM é treinado: {after}",
    },
    "designer.kv": {
        "en": "KV cache valid: {valid} (appending a token moved earlier K/V by {moved}; reach predicts {predicted}); "
              "positions the cache keeps per layer: {positions}",
        "pt_BR": "Cache KV vale: {valid} (acrescentar um token moveu K/V anteriores {moved}; o alcance prevê "
                 "{predicted}); posições que o cache guarda por camada: {positions}",
    },
    "designer.moved": {
        "en": "The lab's edit under this mask moved {changed} position(s); exactly the reach grid's: {same}",
        "pt_BR": "A troca do lab com esta máscara moveu {changed} posição(ões); exatamente as da grade de alcance: {same}",
    },
    "knockout": {
        "en": "Head knockout ({mode}): {heads}; next token after position {position}",
        "pt_BR": "Cabeças desligadas ({mode}): {heads}; próximo token depois da posição {position}",
    },
    "knockout.before": {"en": "before", "pt_BR": "antes"},
    "knockout.after": {"en": "after", "pt_BR": "depois"},
    "knockout.loss": {
        "en": "Mean next-token loss: {before:.4f} -> {after:.4f}",
        "pt_BR": "Perda média do próximo token: {before:.4f} -> {after:.4f}",
    },
    # the JSON's descriptions of how a figure was measured
    "json.timing": {
        "en": "each position's minimum over the repetitions (with and without the cache alternating, after an "
              "untimed warm-up); seconds = their sum",
        "pt_BR": "o mínimo de cada posição nas repetições (com e sem o cache alternando, depois de um aquecimento "
                 "sem medir); segundos = a soma deles",
    },
    "json.compared": {
        "en": "ids + [appended] vs ids + [reference]: two different tokens appended, both fully recomputed in one batch",
        "pt_BR": "ids + [acrescentado] vs ids + [referência]: dois tokens diferentes acrescentados, ambos recalculados "
                 "por inteiro num lote só",
    },
    "json.n_vs_n_plus_1": {
        "en": "ids alone vs ids + [appended], causal: any difference is floating-point rounding (matrices of n and "
              "n+1 rows), not information",
        "pt_BR": "só ids vs ids + [acrescentado], causal: qualquer diferença é arredondamento de ponto flutuante "
                 "(matrizes de n e n+1 linhas), não informação",
    },
}


def lab_text(key: str, lang: str = "en", **values: object) -> str:
    """``LAB_TEXTS[key]`` in ``lang`` (English when the language is unknown), formatted."""
    return words(LAB_TEXTS, key, lang, **values)
