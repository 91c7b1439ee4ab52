"""The analysis the panels show: the app computes it on its worker thread; the headless
``lab`` (steps 1-4), ``bench`` (its memory row) and the tests call the same function.

:func:`compute_analysis` turns one :class:`AnalysisRequest` (text, layer, edited position…)
into an :class:`~attention_lab.core.analysis_state.AnalysisState`: tokens, attentions of the shown
layer with and without the mask, the leakage diff, the head portraits of every layer, the
shape table and the model's top-k predictions.  It checks the cancel event between steps
so a superseded request stops early (:class:`~attention_lab.core.job_protocol.Cancelled`).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import torch

from attention_lab.core.analysis_state import AnalysisState
from attention_lab.core.job_protocol import raise_if_cancelled
from attention_lab.core.lens import ShapeRow
from attention_lab.core.pooling import PREVIEW_PIXELS, previews

TOP_K = 10
# Above this many tokens the vocabulary projection (n × d × 50257) is done only for the
# positions the panels read (the edited one's predecessor and the last one).
FULL_TOPK_LIMIT = 256
# Positions projected per matmul, so the [n, vocab] logits never exist at once.
LOGITS_CHUNK = 128


class EmptyTextError(ValueError):
    """The text has no tokens: nothing to analyse."""


@dataclass(frozen=True)
class AnalysisRequest:
    request_id: int
    text: str
    layer: int = 0
    causal: bool = True
    position: int | None = None  # edited position; None = the last token
    replacement_id: int | None = None  # None = the model's own best guess for that position
    bos: bool = False  # prepend <|endoftext|> as a beginning-of-sequence token
    mask_mode: str = "-inf"
    # the designer's mask (core.masks.MaskSpec) for the masked pass; None: causal, as GPT-2
    mask: object | None = None
    knockout: tuple[tuple[int, int], ...] = ()  # heads (layer, head) knocked out in every pass
    knockout_mode: str = "zero"  # "zero" or "mean" (core.lens.HeadAblation)
    # pixels across one head's map in the head grid: its long-text maps are max-pooled to
    # that here, on the worker (pooling them on the GUI thread was 15-25 ms of every long
    # text's redraw).  Not part of what the analysis means: a prefetched state
    # with another size is still the same analysis
    grid_pixels: int = field(default=PREVIEW_PIXELS, compare=False)


def tokenize(model, text: str, bos: bool) -> tuple[list[int], int, int]:
    """(ids cut to the model's context, length before the cut, characters of text kept)."""
    tok = model.tokenizer
    text_ids = tok.encode(text)
    prefix = [tok.eos_id] if bos else []
    full = prefix + text_ids
    if not text_ids:
        raise EmptyTextError("empty text")
    context = model.lens.config.n_positions
    ids = full[:context]
    kept_chars = len(text)
    if len(full) > context:
        kept_chars = len(tok.decode(text_ids[: context - len(prefix)]))
    return ids, len(full), kept_chars


def top_predictions(lens, final_hidden: torch.Tensor, positions: list[int] | None, k: int = TOP_K):
    """Top-k next-token ids/probabilities after each position ([n, k]; rows not computed: -1 / NaN)."""
    n = final_hidden.shape[0]
    k = min(k, lens.config.vocab_size)
    top_ids = torch.full((n, k), -1, dtype=torch.long)
    top_probs = torch.full((n, k), float("nan"))
    rows = list(range(n)) if positions is None else sorted({p for p in positions if 0 <= p < n})
    emb = lens.output_embedding
    with torch.inference_mode():
        for start in range(0, len(rows), LOGITS_CHUNK):
            idx = torch.tensor(rows[start : start + LOGITS_CHUNK])
            probs = torch.softmax(final_hidden[idx] @ emb.T, dim=-1)
            p, i = probs.topk(k, dim=-1)
            top_ids[idx] = i
            top_probs[idx] = p
    return top_ids, top_probs


def default_replacement(ids: list[int], position: int, top_ids: torch.Tensor, vocab_size: int) -> int:
    """The model's most likely token at ``position`` that differs from the one there."""
    row = top_ids[position - 1] if position > 0 else top_ids[0]
    for candidate in row.tolist():
        if candidate >= 0 and candidate != ids[position]:
            return int(candidate)
    return (ids[position] + 1) % vocab_size  # predictions not computed there: any other token


def compute_analysis(
    model, request: AnalysisRequest, cancel: threading.Event | None = None, progress=None,
    *, layer_hook: Callable[[int, torch.Tensor], None] | None = None,
) -> AnalysisState:
    """``layer_hook(index, attention [1, H, n, n])``, if given, sees every layer's causal
    attention as it is made, before it is dropped: the headless lab's detectors read all
    layers that way, from this same pass, without the state keeping them."""
    from attention_lab.core.analysis import head_portrait
    from attention_lab.core.fast_paths import EditBase, edit_update
    from attention_lab.core.lens import HeadAblation
    from attention_lab.core.masks import allowed_for_text

    def check() -> None:
        raise_if_cancelled(cancel)

    start = time.perf_counter()
    lens, tok = model.lens, model.tokenizer
    cfg = lens.config
    ids, original_length, kept_chars = tokenize(model, request.text, request.bos)
    n = len(ids)
    layer = min(max(0, int(request.layer)), cfg.n_layer - 1)
    position = n - 1 if request.position is None else min(max(0, int(request.position)), n - 1)
    spec = request.mask
    # the causal mask stays the lens's own (no matrix built): GPT-2 exactly as before
    allowed = None if spec is None or spec.kind == "causal" else allowed_for_text(spec, ids, tok)
    ablation = (HeadAblation.of(request.knockout, request.knockout_mode, cfg.n_layer, cfg.n_head)
                if request.knockout else None)
    check()

    # 1) the causal pass (GPT-2 as it is; or under the designer's mask and knockout, core.masks):
    #    each layer's attention is summarised into head
    #    portraits as it is made and then dropped (all of them take 576 MB at 1024 tokens
    #    for GPT-2 small, and only the shown layer is drawn); hidden states and the K/V
    #    cache are kept for the fast leakage path in step 4
    overview: list = []

    def summarise(index: int, attn: torch.Tensor) -> None:
        if layer_hook is not None:
            layer_hook(index, attn)
        if n >= 2:  # one token has no portrait (its row is [1]): the panels say so
            overview.extend(head_portrait(attn[0], layer_offset=index))
        check()  # a superseded request stops between layers

    causal_out = lens(ids, causal=True, mask_mode=request.mask_mode, keep_attentions=[layer], keep_hidden=True,
                      use_cache=True, compute_logits=False, attention_hook=summarise, allowed=allowed,
                      ablation=ablation)
    portrait = [s for s in overview if s.layer == layer]
    check()

    # 2) the model's predictions (the replacement defaults to its best guess)
    wanted = None if n <= FULL_TOPK_LIMIT else [position - 1, n - 1]
    top_ids, top_probs = top_predictions(lens, causal_out.final_hidden[0], wanted)
    replacement = request.replacement_id
    if replacement is None or not 0 <= replacement < cfg.vocab_size or replacement == ids[position]:
        replacement = default_replacement(ids, position, top_ids, cfg.vocab_size)
    check()

    # 3) the same input without the mask (RoBERTa-style), only the shown layer kept
    bidi_out = lens(ids, causal=False, keep_attentions=[layer], keep_hidden=True, compute_logits=False,
                    ablation=ablation)
    check()

    # 4) the leakage diff: change the token at `position`, measure every position's change.
    #    core.fast_paths reuses the two passes above (and, under the mask, the K/V of the
    #    positions before the edit): core.analysis.leakage's numbers for about one pass instead of four
    base = EditBase.from_outputs(ids, layer, request.mask_mode, causal_out, bidi_out, allowed, ablation)
    leak = edit_update(lens, ids, position, replacement, layer, mask_mode=request.mask_mode, base=base,
                       allowed=allowed, ablation=ablation).leakage
    check()

    # the lens notes the shapes of layer 0 as it runs; logits were skipped, add their row
    shapes = list(causal_out.shapes) + [ShapeRow("logits", (n, cfg.vocab_size), "ln_f, then × wteᵀ")]
    attention_causal = causal_out.attentions[layer][0].contiguous()
    attention_bidirectional = bidi_out.attentions[layer][0].contiguous()
    del causal_out, bidi_out, base  # hidden states and K/V of every layer

    return AnalysisState(
        request_id=request.request_id,
        model=model,
        text=request.text,
        ids=ids,
        tokens=tok.token_texts(ids),
        original_length=original_length,
        layer=layer,
        causal=request.causal,
        position=position,
        replacement_id=int(replacement),
        attention_causal=attention_causal,
        attention_bidirectional=attention_bidirectional,
        leakage=leak,
        portrait=portrait,
        overview=overview,
        shapes=shapes,
        top_ids=top_ids,
        top_probs=top_probs,
        grid_previews=previews(attention_causal, attention_bidirectional, request.grid_pixels),
        seconds=time.perf_counter() - start,
        extras={
            "kept_chars": kept_chars,
            "bos": request.bos,
            "replacement_text": tok.token_texts([int(replacement)])[0],
            "mask_mode": request.mask_mode,
            "follow_last": request.position is None,
            "mask_spec": "causal" if spec is None else str(spec),
            "allowed": allowed,  # [n, n] bool of the masked pass; None: causal
            "knockout": tuple(request.knockout),
            "knockout_mode": request.knockout_mode,
        },
    )
