"""The texts of the KV-cache panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/kv_bench.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "kvbench.title": {"en": "KV cache", "pt_BR": "Cache KV"},
        "kvbench.tab.bench": {"en": "Benchmark", "pt_BR": "Benchmark"},
        "kvbench.tab.stability": {"en": "Why the cache works", "pt_BR": "Por que o cache funciona"},
        "kvbench.explain": {
            "en": "<b>Step 5: the KV cache.</b> A token never influences the ones before it, so the K and V of "
            "earlier positions never change when a token is appended: generation stores them and computes "
            "only the new token. Press Run to generate {new} tokens after your {n}-token text, with and "
            "without the cache.<!--more--> Attention's own part then costs O(n) per token instead of O(n²). "
            "The plot times the whole step, where the matrix products over every position weigh most at these"
            " lengths: without the cache the time per token grows linearly with the position, with it the "
            "time stays flat. The fitted slopes are written under the plot.",
            "pt_BR": "<b>Passo 5: o cache KV.</b> Um token nunca influencia os anteriores, então os vetores K e V das "
            "posições anteriores nunca mudam quando um token é acrescentado: a geração os guarda e calcula só"
            " o token novo. Aperte Rodar para gerar {new} tokens depois do seu texto de {n} tokens, com e sem"
            " o cache.<!--more--> A parte da própria atenção passa a custar O(n) por token em vez de O(n²). O"
            " gráfico mede o passo inteiro, em que os produtos de matrizes sobre todas as posições pesam mais"
            " nesses comprimentos: sem o cache o tempo por token cresce linearmente com a posição, com ele o "
            "tempo fica plano. As inclinações ajustadas estão escritas abaixo do gráfico.",
        },
        "kvbench.empty": {
            "en": "<b>Step 5: the KV cache.</b> Analyse a text first: it becomes the prompt.",
            "pt_BR": "<b>Passo 5: o cache KV.</b> Analise um texto primeiro: ele vira o prompt.",
        },
        "kvbench.new_tokens": {"en": "New tokens", "pt_BR": "Tokens novos"},
        "kvbench.repetitions": {"en": "Repetitions", "pt_BR": "Repetições"},
        "kvbench.repetitions.tip": {
            "en": "With and without the cache run this many times, taking turns; each position's time is its "
            "fastest (a busy machine only ever adds time).",
            "pt_BR": "Com e sem o cache rodam esse número de vezes, alternando; o tempo de cada posição é o mais "
            "rápido (uma máquina ocupada só acrescenta tempo).",
        },
        "kvbench.model": {"en": "Model timed", "pt_BR": "Modelo medido"},
        "kvbench.model.loaded": {"en": "the loaded model", "pt_BR": "o modelo carregado"},
        "kvbench.model.gpt2-shapes": {
            "en": "GPT-2 small's shapes, random weights",
            "pt_BR": "formatos do GPT-2 small, pesos aleatórios",
        },
        "kvbench.long_run": {"en": "Longer run ({n} tokens)", "pt_BR": "Execução mais longa ({n} tokens)"},
        "kvbench.long_run.tip": {
            "en": "The longer the generation, the more prefix the cache saves recomputing: the contrast grows.",
            "pt_BR": "Quanto mais longa a geração, mais prefixo o cache evita recalcular: o contraste cresce.",
        },
        "kvbench.growth": {"en": "Growth per position", "pt_BR": "Crescimento por posição"},
        # the fit on a line of its own: on one line the legend ran past a laptop's chart
        "kvbench.with_fit": {"en": "{curve}<br>dashed fit: {slope} ms/pos.",
                             "pt_BR": "{curve}<br>ajuste: {slope} ms/pos."},
        "kvbench.status.unclear": {
            "en": "KV cache: no clear gain in this run (without ÷ with = {x}); identical output: {identical}",
            "pt_BR": "Cache KV: nenhum ganho claro nesta execução (sem ÷ com = {x}); saída idêntica: {identical}",
        },
        "kvbench.run": {"en": "Run", "pt_BR": "Rodar"},
        "kvbench.cancel": {"en": "Cancel", "pt_BR": "Cancelar"},
        "kvbench.with": {"en": "with cache", "pt_BR": "com cache"},
        "kvbench.without": {"en": "without cache", "pt_BR": "sem cache"},
        "kvbench.plot.x": {"en": "position of the new token", "pt_BR": "posição do token novo"},
        "kvbench.plot.y": {"en": "ms per token", "pt_BR": "ms por token"},
        "kvbench.plot.title": {"en": "Time per generated token", "pt_BR": "Tempo por token gerado"},
        "kvbench.progress": {
            "en": "{mode}: token {i} of {total} (repetition {rep} of {reps})",
            "pt_BR": "{mode}: token {i} de {total} (repetição {rep} de {reps})",
        },
        "kvbench.idle": {"en": "Press Run to measure.", "pt_BR": "Aperte Rodar para medir."},
        "kvbench.cancelled": {"en": "Cancelled: no result for an incomplete run.", "pt_BR": "Cancelado: sem resultado para uma execução incompleta."},
        "kvbench.failed": {"en": "The benchmark failed: {message}", "pt_BR": "O benchmark falhou: {message}"},
        "kvbench.no_room": {
            "en": "The text fills the model's context ({ctx} positions): shorten it to leave room for new tokens.",
            "pt_BR": "O texto ocupa todo o contexto do modelo ({ctx} posições): encurte-o para sobrar espaço para tokens novos.",
        },
        "kvbench.no_worker": {
            "en": "Nothing can run: the background computation is not available.",
            "pt_BR": "Nada pode rodar: o cálculo em segundo plano não está disponível.",
        },
        "kvbench.results": {"en": "Results", "pt_BR": "Resultados"},
        "kvbench.total": {"en": "Total time", "pt_BR": "Tempo total"},
        "kvbench.rate": {"en": "Tokens per second", "pt_BR": "Tokens por segundo"},
        "kvbench.speedup": {"en": "Speedup", "pt_BR": "Aceleração"},
        "kvbench.identical": {"en": "Identical output", "pt_BR": "Saída idêntica"},
        "kvbench.cache_size": {"en": "Cache size", "pt_BR": "Tamanho do cache"},
        "kvbench.total.value": {
            "en": "{with_s} s with, {without_s} s without",
            "pt_BR": "{with_s} s com, {without_s} s sem",
        },
        "kvbench.rate.value": {"en": "{with_r} with, {without_r} without", "pt_BR": "{with_r} com, {without_r} sem"},
        "kvbench.yes": {"en": "yes: the same {k} tokens both ways", "pt_BR": "sim: os mesmos {k} tokens nos dois modos"},
        "kvbench.no": {"en": "no: the outputs differ", "pt_BR": "não: as saídas diferem"},
        "kvbench.cache.formula": {
            "en": "2 (K and V) × {layers} layers × {heads} heads × {dk} (d_k) × {positions} positions × {bpv} bytes = {size}",
            "pt_BR": "2 (K e V) × {layers} camadas × {heads} cabeças × {dk} (d_k) × {positions} posições × {bpv} bytes = {size}",
        },
        "kvbench.cache.per_position": {
            "en": "{model}: 2 (K and V) × {layers} layers × {heads} heads × {dk} (d_k) × {bpv} bytes = {size} per "
            "position; the run counts your text in that model's tokens",
            "pt_BR": "{model}: 2 (K e V) × {layers} camadas × {heads} cabeças × {dk} (d_k) × {bpv} bytes = {size} por "
            "posição; a execução conta o seu texto nos tokens desse modelo",
        },
        "kvbench.status": {
            "en": "KV cache: {x}× faster; identical output: {identical}",
            "pt_BR": "Cache KV: {x}× mais rápido; saída idêntica: {identical}",
        },
        "kvbench.generated": {"en": "Generated text (greedy)", "pt_BR": "Texto gerado (guloso)"},
        "kvbench.ran_on": {
            "en": "{model}, prompt of {n} tokens, {reps} repetition(s).",
            "pt_BR": "{model}, prompt de {n} tokens, {reps} repetição(ões).",
        },
        "kvbench.first_note": {
            "en": "The first token with the cache also processes the whole prompt.",
            "pt_BR": "O primeiro token com o cache também processa o prompt inteiro.",
        },
        # ---- K/V stability
        "kvstab.explain": {
            "en": "<b>Why the cache works, and why the same weights without the mask couldn't use it.</b> Append "
            "one token to your text, recompute everything, and measure how much the keys and values of the "
            "<i>earlier</i> positions changed. Under the causal mask: exactly 0, so they can be "
            "stored.<!--more--> The change is ‖k′ − k‖ / ‖k‖ per layer and position, all heads. Without the "
            "mask the new token reaches every position from the second layer on. The first layer (layer 0) is"
            " equal in both modes: its K and V are computed from the embeddings alone (token + position), "
            "before any attention has mixed positions.",
            "pt_BR": "<b>Por que o cache funciona, e por que os mesmos pesos sem a máscara não poderiam usá-lo.</b> "
            "Acrescente um token ao seu texto, recalcule tudo e meça quanto as chaves e os valores das "
            "posições <i>anteriores</i> mudaram. Com a máscara causal: exatamente 0, então podem ser "
            "guardados.<!--more--> A mudança é ‖k′ − k‖ / ‖k‖ por camada e posição, todas as cabeças. Sem a "
            "máscara o token novo alcança todas as posições a partir da segunda camada. A primeira camada "
            "(camada 0) é igual nos dois modos: o K e o V dela vêm só dos embeddings (token + posição), antes"
            " que qualquer atenção misture posições.",
        },
        "kvstab.show": {"en": "Show", "pt_BR": "Mostrar"},
        "kvstab.keys": {"en": "keys (K)", "pt_BR": "chaves (K)"},
        "kvstab.values": {"en": "values (V)", "pt_BR": "valores (V)"},
        "kvstab.causal": {"en": "causal (GPT-2): {what}", "pt_BR": "causal (GPT-2): {what}"},
        "kvstab.bidirectional": {"en": "bidirectional (no mask): {what}", "pt_BR": "bidirecional (sem máscara): {what}"},
        "kvstab.layer": {"en": "layer", "pt_BR": "camada"},
        "kvstab.position": {"en": "earlier position", "pt_BR": "posição anterior"},
        "kvstab.appended": {
            "en": "Appended “{appended}” (the model's next token) at position {n}, compared with “{reference}” "
            "(its second choice), both fully recomputed.",
            "pt_BR": "Acrescentado “{appended}” (o próximo token do modelo) na posição {n}, comparado com "
            "“{reference}” (a segunda opção), ambos recalculados do zero.",
        },
        "kvstab.causal_zero": {
            "en": "<b>Causal:</b> all {cells} K and V changes are exactly 0: the cache stays valid. ({layers} "
            "layers × {n} positions.)",
            "pt_BR": "<b>Causal:</b> todas as {cells} mudanças de K e V são exatamente 0: o cache continua válido. "
            "({layers} camadas × {n} posições.)",
        },
        "kvstab.causal_nonzero": {
            "en": "<b>Causal:</b> K and V changed by up to {max}: the cache would be stale!",
            "pt_BR": "<b>Causal:</b> K e V mudaram até {max}: o cache ficaria obsoleto!",
        },
        "kvstab.bidir": {
            "en": "<b>Bidirectional:</b> K and V of layers 1–{last} changed by up to {max}: every representation "
            "would have to be recomputed. Layer 0 changed by {layer0}.",
            "pt_BR": "<b>Bidirecional:</b> K e V das camadas 1–{last} mudaram até {max}: toda representação teria de "
            "ser recalculada. A camada 0 mudou {layer0}.",
        },
        "kvstab.bidir_one_layer": {
            "en": "<b>Bidirectional:</b> layer 0 changed by {layer0}. This model has a single layer, whose K and V "
            "see only the token and its position: no later layer is there to show the leak.",
            "pt_BR": "<b>Bidirecional:</b> a camada 0 mudou {layer0}. Este modelo tem uma única camada, cujo K e V só "
            "veem o token e a posição: não há camada seguinte para mostrar o vazamento.",
        },
        "kvstab.empty": {
            "en": "No text analysed yet: analyse one and this tab appends a token to it and shows, layer by layer, "
            "how much the earlier keys and values moved (with the causal mask and without it).",
            "pt_BR": "Nenhum texto analisado ainda: analise um e esta aba acrescenta um token a ele e mostra, camada "
            "por camada, quanto as chaves e os valores anteriores mudaram (com a máscara causal e sem ela).",
        },
        "kvstab.computing": {"en": "Appending a token and recomputing…", "pt_BR": "Acrescentando um token e recalculando…"},
        "kvstab.failed": {"en": "K/V stability could not be measured: {message}", "pt_BR": "Não foi possível medir a estabilidade de K/V: {message}"},
        "kvstab.no_room": {
            "en": "The text fills the model's context: no room to append a token.",
            "pt_BR": "O texto ocupa todo o contexto do modelo: não há espaço para acrescentar um token.",
        },
        "kvstab.zero": {"en": "0 (exact)", "pt_BR": "0 (exato)"},
        "kvstab.all_zero": {"en": "every cell: exactly 0", "pt_BR": "todas as células: exatamente 0"},
    }
)
