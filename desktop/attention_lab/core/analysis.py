"""The chapter's claims as measurements: pure functions over the lens and its tensors.

* :func:`leakage` -- edit one token, recompute everything, see who changed (step 3 of the lab);
* :func:`head_portrait` -- mean distance, entropy, sink mass and a role per head (step 4);
* head detectors in the spirit of TransformerLens (previous-token, duplicate-token, induction);
* :func:`kv_stability` -- why the KV cache is valid under the mask and not without it;
* :func:`mask_mode_report` -- "why −∞ and not zero?" in numbers;
* :func:`ascii_mask` -- the chapter's triangle print.

Nothing here mutates its inputs and nothing imports Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Iterator, Literal, Sequence

import torch

from .lens import GPT2Lens, MaskMode

Tensor = torch.Tensor


# ---------------------------------------------------------------------------- helpers
def relative_change(original: Tensor, edited: Tensor) -> Tensor:
    """‖edited − original‖ / ‖original‖ over the last dimension (0 where both are 0)."""
    diff = torch.linalg.vector_norm(edited - original, dim=-1)
    norm = torch.linalg.vector_norm(original, dim=-1)
    return torch.where(norm > 0, diff / norm.clamp_min(torch.finfo(norm.dtype).tiny), diff)


def _check_ids(lens: GPT2Lens, ids: Sequence[int], extra: int = 0) -> list[int]:
    ids = [int(i) for i in ids]
    if not ids:
        raise ValueError("the sequence is empty")
    cfg = lens.config
    if len(ids) + extra > cfg.n_positions:
        raise ValueError(f"{len(ids) + extra} positions exceed the model's context of {cfg.n_positions}")
    if min(ids) < 0 or max(ids) >= cfg.vocab_size:
        raise ValueError(f"token ids must lie in [0, {cfg.vocab_size})")
    return ids


def _check_token(lens: GPT2Lens, token_id: int, what: str) -> int:
    token_id = int(token_id)
    if not 0 <= token_id < lens.config.vocab_size:
        raise ValueError(f"{what} {token_id} is not a token id of this model (0..{lens.config.vocab_size - 1})")
    return token_id


def _check_position(ids: Sequence[int], position: int) -> int:
    position = int(position)
    if not 0 <= position < len(ids):
        raise ValueError(f"position {position} is out of range: the sequence has {len(ids)} tokens (0..{len(ids) - 1})")
    return position


# ---------------------------------------------------------------------------- leakage
@dataclass
class LeakageResult:
    """Relative change ‖h′ᵢ − hᵢ‖ / ‖hᵢ‖ at every position after editing one token.

    ``causal`` / ``bidirectional``: ``[n]``, final hidden state (after ``ln_f``).
    ``*_layers``: ``[L+1, n]``, the embeddings then the residual stream after every block.
    """

    position: int
    replacement_id: int
    original_id: int
    mask_mode: str
    causal: Tensor
    bidirectional: Tensor
    causal_layers: Tensor
    bidirectional_layers: Tensor

    @property
    def causal_max_before(self) -> float:
        """Largest causal change strictly before the edited position (0.0 under a proper mask)."""
        return float(self.causal[: self.position].max()) if self.position > 0 else 0.0

    @property
    def bidirectional_max_before(self) -> float:
        return float(self.bidirectional[: self.position].max()) if self.position > 0 else 0.0


def _edit_pair(lens: GPT2Lens, ids: list[int], position: int, replacement_id: int, causal: bool, mode: MaskMode,
               allowed: Tensor | None = None):
    """One B=2 forward of [original, edited]: a full recompute of both, no prefix reused
    (``allowed``: the masked run's allowed-matrix, replacing the causal one).

    Both sequences go through the very same kernel calls, so a row that depends only on
    identical inputs comes out bit-for-bit identical -- "no change" is an exact 0.0.
    """
    edited = list(ids)
    edited[position] = replacement_id
    out = lens(
        torch.tensor([ids, edited]),
        causal=causal,
        mask_mode=mode,
        allowed=allowed,
        keep_attentions=False,
        keep_hidden=True,
        compute_logits=False,
    )
    assert out.hidden_states is not None
    final = relative_change(out.final_hidden[0], out.final_hidden[1])  # [n]
    layers = relative_change(out.hidden_states[0], out.hidden_states[1])  # [L+1, n]
    return final, layers


def leakage(
    lens: GPT2Lens,
    ids: Sequence[int],
    position: int,
    replacement_id: int,
    mask_mode: MaskMode | str = MaskMode.NEG_INF,
    allowed: Tensor | None = None,
) -> LeakageResult:
    """Replace token ``position`` by ``replacement_id`` and measure how much every position moved.

    ``mask_mode`` applies to the causal run (``zero-score`` leaks; the others don't).
    ``allowed``: the "causal" run uses this boolean ``[n, n]`` mask instead (prefix-LM, a
    window, documents, a learner's own: :mod:`attention_lab.core.masks`); the bidirectional
    run stays unmasked.
    """
    ids = _check_ids(lens, ids)
    mode = MaskMode.parse(mask_mode)
    position = _check_position(ids, position)
    replacement_id = _check_token(lens, replacement_id, "replacement")
    causal, causal_layers = _edit_pair(lens, ids, position, replacement_id, True, mode, allowed)
    bidir, bidir_layers = _edit_pair(lens, ids, position, replacement_id, False, mode)
    return LeakageResult(
        position=position,
        replacement_id=replacement_id,
        original_id=ids[position],
        mask_mode=mode.value,
        causal=causal,
        bidirectional=bidir,
        causal_layers=causal_layers,
        bidirectional_layers=bidir_layers,
    )


# ---------------------------------------------------------------------------- head portrait
@dataclass
class HeadStats:
    layer: int
    head: int
    mean_distance: float
    entropy: float  # nats
    sink_mass: float
    previous_token: float
    current_token: float
    #: the dominant relative offset (0: the token itself, 1: the previous token, 2: two back, …)
    #: and meanᵢ A[i, i−offset]: where a head's weight actually goes
    offset: int = 1
    offset_share: float = 0.0


def _square_maps(attn: Tensor, what: str) -> Tensor:
    if not isinstance(attn, Tensor):
        attn = torch.as_tensor(attn)
    if attn.dim() not in (3, 4) or attn.shape[-1] != attn.shape[-2]:
        raise ValueError(f"{what} expects attention maps [H, n, n] or [L, H, n, n], got shape {tuple(attn.shape)}")
    return attn.to(torch.float64)  # the metrics are means of small numbers: keep them exact-ish


def portrait_metrics(attn: Tensor) -> dict[str, Tensor]:
    """The per-head numbers over query rows i = 1 … n−1, each of shape ``attn.shape[:-2]``."""
    a = _square_maps(attn, "head_portrait")
    n = a.shape[-1]
    if n < 2:
        raise ValueError(
            f"a head portrait needs at least 2 tokens (row 0 of a causal map is always [1, 0, …]); got {n}"
        )
    rows = a[..., 1:, :]  # [.., n-1, n]: query rows i = 1..n-1
    i = torch.arange(1, n, dtype=torch.float64)[:, None]
    j = torch.arange(n, dtype=torch.float64)[None, :]
    mean_distance = (rows * (i - j).abs()).sum(-1).mean(-1)
    entropy = (-torch.special.xlogy(rows, rows)).sum(-1).mean(-1)  # xlogy(0, 0) = 0: 0·ln0 = 0
    sink_mass = rows[..., 0].mean(-1)
    idx = torch.arange(1, n)
    previous_token = rows[..., idx - 1, idx - 1].mean(-1)  # A[i, i-1]
    current_token = rows[..., idx - 1, idx].mean(-1)  # A[i, i]
    # share[d] = meanᵢ A[i, i−d] for d = 0 … n−1 (0 where i < d): a mean distance cannot say
    # where the weight goes (half on itself and half two back also averages 1)
    back = (i - j).long()  # [n-1, n]: how far back key j is from query i
    bins = torch.where(back >= 0, back, torch.full_like(back, n)).flatten()  # the future: a bin of its own
    flat = rows.reshape(*rows.shape[:-2], -1)
    totals = torch.zeros(*rows.shape[:-2], n + 1, dtype=torch.float64).scatter_add_(-1, bins.expand_as(flat), flat)
    offset_share, offset = (totals[..., :n] / (n - 1)).max(-1)
    return {
        "mean_distance": mean_distance,
        "entropy": entropy,
        "sink_mass": sink_mass,
        "previous_token": previous_token,
        "current_token": current_token,
        "offset": offset.to(torch.float64),
        "offset_share": offset_share,
    }


def uniform_causal_entropy(n: int) -> float:
    """meanᵢ ln(i+1) over i = 1 … n−1: the entropy of a head that spreads evenly over its past."""
    return sum(math.log(i + 1) for i in range(1, n)) / (n - 1)


def head_portrait(attn: Tensor, *, layer_offset: int = 0) -> list[HeadStats]:
    """Portrait of every head in ``attn`` (``[H, n, n]`` of one layer or ``[L, H, n, n]``).

    Over query rows i = 1 … n−1 (row 0 is trivial under the mask):
    ``mean_distance`` = meanᵢ Σⱼ A[i,j]·|i−j|; ``entropy`` = meanᵢ −Σⱼ A[i,j]·ln A[i,j];
    ``sink_mass`` = meanᵢ A[i,0]; ``previous_token`` = meanᵢ A[i,i−1]; ``current_token`` = meanᵢ A[i,i];
    ``offset`` = the d ≥ 0 with the largest ``offset_share`` = meanᵢ A[i,i−d].
    The chapter's roles each head plays are decided from these numbers by :mod:`attention_lab.core.roles`.
    """
    m = portrait_metrics(attn)
    stacked = {k: (v if v.dim() == 2 else v[None]) for k, v in m.items()}  # [L, H]
    n_layers, n_heads = stacked["entropy"].shape
    result = []
    for layer in range(n_layers):
        for head in range(n_heads):
            values = {k: float(v[layer, head]) for k, v in stacked.items()}
            values["offset"] = int(values["offset"])
            result.append(HeadStats(layer=layer_offset + layer, head=head, **values))
    return result


# ---------------------------------------------------------------------------- head detectors
DetectorKind = Literal["previous-token", "duplicate-token", "induction"]


def previous_token_pattern(n: int) -> Tensor:
    """D[i, i−1] = 1: the ideal previous-token head."""
    return torch.diag(torch.ones(n - 1), -1) if n > 1 else torch.zeros(1, 1)


def duplicate_token_pattern(ids: Sequence[int]) -> Tensor:
    """D[i, j] = 1 where j < i holds the same token as i."""
    t = torch.as_tensor(list(ids))
    return torch.tril((t[:, None] == t[None, :]).float(), diagonal=-1)


def induction_pattern(ids: Sequence[int]) -> Tensor:
    """D[i, j] = 1 where token j−1 equals token i and j ≤ i: attend to what followed the last occurrence."""
    dup = duplicate_token_pattern(ids)  # dup[i, j-1]
    shifted = torch.zeros_like(dup)
    shifted[:, 1:] = dup[:, :-1]
    return torch.tril(shifted)


def detection_pattern(kind: DetectorKind, ids: Sequence[int]) -> Tensor:
    if kind == "previous-token":
        return previous_token_pattern(len(ids))
    if kind == "duplicate-token":
        return duplicate_token_pattern(ids)
    if kind == "induction":
        return induction_pattern(ids)
    raise ValueError(f"unknown detector {kind!r}; choose previous-token, duplicate-token or induction")


def detector_scores(
    attn: Tensor,
    pattern: Tensor,
    *,
    exclude_bos: bool = False,
    exclude_current_token: bool = False,
) -> Tensor:
    """score = (A·D).sum() / A.sum() per head (TransformerLens' "mul" measure), shape ``attn.shape[:-2]``.

    ``exclude_bos`` / ``exclude_current_token`` drop column 0 / the diagonal from A first --
    on a copy: unlike TransformerLens, the caller's attention is never modified.
    """
    a = _square_maps(attn, "detector_scores").clone()
    n = a.shape[-1]
    if tuple(pattern.shape) != (n, n):
        raise ValueError(f"detection pattern {tuple(pattern.shape)} does not match attention maps of {n} tokens")
    if exclude_bos:
        a[..., :, 0] = 0.0
    if exclude_current_token:
        a.diagonal(dim1=-2, dim2=-1).zero_()
    total = a.sum((-1, -2))
    hit = (a * pattern.to(a.dtype)).sum((-1, -2))
    return torch.where(total > 0, hit / total.clamp_min(1e-300), torch.zeros_like(total))


def previous_token_scores(attn: Tensor, **kwargs) -> Tensor:
    return detector_scores(attn, previous_token_pattern(attn.shape[-1]), **kwargs)


def duplicate_token_scores(attn: Tensor, ids: Sequence[int], **kwargs) -> Tensor:
    return detector_scores(attn, duplicate_token_pattern(ids), **kwargs)


def induction_scores(attn: Tensor, ids: Sequence[int], **kwargs) -> Tensor:
    return detector_scores(attn, induction_pattern(ids), **kwargs)


def repeated_random_tokens(
    half_length: int, seed: int = 0, vocab_size: int = 50257, bos_id: int | None = None
) -> list[int]:
    """A random token sequence followed by itself (optionally after ``bos_id``): induction's test bed.

    Tokens are drawn from [0, vocab_size − 1), i.e. never GPT-2's <|endoftext|>, without repeats
    inside the first half, so every duplicate is a copy from the other half.
    """
    if half_length < 1:
        raise ValueError("half_length must be at least 1")
    g = torch.Generator().manual_seed(seed)
    half = torch.randperm(vocab_size - 1, generator=g)[:half_length].tolist()
    prefix = [bos_id] if bos_id is not None else []
    return prefix + half + half


def head_detector(
    lens: GPT2Lens,
    prompts: Sequence[int] | Sequence[Sequence[int]],
    kind: DetectorKind,
    *,
    exclude_bos: bool = False,
    exclude_current_token: bool = False,
) -> Tensor:
    """``[L, H]`` detector scores for one prompt, or their mean over a list of prompts.

    Every keyword applies to every prompt (TransformerLens dropped them for lists).
    """
    if len(prompts) and not isinstance(prompts[0], int):
        batch = [list(p) for p in prompts]  # type: ignore[arg-type]
    else:
        batch = [list(prompts)]  # type: ignore[arg-type]
    if not batch or any(not p for p in batch):
        raise ValueError("head_detector needs non-empty prompts")
    scores = []
    for ids in batch:
        out = lens(ids, keep_attentions=True, keep_hidden=False, compute_logits=False)
        attn = out.attention_stack()[0]  # [L, H, n, n]
        scores.append(
            detector_scores(
                attn, detection_pattern(kind, ids), exclude_bos=exclude_bos, exclude_current_token=exclude_current_token
            )
        )
    return torch.stack(scores).mean(0)


def induction_scores_on_repeats(
    lens: GPT2Lens, half_length: int | None = None, seed: int = 0, bos_id: int | None = None
) -> tuple[Tensor, list[int]]:
    """Induction scores ``[L, H]`` measured on a repeated random sequence, and that sequence."""
    room = lens.config.n_positions - (1 if bos_id is not None else 0)
    half = half_length if half_length is not None else min(20, room // 2)
    if half < 1 or 2 * half > room:
        raise ValueError(f"a repeated sequence of 2×{half} tokens does not fit the context of {lens.config.n_positions}")
    ids = repeated_random_tokens(half, seed, lens.config.vocab_size, bos_id)
    return head_detector(lens, ids, "induction"), ids


# ---------------------------------------------------------------------------- K/V stability
@dataclass
class KVStability:
    """How much K and V of positions 0 … n−1 change with the token appended at position n.

    Each tensor is ``[L, n]``: the relative change ‖k′ − k‖ / ‖k‖ of a position's key
    (all heads together), per layer.  Causal: exactly 0 everywhere (cacheable).
    Bidirectional: 0 in layer 0 (its K and V see only the token and its position),
    non-zero from layer 1 on.
    """

    appended_id: int
    reference_id: int
    n: int
    causal_keys: Tensor
    causal_values: Tensor
    bidirectional_keys: Tensor
    bidirectional_values: Tensor

    def max_per_layer(self, mode: Literal["causal", "bidirectional"]) -> list[float]:
        k = getattr(self, f"{mode}_keys")
        v = getattr(self, f"{mode}_values")
        return torch.maximum(k, v).amax(-1).tolist()


def next_token_candidates(lens: GPT2Lens, ids: Sequence[int], k: int = 2) -> list[int]:
    """The model's ``k`` likeliest next tokens after ``ids`` (greedy order)."""
    logits, _ = lens.next_token_logits(list(ids), None)
    return torch.topk(logits, k).indices.tolist()


def _kv_pair(lens: GPT2Lens, ids: list[int], appended: int, reference: int, causal: bool) -> tuple[Tensor, Tensor]:
    out = lens(
        torch.tensor([ids + [reference], ids + [appended]]),
        causal=causal,
        keep_attentions=False,
        keep_hidden=False,
        keep_kv=True,
        compute_logits=False,
    )
    assert out.keys is not None and out.values is not None
    n = len(ids)

    def per_position(t: Tensor) -> Tensor:  # [2, H, T, dk] -> [2, n, H·dk]
        return t[:, :, :n].transpose(1, 2).reshape(2, n, -1)

    k = torch.stack([relative_change(*per_position(t)) for t in out.keys])  # [L, n]
    v = torch.stack([relative_change(*per_position(t)) for t in out.values])
    return k, v


def kv_stability(
    lens: GPT2Lens,
    ids: Sequence[int],
    appended_id: int | None = None,
    reference_id: int | None = None,
) -> KVStability:
    """Append a token, recompute everything, and see whether the earlier K and V moved.

    The sequence ``ids + [appended_id]`` is compared with ``ids + [reference_id]`` (by
    default the model's two likeliest next tokens), both fully recomputed in one batch, in
    causal and in bidirectional mode.  Why a second appended token and not ``ids`` alone:
    mathematically both say the same under the mask (a masked key gets weight e^−∞ = 0), but
    CPU matrix kernels sum n and n+1 columns in different orders, which adds ±1-ulp noise
    (≈1e-7) unrelated to information flow; at equal lengths in one batch every row is computed
    by the same instructions, so "unchanged" is an exact 0.0 and any non-zero value is real.
    """
    ids = _check_ids(lens, ids, extra=1)
    if appended_id is None or reference_id is None:
        top = next_token_candidates(lens, ids, 2)
        appended_id = top[0] if appended_id is None else appended_id
        if reference_id is None:
            reference_id = top[1] if top[0] == appended_id else top[0]
    appended_id = _check_token(lens, appended_id, "appended token")
    reference_id = _check_token(lens, reference_id, "reference token")
    if appended_id == reference_id:
        raise ValueError("the appended and the reference token must differ")
    ck, cv = _kv_pair(lens, ids, appended_id, reference_id, causal=True)
    bk, bv = _kv_pair(lens, ids, appended_id, reference_id, causal=False)
    return KVStability(appended_id, reference_id, len(ids), ck, cv, bk, bv)


def kv_append_drift(lens: GPT2Lens, ids: Sequence[int], appended_id: int) -> list[float]:
    """The n vs n+1 comparison: K and V of positions 0 … n−1 computed from ``ids`` alone and
    from ``ids + [appended_id]`` (causal), max relative change per layer.

    Under the mask the two are mathematically equal; what comes out (≈1e-7 in float32, or 0)
    is floating-point rounding: the kernels multiply matrices of n and n+1 rows, which may
    sum in a different order.  It carries no information about the appended token --
    :func:`kv_stability` compares two appended tokens at equal length, where it is an exact 0.
    """
    ids = _check_ids(lens, ids, extra=1)
    appended_id = _check_token(lens, appended_id, "appended token")
    n = len(ids)
    short, long = (
        lens(torch.tensor([seq]), causal=True, keep_attentions=False, keep_hidden=False, keep_kv=True,
             compute_logits=False)
        for seq in (ids, ids + [appended_id])
    )
    assert short.keys is not None and long.keys is not None and short.values is not None and long.values is not None

    def per_position(t: Tensor) -> Tensor:  # [1, H, T, dk] -> [n, H·dk]
        return t[0, :, :n].transpose(0, 1).reshape(n, -1)

    return [
        float(torch.maximum(relative_change(per_position(k0), per_position(k1)),
                            relative_change(per_position(v0), per_position(v1))).max())
        for k0, k1, v0, v1 in zip(short.keys, long.keys, short.values, long.values)
    ]


# ---------------------------------------------------------------------------- mask modes
@dataclass
class MaskModeRow:
    mode: str
    max_row_sum_error: float  # max |Σⱼ A[i,j] − 1| over heads and rows of the layer
    future_weight: float  # the largest weight any query gives to a future key
    max_leak_before: float  # causal leakage before the edited position (final hidden state)


def mask_mode_passes(
    lens: GPT2Lens,
    ids: Sequence[int],
    layer: int = 0,
    position: int | None = None,
    replacement_id: int | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Iterator[tuple[MaskModeRow, Tensor, Tensor]]:
    """For each :class:`MaskMode`, one causal forward of [original, edited] (B = 2):
    yields the mode's :class:`MaskModeRow`, the original's attention at ``layer``
    ``[H, n, n]`` and every position's relative change ``[n]``.

    One batched pass per mode gives all three (the edited row sits beside the original in
    the same kernel calls, so an untouched position's change is an exact 0.0, as in
    :func:`leakage`).  ``should_stop`` is asked before each mode: a caller that has to stop
    (a closing window) waits for one pass at most.
    """
    ids = _check_ids(lens, ids)
    if not 0 <= layer < lens.config.n_layer:
        raise ValueError(f"layer {layer} is out of range: the model has {lens.config.n_layer} layers")
    position = _check_position(ids, len(ids) - 1 if position is None else position)
    if replacement_id is None:
        replacement_id = (ids[position] + 1) % lens.config.vocab_size
    replacement_id = _check_token(lens, replacement_id, "replacement")
    edited = list(ids)
    edited[position] = replacement_id
    n = len(ids)
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    for mode in MaskMode:
        if should_stop is not None and should_stop():
            return
        out = lens(torch.tensor([ids, edited]), causal=True, mask_mode=mode, keep_attentions=[layer],
                   keep_hidden=False, compute_logits=False)
        attn = out.attentions[layer][0]  # the original sequence: [H, n, n]
        leak = relative_change(out.final_hidden[0], out.final_hidden[1])  # [n]
        row_error = float((attn.sum(-1) - 1).abs().max())
        future_weight = float(attn.masked_fill(~future, 0.0).max())
        before = float(leak[:position].max()) if position > 0 else 0.0
        yield MaskModeRow(mode.value, row_error, future_weight, before), attn, leak


def mask_mode_report(
    lens: GPT2Lens,
    ids: Sequence[int],
    layer: int = 0,
    position: int | None = None,
    replacement_id: int | None = None,
) -> list[MaskModeRow]:
    """For each :class:`MaskMode`: do rows still sum to 1, and does the future leak?

    The leak is measured by editing ``position`` (default: the last token) to
    ``replacement_id`` (default: the next token id, modulo the vocabulary).
    """
    return [row for row, _attn, _leak in mask_mode_passes(lens, ids, layer, position, replacement_id)]


# ---------------------------------------------------------------------------- the triangle print
def _cell(text: str, width: int) -> str:
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.center(width)


def ascii_mask(
    n: int,
    tokens: Sequence[str] | None = None,
    values: Sequence[Sequence[float]] | Tensor | None = None,
    *,
    causal: bool = True,
    width: int = 6,
) -> str:
    """The chapter's triangle: rows are queries, columns keys, "." = forbidden.

    Without ``values`` allowed cells print ``1``; with an ``[n, n]`` attention map they print
    its weights (two decimals).  ``causal=False`` forbids nothing (the bidirectional map).
    """
    if n < 1:
        raise ValueError("ascii_mask needs at least one token")
    labels = list(tokens) if tokens is not None else [str(i) for i in range(n)]
    if len(labels) != n:
        raise ValueError(f"ascii_mask: {len(labels)} token labels for {n} tokens")
    if values is not None:
        values = values.tolist() if isinstance(values, Tensor) else [list(r) for r in values]
        if len(values) != n or any(len(r) != n for r in values):
            raise ValueError(f"ascii_mask: values must be {n}×{n}")
    label_w = min(max(len(t) for t in labels), 12)
    lines = [" " * (label_w + 1) + "".join(_cell(t, width) for t in labels)]
    for i in range(n):
        cells = []
        for j in range(n):
            if causal and j > i:
                cells.append(_cell(".", width))
            elif values is None:
                cells.append(_cell("1", width))
            else:
                cells.append(_cell(f"{values[i][j]:.2f}", width))
        label = labels[i] if len(labels[i]) <= label_w else labels[i][: label_w - 1] + "…"
        lines.append(f"{label:<{label_w}}[" + "".join(cells) + "]")
    return "\n".join(lines)
