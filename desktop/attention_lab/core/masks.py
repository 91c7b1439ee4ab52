"""Masks beyond the chapter's two, and what each one implies -- computed, never named.

A mask is a boolean *allowed* matrix: ``allowed[i, j]`` says query ``i`` may look at key
``j`` (row = query, column = key, as in the heatmaps).  :class:`MaskSpec` describes one:

- ``causal``: j ≤ i (GPT-2);
- ``bidirectional``: every pair (the mask removed, RoBERTa-style);
- ``prefix:K``: the first K positions see each other both ways, the rest is causal
  (prefix-LM, T5/PaLM-style);
- ``window:W``: i sees i−W+1 … i (sliding window, Mistral-style);
- ``documents:TOKEN``: causal inside segments, nothing across; a segment ends with the
  separator token (packed training documents);
- ``custom``: any matrix whose diagonal is allowed.

What a mask implies for a model of L layers:

- :func:`reach`: which positions can influence which after L layers, the boolean closure
  ``(A)^L`` (``A`` includes the diagonal: the residual path).  A window of W reaches
  L·(W−1) positions back;
- :func:`measure_influence`: the same grid measured through the model: edit a token,
  recompute, see which final hidden states moved (an exact 0 where nothing can reach:
  original and edited run in one batch, through the very same kernel calls);
- :func:`measure_kv_change`: append a token and see whether the K and V of earlier
  positions moved (the KV cache is valid iff they did not, exactly);
- :func:`mask_verdicts`: both measured next to what the reach grid predicts.

The mask is built from the text once and then held fixed while a token is edited or
appended: the question is what flows through *this* mask, not what a different text's
mask would be (an edit that creates a separator would otherwise move the walls too).
Nothing here imports Qt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

import torch

from .analysis import next_token_candidates, relative_change
from .job_protocol import Cancel, Cancelled, cancel_check
from .lens import GPT2Lens

Tensor = torch.Tensor

MASK_KINDS = ("causal", "bidirectional", "prefix", "window", "documents", "custom")
SIZED_KINDS = {"prefix": "K", "window": "W"}
# above this many tokens the influence grid is measured on a sample of edited positions
# (one edit is one more sequence in the batch: n edits of n tokens is n² tokens of work)
FULL_GRID_LIMIT = 64
GRID_TOKEN_BUDGET = 8192  # tokens of edited text per measurement: fewer probed positions for long texts
GRID_BATCH = 16  # sequences per forward when measuring the grid (the original rides in each)


class MaskSpecError(ValueError):
    """A mask description that can't be used; ``str(err)`` is one line for the user."""


@dataclass(frozen=True)
class MaskSpec:
    """One mask, described (not yet built for a text: see :func:`allowed_matrix`)."""

    kind: str
    size: int | None = None  # K of prefix:K, W of window:W
    separator: str | None = None  # documents: the separator token as typed
    separator_id: int | None = None  # documents: its token id (resolved with the tokenizer)
    matrix: Tensor | None = field(default=None, compare=False)  # custom: bool [n, n]

    def __str__(self) -> str:
        if self.kind in SIZED_KINDS:
            return f"{self.kind}:{self.size}"
        if self.kind == "documents":
            return f"documents:{self.separator}"
        return self.kind


def parse_mask_spec(text: str, tokenizer=None) -> MaskSpec:
    """``causal | bidirectional | prefix:K | window:W | documents:TOKEN`` -> :class:`MaskSpec`.

    ``documents`` needs ``tokenizer`` (anything with ``encode``) to turn TOKEN into the one
    token id that ends a segment; ``\\n`` and ``\\t`` are read as a newline and a tab."""
    if not isinstance(text, str) or not text.strip():
        raise MaskSpecError("the mask is empty; choose causal, bidirectional, prefix:K, window:W or documents:TOKEN")
    kind, colon, arg = text.partition(":")
    kind = kind.strip().lower()
    if kind in ("causal", "bidirectional"):
        if colon:
            raise MaskSpecError(f"{kind} takes no argument")
        return MaskSpec(kind)
    if kind in SIZED_KINDS:
        letter = SIZED_KINDS[kind]
        try:
            size = int(arg.strip())
        except ValueError:
            raise MaskSpecError(f"{kind}:{letter} needs a whole number {letter}") from None
        smallest = 1 if kind == "window" else 0
        if size < smallest:
            what = "window" if kind == "window" else "prefix length"
            raise MaskSpecError(f"the {what} must be at least {smallest}, got {size}")
        return MaskSpec(kind, size=size)
    if kind == "documents":
        separator = arg.replace("\\n", "\n").replace("\\t", "\t")
        if not colon or separator == "":
            raise MaskSpecError("documents:TOKEN needs the separator token, e.g. documents:.")
        if tokenizer is None:
            return MaskSpec(kind, separator=separator)
        ids = tokenizer.encode(separator)
        if len(ids) != 1:
            raise MaskSpecError(f"the separator {separator!r} is {len(ids)} tokens, not one")
        return MaskSpec(kind, separator=separator, separator_id=int(ids[0]))
    raise MaskSpecError(
        f"unknown mask kind {kind!r}; choose causal, bidirectional, prefix:K, window:W or documents:TOKEN"
    )


def custom_mask(matrix: Tensor | Sequence[Sequence[int | bool]]) -> MaskSpec:
    """A learner's own mask (square, diagonal allowed, so no row is empty)."""
    m = torch.as_tensor(matrix).to(torch.bool) if not isinstance(matrix, Tensor) else matrix.to(torch.bool)
    if m.dim() != 2 or m.shape[0] != m.shape[1] or m.shape[0] == 0:
        raise MaskSpecError(f"a custom mask must be a non-empty square matrix, got shape {tuple(m.shape)}")
    if not bool(m.diagonal().all()):
        raise MaskSpecError("a custom mask must keep the diagonal: every position may look at itself")
    return MaskSpec("custom", matrix=m.clone())


def causal_matrix(n: int) -> Tensor:
    return torch.ones(n, n, dtype=torch.bool).tril()


def allowed_matrix(spec: MaskSpec, ids: Sequence[int]) -> Tensor:
    """The boolean ``[n, n]`` allowed-matrix of ``spec`` for the token sequence ``ids``."""
    n = len(ids)
    if n == 0:
        raise ValueError("the sequence is empty")
    i = torch.arange(n)[:, None]
    j = torch.arange(n)[None, :]
    causal = j <= i
    if spec.kind == "causal":
        return causal
    if spec.kind == "bidirectional":
        return torch.ones(n, n, dtype=torch.bool)
    if spec.kind == "prefix":
        return causal | ((i < spec.size) & (j < spec.size))
    if spec.kind == "window":
        return causal & (i - j < spec.size)
    if spec.kind == "documents":
        if spec.separator_id is None:
            raise ValueError("a documents mask needs its separator's token id (parse it with the tokenizer)")
        is_sep = torch.as_tensor([int(t) == spec.separator_id for t in ids], dtype=torch.long)
        segment = torch.cumsum(is_sep, 0) - is_sep  # a separator closes its own segment
        return causal & (segment[:, None] == segment[None, :])
    if spec.kind == "custom":
        assert spec.matrix is not None
        if spec.matrix.shape[0] != n:
            raise ValueError(f"the custom mask is {spec.matrix.shape[0]}×{spec.matrix.shape[0]}; the text has {n} tokens")
        return spec.matrix.clone()
    raise ValueError(f"unknown mask kind {spec.kind!r}")


def fit_custom(matrix: Tensor, n: int) -> Tensor:
    """A custom mask drawn for another length, fitted to ``n`` tokens: the cells both share
    are the learner's, positions beyond the drawing are causal (the text grew or shrank
    while the grid stayed as drawn)."""
    fitted = causal_matrix(n)
    m = min(n, matrix.shape[0])
    fitted[:m, :m] = matrix[:m, :m].to(torch.bool)
    fitted.fill_diagonal_(True)
    return fitted


def allowed_for_text(spec: MaskSpec, ids: Sequence[int], tokenizer=None) -> Tensor:
    """:func:`allowed_matrix` for the app, where the text changes under a fixed choice: a
    custom grid is fitted to the text (:func:`fit_custom`) and a documents separator is
    resolved with ``tokenizer`` when it has no token id yet."""
    if spec.kind == "custom" and spec.matrix is not None and spec.matrix.shape[0] != len(ids):
        return fit_custom(spec.matrix, len(ids))
    if spec.kind == "documents" and spec.separator_id is None:
        if tokenizer is None:
            raise ValueError("a documents mask needs its separator's token id (parse it with the tokenizer)")
        spec = parse_mask_spec(str(spec), tokenizer)
    return allowed_matrix(spec, ids)


# ---------------------------------------------------------------------------- reach
def reach(allowed: Tensor, n_layers: int) -> Tensor:
    """``R[i, j]``: after ``n_layers`` layers, token ``j`` can influence position ``i``'s state.

    One layer moves information along the allowed cells (attention) and keeps it in place
    (the residual path; the MLP works per position): ``R_{l+1} = (A ∨ I) · R_l``, ``R_0 = I``.
    """
    if allowed.dim() != 2 or allowed.shape[0] != allowed.shape[1]:
        raise ValueError(f"reach needs a square allowed-matrix, got shape {tuple(allowed.shape)}")
    n = allowed.shape[0]
    step = (allowed | torch.eye(n, dtype=torch.bool)).to(torch.float32)
    r = torch.eye(n)
    for _ in range(n_layers):
        nxt = (step @ r > 0).to(torch.float32)  # counts ≤ n: exact in float32
        if torch.equal(nxt, r):  # closed: more layers reach no further
            break
        r = nxt
    return r.to(torch.bool)


def leaks_labels(reach_grid: Tensor) -> bool:
    """Does some position see a later one?  Then parallel training shows it its own label."""
    return bool(reach_grid.triu(diagonal=1).any())


#: where the training loss is taken: at every position, or (a prefix-LM as trained) only at the
#: positions that predict a token after the prefix
LOSS_CHOICES = ("every", "after-prefix")


def loss_start(spec: MaskSpec, loss: str, n: int) -> int:
    """The first position whose next-token prediction is scored.  After a prefix of k: position
    k−1, which predicts token k, the first one outside the prefix.  Other masks have no prefix:
    every position is scored."""
    if loss not in LOSS_CHOICES:
        raise ValueError(f"unknown loss choice {loss!r}; choices: {', '.join(LOSS_CHOICES)}")
    if loss == "after-prefix" and spec.kind == "prefix" and spec.size:
        return max(min(spec.size, n) - 1, 0)
    return 0


@dataclass(frozen=True)
class LabelLeak:
    """The label-leak verdict for one choice of where the loss is taken."""

    loss: str
    start: int  # the first scored position
    positions: list[int]  # scored positions that a later token reaches (from the reach grid)
    witness: tuple[int, int] | None  # (position, a later token it sees), the first such pair
    measured: list[int]  # scored positions an edit of a later token moved (the probed columns only)

    @property
    def leaks(self) -> bool:
        return bool(self.positions)


def label_leak(spec: MaskSpec, reach_grid: Tensor, influence: Tensor, probed: Sequence[int], loss: str = "every") -> LabelLeak:
    """Does training with the loss taken at ``loss``'s positions leak labels?  A scored position
    leaks when a later token (its own label, or beyond) reaches it: predicted from the reach
    grid, and measured where the edits were (``influence``'s columns are ``probed``)."""
    n = reach_grid.shape[0]
    start = loss_start(spec, loss, n)
    later = reach_grid.triu(diagonal=1)
    positions = [i for i in range(start, n) if bool(later[i].any())]
    witness = (positions[0], int(torch.nonzero(later[positions[0]])[0])) if positions else None
    measured = sorted({i for i in range(start, n) for c, col in enumerate(probed) if col > i and bool(influence[i, c])})
    return LabelLeak(loss, start, positions, witness, measured)


def cache_positions_per_layer(allowed: Tensor) -> int:
    """K/V positions per layer the cache must hold: the most keys any query reads
    (n for causal and prefix-LM, W for a window of W, the longest segment for documents)."""
    return int(allowed.sum(-1).max())


# ---------------------------------------------------------------------------- measurements
class MeasurementCancelled(Cancelled):
    """Raised between two batches when the cancel flag is set."""


@dataclass
class EditChange:
    """How much every position moved when one token was edited under a fixed mask."""

    position: int
    replacement_id: int
    final: Tensor  # [n]: relative change of the final hidden state (after ln_f)
    layers: Tensor  # [L+1, n]: the embeddings, then after every block


def measure_edits(
    lens: GPT2Lens,
    ids: Sequence[int],
    allowed: Tensor,
    edits: Sequence[tuple[int, int]],
    *,
    cancel: Cancel = None,
    progress: Callable[[int, int], None] | None = None,
    batch: int = GRID_BATCH,
) -> list[EditChange]:
    """Edit ``ids`` at each ``(position, replacement_id)``; measure every position's change.

    The original rides in every batch next to its edits, so a position that depends only on
    identical inputs comes out bit-for-bit the same: "no change" is an exact 0.0.
    ``cancel`` is checked before each batch; ``progress(edits_done, edits_total)`` after it."""
    ids = [int(t) for t in ids]
    stop = cancel_check(cancel)
    results: list[EditChange] = []
    per_batch = max(1, batch - 1)
    for start in range(0, len(edits), per_batch):
        if stop():
            raise MeasurementCancelled(f"cancelled after {start} of {len(edits)} edits")
        chunk = edits[start : start + per_batch]
        rows = [ids]
        for position, replacement in chunk:
            edited = list(ids)
            edited[int(position)] = int(replacement)
            rows.append(edited)
        out = lens(torch.tensor(rows), allowed=allowed, keep_attentions=False, keep_hidden=True, compute_logits=False)
        assert out.hidden_states is not None
        for k, (position, replacement) in enumerate(chunk, start=1):
            results.append(EditChange(
                position=int(position),
                replacement_id=int(replacement),
                final=relative_change(out.final_hidden[0], out.final_hidden[k]),
                layers=relative_change(out.hidden_states[0], out.hidden_states[k]),
            ))
        if progress is not None:
            progress(len(results), len(edits))
    return results


def other_token(token_id: int, vocab_size: int) -> int:
    """A token id that differs from ``token_id`` (the next one, wrapping)."""
    return (int(token_id) + 1) % vocab_size


def measure_influence(lens: GPT2Lens, ids: Sequence[int], allowed: Tensor, columns: Sequence[int] | None = None,
                      *, cancel: Cancel = None, progress: Callable[[int, int], None] | None = None) -> Tensor:
    """Measured reach: ``M[i, c]`` is True where editing token ``columns[c]`` moved position
    ``i``'s final hidden state at all (``columns``: default every position)."""
    cols = list(range(len(ids))) if columns is None else [int(c) for c in columns]
    vocab = lens.config.vocab_size
    changes = measure_edits(lens, ids, allowed, [(c, other_token(ids[c], vocab)) for c in cols], cancel=cancel,
                            progress=progress)
    if not changes:
        return torch.zeros(len(ids), 0, dtype=torch.bool)
    return torch.stack([ch.final > 0 for ch in changes], dim=1)


def probe_columns(reach_grid: Tensor, limit: int = FULL_GRID_LIMIT) -> list[int]:
    """Every position when the text is short; else an even sample, plus a position the
    reach grid says an earlier one sees (the witness of a leak) and the last one."""
    n = reach_grid.shape[0]
    if n <= limit:
        return list(range(n))
    cols = set(torch.linspace(0, n - 1, limit - 2).round().long().tolist()) | {n - 1}
    seen_early = torch.nonzero(reach_grid.triu(diagonal=1).any(0)).flatten()
    if seen_early.numel():
        cols.add(int(seen_early[-1]))
    return sorted(cols)


def kv_probe(spec: MaskSpec, ids: Sequence[int], appended: int) -> tuple[list[int], Tensor]:
    """(the earlier tokens, the mask of the longer sequence) for the K/V-stability measurement.

    A described mask is built again for the text plus the appended token; a custom matrix
    can't grow, so its last token plays the appended one (its first n−1 positions are the
    "earlier" ones)."""
    ids = [int(t) for t in ids]
    if spec.kind == "custom":
        if len(ids) < 2:
            raise ValueError("the K/V measurement of a custom mask needs at least 2 tokens")
        return ids[:-1], allowed_matrix(spec, ids)
    return ids, allowed_matrix(spec, ids + [int(appended)])


def measure_kv_change(lens: GPT2Lens, earlier: Sequence[int], allowed: Tensor, appended: int, reference: int) -> Tensor:
    """``[L, n_earlier]``: relative change of each earlier position's K and V (the larger of the
    two, all heads together) between ``earlier + [reference]`` and ``earlier + [appended]``,
    both fully recomputed in one batch under ``allowed`` (the longer sequence's mask)."""
    earlier = [int(t) for t in earlier]
    n = len(earlier)
    out = lens(torch.tensor([earlier + [int(reference)], earlier + [int(appended)]]), allowed=allowed,
               keep_attentions=False, keep_hidden=False, keep_kv=True, compute_logits=False)
    assert out.keys is not None and out.values is not None

    def change(t: Tensor) -> Tensor:  # [2, H, T, dk] -> [n]
        per_position = t[:, :, :n].transpose(1, 2).reshape(2, n, -1)
        return relative_change(per_position[0], per_position[1])

    return torch.stack([torch.maximum(change(k), change(v)) for k, v in zip(out.keys, out.values)])


def kv_valid_predicted(allowed_longer: Tensor, n_earlier: int, n_layers: int) -> bool:
    """From reach alone: layer l's K and V are computed from the state after l blocks, so the
    earlier positions' K/V stay put iff none of them reaches the new token within L−1 layers."""
    r = reach(allowed_longer, max(n_layers - 1, 0))
    return not bool(r[:n_earlier, n_earlier:].any())


@dataclass
class MaskReport:
    """A mask on a text, with what it implies -- predicted from reach and measured on the model."""

    spec: MaskSpec
    allowed: Tensor  # [n, n] bool
    reach: Tensor  # [n, n] bool, after L layers
    leaks_labels: bool  # from reach: some position sees a later one
    leaks_labels_measured: bool  # some edited position moved an earlier one
    probed_columns: list[int]  # positions edited to measure the influence grid
    influence: Tensor  # [n, len(probed_columns)] bool: measured reach on those columns
    reach_confirmed: bool  # the measured columns are exactly the reach grid's
    kv_cache_valid: bool  # measured: appending moved no earlier K or V, exactly 0
    kv_cache_valid_predicted: bool  # from reach
    kv_max_change: float  # the largest relative change of an earlier K or V
    kv_change_per_layer: list[float]
    kv_appended_id: int
    kv_reference_id: int
    cache_positions_per_layer: int

    def label_leak(self, loss: str = "every") -> LabelLeak:
        """The label-leak verdict with the loss taken at ``loss``'s positions (:data:`LOSS_CHOICES`)."""
        return label_leak(self.spec, self.reach, self.influence, self.probed_columns, loss)

    def verdicts(self, loss: str = "every") -> dict:
        leak = self.label_leak(loss)
        return {
            "loss": loss,
            "leaks_labels": leak.leaks,
            "leaking_positions": leak.positions,
            "kv_cache_valid": self.kv_cache_valid,
            "cache_positions_per_layer": self.cache_positions_per_layer,
        }


def measured_cells(report: MaskReport) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The reach grid's cells as the model measured them: ``(changed, differs)``, each a list of
    ``(influenced position, edited position)``.  ``changed``: editing that token moved that
    position; ``differs``: measurement and reach grid disagree there.  Only the probed columns
    (the edited positions) are measured; the others are in neither list."""
    columns = list(report.probed_columns)
    if not columns:
        return [], []
    predicted = report.reach[:, torch.tensor(columns, dtype=torch.long)]

    def cells(mask: Tensor) -> list[tuple[int, int]]:
        return [(int(row), columns[int(col)]) for row, col in torch.nonzero(mask).tolist()]

    return cells(report.influence), cells(report.influence != predicted)


def mask_report(lens: GPT2Lens, ids: Sequence[int], spec: MaskSpec, *, cancel: Cancel = None,
                progress: Callable[[int, int], None] | None = None, grid_limit: int | None = None) -> MaskReport:
    """Build ``spec`` for ``ids``, compute its reach and verdicts, and measure both on the model.

    ``grid_limit``: at most this many positions are edited to measure the influence grid
    (default: every position up to :data:`FULL_GRID_LIMIT` tokens, then as many as keep the
    measurement near :data:`GRID_TOKEN_BUDGET` tokens).  ``cancel`` / ``progress(done, total)``:
    as in :func:`measure_edits` (the grid is the long part; the K/V measurement is one forward)."""
    ids = [int(t) for t in ids]
    cfg = lens.config
    if not ids:
        raise ValueError("the sequence is empty")
    if len(ids) + 1 > cfg.n_positions:
        raise ValueError(f"{len(ids) + 1} positions (the text and an appended token) exceed the context of {cfg.n_positions}")
    allowed = allowed_matrix(spec, ids)
    grid = reach(allowed, cfg.n_layer)
    if grid_limit is None:
        grid_limit = max(FULL_GRID_LIMIT if len(ids) <= FULL_GRID_LIMIT else GRID_TOKEN_BUDGET // len(ids), 4)
    columns = probe_columns(grid, grid_limit)
    influence = measure_influence(lens, ids, allowed, columns, cancel=cancel, progress=progress)
    col = torch.tensor(columns, dtype=torch.long)
    later = col[None, :] > torch.arange(len(ids))[:, None]  # the edited token lies after the position
    # the K/V measurement: the model's two likeliest next tokens (as in analysis.kv_stability)
    appended, reference = next_token_candidates(lens, ids, 2)
    earlier, allowed_longer = kv_probe(spec, ids, appended)
    if spec.kind == "custom":  # the last token is the appended one: compare it with another
        appended, reference = ids[-1], other_token(ids[-1], cfg.vocab_size)
    kv = measure_kv_change(lens, earlier, allowed_longer, appended, reference)
    kv_max = float(kv.max()) if kv.numel() else 0.0
    return MaskReport(
        spec=spec,
        allowed=allowed,
        reach=grid,
        leaks_labels=leaks_labels(grid),
        leaks_labels_measured=bool((influence & later).any()),
        probed_columns=columns,
        influence=influence,
        reach_confirmed=bool(torch.equal(influence, grid[:, col])),
        kv_cache_valid=kv_max == 0.0,
        kv_cache_valid_predicted=kv_valid_predicted(allowed_longer, len(earlier), cfg.n_layer),
        kv_max_change=kv_max,
        kv_change_per_layer=kv.amax(-1).tolist() if kv.numel() else [0.0] * cfg.n_layer,
        kv_appended_id=int(appended),
        kv_reference_id=int(reference),
        cache_positions_per_layer=cache_positions_per_layer(allowed),
    )
