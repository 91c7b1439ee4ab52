"""The texts of the mask designer, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition: máscara causal, vazamento de rótulo, cache KV, camada).
Imported by ``ui/panels/mask_designer.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "designer.title": {"en": "Mask designer", "pt_BR": "Desenhar a máscara"},
        "designer.explain": {
            "en": "<b>Beyond the chapter's two masks.</b> Choose the mask the model runs under: the heatmaps, the "
            "leakage diff and the portrait follow it. The verdicts below are <b>computed</b> on this text: the reach "
            "after all layers, an edit of every token (does a later token move an earlier position?) and the K/V of "
            "earlier positions when a token is appended.",
            "pt_BR": "<b>Além das duas máscaras da apostila.</b> Escolha a máscara com que o modelo roda: os mapas, o "
            "vazamento e o retrato a seguem. Os veredictos abaixo são <b>calculados</b> neste texto: o alcance após "
            "todas as camadas, a edição de cada token (um token posterior move uma posição anterior?) e o K/V das "
            "posições anteriores quando um token é acrescentado.",
        },
        "designer.kind": {"en": "Mask", "pt_BR": "Máscara"},
        "designer.kind.causal": {"en": "causal (GPT-2)", "pt_BR": "causal (GPT-2)"},
        "designer.kind.bidirectional": {"en": "bidirectional (mask removed)", "pt_BR": "bidirecional (sem máscara)"},
        "designer.kind.prefix": {"en": "prefix-LM (first k both ways)", "pt_BR": "prefix-LM (k primeiras nos dois sentidos)"},
        "designer.kind.window": {"en": "sliding window (w positions)", "pt_BR": "janela deslizante (w posições)"},
        "designer.kind.documents": {"en": "documents (split at a token)", "pt_BR": "documentos (separados por um token)"},
        "designer.kind.custom": {"en": "custom (click cells)", "pt_BR": "personalizada (clique nas células)"},
        "designer.size.prefix": {"en": "k =", "pt_BR": "k ="},
        "designer.size.window": {"en": "w =", "pt_BR": "w ="},
        "designer.separator": {"en": "separator", "pt_BR": "separador"},
        "designer.separator_tip": {
            "en": "The token that ends a document, e.g. . or \\n for a newline",
            "pt_BR": "O token que encerra um documento, p. ex. . ou \\n para uma quebra de linha",
        },
        "designer.to_custom": {"en": "Edit as custom", "pt_BR": "Editar como personalizada"},
        "designer.to_custom_tip": {
            "en": "Copy this mask into the custom grid, then click cells to allow or forbid them",
            "pt_BR": "Copiar esta máscara para a grade personalizada e então clicar nas células para permiti-las ou proibi-las",
        },
        "designer.grid": {"en": "The mask (light: may look)", "pt_BR": "A máscara (claro: pode olhar)"},
        "designer.grid.custom": {"en": "The mask: click cells", "pt_BR": "A máscara: clique nas células"},
        "designer.custom_tip": {
            "en": "Click a cell to allow or forbid it; the diagonal stays allowed, so no row is empty.",
            "pt_BR": "Clique numa célula para permiti-la ou proibi-la; a diagonal fica permitida, então nenhuma linha fica vazia.",
        },
        "designer.reach": {"en": "Reach after {layers} layers", "pt_BR": "Alcance após {layers} camadas"},
        "designer.query": {"en": "query (looks)", "pt_BR": "consulta (olha)"},
        "designer.key": {"en": "key (looked at)", "pt_BR": "chave (é olhada)"},
        "designer.influenced": {"en": "position influenced", "pt_BR": "posição influenciada"},
        "designer.source": {"en": "token that influences", "pt_BR": "token que influencia"},
        "designer.verdicts": {"en": "Verdicts (measured on this text)", "pt_BR": "Veredictos (medidos neste texto)"},
        "designer.measuring": {"en": "Measuring… {done} of {total} edits", "pt_BR": "Medindo… {done} de {total} edições"},
        "designer.waiting": {"en": "Measuring…", "pt_BR": "Medindo…"},
        "designer.empty": {"en": "Type a text to design a mask for it.", "pt_BR": "Digite um texto para desenhar uma máscara para ele."},
        "designer.unserved": {"en": "No one measures the verdicts here.", "pt_BR": "Ninguém mede os veredictos aqui."},
        "designer.failed": {"en": "The measurement failed: {reason}", "pt_BR": "A medição falhou: {reason}"},
        "designer.loss": {"en": "Loss taken", "pt_BR": "Perda calculada"},
        "designer.loss.every": {"en": "at every position", "pt_BR": "em todas as posições"},
        "designer.loss.after-prefix": {"en": "only after the prefix", "pt_BR": "só depois do prefixo"},
        "designer.leaks.yes": {
            "en": "<b>Loss taken {where}: does parallel training leak labels? Yes.</b> {count} scored positions see a "
            "later token ({positions}): {query} sees {later}, its own label or beyond.",
            "pt_BR": "<b>Perda calculada {where}: o treino em paralelo vaza os rótulos? Sim.</b> {count} posições avaliadas "
            "veem um token posterior ({positions}): {query} vê {later}, o próprio rótulo ou além.",
        },
        "designer.leaks.no": {
            "en": "<b>Loss taken {where}: does parallel training leak labels? No.</b> No position sees a later token.",
            "pt_BR": "<b>Perda calculada {where}: o treino em paralelo vaza os rótulos? Não.</b> Nenhuma posição vê um token "
            "posterior.",
        },
        "designer.leaks.no_after_prefix": {
            "en": "<b>Loss taken {where}: does parallel training leak labels? No.</b> The loss starts at {start}, whose "
            "label is the first token after the prefix: no scored position sees a later token. The prefix positions "
            "before it see their own labels, which is why they are not scored.",
            "pt_BR": "<b>Perda calculada {where}: o treino em paralelo vaza os rótulos? Não.</b> A perda começa em {start}, "
            "cujo rótulo é o primeiro token depois do prefixo: nenhuma posição avaliada vê um token posterior. As "
            "posições do prefixo antes dela veem os próprios rótulos, e por isso não são avaliadas.",
        },
        "designer.leaks.measured_yes": {
            "en": "Measured: editing a later token moved a scored earlier position.",
            "pt_BR": "Medido: editar um token posterior moveu uma posição anterior avaliada.",
        },
        "designer.leaks.measured_no": {
            "en": "Measured: editing a token moved no scored earlier position (exactly 0).",
            "pt_BR": "Medido: editar um token não moveu nenhuma posição anterior avaliada (exatamente 0).",
        },
        "designer.kv.yes": {
            "en": "<b>Can it use a KV cache? Yes.</b> Appending a token left every earlier K and V unchanged "
            "(largest change: exactly 0). The cache keeps {keep} positions per layer.",
            "pt_BR": "<b>Pode usar o cache KV? Sim.</b> Acrescentar um token deixou todos os K e V anteriores iguais "
            "(maior mudança: exatamente 0). O cache guarda {keep} posições por camada.",
        },
        "designer.kv.bounded": {
            "en": " Memory stays bounded: no query reads more than {keep} of the {n} positions.",
            "pt_BR": " A memória fica limitada: nenhuma consulta lê mais do que {keep} das {n} posições.",
        },
        "designer.kv.no": {
            "en": "<b>Can it use a KV cache? No.</b> Appending a token changed earlier positions' K or V (largest "
            "relative change: {change}): cached values would be stale.",
            "pt_BR": "<b>Pode usar o cache KV? Não.</b> Acrescentar um token mudou o K ou o V de posições anteriores "
            "(maior mudança relativa: {change}): os valores guardados ficariam velhos.",
        },
        "designer.reach.confirmed": {
            "en": "Reach confirmed by measurement: editing each of {probed} tokens moved exactly the positions the grid shows.",
            "pt_BR": "Alcance confirmado pela medição: editar cada um de {probed} tokens moveu exatamente as posições que a grade mostra.",
        },
        "designer.reach.differs": {
            "en": "The measurement differs from the reach grid on this text (a weight that is 0 in practice).",
            "pt_BR": "A medição difere da grade de alcance neste texto (um peso que na prática é 0).",
        },
        "designer.reach.marks": {
            "en": "Dots: measured on the model — editing the column's token changed that row's final state "
            "({probed} of {n} tokens edited). Red cells without a dot were not measured.",
            "pt_BR": "Pontos: medido no modelo — editar o token da coluna mudou o estado final daquela linha "
            "({probed} de {n} tokens editados). Células vermelhas sem ponto não foram medidas.",
        },
        "designer.reach.marks_differ": {
            "en": "Yellow ×: {cells} cells where the measurement and the grid disagree.",
            "pt_BR": "× amarelo: {cells} células em que a medição e a grade discordam.",
        },
        "designer.bad_separator": {"en": "Separator: {reason}", "pt_BR": "Separador: {reason}"},
    }
)
