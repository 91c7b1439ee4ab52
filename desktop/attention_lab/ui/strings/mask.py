"""The texts of the mask panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/mask.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "mask.title": {"en": "Mask", "pt_BR": "Máscara"},
        "mask.explain": {
            "en": "<b>Step 1: the causal mask.</b> Before the softmax, every score of a future position gets −∞ "
            "added. Rows are queries (the token that looks), columns are keys (the token looked at): the "
            "triangle above the diagonal is the future, which does not exist. Each row then sums to 1 over "
            "the past only.",
            "pt_BR": "<b>Passo 1: a máscara causal.</b> Antes do softmax, todo score de uma posição futura recebe −∞. "
            "As linhas são consultas (o token que olha), as colunas são chaves (o token olhado): o triângulo "
            "acima da diagonal é o futuro, que não existe. Cada linha então soma 1 só sobre o passado.",
        },
        "mask.grid": {"en": "The mask added to the scores", "pt_BR": "A máscara somada aos scores"},
        "mask.query": {"en": "query (destination) →", "pt_BR": "consulta (destino) →"},
        "mask.key": {"en": "key (source) →", "pt_BR": "chave (origem) →"},
        "mask.ascii": {"en": "The lab's print", "pt_BR": "A impressão do lab"},
        "mask.ascii.what": {"en": "Print", "pt_BR": "Imprimir"},
        "mask.ascii.mask": {"en": "the mask (1 = may look, . = forbidden)", "pt_BR": "a máscara (1 = pode olhar, . = proibido)"},
        "mask.ascii.head": {"en": "weights of head {head}, layer {layer}", "pt_BR": "pesos da cabeça {head}, camada {layer}"},
        "mask.ascii.cut": {
            "en": "(first {shown} of {n} tokens)",
            "pt_BR": "(primeiros {shown} de {n} tokens)",
        },
        "mask.why": {"en": "Why −∞ and not zero?", "pt_BR": "Por que −∞ e não zero?"},
        "mask.why.explain": {
            "en": "Zeroing the score doesn't help: a score of 0 still becomes e⁰ = 1 in the softmax, a "
            "respectable weight, so the future leaks. Zeroing the weight after the softmax gives the future "
            "weight 0, yet the earlier positions still change with it, through the softmax's denominator, and"
            " the rows no longer sum to 1. −∞ gives e<sup>−∞</sup> = 0 <i>before</i> the "
            "normalisation.<!--more--> Implementations use a very negative number (−1e9, finfo.min) to avoid "
            "NaN. Measured on your text, layer {layer}; the leak is the change of earlier positions when "
            "#{pos} “{old}” becomes “{new}”.",
            "pt_BR": "Zerar o score não adianta: um score 0 ainda vira e⁰ = 1 no softmax, um peso perfeitamente "
            "respeitável, e o futuro vaza. Zerar o peso depois do softmax dá peso 0 ao futuro, mas as "
            "posições anteriores ainda mudam com ele, pelo denominador do softmax, e as linhas deixam de "
            "somar 1. O −∞ dá e<sup>−∞</sup> = 0 <i>antes</i> da normalização.<!--more--> As implementações "
            "usam um número muito negativo (−1e9, finfo.min) para evitar NaN. Medido no seu texto, camada "
            "{layer}; o vazamento é a mudança das posições anteriores quando #{pos} “{old}” vira “{new}”.",
        },
        "mask.mode": {"en": "Mask mode", "pt_BR": "Modo da máscara"},
        # the names sit beside the row sums in the mode table: short enough for both at 1366×768
        "mask.mode.-inf": {"en": "−∞ (the textbook choice)", "pt_BR": "−∞ (a escolha clássica)"},
        "mask.mode.finfo.min": {"en": "finfo.min (what transformers uses)", "pt_BR": "finfo.min (o do transformers)"},
        "mask.mode.-1e9": {"en": "−1e9 (a very negative number)", "pt_BR": "−1e9 (muito negativo)"},
        "mask.mode.zero-score": {"en": "zero the score", "pt_BR": "zerar o score"},
        "mask.mode.zero-after-softmax": {"en": "zero the weight after softmax", "pt_BR": "zerar o peso após o softmax"},
        "mask.cell.-inf": {"en": "−∞", "pt_BR": "−∞"},
        "mask.grid.legend": {
            "en": "Dark cells: {value} (the future; too small here to write it in each)",
            "pt_BR": "Células escuras: {value} (o futuro; pequenas demais aqui para escrevê-lo em cada uma)",
        },
        "mask.cell.finfo.min": {"en": "min", "pt_BR": "min"},
        "mask.cell.-1e9": {"en": "−1e9", "pt_BR": "−1e9"},
        "mask.cell.zero-score": {"en": "=0", "pt_BR": "=0"},
        "mask.cell.zero-after-softmax": {"en": "×0", "pt_BR": "×0"},
        "mask.col.mode": {"en": "Mode", "pt_BR": "Modo"},
        # short: beside the mode's name in a laptop's dock ("(min … max)" cut the column off at 1366×768)
        "mask.col.row_sums": {"en": "Row sums", "pt_BR": "Soma das linhas"},
        "mask.col.row_sums.tip": {"en": "The smallest … the largest row sum over every head and query",
                                  "pt_BR": "A menor … a maior soma de linha entre todas as cabeças e consultas"},
        "mask.col.future": {"en": "Weight on the future", "pt_BR": "Peso no futuro"},
        "mask.col.leak": {"en": "Leak into the past", "pt_BR": "Vazamento no passado"},
        "mask.col.verdict": {"en": "Verdict", "pt_BR": "Veredito"},
        "mask.verdict.ok": {"en": "works", "pt_BR": "funciona"},
        "mask.verdict.leaks": {"en": "the future leaks", "pt_BR": "o futuro vaza"},
        "mask.verdict.sums": {"en": "rows don't sum to 1", "pt_BR": "as linhas não somam 1"},
        "mask.verdict.both": {"en": "leaks and rows don't sum to 1", "pt_BR": "vaza e as linhas não somam 1"},
        "mask.rowsums.title": {"en": "Row sums (whiskers: heads' min–max)", "pt_BR": "Somas das linhas (hastes: mín–máx)"},
        "mask.rowsums.y": {"en": "mean Σ weights", "pt_BR": "Σ pesos (média)"},
        "mask.leak.title": {"en": "Change per position after the edit", "pt_BR": "Mudança por posição após a edição"},
        "mask.leak.x": {"en": "position (red: before the edit)", "pt_BR": "posição (vermelho: antes da edição)"},
        "mask.selected.denominator": {
            "en": "<b>{mode}</b>: the future gets weight 0, yet the earlier positions change by up to {leak}: the "
            "future's scores are still in the softmax's denominator, so the edit reaches the past through the"
            " normalisation. And rows sum to between {lo} and {hi} instead of 1.",
            "pt_BR": "<b>{mode}</b>: o futuro recebe peso 0, mas as posições anteriores mudam até {leak}: os scores do"
            " futuro continuam no denominador do softmax, então a edição alcança o passado pela normalização."
            " E as linhas somam entre {lo} e {hi} em vez de 1.",
        },
        "mask.leak.y": {"en": "‖h′ − h‖ / ‖h‖", "pt_BR": "‖h′ − h‖ / ‖h‖"},
        "mask.position": {"en": "query position", "pt_BR": "posição da consulta"},
        "mask.selected.ok": {
            "en": "<b>{mode}</b>: the earlier positions change by exactly 0, and every row sums to 1. The future "
            "gets {future}; the largest row error is {err}, over the {k} earlier positions.",
            "pt_BR": "<b>{mode}</b>: as posições anteriores mudam exatamente 0, e toda linha soma 1. O futuro recebe "
            "{future}; o maior erro de linha é {err}, nas {k} posições anteriores.",
        },
        "mask.selected.leaks": {
            "en": "<b>{mode}</b>: the future still gets up to {future} of a row's weight, so the earlier positions "
            "change by up to {leak}: the model could copy the answer.",
            "pt_BR": "<b>{mode}</b>: o futuro ainda recebe até {future} do peso de uma linha, então as posições "
            "anteriores mudam até {leak}: o modelo poderia copiar a resposta.",
        },
        "mask.selected.sums": {
            "en": "<b>{mode}</b>: no leak, but the rows sum to as little as {lo} instead of 1. They sum to between "
            "{lo} and {hi} (the future gets {future}): the attention is no longer a weighted average.",
            "pt_BR": "<b>{mode}</b>: sem vazamento, mas as linhas chegam a somar só {lo} em vez de 1. Elas somam entre"
            " {lo} e {hi} (o futuro recebe {future}): a atenção deixa de ser uma média ponderada.",
        },
        "mask.selected.first": {
            "en": "The edited token is the first: nothing comes before it. Pick a later position in the leakage "
            "panel to measure the leak.",
            "pt_BR": "O token editado é o primeiro: nada vem antes dele. Escolha uma posição posterior no painel de "
            "vazamento para medir o vazamento.",
        },
        "mask.computing": {"en": "Measuring the five mask modes…", "pt_BR": "Medindo os cinco modos de máscara…"},
        "mask.failed": {"en": "The mask modes could not be measured: {message}", "pt_BR": "Não foi possível medir os modos de máscara: {message}"},
        "mask.empty": {
            "en": "<b>Step 1: the causal mask.</b> Analyse a text to see its mask.",
            "pt_BR": "<b>Passo 1: a máscara causal.</b> Analise um texto para ver a sua máscara.",
        },
    }
)
