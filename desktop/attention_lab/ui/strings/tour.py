"""The texts of the lab tour, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/tour.py`` for its registrations."""

from attention_lab.core.roles import ROLE_TEXTS
from attention_lab.ui.i18n import register

register(ROLE_TEXTS)  # step 4 names the chapter's roles as the portrait does (same table, registered by either)

register(
    {
        "tour.title": {"en": "Lab tour", "pt_BR": "Tour do laboratório"},
        "tour.menu": {"en": "Lab &tour", "pt_BR": "&Tour do laboratório"},
        "tour.counter": {"en": "Step {i} of {count}", "pt_BR": "Passo {i} de {count}"},
        "tour.counter.lab": {"en": "lab step {lab}", "pt_BR": "passo {lab} do lab"},
        "tour.counter.prose": {
            "en": "from the chapter",
            "pt_BR": "da apostila",
        },
        "tour.back": {"en": "Back", "pt_BR": "Voltar"},
        "tour.next": {"en": "Next", "pt_BR": "Próximo"},
        "tour.finish": {"en": "Finish", "pt_BR": "Concluir"},
        "tour.close": {"en": "Close", "pt_BR": "Fechar"},
        "tour.run": {"en": "Run the benchmark", "pt_BR": "Rodar o benchmark"},
        "tour.running": {"en": "Benchmark running…", "pt_BR": "Benchmark rodando…"},
        "tour.measured": {"en": "Measured on {model}", "pt_BR": "Medido em {model}"},
        "tour.waiting": {
            "en": "Waiting for the analysis of your text…",
            "pt_BR": "Esperando a análise do seu texto…",
        },
        "tour.measuring": {"en": "Measuring on your text…", "pt_BR": "Medindo no seu texto…"},
        "tour.failed": {"en": "Could not measure this step: {message}", "pt_BR": "Não foi possível medir este passo: {message}"},
        "tour.print": {"en": "The lab's print (first {shown} of {n} tokens):", "pt_BR": "A impressão do lab (primeiros {shown} de {n} tokens):"},
        "tour.print.all": {"en": "The lab's print:", "pt_BR": "A impressão do lab:"},
        "tour.finished": {
            "en": "Tour finished. Help › Lab tour (Ctrl+T) starts it again.",
            "pt_BR": "Tour concluído. Ajuda › Tour do laboratório (Ctrl+T) começa de novo.",
        },
        "tour.offer.text": {
            "en": "New here? A guided tour walks the chapter's five lab steps.",
            "pt_BR": "Primeira vez? Um tour guiado percorre os cinco passos do lab da apostila.",
        },
        "tour.offer.start": {"en": "Take the lab tour", "pt_BR": "Fazer o tour"},
        "tour.offer.dismiss": {"en": "Not now", "pt_BR": "Agora não"},
        "tour.yes": {"en": "yes", "pt_BR": "sim"},
        "tour.no": {"en": "no", "pt_BR": "não"},
        "tour.none": {"en": "none in this layer", "pt_BR": "nenhuma nesta camada"},
        # ---- the steps: title and what to look at, in the chapter's terms
        "tour.step.mask.title": {"en": "The causal mask", "pt_BR": "A máscara causal"},
        "tour.step.mask.body": {
            "en": "Before the softmax, every score of a future position gets −∞, so its weight becomes exactly 0. "
            "In the <b>Mask</b> panel rows are queries and columns keys: the dark triangle above the diagonal"
            " is the future, which does not exist. Each row still sums to 1, over the past only.",
            "pt_BR": "Antes do softmax, todo score de uma posição futura recebe −∞, então o seu peso vira exatamente "
            "0. No painel <b>Máscara</b> as linhas são consultas e as colunas, chaves: o triângulo escuro "
            "acima da diagonal é o futuro, que não existe. Cada linha continua somando 1, só sobre o passado.",
        },
        "tour.step.why_inf.title": {"en": "Why −∞ and not zero?", "pt_BR": "Por que −∞ e não zero?"},
        "tour.step.why_inf.body": {
            "en": "Zeroing the score does not help: a score of 0 still becomes e⁰ = 1 in the softmax, a perfectly "
            "respectable weight. Zeroing the weight after the softmax gives the future weight 0, yet the "
            "earlier positions still change with it, through the softmax's denominator, and the rows no "
            "longer sum to 1. The <b>Mask</b> panel now has “zero the score” selected: compare its leak with "
            "−∞ in the table.",
            "pt_BR": "Zerar o score não adianta: um score 0 ainda vira e⁰ = 1 no softmax, um peso perfeitamente "
            "respeitável. Zerar o peso depois do softmax dá peso 0 ao futuro, mas as posições anteriores "
            "ainda mudam com ele, pelo denominador do softmax, e as linhas deixam de somar 1. O painel "
            "<b>Máscara</b> agora está em “zerar o score”: compare o vazamento dele com o do −∞ na tabela.",
        },
        "tour.step.maps.title": {"en": "Causal and bidirectional, side by side", "pt_BR": "Causal e bidirecional, lado a lado"},
        "tour.step.maps.body": {
            "en": "The same input with causal=True (GPT-2) and causal=False: the same weights of {model} with the "
            "mask removed; everything else is identical. The <b>Heads</b> panel opens the head whose two maps"
            " differ the most: with the mask its upper triangle is empty, without it every token also looks "
            "at the words after it. Ctrl+M switches the layer's heads between the two modes.<!--more--> No "
            "bidirectionally trained model ships here: a real RoBERTa was trained without the mask, so its "
            "heads learned to use the words on both sides; these weights never saw the future.",
            "pt_BR": "A mesma entrada com causal=True (GPT-2) e causal=False: os mesmos pesos de {model} com a máscara"
            " removida; todo o resto é idêntico. O painel <b>Cabeças</b> abre a cabeça cujos dois mapas mais "
            "diferem: com a máscara o triângulo de cima fica vazio, sem ela cada token também olha para as "
            "palavras que vêm depois. Ctrl+M alterna as cabeças da camada entre os dois modos.<!--more--> "
            "Nenhum modelo treinado de forma bidirecional vem aqui: um RoBERTa de verdade foi treinado sem a "
            "máscara, então as cabeças dele aprenderam a usar as palavras dos dois lados; estes pesos nunca "
            "viram o futuro.",
        },
        "tour.step.multihead_cost.title": {
            "en": "Multi-head costs no more than one head",
            "pt_BR": "Multi-head não custa mais que uma cabeça",
        },
        "tour.step.multihead_cost.body": {
            "en": "Divide, don't multiply: instead of {heads} heads of {d} dimensions each, the loaded model splits"
            " its {d} dimensions into {heads} slices of {dk}. One matmul (c_attn) makes Q, K and V; a reshape"
            " separates the heads. The <b>Shapes</b> panel lists the shapes your text really "
            "produced.<!--more--> GPT-2 small, the chapter's model, splits 768 into 12 × 64. The arithmetic "
            "under the shapes counts the parameters both ways.",
            "pt_BR": "Dividir, não multiplicar: em vez de {heads} cabeças de {d} dimensões cada, o modelo carregado "
            "divide as suas {d} dimensões em {heads} fatias de {dk}. Uma matmul (c_attn) produz Q, K e V; um "
            "reshape separa as cabeças. O painel <b>Dimensões</b> lista as formas que o seu texto produziu de"
            " fato.<!--more--> O GPT-2 small, o modelo da apostila, divide 768 em 12 × 64. A conta abaixo das"
            " formas conta os parâmetros dos dois jeitos.",
        },
        "tour.step.wo_mixes.title": {"en": "W^O mixes the heads", "pt_BR": "W^O mistura as cabeças"},
        "tour.step.wo_mixes.body": {
            "en": "Each head writes its result into its own slice of the concatenated vector. Without W^O, head 3's"
            " result would leave the attention block in head 3's dimensions only. W^O (c_proj in GPT-2) "
            "writes every head's slice into every output dimension, so the heads' findings are "
            "combined.<!--more--> Later, the next layer's projections and the MLP do read every dimension; "
            "W^O mixes the heads inside the block already. The tour nudged each head's values and counted "
            "which output dimensions of the attention block moved: with c_proj, and with c_proj replaced by "
            "the identity.",
            "pt_BR": "Cada cabeça escreve o seu resultado na sua própria fatia do vetor concatenado. Sem W^O, o "
            "resultado da cabeça 3 sairia do bloco de atenção só nas dimensões da cabeça 3. W^O (c_proj no "
            "GPT-2) escreve a fatia de cada cabeça em todas as dimensões de saída, e assim os achados das "
            "cabeças são combinados.<!--more--> Depois, as projeções da camada seguinte e o MLP leem todas as"
            " dimensões; W^O já mistura as cabeças dentro do bloco. O tour cutucou os valores de cada cabeça "
            "e contou quais dimensões da saída do bloco de atenção se mexeram: com o c_proj, e com o c_proj "
            "trocado pela identidade.",
        },
        "tour.step.leakage.title": {"en": "Proving there is no leakage", "pt_BR": "Provando que não há vazamento"},
        "tour.step.leakage.body": {
            "en": "Training demands every next-token prediction at once; without the mask a token could read its own "
            "answer: label leakage. The <b>Leakage</b> panel changes the last token and measures how much each earlier "
            "position's representation changed. Causal: zero. Bidirectional: quite a lot. This demonstrates causality "
            "instead of asserting it.",
            "pt_BR": "O treino cobra todas as previsões do próximo token de uma vez; sem a máscara um token poderia ler a "
            "própria resposta: vazamento de rótulo. O painel <b>Vazamento</b> troca o último token e mede o quanto a "
            "representação de cada posição anterior mudou. Causal: zero. Bidirecional: bastante. Isto demonstra a "
            "causalidade em vez de afirmá-la.",
        },
        "tour.step.budget.title": {"en": "A fixed budget: why there are many heads", "pt_BR": "Um orçamento fixo: por que há muitas cabeças"},
        "tour.step.budget.body": {
            "en": "The chapter's first idea. Every row of an attention map sums to 1: a token has a fixed budget of"
            " attention, so one head must <i>choose</i> where it goes. The head grid shows one query token's "
            "row in every head of the layer, and above them their average — the single blurred row one head "
            "would have to settle for. Pick any other query token in the view.",
            "pt_BR": "A primeira ideia da apostila. Cada linha de um mapa de atenção soma 1: um token tem um orçamento"
            " fixo de atenção, então uma cabeça precisa <i>escolher</i> para onde ele vai. A grade de cabeças"
            " mostra a linha de um token de consulta em cada cabeça da camada e, acima delas, a média — a "
            "única linha borrada com que uma só cabeça teria de se contentar. Escolha qualquer outro token de"
            " consulta na vista.",
        },
        "tour.step.portrait.title": {"en": "Portrait of the heads of layer 0", "pt_BR": "Retrato das cabeças da camada 0"},
        "tour.step.portrait.body": {
            "en": "Nobody assigns roles: the specialisations emerge from training. For each head of layer 0 the "
            "<b>Head portrait</b> panel measures where its weight goes. Look for the chapter's "
            "<i>positional</i> heads, which look back a fixed distance (most weight on one token back, e.g. "
            "the previous one), and <i>sink</i> heads, which park most of their weight on token 0.<!--more--> A mean "
            "distance of 1 alone does not make a head positional: a head split between itself and two tokens "
            "back averages 1 too. When this layer has none of a role, the tour says where the nearest are.",
            "pt_BR": "Ninguém atribui papéis: as especializações emergem do treino. Para cada cabeça da camada 0 o "
            "painel <b>Retrato das cabeças</b> mede para onde vai o seu peso. Procure as cabeças "
            "<i>posicionais</i> da apostila, que olham uma distância fixa para trás (a maior parte do peso "
            "num só token para trás, por exemplo o anterior), e as cabeças de <i>vala</i>, que estacionam a maior "
            "parte do peso no token 0.<!--more--> Distância média 1 sozinha não faz uma cabeça posicional: uma cabeça "
            "dividida entre si mesma e o token de duas posições atrás também dá média 1. Quando esta camada "
            "não tem nenhuma cabeça de um papel, o tour diz onde estão as mais próximas.",
        },
        "tour.show_head": {
            "en": "Show the {role} head: layer {layer}, head {head}",
            "pt_BR": "Mostrar ({role}): camada {layer}, cabeça {head}",
        },
        "tour.step.induction.title": {"en": "Induction heads: continuing a pattern", "pt_BR": "Cabeças de indução: continuar um padrão"},
        "tour.step.induction.body": {
            "en": "Among the specialisations the chapter names: <i>induction</i> heads look at the token that "
            "followed the earlier copy of the current one, so they can continue a repeated pattern. The tour "
            "has put a random word sequence said twice in the editor; your text comes back when you leave the"
            " step.<!--more--> In an induction head the second half draws a stripe one step right of the "
            "diagonal of the repeat: each word looks at the word after its first copy.",
            "pt_BR": "Entre as especializações que a apostila cita: cabeças de <i>indução</i> olham para o token que "
            "veio depois da cópia anterior do token atual, e assim podem continuar um padrão repetido. O tour"
            " pôs no editor uma sequência aleatória de palavras dita duas vezes; o seu texto volta quando "
            "você sair do passo.<!--more--> Numa cabeça de indução a segunda metade desenha uma faixa um "
            "passo à direita da diagonal da repetição: cada palavra olha para a palavra depois da sua "
            "primeira cópia.",
        },
        "tour.step.mask_designer.title": {"en": "Another mask: a sliding window", "pt_BR": "Outra máscara: uma janela deslizante"},
        "tour.step.mask_designer.body": {
            "en": "The causal mask is one choice among many. In the <b>Mask designer</b> each position now sees only the "
            "last {w} tokens (Mistral-style). The maps, the leakage diff and the portrait follow the mask; the verdicts "
            "are measured: the reach grows with the layers, and the cache needs only a window. Try prefix-LM, "
            "documents, or click your own cells.",
            "pt_BR": "A máscara causal é uma escolha entre muitas. No painel <b>Desenhar a máscara</b> cada posição agora "
            "vê só os últimos {w} tokens (como no Mistral). Os mapas, o vazamento e o retrato seguem a máscara; os "
            "veredictos são medidos: o alcance cresce com as camadas, e o cache precisa só de uma janela. Experimente "
            "prefix-LM, documentos ou clique nas suas próprias células.",
        },
        "tour.step.knockout.title": {"en": "Knock a head out", "pt_BR": "Desligue uma cabeça"},
        "tour.step.knockout.body": {
            "en": "Heads specialise and W^O mixes them. In <b>Head knockout</b> click heads to take them out before W^O "
            "(zero or mean) and watch the next-token guesses and the loss change; the head grid then shows the other "
            "heads without them. <b>Rank the heads</b> knocks each out alone.",
            "pt_BR": "As cabeças se especializam e W^O as mistura. Em <b>Desligar cabeças</b> clique em cabeças para "
            "tirá-las antes de W^O (zero ou média) e veja mudarem os palpites do próximo token e a perda; a grade de "
            "cabeças passa a mostrar as outras cabeças sem elas. <b>Ordenar as cabeças</b> desliga cada uma sozinha.",
        },
        "tour.step.kvcache.title": {
            "en": "What the KV cache saves",
            "pt_BR": "O que o cache KV poupa",
        },
        "tour.step.kvcache.body": {
            "en": "Under the mask a token never influences the ones before it, so the K and V of earlier positions "
            "never change when a token is appended: generation stores them and computes only the new token. "
            "The Generate tab just made three tokens that way: each step one new row against the cached keys. "
            "Press “Run the benchmark” to time that row against the whole triangle: {new} tokens with and without "
            "the cache.<!--more--> Attention then costs O(n) per token instead of O(n²). What the plot shows is the "
            "whole step: without the cache every step recomputes the matrix products over every position, so its "
            "time per token grows linearly with the position; with the cache it stays flat. The same weights "
            "without the mask could not be cached.",
            "pt_BR": "Com a máscara um token nunca influencia os anteriores, então K e V das posições anteriores nunca"
            " mudam quando um token é acrescentado: a geração os guarda e calcula só o token novo. A aba Gerar "
            "acabou de fazer três tokens assim: a cada passo uma linha nova contra as chaves guardadas no cache. "
            "Aperte “Rodar o benchmark” para cronometrar essa linha contra o triângulo inteiro: {new} tokens com e "
            "sem o cache.<!--more--> A atenção passa a custar O(n) por token em vez de O(n²). O gráfico mostra o "
            "passo inteiro: sem o cache cada passo recalcula os produtos de matrizes sobre todas as posições, então "
            "o tempo por token cresce linearmente com a posição; com o cache ele fica plano. Os mesmos pesos sem a "
            "máscara não poderiam usar o cache.",
        },
        # ---- the measured facts (numbers come from compute_fact, in bold)
        "tour.fact.too_short": {
            "en": "This step needs at least 2 tokens; your text has {n}. Type a longer sentence.",
            "pt_BR": "Este passo precisa de pelo menos 2 tokens; o seu texto tem {n}. Digite uma frase mais longa.",
        },
        "tour.fact.mask": {
            "en": "In layer {layer} the largest weight any head gives the future is {future_weight}.<!--more--> "
            "Your {n} tokens make {cells} query–key pairs: {allowed} may look (the diagonal and below), "
            "{forbidden} are the future. Every row of the {heads} heads sums to 1 (largest error "
            "{row_error}).",
            "pt_BR": "Na camada {layer} o maior peso que alguma cabeça dá ao futuro é {future_weight}.<!--more--> Os "
            "seus {n} tokens formam {cells} pares consulta–chave: {allowed} podem olhar (a diagonal e "
            "abaixo), {forbidden} são o futuro. Toda linha das {heads} cabeças soma 1 (maior erro "
            "{row_error}).",
        },
        "tour.fact.why_inf": {
            "en": "With the score zeroed the earlier positions move by up to {zero_leak}: the future leaks; with −∞ "
            "they move by {inf_leak}.<!--more--> On your text (layer {layer}, #{pos} “{old}” → “{new}”). With"
            " −∞ the future gets {inf_future}; with a score of 0 it still gets up to {zero_future} of a row. "
            "Zeroing after the softmax gives the future {after_future}, yet the past still moves by "
            "{after_leak}, through the softmax's denominator, and rows miss 1 by up to {after_error}. −1e9 "
            "and finfo.min give the future {e9_future} and {finfo_future}: as good as −∞.",
            "pt_BR": "Com o score zerado as posições anteriores mudam até {zero_leak}: o futuro vaza; com −∞ elas mudam "
            "{inf_leak}.<!--more--> No seu texto (camada {layer}, #{pos} “{old}” → “{new}”). Com −∞ o futuro "
            "recebe {inf_future}; com score 0 ainda recebe até {zero_future} de uma linha. Zerar depois do "
            "softmax dá {after_future} ao futuro, mas o passado ainda muda {after_leak}, pelo denominador do "
            "softmax, e as linhas deixam de somar 1 por até {after_error}. −1e9 e finfo.min dão {e9_future} e"
            " {finfo_future} ao futuro: tão bons quanto −∞.",
        },
        "tour.fact.why_inf.no_past": {
            "en": "The edited token is the first one, so nothing before it can leak; a score of 0 still gives the "
            "future up to {zero_future}.<!--more--> In layer {layer}: −∞ gives the future {inf_future}; "
            "zeroing after the softmax leaves rows off 1 by up to {after_error}.",
            "pt_BR": "O token editado é o primeiro, então nada antes dele pode vazar; score 0 ainda dá até "
            "{zero_future} ao futuro.<!--more--> Na camada {layer}: −∞ dá {inf_future} ao futuro; zerar "
            "depois do softmax faz as linhas deixarem de somar 1 por até {after_error}.",
        },
        "tour.fact.maps": {
            "en": "Without the mask the heads spend on average {bidir_mean_pct} of each row's budget on later "
            "tokens; with it, {causal_future}.<!--more--> Layer {layer}, {heads} heads, {n} tokens. With the "
            "mask the first token “{first}” looks only at itself (weight {first_self}). Without it head "
            "{bidir_head} spends {bidir_max_pct} on later tokens, and “{first}” keeps only "
            "{bidir_first_self_pct} for itself.",
            "pt_BR": "Sem a máscara as cabeças gastam em média {bidir_mean_pct} do orçamento de cada linha com tokens "
            "posteriores; com ela, {causal_future}.<!--more--> Camada {layer}, {heads} cabeças, {n} tokens. "
            "Com a máscara o primeiro token “{first}” só olha para si mesmo (peso {first_self}). Sem ela a "
            "cabeça {bidir_head} gasta {bidir_max_pct} com tokens posteriores, e “{first}” fica com só "
            "{bidir_first_self_pct} para si.",
        },
        "tour.fact.multihead_cost": {
            "en": "In {model}, splitting into {heads} heads adds no parameter: {per_layer} attention parameters per"
            " layer, as for one head.<!--more--> Q, K and V come out of the reshape as {heads} × {n} × {dk}: "
            "{heads} heads × {dk} = {width} columns each, exactly what 1 head × {d} would have. c_attn "
            "({c_attn} parameters) and c_proj ({c_proj}) are the same matrices either way ({single} for one "
            "head of {d}); {total} in all {layers} layers. {heads} full heads of {d} would need {multiplied} "
            "per layer, {ratio}× more. Q·Kᵀ costs {score_macs} multiply-adds for your {n} tokens either way.",
            "pt_BR": "No {model}, dividir em {heads} cabeças não acrescenta nenhum parâmetro: {per_layer} parâmetros "
            "de atenção por camada, como para uma cabeça.<!--more--> Q, K e V saem do reshape como {heads} × "
            "{n} × {dk}: {heads} cabeças × {dk} = {width} colunas cada, exatamente o que 1 cabeça × {d} "
            "teria. O c_attn ({c_attn} parâmetros) e o c_proj ({c_proj}) são as mesmas matrizes de qualquer "
            "jeito ({single} para uma cabeça de {d}); {total} nas {layers} camadas. {heads} cabeças inteiras "
            "de {d} precisariam de {multiplied} por camada, {ratio}× mais. Q·Kᵀ custa {score_macs} "
            "multiplicações-somas para os seus {n} tokens nos dois casos.",
        },
        "tour.fact.wo_mixes": {
            "en": "Through W^O a nudge to one head's values moves all {with_max} output dimensions; with the "
            "identity instead, only {without_max}.<!--more--> Layer {layer}, {d} output dimensions: "
            "{outside_pct} of the change lands in the other heads' slices. With c_proj replaced by the "
            "identity the nudge stays in the head's own slice of d_k = {dk} (head {example_head}: dimensions "
            "{example_lo}–{example_hi}), {identity_outside_pct} outside it.",
            "pt_BR": "Através de W^O uma cutucada nos valores de uma cabeça move todas as {with_max} dimensões da "
            "saída; com a identidade no lugar, só {without_max}.<!--more--> Camada {layer}, {d} dimensões de "
            "saída: {outside_pct} da mudança cai nas fatias das outras cabeças. Com o c_proj trocado pela "
            "identidade a cutucada fica na fatia da própria cabeça, de d_k = {dk} (cabeça {example_head}: "
            "dimensões {example_lo}–{example_hi}), {identity_outside_pct} fora dela.",
        },
        "tour.fact.wo_mixes.range": {
            "en": "Through W^O a nudge to one head's values moves up to {with_max} output dimensions; with the "
            "identity instead, only {without_max}.<!--more--> Layer {layer}, {d} output dimensions: each "
            "head's nudge moves {with_min} to {with_max} of them, {outside_pct} of the change landing in the "
            "other heads' slices. With c_proj replaced by the identity the nudge stays in the head's own "
            "slice of d_k = {dk} (head {example_head}: dimensions {example_lo}–{example_hi}), "
            "{identity_outside_pct} outside it.",
            "pt_BR": "Através de W^O uma cutucada nos valores de uma cabeça move até {with_max} dimensões da saída; "
            "com a identidade no lugar, só {without_max}.<!--more--> Camada {layer}, {d} dimensões de saída: "
            "a cutucada de cada cabeça move de {with_min} a {with_max} delas, com {outside_pct} da mudança "
            "caindo nas fatias das outras cabeças. Com o c_proj trocado pela identidade a cutucada fica na "
            "fatia da própria cabeça, de d_k = {dk} (cabeça {example_head}: dimensões "
            "{example_lo}–{example_hi}), {identity_outside_pct} fora dela.",
        },
        "tour.fact.leakage": {
            "en": "Under the mask the positions before #{pos} changed by exactly {causal_max}; without it, by up to"
            " {bidir_max}.<!--more--> #{pos} “{old}” became “{new}”; positions {before}, in each of the "
            "{layers} layers too: {causal_layers_max}. Without the mask position 0 changed by {bidir_first}.",
            "pt_BR": "Com a máscara as posições antes de #{pos} mudaram exatamente {causal_max}; sem ela, até "
            "{bidir_max}.<!--more--> #{pos} “{old}” virou “{new}”; posições {before}, em cada uma das "
            "{layers} camadas também: {causal_layers_max}. Sem a máscara a posição 0 mudou {bidir_first}.",
        },
        "tour.fact.leakage.first": {
            "en": "The edited token is the first one (#0 “{old}” → “{new}”): nothing comes before it to "
            "protect.<!--more--> Without the mask the later positions changed by up to {bidir_after}. Pick a "
            "later token in the token editor.",
            "pt_BR": "O token editado é o primeiro (#0 “{old}” → “{new}”): nada vem antes dele para "
            "proteger.<!--more--> Sem a máscara as posições seguintes mudaram até {bidir_after}. Escolha um "
            "token posterior no editor de tokens.",
        },
        "tour.fact.leakage.leaks": {
            "en": "Under this mask the positions before #{pos} changed by up to {causal_max}: this mask leaks the "
            "future!<!--more--> #{pos} “{old}” became “{new}”; positions {before} moved.",
            "pt_BR": "Com esta máscara as posições antes de #{pos} mudaram até {causal_max}: esta máscara vaza o "
            "futuro!<!--more--> #{pos} “{old}” virou “{new}”; as posições {before} se mexeram.",
        },
        "tour.fact.budget": {
            "en": "The heads of layer {layer} spend the budget of “{token}” on {chosen} different "
            "tokens.<!--more--> Query {query}; up to {top} on one token (head {top_head} on “{top_token}”). "
            "Their average puts at most {avg_top} anywhere (on “{avg_token}”): it is spread, with entropy "
            "{avg_entropy} (0 means all on one token) against {head_entropy} for a head on average.",
            "pt_BR": "As cabeças da camada {layer} gastam o orçamento de “{token}” em {chosen} tokens "
            "diferentes.<!--more--> Consulta {query}; até {top} num só token (cabeça {top_head} em "
            "“{top_token}”). A média delas põe no máximo {avg_top} em qualquer lugar (em “{avg_token}”): ela "
            "se espalha, com entropia {avg_entropy} (0 quer dizer tudo num só token) contra {head_entropy} de"
            " uma cabeça em média.",
        },
        "tour.fact.portrait": {
            "en": "Positional heads in layer {layer}: {positional}.<!--more--> Sink heads (at least {sink_min_pct} "
            "on token 0): {sinks}. The most focused head, head {focus_head}, puts {focus_sink_pct} on token "
            "0.",
            "pt_BR": "Cabeças posicionais na camada {layer}: {positional}.<!--more--> Cabeças de vala (pelo menos "
            "{sink_min_pct} no token 0): {sinks}. A cabeça mais focada, a cabeça {focus_head}, põe "
            "{focus_sink_pct} no token 0.",
        },
        "tour.item.sink": {
            "en": "head {head} ({sink_pct} on token 0)",
            "pt_BR": "cabeça {head} ({sink_pct} no token 0)",
        },
        "tour.item.kvcache_drift": {
            "en": "Your tokens alone against them plus “{appended}” differ by at most {n_vs_n1_max}: floating-point"
            " rounding from matrices of different shapes, not information. ",
            "pt_BR": "Os seus tokens sozinhos contra eles mais “{appended}” diferem no máximo {n_vs_n1_max}: "
            "arredondamento de ponto flutuante de matrizes de formatos diferentes, não informação. ",
        },
        "tour.item.kvcache_drift.exact": {
            "en": "Your tokens alone against them plus “{appended}” give the same keys and values to the last bit. ",
            "pt_BR": "Os seus tokens sozinhos contra eles mais “{appended}” dão as mesmas chaves e valores até o "
            "último bit. ",
        },
        "tour.fact.portrait.nearest": {
            "en": "Layer {layer} has no positional head: none puts {share_min_pct} of its weight on one token "
            "back.<!--more--> The nearest are in layer {near_layer}: {positional}. Sink heads of layer "
            "{layer} (at least {sink_min_pct} on token 0): {sinks}.",
            "pt_BR": "A camada {layer} não tem cabeça posicional: nenhuma põe {share_min_pct} do peso num só token "
            "para trás.<!--more--> As mais próximas estão na camada {near_layer}: {positional}. Cabeças de "
            "vala da camada {layer} (pelo menos {sink_min_pct} no token 0): {sinks}.",
        },
        "tour.fact.portrait.nowhere": {
            "en": "No head of this model is positional: none puts {share_min_pct} of its weight on one token "
            "back.<!--more--> Sink heads of layer {layer} (at least {sink_min_pct} on token 0): {sinks}.",
            "pt_BR": "Nenhuma cabeça deste modelo é posicional: nenhuma põe {share_min_pct} do peso num só token para "
            "trás.<!--more--> Cabeças de vala da camada {layer} (pelo menos {sink_min_pct} no token 0): "
            "{sinks}.",
        },
        "tour.item.positional.previous": {
            "en": "head {head} (looks at the previous token, {share_pct})",
            "pt_BR": "cabeça {head} (olha para o token anterior, {share_pct})",
        },
        "tour.item.positional.back": {
            "en": "head {head} (looks {offset} tokens back, {share_pct})",
            "pt_BR": "cabeça {head} (olha {offset} tokens para trás, {share_pct})",
        },
        "tour.fact.kvcache.pending.one_layer": {
            "en": "Under the mask the keys and values of your {n} earlier tokens stay the same when a token is "
            "appended (largest difference {causal_kv_max}).<!--more--> Your tokens followed by “{appended}”, "
            "against the same tokens followed by “{reference}”. This model has a single layer, whose K and V "
            "see only the token and its position: without the mask they change by {bidir_layer0} there, and "
            "no later layer exists to show the leak. {n_vs_n1}The speedup appears here once you run the "
            "benchmark.",
            "pt_BR": "Com a máscara as chaves e os valores dos seus {n} tokens anteriores continuam iguais quando um "
            "token é acrescentado (maior diferença {causal_kv_max}).<!--more--> Os seus tokens seguidos de "
            "“{appended}”, contra os mesmos tokens seguidos de “{reference}”. Este modelo tem uma única "
            "camada, cujo K e V só veem o token e a posição: sem a máscara eles mudam {bidir_layer0} ali, e "
            "não há camada seguinte para mostrar o vazamento. {n_vs_n1}A aceleração aparece aqui quando você "
            "rodar o benchmark.",
        },
        "tour.fact.induction": {
            "en": "Heads that reach the induction threshold on your tokens: {heads}.<!--more--> {n_induction} of "
            "{heads_total} heads; the threshold is {threshold}, on your {n} tokens. The best, layer "
            "{best_layer}, head {best_head}, scores {best_score} (at most {maximum} is possible here; a head "
            "spreading evenly scores about {uniform}); it is open in the head grid.",
            "pt_BR": "Cabeças que atingem o limiar de indução nos seus tokens: {heads}.<!--more--> {n_induction} de "
            "{heads_total} cabeças; o limiar é {threshold}, nos seus {n} tokens. A melhor, camada "
            "{best_layer}, cabeça {best_head}, tem score {best_score} (o máximo possível aqui é {maximum}; "
            "uma cabeça que se espalha por igual tem cerca de {uniform}); ela está aberta na grade de "
            "cabeças.",
        },
        "tour.fact.induction.none": {
            "en": "No head of this model reaches the induction threshold ({threshold}) on your tokens.<!--more--> "
            "On your {n} tokens the best, layer {best_layer}, head {best_head}, scores {best_score}, against "
            "at most {maximum} possible and about {uniform} for a head spreading evenly. It is open in the "
            "head grid so you can see how faint its stripe is.",
            "pt_BR": "Nenhuma cabeça deste modelo atinge o limiar de indução ({threshold}) nos seus tokens.<!--more-->"
            " Nos seus {n} tokens a melhor, camada {best_layer}, cabeça {best_head}, tem score {best_score}, "
            "contra no máximo {maximum} possível e cerca de {uniform} para uma cabeça que se espalha por "
            "igual. Ela está aberta na grade de cabeças para você ver o quanto a faixa é fraca.",
        },
        "tour.fact.induction.no_repeat": {
            "en": "Your {n} tokens repeat nothing, so no head can show induction here. Go back one step and forward "
            "again to get the repeated sequence.",
            "pt_BR": "Os seus {n} tokens não repetem nada, então nenhuma cabeça pode mostrar indução aqui. Volte um "
            "passo e avance de novo para ter a sequência repetida.",
        },
        "tour.item.induction": {
            "en": "layer {layer}, head {head} ({score})",
            "pt_BR": "camada {layer}, cabeça {head} ({score})",
        },
        "tour.fact.kvcache.pending": {
            "en": "Under the mask the keys and values of your {n} earlier tokens stay the same when a token is "
            "appended (largest difference {causal_kv_max}).<!--more--> Your tokens followed by “{appended}”, "
            "against the same tokens followed by “{reference}”. Without the mask they differ by up to "
            "{bidir_max} from layer 1 on (layer 0: {bidir_layer0}, its K and V see only the token and its "
            "position). {n_vs_n1}The speedup appears here once you run the benchmark.",
            "pt_BR": "Com a máscara as chaves e os valores dos seus {n} tokens anteriores continuam iguais quando um "
            "token é acrescentado (maior diferença {causal_kv_max}).<!--more--> Os seus tokens seguidos de "
            "“{appended}”, contra os mesmos tokens seguidos de “{reference}”. Sem a máscara eles diferem até "
            "{bidir_max} a partir da camada 1 (camada 0: {bidir_layer0}, o K e o V dela só veem o token e a "
            "posição). {n_vs_n1}A aceleração aparece aqui quando você rodar o benchmark.",
        },
        "tour.fact.kvcache.done": {
            "en": "With the cache, generating took {with_s} s instead of {without_s} s.<!--more--> {new_tokens} new"
            " tokens, {speedup}× faster. Appending “{appended}” instead of “{reference}” leaves the earlier "
            "keys and values unchanged under the mask (largest difference {causal_kv_max}; without it up to "
            "{bidir_max}), so they can be cached. Identical tokens both ways: {identical}. The cache held "
            "{positions} positions ({cache_bytes}).",
            "pt_BR": "Com o cache, gerar levou {with_s} s em vez de {without_s} s.<!--more--> {new_tokens} tokens "
            "novos, {speedup}× mais rápido. Acrescentar “{appended}” em vez de “{reference}” deixa as chaves "
            "e os valores anteriores inalterados com a máscara (maior diferença {causal_kv_max}; sem ela até "
            "{bidir_max}), então eles podem ir para o cache. Tokens idênticos nos dois modos: {identical}. O "
            "cache guardou {positions} posições ({cache_bytes}).",
        },
        "tour.fact.kvcache.done.unclear": {
            "en": "Your run shows no clear gain from the cache: without ÷ with = {speedup}.<!--more--> {without_s} "
            "s without the cache, {with_s} s with it. Yet appending “{appended}” instead of “{reference}” "
            "leaves the earlier keys and values unchanged under the mask (largest difference "
            "{causal_kv_max}), so they can be cached. On a model this small, or a busy machine, each step's "
            "fixed cost hides the prefix the cache saves recomputing. In the KV cache panel, try the longer "
            "run or GPT-2 small's shapes (random weights). Identical tokens both ways: {identical}.",
            "pt_BR": "A sua execução não mostra ganho claro do cache: sem ÷ com = {speedup}.<!--more--> {without_s} s "
            "sem o cache, {with_s} s com ele. Mesmo assim, acrescentar “{appended}” em vez de “{reference}” "
            "deixa as chaves e os valores anteriores inalterados com a máscara (maior diferença "
            "{causal_kv_max}), então eles podem ir para o cache. Num modelo tão pequeno, ou numa máquina "
            "ocupada, o custo fixo de cada passo esconde o prefixo que o cache evita recalcular. No painel do"
            " cache KV, tente a execução mais longa ou os formatos do GPT-2 small (pesos aleatórios). Tokens "
            "idênticos nos dois modos: {identical}.",
        },
        "tour.fact.mask_designer": {
            "en": "On your tokens a window of {w} lets information travel {back} positions back after all "
            "layers.<!--more--> {n} tokens, {layers} layers; measured: editing each token moved exactly the "
            "positions the reach grid shows: {confirmed}. Labels leak: {leaks}. Appending a token changed "
            "earlier keys and values by {kv_max}, and the cache keeps {keep} positions per layer.",
            "pt_BR": "Nos seus tokens uma janela de {w} leva a informação {back} posições para trás após todas as "
            "camadas.<!--more--> {n} tokens, {layers} camadas; medido: editar cada token moveu exatamente as "
            "posições que a grade de alcance mostra: {confirmed}. Os rótulos vazam: {leaks}. Acrescentar um "
            "token mudou as chaves e os valores anteriores em {kv_max}, e o cache guarda {keep} posições por "
            "camada.",
        },
        "tour.fact.knockout": {
            "en": "Knocking each head out alone, the one that matters most is layer {layer}, head {head}: the mean "
            "next-token loss goes from {before} to {after}.<!--more--> Each of the {heads} heads was knocked "
            "out alone on your text; without this one the loss rose by {delta}.",
            "pt_BR": "Desligando cada cabeça sozinha, a que mais pesa é a camada {layer}, cabeça {head}: a perda média"
            " do próximo token vai de {before} para {after}.<!--more--> Cada uma das {heads} cabeças foi "
            "desligada sozinha no seu texto; sem esta a perda subiu {delta}.",
        },
        "tour.fact.knockout.masked": {
            "en": "Knocking each head out alone, the one that matters most is layer {layer}, head {head}: the mean "
            "next-token loss goes from {before} to {after}.<!--more--> Under the mask the analysis runs with "
            "now, {mask} (the designer's; choose causal there for GPT-2's). Each of the {heads} heads was "
            "knocked out alone on your text; without this one the loss rose by {delta}.",
            "pt_BR": "Desligando cada cabeça sozinha, a que mais pesa é a camada {layer}, cabeça {head}: a perda média"
            " do próximo token vai de {before} para {after}.<!--more--> Com a máscara em uso na análise "
            "agora, {mask} (a do painel Desenhar a máscara; escolha causal lá para a do GPT-2). Cada uma das "
            "{heads} cabeças foi desligada sozinha no seu texto; sem esta a perda subiu {delta}.",
        },
        "tour.fact.knockout.short": {
            "en": "The loss needs at least 2 tokens; your text has {n}.",
            "pt_BR": "A perda precisa de pelo menos 2 tokens; o seu texto tem {n}.",
        },
        "tour.fact.kvcache.no_room": {
            "en": "Your {n} tokens fill the model's context of {ctx}: there is no room to append a token. Shorten the "
            "text.",
            "pt_BR": "Os seus {n} tokens ocupam todo o contexto do modelo, de {ctx}: não há espaço para acrescentar "
            "um token. Encurte o texto.",
        },
    }
)
