"""The main window's texts (menus, status bar, dialogs, the chapter's key ideas), English and
Brazilian Portuguese; the panels' own texts live with each panel.  Imported for its
registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "app.title": {"en": "Attention Lab", "pt_BR": "Attention Lab"},
        # the disclosure under a panel's or the tour's first paragraph (ui/panels/panel_kit.MORE)
        "more.more": {"en": "More…", "pt_BR": "Mais…"},
        "more.less": {"en": "Less", "pt_BR": "Menos"},
        # the model alone: Qt appends the application's display name, "Attention Lab", to the title bar
        "app.title_model": {"en": "{model}", "pt_BR": "{model}"},
        "model.demo": {
            "en": "demo model ({layers}×{heads}, {tokenizer})",
            "pt_BR": "modelo de demonstração ({layers}×{heads}, {tokenizer})",
        },
        "model.demo.gpt2_tokenizer": {"en": "GPT-2 tokenizer", "pt_BR": "tokenizador do GPT-2"},
        "model.demo.own_bpe": {
            "en": "own {n}-token BPE, not GPT-2's",
            "pt_BR": "BPE própria de {n} tokens, não a do GPT-2",
        },
        "menu.file": {"en": "&File", "pt_BR": "&Arquivo"},
        "menu.open_folder": {"en": "&Open model folder…", "pt_BR": "&Abrir pasta de modelo…"},
        "menu.open_cached": {"en": "Load a &cached Hugging Face model…", "pt_BR": "Carregar modelo do &cache do Hugging Face…"},
        "menu.use_demo": {"en": "Use the &demo model", "pt_BR": "Usar o modelo de &demonstração"},
        "menu.download": {"en": "Do&wnload a model…", "pt_BR": "&Baixar um modelo…"},
        "menu.export": {"en": "&Export", "pt_BR": "&Exportar"},
        "menu.export_png": {"en": "Plot of “{panel}” as &PNG…", "pt_BR": "Gráfico de “{panel}” como &PNG…"},
        "menu.export_svg": {"en": "Plot of “{panel}” as &SVG…", "pt_BR": "Gráfico de “{panel}” como &SVG…"},
        "menu.export_csv": {"en": "Numbers of “{panel}” as &CSV…", "pt_BR": "Números de “{panel}” como &CSV…"},
        "menu.quit": {"en": "&Quit", "pt_BR": "&Sair"},
        "menu.view": {"en": "&View", "pt_BR": "&Exibir"},
        "menu.reset_layout": {"en": "&Reset layout", "pt_BR": "&Restaurar disposição"},
        "menu.next_layer": {"en": "Next layer", "pt_BR": "Próxima camada"},
        "menu.previous_layer": {"en": "Previous layer", "pt_BR": "Camada anterior"},
        "menu.toggle_mask": {"en": "Toggle the causal mask", "pt_BR": "Ligar/desligar a máscara causal"},
        "menu.rerun": {"en": "Analyse again", "pt_BR": "Analisar de novo"},
        "menu.focus_text": {"en": "Edit the text", "pt_BR": "Editar o texto"},
        "menu.language": {"en": "&Language", "pt_BR": "&Idioma"},
        "menu.help": {"en": "&Help", "pt_BR": "A&juda"},
        "menu.key_ideas": {"en": "The chapter's &key ideas", "pt_BR": "As &ideias-chave da apostila"},
        "menu.about": {"en": "&About Attention Lab", "pt_BR": "&Sobre o Attention Lab"},
        "status.no_model": {"en": "no model", "pt_BR": "nenhum modelo"},
        "status.model": {"en": "{name} · {params} parameters · {size}", "pt_BR": "{name} · {params} parâmetros · {size}"},
        "status.tokens": {"en": "{n} tokens", "pt_BR": "{n} tokens"},
        "status.tokens_cut": {"en": "{n} of {total} tokens (cut)", "pt_BR": "{n} de {total} tokens (cortado)"},
        "status.mode_causal": {"en": "causal (mask on)", "pt_BR": "causal (máscara ligada)"},
        "status.mode_bidirectional": {"en": "bidirectional (mask off)", "pt_BR": "bidirecional (máscara desligada)"},
        "status.mode_designed": {"en": "mask {spec} (designer)", "pt_BR": "máscara {spec} (desenhada)"},
        "status.knocked_out": {"en": "heads knocked out: {count}", "pt_BR": "cabeças desligadas: {count}"},
        "status.layer": {"en": "layer {layer}", "pt_BR": "camada {layer}"},
        "status.time": {"en": "computed in {ms} ms", "pt_BR": "calculado em {ms} ms"},
        "status.busy": {"en": "computing…", "pt_BR": "calculando…"},
        "status.loading": {"en": "Loading model {spec}…", "pt_BR": "Carregando o modelo {spec}…"},
        "status.loaded": {"en": "Model loaded: {name}", "pt_BR": "Modelo carregado: {name}"},
        "status.exported": {"en": "Saved {path}", "pt_BR": "Salvo: {path}"},
        "status.nothing_to_export": {
            "en": "“{panel}” has nothing to export yet.",
            "pt_BR": "“{panel}” ainda não tem nada para exportar.",
        },
        "status.settings_reset": {
            "en": "Some saved settings were unreadable and were reset to defaults: {what}",
            "pt_BR": "Algumas configurações salvas estavam ilegíveis e voltaram ao padrão: {what}",
        },
        "status.settings_unwritable": {
            "en": "Settings can't be saved to {file}: your changes last until you quit.",
            "pt_BR": "As configurações não podem ser salvas em {file}: suas mudanças valem até você sair.",
        },
        "status.settings_not_saved": {"en": "settings not saved", "pt_BR": "configurações não salvas"},
        "dialog.open_folder": {"en": "Open a GPT-2 model folder", "pt_BR": "Abrir uma pasta de modelo GPT-2"},
        "dialog.cached_title": {"en": "Cached Hugging Face model", "pt_BR": "Modelo no cache do Hugging Face"},
        "dialog.cached_label": {
            "en": "Model id in the local Hugging Face cache (nothing is downloaded):",
            "pt_BR": "Id do modelo no cache local do Hugging Face (nada é baixado):",
        },
        "dialog.download_title": {"en": "Download a model", "pt_BR": "Baixar um modelo"},
        "dialog.download_label": {
            "en": "Hugging Face model id to download (GPT-2 family, safetensors only; gpt2 is about {size} MB):",
            "pt_BR": "Id do modelo no Hugging Face a baixar (família GPT-2, só safetensors; o gpt2 tem cerca de {size} MB):",
        },
        "dialog.downloading": {"en": "Downloading {repo}: {file}", "pt_BR": "Baixando {repo}: {file}"},
        "dialog.cancel": {"en": "Cancel", "pt_BR": "Cancelar"},
        "dialog.export_title": {"en": "Export", "pt_BR": "Exportar"},
        "about.title": {"en": "About Attention Lab", "pt_BR": "Sobre o Attention Lab"},
        "about.text": {
            "en": "<h3>Attention Lab {version}</h3><p>See multi-head attention and the causal mask inside GPT-2, "
            "offline, on a laptop CPU.</p><p>Model: {model}</p><p>MIT License. The GPT-2 tokenizer data comes "
            "from OpenAI's GPT-2 release (MIT).</p>",
            "pt_BR": "<h3>Attention Lab {version}</h3><p>Veja a atenção multi-cabeça e a máscara causal dentro do "
            "GPT-2, offline, na CPU de um notebook.</p><p>Modelo: {model}</p><p>Licença MIT. Os dados do "
            "tokenizador do GPT-2 vêm da publicação do GPT-2 da OpenAI (MIT).</p>",
        },
        "ideas.title": {"en": "Multi-head and the causal mask: key ideas", "pt_BR": "Multi-head e a máscara causal: ideias-chave"},
        "ideas.text": {
            "en": "<ol>"
            "<li><b>One head is a fixed budget.</b> Each attention row sums to 1, so a single head must average "
            "relations that are qualitatively different (subject, object, time, agreement).</li>"
            "<li><b>Divide, don't multiply.</b> GPT-2 small splits its 768 dimensions into 12 heads of 64: "
            "multi-head costs no more than one head. c_attn makes Q, K, V in one matmul; a reshape separates the "
            "heads; W<sup>O</sup> (c_proj) then writes every head's slice into every output dimension of the block — "
            "the split alone would leave each head's result in its own slice.</li>"
            "<li><b>The causal mask is the line that defines GPT.</b> Before the softmax, every future position "
            "gets −∞, so its weight is exactly 0 and each row still sums to 1. Zeroing the score would give "
            "e<sup>0</sup> = 1; zeroing after the softmax breaks the sum. causal=True is GPT-2, causal=False the same "
            "weights with the mask removed (a bidirectional model like RoBERTa is also trained that way); "
            "everything else is identical.</li>"
            "<li><b>No label leakage.</b> Training predicts every next token at once; without the mask a token "
            "could read its own answer. Change a late token: under the mask earlier positions change by exactly 0.</li>"
            "<li><b>The KV cache is the free gift.</b> Since the past never depends on the future, K and V of "
            "earlier tokens never change: store them and compute only the new token. Attention's own part drops from O(n²) "
            "to O(n) per token; the KV cache panel measures the whole step: without the cache its time grows linearly "
            "with the position, with it the time stays flat.</li>"
            "</ol>",
            "pt_BR": "<ol>"
            "<li><b>Uma cabeça é um orçamento fixo.</b> Cada linha da atenção soma 1, então uma única cabeça precisa "
            "fazer a média de relações qualitativamente diferentes (sujeito, objeto, tempo, concordância).</li>"
            "<li><b>Dividir, não multiplicar.</b> O GPT-2 small divide as suas 768 dimensões em 12 cabeças de 64: "
            "multi-head não custa mais que uma cabeça. O c_attn gera Q, K, V numa matmul só; um reshape separa as "
            "cabeças; W<sup>O</sup> (c_proj) depois escreve a fatia de cada cabeça em todas as dimensões de saída do "
            "bloco — a divisão sozinha deixaria o resultado de cada cabeça na sua fatia.</li>"
            "<li><b>A máscara causal é a linha que define o GPT.</b> Antes do softmax, toda posição futura recebe "
            "−∞, então o peso dela é exatamente 0 e cada linha continua somando 1. Zerar o score daria "
            "e<sup>0</sup> = 1; zerar depois do softmax quebra a soma. causal=True é o GPT-2, causal=False os mesmos "
            "pesos com a máscara removida (um modelo bidirecional como o RoBERTa também é treinado assim); "
            "todo o resto é idêntico.</li>"
            "<li><b>Sem vazamento de rótulo.</b> O treino prevê todos os próximos tokens de uma vez; sem a máscara "
            "um token poderia ler a própria resposta. Troque um token no fim: com a máscara as posições anteriores "
            "mudam exatamente 0.</li>"
            "<li><b>O cache KV é o presente de graça.</b> Como o passado nunca depende do futuro, K e V dos tokens "
            "anteriores nunca mudam: guarde-os e calcule só o token novo. A parte da própria atenção cai de O(n²) para O(n) "
            "por token; o painel do cache KV mede o passo inteiro: sem o cache o tempo dele cresce linearmente com a "
            "posição, com ele o tempo fica plano.</li>"
            "</ol>",
        },
    }
)
