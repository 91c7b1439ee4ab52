"""The edit update, computed fast: only what the panels show, reusing what is already known.

When a learner changes one token, the panels need three things for the edited text: the
shown layer's attention maps with the mask and without it, and the leakage diff (how far
every position's hidden state moved, in both modes).  :func:`attention_lab.core.analysis.leakage`
computes the diff the obvious way -- original and edited, causal and bidirectional, four
full passes.  This module gets the same numbers with much less work, without touching the
lens's step-by-step forward (that one stays the chapter's):

1. **reuse the unedited text's results** (:class:`EditBase`): its hidden states, its
   attention maps and its causal K/V cache were computed when the text was shown; an edit
   of that text only recomputes the edited side;
2. **prefix reuse under the mask**: with a causal mask, positions before the edit can't see
   it, so their hidden states, attention rows and K/V are the original's.  The causal pass
   of the edited text runs only on positions ``p … n−1``, on top of the original's K/V
   cache for ``0 … p−1`` (the same mechanism as generation).  This is the chapter's claim
   used as an optimisation: under the mask, "changed by exactly 0" is free.  Mask modes
   that leak the future (``zero-score``, ``zero-after-softmax``) get no reuse; nor does a
   designed mask (``allowed``, :mod:`attention_lab.core.masks`) where some position before
   the edit may look at it or after it (prefix-LM with the edit inside the prefix,
   bidirectional), nor a ``mean`` head knockout (it averages over the whole text);
3. **nothing nobody shows**: no vocabulary projection (50257 × d per position), attention
   kept for the shown layer only.

Left to do per edit: one bidirectional pass (everything may move there) and the causal
pass of the suffix -- for a late edit, about one forward of one sequence, where the plain
path does four.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from .analysis import LeakageResult, relative_change
from .lens import GPT2Lens, HeadAblation, KVCache, LensOutput, MaskMode

Tensor = torch.Tensor

# masks that give future keys a weight of exactly 0, so earlier positions can't depend on later ones
PREFIX_SAFE_MODES = frozenset({MaskMode.NEG_INF, MaskMode.FINFO_MIN, MaskMode.NEG_1E9})


@dataclass
class EditBase:
    """The unedited text's results that every edit of it reuses (one sequence, batch dim dropped)."""

    ids: list[int]
    mask_mode: MaskMode
    layer: int
    causal_hidden: Tensor  # [L+1, n, d]: embeddings, then after every block
    causal_final: Tensor  # [n, d]: after ln_f
    causal_attention: Tensor  # [H, n, n] of `layer`
    causal_cache: KVCache | None  # K/V of every layer, [1, H, n, d_k]; None for a leaking mask
    bidirectional_hidden: Tensor
    bidirectional_final: Tensor
    bidirectional_attention: Tensor
    allowed: Tensor | None = None  # the masked run's [n, n] allowed-matrix; None: causal
    ablation: HeadAblation | None = None  # heads knocked out in both runs

    def matches(self, ids: Sequence[int], layer: int, mask_mode: MaskMode, allowed: Tensor | None = None,
                ablation: HeadAblation | None = None) -> bool:
        return (self.layer == layer and self.mask_mode is mask_mode and list(ids) == self.ids
                and _same_mask(self.allowed, allowed) and _same_ablation(self.ablation, ablation))

    @classmethod
    def from_outputs(
        cls, ids: Sequence[int], layer: int, mask_mode: MaskMode | str, causal: LensOutput, bidirectional: LensOutput,
        allowed: Tensor | None = None, ablation: HeadAblation | None = None,
    ) -> "EditBase":
        """Build a base from passes a caller ran anyway (``keep_hidden=True``, ``layer`` kept,
        and ``use_cache=True`` on the causal pass for prefix reuse), with the ``allowed``
        mask and the ``ablation`` they ran with."""
        mode = MaskMode.parse(mask_mode)
        for name, out in (("causal", causal), ("bidirectional", bidirectional)):
            if out.final_hidden.shape[0] != 1:
                raise ValueError(f"the {name} pass must be of one sequence, not a batch")
            if out.hidden_states is None or out.attentions[layer] is None:
                raise ValueError(f"the {name} pass must keep its hidden states and layer {layer}'s attention")
        assert causal.hidden_states is not None and bidirectional.hidden_states is not None
        cache = causal.cache if mode in PREFIX_SAFE_MODES else None
        return cls(
            ids=[int(i) for i in ids],
            mask_mode=mode,
            layer=layer,
            causal_hidden=causal.hidden_states[0],
            causal_final=causal.final_hidden[0],
            causal_attention=causal.attentions[layer][0],  # type: ignore[index]
            causal_cache=cache,
            bidirectional_hidden=bidirectional.hidden_states[0],
            bidirectional_final=bidirectional.final_hidden[0],
            bidirectional_attention=bidirectional.attentions[layer][0],  # type: ignore[index]
            allowed=allowed,
            ablation=ablation,
        )


def _same_mask(a: Tensor | None, b: Tensor | None) -> bool:
    return (a is None and b is None) or (a is not None and b is not None and torch.equal(a, b))


def _same_ablation(a: HeadAblation | None, b: HeadAblation | None) -> bool:
    return (a is None and b is None) or (
        a is not None and b is not None and a.mode == b.mode and torch.equal(a.knocked, b.knocked))


def reusable_prefix(position: int, mode: MaskMode, allowed: Tensor | None, ablation: HeadAblation | None) -> int:
    """How many positions before an edit at ``position`` keep the original's hidden states and
    K/V: all of them when nothing before the edit may look at it or beyond (the causal mask,
    a window, documents...), else none."""
    if mode not in PREFIX_SAFE_MODES or (ablation is not None and ablation.mode == "mean"):
        return 0
    if allowed is not None and bool(allowed[:position, position:].any()):
        return 0
    return position


@dataclass
class EditUpdate:
    """What the panels show after an edit: the edited text's maps of one layer, and the leakage."""

    ids: list[int]  # the edited text
    position: int
    replacement_id: int
    layer: int
    attention_causal: Tensor  # [H, n, n]
    attention_bidirectional: Tensor  # [H, n, n]
    leakage: LeakageResult
    reused_positions: int  # causal positions taken from the base's cache (0: computed in full)


def _check(lens: GPT2Lens, ids: Sequence[int], position: int, replacement_id: int, layer: int) -> list[int]:
    cfg = lens.config
    ids = [int(i) for i in ids]
    if not ids:
        raise ValueError("the sequence is empty")
    if len(ids) > cfg.n_positions:
        raise ValueError(f"{len(ids)} positions exceed the model's context of {cfg.n_positions}")
    if min(ids) < 0 or max(ids) >= cfg.vocab_size:
        raise ValueError(f"token ids must lie in [0, {cfg.vocab_size})")
    if not 0 <= position < len(ids):
        raise ValueError(f"position {position} is out of range: the sequence has {len(ids)} tokens")
    if not 0 <= replacement_id < cfg.vocab_size:
        raise ValueError(f"replacement {replacement_id} is not a token id of this model")
    if not 0 <= layer < cfg.n_layer:
        raise ValueError(f"layer {layer} is out of range (0..{cfg.n_layer - 1})")
    return ids


def prepare_edit_base(lens: GPT2Lens, ids: Sequence[int], layer: int, mask_mode: MaskMode | str = MaskMode.NEG_INF,
                      allowed: Tensor | None = None, ablation: HeadAblation | None = None) -> EditBase:
    """Run the unedited text once per mode, keeping what every later edit reuses."""
    mode = MaskMode.parse(mask_mode)
    common = dict(keep_attentions=[layer], keep_hidden=True, compute_logits=False, ablation=ablation)
    causal = lens(ids, causal=True, mask_mode=mode, allowed=allowed, use_cache=mode in PREFIX_SAFE_MODES, **common)
    bidirectional = lens(ids, causal=False, **common)
    return EditBase.from_outputs(ids, layer, mode, causal, bidirectional, allowed, ablation)


def edit_update(
    lens: GPT2Lens,
    ids: Sequence[int],
    position: int,
    replacement_id: int,
    layer: int,
    mask_mode: MaskMode | str = MaskMode.NEG_INF,
    base: EditBase | None = None,
    allowed: Tensor | None = None,
    ablation: HeadAblation | None = None,
) -> EditUpdate:
    """Replace ``ids[position]`` by ``replacement_id``; return what the panels show.

    ``allowed``: the masked ("causal") run's boolean ``[n, n]`` mask instead of the causal
    one; ``ablation``: heads knocked out in both runs.  ``base`` holds the unedited text's
    results; without it (or when it belongs to another text, layer, mask or knockout) it is
    computed here.  The mask is held fixed while the token is edited (as in
    :mod:`attention_lab.core.masks`).  The leakage equals
    :func:`attention_lab.core.analysis.leakage` to float32 rounding, and positions the
    edit can't reach under the mask come out exactly 0.
    """
    position, replacement_id, layer = int(position), int(replacement_id), int(layer)
    ids = _check(lens, ids, position, replacement_id, layer)
    mode = MaskMode.parse(mask_mode)
    if allowed is not None and tuple(allowed.shape) != (len(ids), len(ids)):
        raise ValueError(f"allowed is {tuple(allowed.shape)}; the text has {len(ids)} tokens")
    if base is None or not base.matches(ids, layer, mode, allowed, ablation):
        base = prepare_edit_base(lens, ids, layer, mode, allowed, ablation)
    edited = list(ids)
    edited[position] = replacement_id
    common = dict(keep_attentions=[layer], keep_hidden=True, compute_logits=False, ablation=ablation)

    # causal: positions before the edit are the original's; run only p … n−1 on their K/V
    reuse = reusable_prefix(position, mode, allowed, ablation) if base.causal_cache is not None else 0
    if reuse > 0:
        prefix = KVCache(
            keys=[k[:, :, :reuse] for k in base.causal_cache.keys],  # type: ignore[union-attr]
            values=[v[:, :, :reuse] for v in base.causal_cache.values],  # type: ignore[union-attr]
        )
        tail_allowed = None if allowed is None else allowed[reuse:]  # the suffix's rows, every key
        tail = lens(edited[reuse:], causal=True, mask_mode=mode, past=prefix, allowed=tail_allowed, **common)
        assert tail.hidden_states is not None
        causal_hidden = torch.cat([base.causal_hidden[:, :reuse], tail.hidden_states[0]], dim=1)
        causal_final = torch.cat([base.causal_final[:reuse], tail.final_hidden[0]], dim=0)
        attention_causal = torch.cat([base.causal_attention[:, :reuse], tail.attentions[layer][0]], dim=1)  # type: ignore[index]
    else:
        full = lens(edited, causal=True, mask_mode=mode, allowed=allowed, **common)
        assert full.hidden_states is not None
        causal_hidden, causal_final = full.hidden_states[0], full.final_hidden[0]
        attention_causal = full.attentions[layer][0]  # type: ignore[index]

    # bidirectional: every position may see the edit, so the whole text is run again
    bidi = lens(edited, causal=False, **common)
    assert bidi.hidden_states is not None

    leak = LeakageResult(
        position=position,
        replacement_id=replacement_id,
        original_id=ids[position],
        mask_mode=mode.value,
        causal=relative_change(base.causal_final, causal_final),
        bidirectional=relative_change(base.bidirectional_final, bidi.final_hidden[0]),
        causal_layers=relative_change(base.causal_hidden, causal_hidden),
        bidirectional_layers=relative_change(base.bidirectional_hidden, bidi.hidden_states[0]),
    )
    return EditUpdate(
        ids=edited,
        position=position,
        replacement_id=replacement_id,
        layer=layer,
        attention_causal=attention_causal,
        attention_bidirectional=bidi.attentions[layer][0],  # type: ignore[index]
        leakage=leak,
        reused_positions=reuse,
    )
