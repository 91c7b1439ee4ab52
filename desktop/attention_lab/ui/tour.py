"""The guided "Lab tour": a dock that walks the chapter's five lab steps (plus three prose points).

Each step brings the right panel forward and sets the app up for it through public API
(the session's setters, the panels' own methods), says in a few sentences what to look at,
and states the step's fact measured on the current model and text (computed by
:func:`attention_lab.core.tour.compute_fact` on the inference worker, never canned).
Step 5 offers a "Run the benchmark" button: the benchmark only ever starts when asked.

Progress lives in the window's QSettings (``tour/step``, ``tour/index``, ``tour/finished``)
so the tour resumes where the learner left it; on the very first start a small non-modal
offer sits in the status bar (``tour/offered`` remembers it was made).  Help › Lab tour
(Ctrl+T; F1 is already "key ideas") opens it any time.

:func:`install_tour` does all the wiring; the main window calls it once, at the end of
its constructor.  ``ATTENTION_LAB_OPEN_TOUR=1`` opens the tour at start (screenshots), and
``ATTENTION_LAB_TOUR_STEP`` (a step number from 1 or a step key) picks the step.
"""

from __future__ import annotations

import html
import logging
import os
from typing import Any

from PySide6.QtCore import QSettings, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (
    QBoxLayout,
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.lens import MaskMode
from attention_lab.core.tour import Fact, TourContext, TourProgress, TourStep, compute_fact
from attention_lab.ui.i18n import register, tr, translator
from attention_lab.ui.panels.panel_kit import describe_error, fmt_bytes, fmt_number, monospace_font
from attention_lab.ui.panels.kv_bench import DEFAULT_NEW_TOKENS  # what the KV panel starts with, before it is built

log = logging.getLogger(__name__)

DOCK_NAME = "dock.tour"
JOB_KIND = "tour"
SHORTCUT = "Ctrl+T"  # F1 (HelpContents) is taken by Help › key ideas
DOCK_WIDTH = 680  # beside the token editor, which keeps the rest of the top strip
DOCK_HEIGHT = 370  # the top strip's height while the tour is open (the panels below keep ≥ 560)
SIDE_BY_SIDE_WIDTH = 560  # wider than this, the explanation and the fact sit side by side
OPEN_ENV = "ATTENTION_LAB_OPEN_TOUR"
STEP_ENV = "ATTENTION_LAB_TOUR_STEP"
KEY_STEP, KEY_INDEX, KEY_FINISHED, KEY_OFFERED = "tour/step", "tour/index", "tour/finished", "tour/offered"
THOUSANDS = "\u202f"  # narrow no-break space: unambiguous in English and Portuguese alike

register(
    {
        "tour.title": {"en": "Lab tour", "pt_BR": "Tour do laboratório"},
        "tour.menu": {"en": "Lab &tour", "pt_BR": "&Tour do laboratório"},
        "tour.counter": {"en": "Step {i} of {count}", "pt_BR": "Passo {i} de {count}"},
        "tour.counter.lab": {"en": "lab step {lab}", "pt_BR": "passo {lab} do lab"},
        "tour.counter.prose": {"en": "from the chapter", "pt_BR": "do capítulo"},
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
            "pt_BR": "Primeira vez? Um tour guiado percorre os cinco passos do lab do capítulo.",
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
            "In the <b>Mask</b> panel rows are queries and columns keys: the dark triangle above the diagonal is "
            "the future, which does not exist. Each row still sums to 1, over the past only.",
            "pt_BR": "Antes do softmax, toda pontuação de uma posição futura recebe −∞, então o seu peso vira "
            "exatamente 0. No painel <b>Máscara</b> as linhas são consultas e as colunas, chaves: o triângulo escuro "
            "acima da diagonal é o futuro, que não existe. Cada linha continua somando 1, só sobre o passado.",
        },
        "tour.step.why_inf.title": {"en": "Why −∞ and not zero?", "pt_BR": "Por que −∞ e não zero?"},
        "tour.step.why_inf.body": {
            "en": "Zeroing the score does not help: a score of 0 still becomes e⁰ = 1 in the softmax, a perfectly "
            "respectable weight. Zeroing the weight after the softmax breaks the sum-to-1. The <b>Mask</b> panel now "
            "has “zero the score” selected: compare its leak with −∞ in the table, on your own text.",
            "pt_BR": "Zerar a pontuação não adianta: um score 0 ainda vira e⁰ = 1 no softmax, um peso perfeitamente "
            "respeitável. Zerar o peso depois do softmax quebra a soma 1. O painel <b>Máscara</b> agora está em "
            "“zerar a pontuação”: compare o vazamento dele com o do −∞ na tabela, no seu próprio texto.",
        },
        "tour.step.maps.title": {"en": "Causal and bidirectional, side by side", "pt_BR": "Causal e bidirecional, lado a lado"},
        "tour.step.maps.body": {
            "en": "The same input with causal=True (GPT-2) and causal=False (RoBERTa); everything else is identical. "
            "The <b>Heads</b> panel opens the head whose two maps differ the most: with the mask its upper triangle "
            "is empty, without it every token also looks at the words after it. Ctrl+M switches all the heads of the "
            "layer between the two modes.",
            "pt_BR": "A mesma entrada com causal=True (GPT-2) e causal=False (RoBERTa); todo o resto é idêntico. O "
            "painel <b>Cabeças</b> abre a cabeça cujos dois mapas mais diferem: com a máscara o triângulo de cima fica "
            "vazio, sem ela cada token também olha para as palavras que vêm depois. Ctrl+M alterna todas as cabeças "
            "da camada entre os dois modos.",
        },
        "tour.step.multihead_cost.title": {
            "en": "Multi-head costs no more than one head",
            "pt_BR": "Multi-head não custa mais que uma cabeça",
        },
        "tour.step.multihead_cost.body": {
            "en": "Divide, don't multiply: instead of twelve heads of 768 dimensions each, GPT-2 splits its 768 "
            "dimensions into twelve slices of 64. One matmul (c_attn) makes Q, K and V; a reshape separates the "
            "heads. The <b>Shapes</b> panel lists the shapes your text really produced, and the arithmetic below them.",
            "pt_BR": "Dividir, não multiplicar: em vez de doze cabeças de 768 dimensões cada, o GPT-2 divide as suas "
            "768 dimensões em doze fatias de 64. Uma matmul (c_attn) produz Q, K e V; um reshape separa as cabeças. "
            "O painel <b>Dimensões</b> lista as formas que o seu texto produziu de fato, e a conta logo abaixo.",
        },
        "tour.step.wo_mixes.title": {"en": "W^O mixes the heads", "pt_BR": "W^O mistura as cabeças"},
        "tour.step.wo_mixes.body": {
            "en": "Without W^O the heads would sit in sealed compartments, each writing into its own slice and never "
            "talking to each other. W^O (c_proj in GPT-2) lets information from head 3 influence the dimensions "
            "head 7 uses. The tour nudged each head's values and counted which output dimensions of the attention "
            "block moved: with c_proj, and with c_proj replaced by the identity.",
            "pt_BR": "Sem W^O as cabeças ficariam em compartimentos estanques, cada uma escrevendo na sua fatia e "
            "nunca conversando. É W^O (c_proj no GPT-2) que permite que a informação da cabeça 3 influencie as "
            "dimensões que a cabeça 7 usa. O tour cutucou os valores de cada cabeça e contou quais dimensões da "
            "saída do bloco de atenção se mexeram: com o c_proj, e com o c_proj trocado pela identidade.",
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
        "tour.step.portrait.title": {"en": "Portrait of the heads of layer 0", "pt_BR": "Retrato das cabeças da camada 0"},
        "tour.step.portrait.body": {
            "en": "Nobody assigns roles: the specialisations emerge from training. For each head of layer 0 the "
            "<b>Head portrait</b> panel computes the mean distance it looks back and the entropy of its distribution. "
            "Look for the positional heads (distance ≈ 1) and the sink heads (very low entropy, everything on token 0).",
            "pt_BR": "Ninguém atribui papéis: as especializações emergem do treino. Para cada cabeça da camada 0 o "
            "painel <b>Retrato das cabeças</b> calcula a distância média a que ela olha e a entropia da sua "
            "distribuição. Procure as cabeças posicionais (distância ≈ 1) e as de “vala” (entropia baixíssima, tudo "
            "no token 0).",
        },
        "tour.step.kvcache.title": {"en": "What the KV cache buys", "pt_BR": "O que o cache KV compra"},
        "tour.step.kvcache.body": {
            "en": "Under the mask a token never influences the ones before it, so the K and V of earlier positions "
            "never change when a token is appended: generation stores them and computes only the new token, O(n) per "
            "token instead of O(n²). RoBERTa, being bidirectional, cannot. Press “Run the benchmark” to generate "
            "{new} tokens with and without the cache.",
            "pt_BR": "Com a máscara um token nunca influencia os anteriores, então K e V das posições anteriores nunca "
            "mudam quando um token é acrescentado: a geração os guarda e calcula só o token novo, O(n) por token em "
            "vez de O(n²). O RoBERTa, bidirecional, não pode. Aperte “Rodar o benchmark” para gerar {new} tokens com "
            "e sem o cache.",
        },
        # ---- the measured facts (numbers come from compute_fact, in bold)
        "tour.fact.too_short": {
            "en": "This step needs at least 2 tokens; your text has {n}. Type a longer sentence.",
            "pt_BR": "Este passo precisa de pelo menos 2 tokens; o seu texto tem {n}. Digite uma frase mais longa.",
        },
        "tour.fact.mask": {
            "en": "Your {n} tokens make {cells} query–key pairs: {allowed} may look (the diagonal and below), "
            "{forbidden} are the future. Measured in layer {layer}: the largest weight any of the {heads} heads gives "
            "the future is {future_weight}, and every row sums to 1 (largest error {row_error}).",
            "pt_BR": "Os seus {n} tokens formam {cells} pares consulta–chave: {allowed} podem olhar (a diagonal e "
            "abaixo), {forbidden} são o futuro. Medido na camada {layer}: o maior peso que alguma das {heads} cabeças "
            "dá ao futuro é {future_weight}, e toda linha soma 1 (maior erro {row_error}).",
        },
        "tour.fact.why_inf": {
            "en": "On your text (layer {layer}, #{pos} “{old}” → “{new}”): with −∞ the future gets {inf_future} and the "
            "earlier positions move by {inf_leak}. With a score of 0 the future still gets up to {zero_future} of a "
            "row and the earlier positions move by up to {zero_leak}: it leaks. Zeroing after the softmax gives the "
            "future {after_future}, but rows miss 1 by up to {after_error} (and the past still moves by {after_leak}, "
            "through the softmax's denominator). −1e9 and finfo.min give the future {e9_future} and {finfo_future}: "
            "as good as −∞.",
            "pt_BR": "No seu texto (camada {layer}, #{pos} “{old}” → “{new}”): com −∞ o futuro recebe {inf_future} e "
            "as posições anteriores mudam {inf_leak}. Com score 0 o futuro ainda recebe até {zero_future} de uma "
            "linha e as posições anteriores mudam até {zero_leak}: vaza. Zerar depois do softmax dá {after_future} "
            "ao futuro, mas as linhas erram a soma 1 em até {after_error} (e o passado ainda muda {after_leak}, pelo "
            "denominador do softmax). −1e9 e finfo.min dão {e9_future} e {finfo_future} ao futuro: tão bons quanto −∞.",
        },
        "tour.fact.why_inf.no_past": {
            "en": "The edited token is the first one, so nothing before it can leak. In layer {layer}: −∞ gives the "
            "future {inf_future}; a score of 0 gives it up to {zero_future}; zeroing after the softmax leaves rows "
            "off 1 by up to {after_error}.",
            "pt_BR": "O token editado é o primeiro, então nada antes dele pode vazar. Na camada {layer}: −∞ dá "
            "{inf_future} ao futuro; score 0 dá até {zero_future}; zerar depois do softmax deixa as linhas errando a "
            "soma 1 em até {after_error}.",
        },
        "tour.fact.maps": {
            "en": "Layer {layer}, {heads} heads, {n} tokens. With the mask every head gives the future {causal_future}, "
            "and the first token “{first}” looks only at itself (weight {first_self}). Without it the heads spend on "
            "average {bidir_mean_pct} of each row's budget on later tokens (head {bidir_head}: {bidir_max_pct}), and "
            "“{first}” keeps only {bidir_first_self_pct} for itself.",
            "pt_BR": "Camada {layer}, {heads} cabeças, {n} tokens. Com a máscara toda cabeça dá {causal_future} ao "
            "futuro, e o primeiro token “{first}” só olha para si mesmo (peso {first_self}). Sem ela as cabeças gastam "
            "em média {bidir_mean_pct} do orçamento de cada linha com tokens posteriores (cabeça {bidir_head}: "
            "{bidir_max_pct}), e “{first}” fica com só {bidir_first_self_pct} para si.",
        },
        "tour.fact.multihead_cost": {
            "en": "In {model}, Q, K and V come out of the reshape as {heads} × {n} × {dk}: {heads} heads × {dk} = "
            "{width} columns each, exactly what 1 head × {d} would have. So c_attn ({c_attn} parameters) and c_proj "
            "({c_proj}) are the same matrices either way: {per_layer} attention parameters per layer, as for one head "
            "of {d} ({single}); {total} in all {layers} layers. {heads} full heads of {d} would need {multiplied} per "
            "layer, {ratio}× more. Q·Kᵀ costs {score_macs} multiply-adds for your {n} tokens either way.",
            "pt_BR": "No {model}, Q, K e V saem do reshape como {heads} × {n} × {dk}: {heads} cabeças × {dk} = {width} "
            "colunas cada, exatamente o que 1 cabeça × {d} teria. Então c_attn ({c_attn} parâmetros) e c_proj "
            "({c_proj}) são as mesmas matrizes de qualquer jeito: {per_layer} parâmetros de atenção por camada, como "
            "para uma cabeça de {d} ({single}); {total} nas {layers} camadas. {heads} cabeças inteiras de {d} "
            "precisariam de {multiplied} por camada, {ratio}× mais. Q·Kᵀ custa {score_macs} multiplicações-somas para "
            "os seus {n} tokens nos dois casos.",
        },
        "tour.fact.wo_mixes": {
            "en": "Layer {layer}: a nudge to one head's values moves all {with_max} of the {d} output dimensions "
            "through W^O, {outside_pct} of the change landing in the other heads' slices. With c_proj replaced by "
            "the identity the same nudge moves exactly {without_max}: the head's own slice of d_k = {dk} (head "
            "{example_head}: dimensions {example_lo}–{example_hi}), and {identity_outside_pct} outside it.",
            "pt_BR": "Camada {layer}: uma cutucada nos valores de uma cabeça move todas as {with_max} das {d} dimensões "
            "da saída através de W^O, com {outside_pct} da mudança caindo nas fatias das outras cabeças. Com o c_proj "
            "trocado pela identidade a mesma cutucada move exatamente {without_max}: a fatia da própria cabeça, de "
            "d_k = {dk} (cabeça {example_head}: dimensões {example_lo}–{example_hi}), e {identity_outside_pct} fora dela.",
        },
        "tour.fact.wo_mixes.range": {
            "en": "Layer {layer}: a nudge to one head's values moves {with_min} to {with_max} of the {d} output "
            "dimensions through W^O, {outside_pct} of the change landing in the other heads' slices. With c_proj "
            "replaced by the identity the same nudge moves exactly {without_max}: the head's own slice of d_k = {dk} "
            "(head {example_head}: dimensions {example_lo}–{example_hi}), and {identity_outside_pct} outside it.",
            "pt_BR": "Camada {layer}: uma cutucada nos valores de uma cabeça move de {with_min} a {with_max} das {d} "
            "dimensões da saída através de W^O, com {outside_pct} da mudança caindo nas fatias das outras cabeças. "
            "Com o c_proj trocado pela identidade a mesma cutucada move exatamente {without_max}: a fatia da própria "
            "cabeça, de d_k = {dk} (cabeça {example_head}: dimensões {example_lo}–{example_hi}), e "
            "{identity_outside_pct} fora dela.",
        },
        "tour.fact.leakage": {
            "en": "#{pos} “{old}” became “{new}”. Under the mask, positions {before} changed by exactly {causal_max} "
            "(in each of the {layers} layers too: {causal_layers_max}). Without it, position 0 changed by "
            "{bidir_first}, and the earlier positions by up to {bidir_max}.",
            "pt_BR": "#{pos} “{old}” virou “{new}”. Com a máscara, as posições {before} mudaram exatamente "
            "{causal_max} (em cada uma das {layers} camadas também: {causal_layers_max}). Sem ela, a posição 0 mudou "
            "{bidir_first}, e as posições anteriores até {bidir_max}.",
        },
        "tour.fact.leakage.first": {
            "en": "The edited token is the first one (#0 “{old}” → “{new}”): nothing comes before it to protect. "
            "Without the mask the later positions changed by up to {bidir_after}. Pick a later token in the token "
            "editor.",
            "pt_BR": "O token editado é o primeiro (#0 “{old}” → “{new}”): nada vem antes dele para proteger. Sem a "
            "máscara as posições seguintes mudaram até {bidir_after}. Escolha um token posterior no editor de tokens.",
        },
        "tour.fact.leakage.leaks": {
            "en": "#{pos} “{old}” became “{new}”, and under the mask positions {before} changed by up to {causal_max}: "
            "this mask leaks the future!",
            "pt_BR": "#{pos} “{old}” virou “{new}”, e com a máscara as posições {before} mudaram até {causal_max}: "
            "esta máscara vaza o futuro!",
        },
        "tour.fact.portrait": {
            "en": "Layer {layer}, {heads} heads on your {n} tokens. Positional heads (mean distance ≈ 1): {positional}. "
            "Sink heads (very low entropy, most weight on token 0): {sinks}. Closest to distance 1: head {near_head} "
            "({near_distance}); most focused: head {focus_head} (entropy {focus_entropy} nats, {focus_sink_pct} on "
            "token 0).",
            "pt_BR": "Camada {layer}, {heads} cabeças nos seus {n} tokens. Cabeças posicionais (distância média ≈ 1): "
            "{positional}. Cabeças de vala (entropia baixíssima, quase todo o peso no token 0): {sinks}. Mais perto "
            "da distância 1: cabeça {near_head} ({near_distance}); mais focada: cabeça {focus_head} (entropia "
            "{focus_entropy} nats, {focus_sink_pct} no token 0).",
        },
        "tour.item.positional": {
            "en": "head {head} (distance {distance}, {prev_pct} on the previous token)",
            "pt_BR": "cabeça {head} (distância {distance}, {prev_pct} no token anterior)",
        },
        "tour.item.sink": {
            "en": "head {head} (entropy {entropy}, {sink_pct} on token 0)",
            "pt_BR": "cabeça {head} (entropia {entropy}, {sink_pct} no token 0)",
        },
        "tour.fact.kvcache.pending": {
            "en": "Appending “{appended}” to your {n} tokens and recomputing everything changes the earlier keys and "
            "values by exactly {causal_kv_max} under the mask; without it by up to {bidir_max} from layer 1 on "
            "(layer 0: {bidir_layer0}, its K and V see only the token and its position). The speedup appears here "
            "once you run the benchmark.",
            "pt_BR": "Acrescentar “{appended}” aos seus {n} tokens e recalcular tudo muda as chaves e os valores "
            "anteriores exatamente {causal_kv_max} com a máscara; sem ela até {bidir_max} a partir da camada 1 "
            "(camada 0: {bidir_layer0}, o K e o V dela só veem o token e a posição). A aceleração aparece aqui quando "
            "você rodar o benchmark.",
        },
        "tour.fact.kvcache.done": {
            "en": "Appending “{appended}” changes the earlier keys and values by exactly {causal_kv_max} under the "
            "mask (without it: up to {bidir_max} from layer 1 on), so they can be cached. Your benchmark: "
            "{new_tokens} new tokens in {with_s} s with the cache and {without_s} s without, {speedup}× faster; "
            "identical tokens both ways: {identical}. The cache held {positions} positions ({cache_bytes}).",
            "pt_BR": "Acrescentar “{appended}” muda as chaves e os valores anteriores exatamente {causal_kv_max} com a "
            "máscara (sem ela: até {bidir_max} a partir da camada 1), então eles podem ir para o cache. O seu "
            "benchmark: {new_tokens} tokens novos em {with_s} s com o cache e {without_s} s sem, {speedup}× mais "
            "rápido; tokens idênticos nos dois modos: {identical}. O cache guardou {positions} posições ({cache_bytes}).",
        },
        "tour.fact.kvcache.no_room": {
            "en": "Your {n} tokens fill the model's context of {ctx}: there is no room to append a token. Shorten the "
            "text.",
            "pt_BR": "Os seus {n} tokens ocupam todo o contexto do modelo, de {ctx}: não há espaço para acrescentar "
            "um token. Encurte o texto.",
        },
    }
)


# ---------------------------------------------------------------------------- formatting
def format_value(name: str, value: Any) -> str:
    """One number of a fact, as the learner reads it (exact zeros print as "0")."""
    if isinstance(value, bool):
        return tr("tour.yes" if value else "tour.no")
    if isinstance(value, int):
        if name.endswith("_bytes"):
            return fmt_bytes(value)
        return f"{value:,}".replace(",", THOUSANDS)
    if isinstance(value, float):
        if name.endswith("_pct"):
            pct = 100.0 * value
            if pct == 0:
                return "0%"
            return f"{pct:.2g}%" if abs(pct) < 0.1 else f"{pct:.1f}%"
        if name.endswith("_s"):
            return f"{value:.3f}"
        if name in ("speedup", "ratio"):
            return f"{value:.1f}"
        return fmt_number(value)
    return html.escape(str(value))


def _fill(key: str, values: dict[str, Any]) -> str:
    return tr(key, **{name: f"<b>{format_value(name, v)}</b>" for name, v in values.items()})


def format_fact(fact: Fact) -> str:
    """The fact's sentence in the current language (rich text, numbers in bold)."""
    values = dict(fact.values)
    formatted = {name: f"<b>{format_value(name, v)}</b>" for name, v in values.items()}
    for name, (item_key, items) in fact.lists.items():
        parts = [_fill(f"tour.item.{item_key}", item) for item in items]
        formatted[name] = "; ".join(parts) if parts else tr("tour.none")
    return tr(f"tour.fact.{fact.key}", **formatted)


def _read_bool(value: Any, default: bool = False) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1") if value.strip() else default
    if isinstance(value, int):
        return bool(value)
    return default


def load_progress(settings: QSettings) -> TourProgress:
    """The saved progress; anything unreadable starts at step 1 (never an error)."""
    return TourProgress.from_dict(
        {
            "step": settings.value(KEY_STEP),
            "index": settings.value(KEY_INDEX),
            "finished": _read_bool(settings.value(KEY_FINISHED), False),
        }
    )


def save_progress(settings: QSettings, progress: TourProgress) -> None:
    data = progress.to_dict()
    settings.setValue(KEY_STEP, data["step"])
    settings.setValue(KEY_INDEX, data["index"])
    settings.setValue(KEY_FINISHED, data["finished"])


def measure_fact(step: TourStep, ctx: TourContext, cancel=None) -> Fact:
    """Worker side: :func:`compute_fact`, stopping when the job is cancelled or superseded."""
    from attention_lab.core.tour import FactCancelled
    from attention_lab.ui.worker import JobCancelled

    if cancel is not None:
        ctx.cancel = cancel.is_set
    try:
        return compute_fact(step, ctx)
    except FactCancelled:
        raise JobCancelled() from None


def _state_key(state) -> tuple:
    model = state.model  # id() alone could be reused by a later model: add what names it
    return (id(model), getattr(model, "spec", None), tuple(state.ids))


# ---------------------------------------------------------------------------- the dock
class TourDock(QDockWidget):
    """The tour's dock: step title, what to look at, the measured fact, Back / Next / Close."""

    def __init__(self, window: QMainWindow):
        super().__init__(tr("tour.title"), window)
        self.setObjectName(DOCK_NAME)
        self.window_ = window
        self.settings: QSettings = window.settings
        self.progress = load_progress(self.settings)
        self.fact: Fact | None = None
        self.fact_error: str | None = None
        self.fact_model = ""
        self._fact_key: tuple | None = None  # what the shown (or pending) fact was measured on
        self._pending_key: tuple | None = None
        self._open_head_once = False
        self._kv_start_key: tuple | None = None
        self._kv_result: tuple[tuple, Any] | None = None  # (state key of the run, KVResult)
        self.menu_action: QAction | None = None
        self.top_height_before: int | None = None  # the top strip's height before the tour widened it
        self.offer: TourOffer | None = None
        # the learner's own inputs when the tour began, and what the tour's steps set them
        # to: its end gives back each one the learner has not changed since
        self._before: dict | None = None
        self._set_by_tour: dict = {}
        self.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )

        body = QWidget(self)
        body.setObjectName("tour.body")
        self.counter = QLabel(body)
        self.counter.setObjectName("tour.counter")
        self.counter.setStyleSheet("color: #666")
        self.title = QLabel(body)
        self.title.setObjectName("tour.step_title")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.text = QLabel(body)
        self.text.setObjectName("tour.text")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.fact_frame = QFrame(body)
        self.fact_frame.setObjectName("tour.fact_frame")
        self.fact_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.fact_frame.setStyleSheet("#tour\\.fact_frame { background: #f3f7fb; border: 1px solid #c9d8e8; border-radius: 4px; }")
        self.fact_caption = QLabel(self.fact_frame)
        self.fact_caption.setObjectName("tour.fact_caption")
        self.fact_caption.setStyleSheet("color: #2b5c8a; font-weight: bold")
        # the model's name is HTML-escaped into it: without tags Qt would guess plain text
        # and show "GPT-2&#x27;s" literally
        self.fact_caption.setTextFormat(Qt.TextFormat.RichText)
        self.fact_label = QLabel(self.fact_frame)
        self.fact_label.setObjectName("tour.fact")
        self.fact_label.setWordWrap(True)
        self.fact_label.setTextFormat(Qt.TextFormat.RichText)
        self.fact_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.block = QPlainTextEdit(body)  # the lab's print: measured text, shown as printed
        self.block.setObjectName("tour.print")
        self.block.setReadOnly(True)
        self.block.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = monospace_font()
        mono.setPointSizeF(max(7.0, mono.pointSizeF() * 0.8))
        self.block.setFont(mono)
        self.block.setFrameShape(QFrame.Shape.NoFrame)
        self.block.setStyleSheet("background: transparent")
        self.block.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.block.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        fact_layout = QVBoxLayout(self.fact_frame)
        fact_layout.setContentsMargins(8, 6, 8, 8)
        fact_layout.addWidget(self.fact_caption)
        fact_layout.addWidget(self.fact_label)
        self.run_button = QPushButton(body)
        self.run_button.setObjectName("tour.run_benchmark")
        self.run_button.clicked.connect(self.run_benchmark)

        explain = QVBoxLayout()
        explain.setContentsMargins(0, 0, 0, 0)
        explain.setSpacing(4)
        explain.addWidget(self.text)
        explain.addWidget(self.block)
        explain.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignLeft)
        explain.addStretch(1)
        measured = QVBoxLayout()
        measured.setContentsMargins(0, 0, 0, 0)
        measured.addWidget(self.fact_frame)
        measured.addStretch(1)
        # side by side when the dock is wide (its default place, beside the tokens), stacked when narrow
        self.columns = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self.columns.setSpacing(12)
        self.columns.addLayout(explain, 1)
        self.columns.addLayout(measured, 1)
        column = QVBoxLayout()
        header = QHBoxLayout()  # one line: the tour has to share the top strip with the tokens
        header.addWidget(self.title, 1)
        header.addWidget(self.counter, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        column.setContentsMargins(0, 0, 4, 0)
        column.setSpacing(4)
        column.addLayout(header)
        column.addLayout(self.columns, 1)
        inner = QWidget(body)
        inner.setLayout(column)
        scroll = QScrollArea(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)

        self.back_button = QPushButton(body)
        self.back_button.setObjectName("tour.back")
        self.back_button.clicked.connect(self.back)
        self.next_button = QPushButton(body)
        self.next_button.setObjectName("tour.next")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self.next)
        self.close_button = QPushButton(body)
        self.close_button.setObjectName("tour.close")
        self.close_button.clicked.connect(self.close_tour)
        buttons = QHBoxLayout()
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.next_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(8, 2, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)
        body.setMinimumWidth(300)
        body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.setWidget(body)

        window.state_shown.connect(self._on_state)  # after the panels: the fact matches what they show
        self.visibilityChanged.connect(self._on_visibility)
        translator.language_changed.connect(self._on_language)
        panels = getattr(window, "panels", None)
        if isinstance(panels, dict) and "panel.kvbench" in panels:
            self._follow_benchmark(panels["panel.kvbench"])
        elif hasattr(window, "panel_built"):  # the KV panel is built when its tab is first opened
            window.panel_built.connect(self._follow_benchmark)
        self.retranslate()

    def _follow_benchmark(self, panel) -> None:
        if getattr(panel, "panel_id", None) != "panel.kvbench":
            return
        for signal, slot in (
            ("benchmark_step", self._on_bench_step),
            ("benchmark_finished", self._on_bench_finished),
            ("benchmark_cancelled", self._on_bench_cancelled),
        ):
            if hasattr(panel, signal):
                getattr(panel, signal).connect(slot)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        wide = self.width() >= SIDE_BY_SIDE_WIDTH
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self.columns.direction() != direction:
            self.columns.setDirection(direction)

    def closeEvent(self, event) -> None:  # noqa: N802 -- the title bar's ×, Close, and Finish
        self._save()
        super().closeEvent(event)
        _unfit(self.window_, self)
        self._give_back_inputs()

    # ------------------------------------------------------------------ the learner's own inputs
    def _inputs(self) -> dict:
        """The inputs a step may change: the leakage edit, layer, mode, the mask panel's mode."""
        session = self.window_.session
        mask = self._built("panel.mask")
        mode = mask.selected_mode() if mask is not None and hasattr(mask, "selected_mode") else MaskMode.NEG_INF.value
        return {"edit": (session.position, session.replacement_id), "layer": session.layer,
                "causal": session.causal, "mask_mode": mode}

    def _note_set_by_tour(self, keys) -> None:
        """Remember what the tour has just set these inputs to."""
        now = self._inputs()
        for key in keys:
            self._set_by_tour[key] = now[key]

    def _give_back_inputs(self) -> None:
        before, self._before = self._before, None
        set_by_tour, self._set_by_tour = self._set_by_tour, {}
        if before is None:
            return
        now = self._inputs()
        back = {key: before[key] for key, value in set_by_tour.items() if now[key] == value and before[key] != value}
        session = self.window_.session
        if "mask_mode" in back:
            mask = self._built("panel.mask")
            if mask is not None and hasattr(mask, "set_mode"):
                mask.set_mode(back["mask_mode"])
        if "layer" in back:
            session.set_layer(back["layer"])
        if "causal" in back:
            session.set_causal(back["causal"])
        if "edit" in back:
            position, replacement = back["edit"]
            if replacement is None:
                session.set_position(position)
            else:
                session.set_replacement(position, replacement)

    # ------------------------------------------------------------------ access to the window
    def _panel(self, panel_id: str):
        panels = getattr(self.window_, "panels", None)
        if isinstance(panels, dict):
            try:
                return panels[panel_id]  # builds a panel not shown yet
            except KeyError:
                pass
        return self.window_.findChild(QWidget, panel_id + ".widget")

    def _built(self, panel_id: str):
        """The panel if it exists already (reading it must not build it: panels behind tabs
        are built when first shown); None otherwise, and its defaults apply."""
        panels = getattr(self.window_, "panels", None)
        if isinstance(panels, dict):
            return panels.get(panel_id)
        return self._panel(panel_id)

    def _dock(self, panel_id: str) -> QDockWidget | None:
        return self.window_.findChild(QDockWidget, panel_id)

    @property
    def step(self) -> TourStep:
        return self.progress.step

    # ------------------------------------------------------------------ navigation
    def open_tour(self) -> None:
        """Show the tour where the learner left it (from the start once it was finished)."""
        if self.progress.finished:
            self.progress.restart()
            self._save()
        self.show()
        self.raise_()
        self._enter_step()

    def next(self) -> None:
        if self.progress.at_end:
            self.progress.next()  # finished
            self._save()
            self.close()
            self.window_.statusBar().showMessage(tr("tour.finished"), 8000)
            return
        self.progress.next()
        self._save()
        self._enter_step()

    def back(self) -> None:
        if self.progress.back():
            self._save()
            self._enter_step()

    def goto(self, where: int | str) -> None:
        self.progress.goto(where)
        self._save()
        self._enter_step()

    def close_tour(self) -> None:
        self.close()

    def _save(self) -> None:
        save_progress(self.settings, self.progress)

    # ------------------------------------------------------------------ setting the app up
    def _enter_step(self) -> None:
        """Bring the step's panel forward and select what it needs, then measure its fact."""
        step = self.step
        session = self.window_.session
        if self._before is None:
            self._before = self._inputs()
        touched = {key for key, on in (("layer", step.layer is not None), ("causal", step.causal is not None),
                                        ("edit", step.edit_last_token), ("mask_mode", step.mask_mode is not None)) if on}
        dock = self._dock(step.panel)
        if dock is not None:
            dock.show()
            dock.raise_()
        if step.layer is not None:
            session.set_layer(step.layer)
        if step.causal is not None:
            session.set_causal(step.causal)
        if step.edit_last_token and session.position is not None:
            session.set_position(None)  # the lab edits the end of the sentence
        if step.mask_mode is not None:
            mask = self._panel("panel.mask")
            if mask is not None and hasattr(mask, "set_mode"):
                mask.set_mode(step.mask_mode)
        if step.offers_benchmark:
            kv = self._panel("panel.kvbench")
            if kv is not None and hasattr(kv, "bench_tab"):
                kv.tabs.setCurrentWidget(kv.bench_tab)
        self._note_set_by_tour(touched)
        self._open_head_once = step.open_head
        self.fact = None
        self.fact_error = None
        self._fact_key = None
        self.retranslate()
        self._request_fact()

    def _open_head(self, fact: Fact) -> None:
        """Step 2: the head whose causal and bidirectional maps differ most, side by side."""
        if not self._open_head_once or "bidir_head" not in fact.values:
            return
        self._open_head_once = False
        grid = self._panel("panel.head_grid")
        if grid is not None and hasattr(grid, "view_combo"):
            grid.view_combo.setCurrentIndex(grid.view_combo.count() - 1)  # "side by side"
        if hasattr(self.window_, "select_head"):
            self.window_.select_head(int(fact.values["layer"]), int(fact.values["bidir_head"]))
            self._note_set_by_tour({"layer"})

    # ------------------------------------------------------------------ the fact
    def _context(self, state) -> TourContext:
        model = state.model
        kv = self._built("panel.kvbench")
        new_tokens = kv.new_tokens.value() if kv is not None and hasattr(kv, "new_tokens") else DEFAULT_NEW_TOKENS
        kv_result = None
        if self._kv_result is not None and self._kv_result[0] == _state_key(state):
            kv_result = self._kv_result[1]
        portrait = self._built("panel.portrait")
        thresholds = portrait.thresholds() if portrait is not None and hasattr(portrait, "thresholds") else None
        tok = model.tokenizer
        return TourContext(
            lens=model.lens,
            ids=list(state.ids),
            tokens=list(state.tokens),
            layer=state.layer,
            position=state.position,
            replacement_id=state.replacement_id,
            kv_result=kv_result,
            new_tokens=new_tokens,
            thresholds=thresholds,
            token_text=lambda i: tok.token_texts([int(i)])[0],
            model_name=model.name,
        )

    def _request_key(self, state) -> tuple:
        kv = self._kv_result[1] if self._kv_result is not None and self._kv_result[0] == _state_key(state) else None
        return (self.step.key, state.request_id, _state_key(state), state.layer, state.position, state.replacement_id, id(kv))

    def _request_fact(self) -> None:
        if not self.isVisible():
            return
        session = self.window_.session
        state = session.state
        if state is None or session.pending:
            self._show_fact()  # "waiting": the state this step asked for is on its way
            return
        key = self._request_key(state)
        if key == self._fact_key or key == self._pending_key:
            return
        self._pending_key = key
        self.fact_error = None
        self.window_.worker.submit(
            JOB_KIND,
            measure_fact,
            self.step,
            self._context(state),
            on_result=lambda fact, k=key, m=state.model.name: self._on_fact(k, m, fact),
            on_error=lambda exc, details, k=key: self._on_fact_error(k, exc, details),
        )
        self._show_fact()

    def _on_fact(self, key: tuple, model_name: str, fact: Fact) -> None:
        if key != self._pending_key:
            return
        self._pending_key = None
        self._fact_key = key
        self.fact = fact
        self.fact_model = model_name
        self._show_fact()
        self._open_head(fact)

    def _on_fact_error(self, key: tuple, exc: BaseException, details: str) -> None:
        if key != self._pending_key:
            return
        self._pending_key = None
        self._fact_key = key
        self.fact = None
        self.fact_error = describe_error(exc)[0]
        log.warning("tour fact %s failed: %s", key[0], details)
        self._show_fact()

    def fact_text(self) -> str:
        """The fact as shown (plain text), for tests and screen readers."""
        from PySide6.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setHtml(self.fact_label.text())
        return doc.toPlainText()

    @property
    def fact_ready(self) -> bool:
        return self.fact is not None and self._pending_key is None

    def _show_fact(self) -> None:
        if self.fact is not None:
            self.fact_caption.setText(tr("tour.measured", model=html.escape(self.fact_model)))
            self.fact_label.setText(format_fact(self.fact))
            block = self.fact.block
            if block:
                shown, n = self.fact.values.get("shown"), self.fact.values.get("n")
                caption = tr("tour.print", shown=shown, n=n) if shown is not None and shown != n else tr("tour.print.all")
                self.block.setPlainText(caption + "\n" + block)
                self._size_block()
            self.block.setVisible(bool(block))
        else:
            self.fact_caption.setText(tr("tour.title"))
            if self.fact_error is not None:
                self.fact_label.setText(html.escape(tr("tour.failed", message=self.fact_error)))
            elif self.window_.session.state is None:
                self.fact_label.setText(tr("tour.waiting"))
            else:
                self.fact_label.setText(tr("tour.measuring"))
            self.block.hide()

    def _size_block(self) -> None:
        """Exactly as tall and (up to a limit) as wide as the print: it never scrolls vertically."""
        doc = self.block.document()
        layout = doc.documentLayout()
        height = sum(layout.blockBoundingRect(doc.findBlockByNumber(i)).height() for i in range(doc.blockCount()))
        lines = self.block.toPlainText().splitlines() or [""]
        width = max(self.block.fontMetrics().horizontalAdvance(line) for line in lines)
        margin = 2 * (doc.documentMargin() + self.block.frameWidth()) + 2
        self.block.setFixedHeight(int(height + margin + 0.5))
        self.block.setMinimumWidth(int(min(width + margin, 420)))

    # ------------------------------------------------------------------ step 5's benchmark
    def run_benchmark(self) -> bool:
        """Start the KV benchmark (the learner pressed the button); False if it can't start."""
        kv = self._panel("panel.kvbench")
        if kv is None or not hasattr(kv, "run_benchmark"):
            return False
        dock = self._dock("panel.kvbench")
        if dock is not None:
            dock.show()
            dock.raise_()
        kv.tabs.setCurrentWidget(kv.bench_tab)
        state = self.window_.session.state
        self._kv_start_key = _state_key(state) if state is not None else None
        started = bool(kv.run_benchmark())
        self._update_run_button()
        return started

    def _on_bench_step(self, step) -> None:
        if getattr(step, "index", 1) == 0 and getattr(step, "repetition", 1) == 0 and step.mode == "with-cache":
            state = self.window_.session.state  # the run began on the state shown now (the panel's own Run too)
            self._kv_start_key = _state_key(state) if state is not None else None
        self._update_run_button()

    def _on_bench_finished(self, result) -> None:
        key = self._kv_start_key
        if key is None and self.window_.session.state is not None:
            key = _state_key(self.window_.session.state)
        self._kv_start_key = None
        if key is not None:
            self._kv_result = (key, result)
        self._update_run_button()
        if self.isVisible() and self.step.offers_benchmark:
            self._request_fact()

    @Slot()
    def _on_bench_cancelled(self) -> None:
        self._kv_start_key = None
        self._update_run_button()

    def _update_run_button(self) -> None:
        step = self.step
        kv = self._built("panel.kvbench")
        self.run_button.setVisible(step.offers_benchmark and (kv is not None or self._dock("panel.kvbench") is not None))
        running = bool(getattr(kv, "running", False)) if kv is not None else False
        self.run_button.setText(tr("tour.running") if running else tr("tour.run"))
        self.run_button.setEnabled(not running and self.window_.session.state is not None)

    # ------------------------------------------------------------------ events
    @Slot(object)
    def _on_state(self, _state) -> None:
        if self.isVisible():
            self._request_fact()
            self._update_run_button()

    @Slot(bool)
    def _on_visibility(self, visible: bool) -> None:
        if visible:
            self._request_fact()
        else:
            self._save()

    @Slot(str)
    def _on_language(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("tour.title"))
        step, progress = self.step, self.progress
        where = tr("tour.counter.lab", lab=step.lab_step) if step.lab_step else tr("tour.counter.prose")
        self.counter.setText(f"{tr('tour.counter', i=progress.index + 1, count=progress.count)} · {where}")
        self.title.setText(tr(f"tour.step.{step.key}.title"))
        kv = self._built("panel.kvbench")
        new = kv.new_tokens.value() if kv is not None and hasattr(kv, "new_tokens") else DEFAULT_NEW_TOKENS
        self.text.setText(tr(f"tour.step.{step.key}.body", new=new))
        self.back_button.setText(tr("tour.back"))
        self.back_button.setEnabled(not progress.at_start)
        self.next_button.setText(tr("tour.finish") if progress.at_end else tr("tour.next"))
        self.close_button.setText(tr("tour.close"))
        if self.menu_action is not None:
            self.menu_action.setText(tr("tour.menu"))
        self._update_run_button()
        self._show_fact()


# ---------------------------------------------------------------------------- first-start offer
class TourOffer(QFrame):
    """A small, non-modal "take the tour?" in the status bar, made once."""

    def __init__(self, dock: TourDock, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("tour.offer")
        self.dock = dock
        self.label = QLabel(self)
        self.start = QPushButton(self)
        self.start.setObjectName("tour.offer.start")
        self.dismiss = QPushButton(self)
        self.dismiss.setObjectName("tour.offer.dismiss")
        self.dismiss.setFlat(True)
        self.start.clicked.connect(self._start)
        self.dismiss.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.start)
        layout.addWidget(self.dismiss)
        translator.language_changed.connect(self._on_language)
        self.retranslate()

    @Slot(str)
    def _on_language(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        self.label.setText(tr("tour.offer.text"))
        self.start.setText(tr("tour.offer.start"))
        self.dismiss.setText(tr("tour.offer.dismiss"))

    def _start(self) -> None:
        self.hide()
        self.dock.open_tour()


# ---------------------------------------------------------------------------- wiring
def _step_from_env(value: str) -> int | str | None:
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return int(value) - 1  # people count steps from 1
    return value


def install_tour(window: QMainWindow) -> TourDock:
    """Add the tour to ``window``: its dock, Help › Lab tour (Ctrl+T), resume and first-start offer."""
    dock = TourDock(window)
    # a layout saved with the tour in it (restoreState ran before the dock existed) puts it back;
    # else it goes beside the token editor: the columns below are already at their minimum widths
    if not window.restoreDockWidget(dock):
        tokens = window.findChild(QDockWidget, "panel.token_editor")
        if tokens is not None and not tokens.isFloating() and window.dockWidgetArea(tokens) == Qt.DockWidgetArea.TopDockWidgetArea:
            window.splitDockWidget(tokens, dock, Qt.Orientation.Horizontal)
        else:
            window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.hide()
    window.tour = dock  # type: ignore[attr-defined]

    action = QAction(tr("tour.menu"), window)
    action.setObjectName("action.tour")
    action.setShortcut(QKeySequence(SHORTCUT))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: _open(window, dock))
    help_menu = getattr(window, "help_menu", None)
    if help_menu is not None:
        first = help_menu.actions()[0] if help_menu.actions() else None
        help_menu.insertAction(first, action)
    else:
        window.addAction(action)
    dock.menu_action = action  # re-labelled by dock.retranslate()

    forced = os.environ.get(OPEN_ENV, "").strip().lower() in ("1", "true", "yes")
    offered = _read_bool(window.settings.value(KEY_OFFERED), False)
    if forced:
        step = _step_from_env(os.environ.get(STEP_ENV, ""))
        if step is not None:
            try:
                dock.progress.goto(step)
            except ValueError:
                log.warning("%s=%r names no tour step", STEP_ENV, os.environ.get(STEP_ENV))
        # after the window's own first-show sizing (also a zero-delay timer, posted when it is shown)
        # (the dock as context: the timers die with it if the window goes first)
        QTimer.singleShot(0, dock, lambda: QTimer.singleShot(0, dock, lambda: _open(window, dock)))
    elif not offered:
        offer = TourOffer(dock, window.statusBar())
        window.statusBar().insertPermanentWidget(0, offer)
        dock.offer = offer
    if not offered:
        window.settings.setValue(KEY_OFFERED, True)
    if dock.isVisibleTo(window):  # restored open from the last session: set the step up again
        QTimer.singleShot(0, dock, dock._enter_step)
    return dock


def _open(window: QMainWindow, dock: TourDock) -> None:
    if dock.offer is not None:
        dock.offer.hide()
    was_open = dock.isVisible()
    dock.open_tour()
    if not was_open:
        _fit(window, dock)


def _fit(window: QMainWindow, dock: TourDock) -> None:
    """Give the tour room beside the tokens: a share of the top strip, and the strip some height."""
    if dock.isFloating() or window.dockWidgetArea(dock) != Qt.DockWidgetArea.TopDockWidgetArea:
        return
    tokens = window.findChild(QDockWidget, "panel.token_editor")
    if tokens is None or not tokens.isVisible() or window.dockWidgetArea(tokens) != Qt.DockWidgetArea.TopDockWidgetArea:
        return
    width = min(DOCK_WIDTH, max(dock.minimumSizeHint().width(), window.width() * 45 // 100))
    window.resizeDocks([tokens, dock], [max(1, window.width() - width), width], Qt.Orientation.Horizontal)
    if tokens.height() < DOCK_HEIGHT:
        dock.top_height_before = tokens.height()
        window.resizeDocks([dock], [DOCK_HEIGHT], Qt.Orientation.Vertical)


def _unfit(window: QMainWindow, dock: TourDock) -> None:
    """Closing the tour gives the top strip its height back."""
    before, dock.top_height_before = dock.top_height_before, None
    tokens = window.findChild(QDockWidget, "panel.token_editor")
    if before is not None and tokens is not None and tokens.isVisible():
        window.resizeDocks([tokens], [before], Qt.Orientation.Vertical)
