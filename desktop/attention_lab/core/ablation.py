"""Head knockout: take heads out before W^O and watch the prediction change.

- :func:`knockout`: a set of heads knocked out (``zero``: their output is 0; ``mean``:
  replaced by its mean over the text's positions); the next-token top-k at a chosen position
  and the text's mean next-token loss, before and after -- both from one batched forward;
- :func:`rank_heads`: every head knocked out alone (L × H knockouts, batched by layer), as a
  generator of :class:`RankProgress` items that ends with a :class:`HeadRanking` -- a
  ``[L, H]`` map of the change in loss (or in the correct next token's log-probability at the
  position), with the heads that matter most named.  ``cancel`` (a callable or a
  ``threading.Event``) is checked between batches; a cancelled run raises
  :class:`RankingCancelled` and reports nothing.

The masks of :mod:`attention_lab.core.masks` apply (``allowed``).  Nothing here imports Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Iterable, Iterator, Literal, Sequence

import torch

from .analysis import _check_ids
from .job_protocol import Cancel, Cancelled, cancel_check
from .lens import ABLATION_MODES, GPT2Lens, HeadAblation

Tensor = torch.Tensor
Metric = Literal["loss", "logprob"]
TOP_K = 5
LOGITS_CHUNK = 256  # positions per vocabulary projection: [n, 50257] never exists at once
TOKENS_PER_BATCH = 2048  # knockouts batched so one forward holds about this many tokens


class RankingCancelled(Cancelled):
    """Raised by :func:`rank_heads` when its cancel flag is set between two batches."""


def parse_heads(text: str, n_layer: int, n_head: int) -> list[tuple[int, int]]:
    """``"L.H[,L.H…]"`` -> ``[(L, H), …]``; ``ValueError`` (one line) for bad syntax, a head the
    model doesn't have, or a head listed twice."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("no heads given: list them as LAYER.HEAD, e.g. 0.3,1.7")
    heads: list[tuple[int, int]] = []
    for piece in text.split(","):
        item = piece.strip()
        layer_text, dot, head_text = item.partition(".")
        if not dot or not layer_text.strip().isdigit() or not head_text.strip().isdigit():
            raise ValueError(f"head {item!r} is not LAYER.HEAD (two whole numbers, e.g. 0.3)")
        layer, head = int(layer_text), int(head_text)
        if not (0 <= layer < n_layer and 0 <= head < n_head):
            raise ValueError(f"head {layer}.{head} does not exist: this model has layers 0..{n_layer - 1} "
                             f"and heads 0..{n_head - 1}")
        if (layer, head) in heads:
            raise ValueError(f"head {layer}.{head} is listed twice")
        heads.append((layer, head))
    return heads


def check_mode(mode: str) -> str:
    if mode not in ABLATION_MODES:
        raise ValueError(f"unknown ablation {mode!r}; choose one of: {', '.join(ABLATION_MODES)}")
    return mode


# ---------------------------------------------------------------------------- the readouts
def token_logprobs(lens: GPT2Lens, final_hidden: Tensor, ids: Sequence[int]) -> Tensor:
    """``[B, n−1]``: log p(ids[i+1] | position i) for every sequence of ``final_hidden`` ``[B, n, d]``."""
    emb_t = lens.output_embedding.T
    target = torch.as_tensor(list(ids)[1:], dtype=torch.long)
    out = []
    with torch.inference_mode():
        for start in range(0, target.numel(), LOGITS_CHUNK):
            stop = start + LOGITS_CHUNK
            logp = torch.log_softmax(final_hidden[:, start:min(stop, target.numel())] @ emb_t, dim=-1)
            out.append(logp.gather(-1, target[start:stop].expand(logp.shape[0], -1)[..., None])[..., 0])
    if not out:
        return final_hidden.new_zeros(final_hidden.shape[0], 0)
    return torch.cat(out, dim=1)


def mean_loss(logprobs: Tensor) -> Tensor:
    """``[B]``: the mean next-token loss (nats per token); NaN for a one-token text."""
    if logprobs.shape[-1] == 0:
        return torch.full(logprobs.shape[:-1], float("nan"))
    return -logprobs.mean(-1)


def top_tokens(lens: GPT2Lens, hidden: Tensor, k: int = TOP_K) -> list[tuple[int, float]]:
    """The ``k`` likeliest next tokens after one position (``hidden``: ``[d]`` after ``ln_f``)."""
    probs = torch.softmax(hidden @ lens.output_embedding.T, dim=-1)
    p, i = probs.topk(min(k, probs.numel()))
    return [(int(t), float(q)) for t, q in zip(i.tolist(), p.tolist())]


def _position(ids: Sequence[int], position: int | None) -> int:
    n = len(ids)
    p = n - 1 if position is None else int(position)
    p = p + n if p < 0 else p
    if not 0 <= p < n:
        raise ValueError(f"position {position} is out of range: the text has {n} tokens (0..{n - 1})")
    return p


# ---------------------------------------------------------------------------- one knockout
@dataclass
class KnockoutResult:
    heads: list[tuple[int, int]]
    mode: str
    position: int
    loss_before: float  # mean next-token loss of the text, nats (NaN for one token)
    loss_after: float
    top_before: list[tuple[int, float]]  # (token id, probability) after `position`
    top_after: list[tuple[int, float]]
    logprob_before: float | None  # log p of the text's own next token after `position` (None at the end)
    logprob_after: float | None
    attentions_after: list[Tensor | None] = field(default_factory=list)  # [H, n, n] per kept layer


def knockout(
    lens: GPT2Lens,
    ids: Sequence[int],
    heads: Iterable[tuple[int, int]],
    mode: str = "zero",
    position: int | None = None,
    *,
    allowed: Tensor | None = None,
    k: int = TOP_K,
    keep_attentions: bool | Iterable[int] = False,
) -> KnockoutResult:
    """Knock ``heads`` out together; what changes at ``position`` (default: the last token) and
    in the text's loss.  The text runs twice in one batch, without and with the knockout."""
    ids = _check_ids(lens, ids)
    mode = check_mode(mode)
    position = _position(ids, position)
    cfg = lens.config
    heads = [(int(a), int(b)) for a, b in heads]
    single = HeadAblation.of(heads, mode, cfg.n_layer, cfg.n_head).knocked
    knocked = torch.stack([torch.zeros_like(single), single])  # row 0: nothing knocked out
    out = lens(torch.tensor([ids, ids]), allowed=allowed, ablation=HeadAblation(knocked, mode),
               keep_attentions=keep_attentions, keep_hidden=False, compute_logits=False)
    logp = token_logprobs(lens, out.final_hidden, ids)
    loss = mean_loss(logp)
    at_position = position < len(ids) - 1
    return KnockoutResult(
        heads=heads,
        mode=mode,
        position=position,
        loss_before=float(loss[0]),
        loss_after=float(loss[1]),
        top_before=top_tokens(lens, out.final_hidden[0, position], k),
        top_after=top_tokens(lens, out.final_hidden[1, position], k),
        logprob_before=float(logp[0, position]) if at_position else None,
        logprob_after=float(logp[1, position]) if at_position else None,
        attentions_after=[a[1] if a is not None else None for a in out.attentions],
    )


# ---------------------------------------------------------------------------- ranking
@dataclass
class RankProgress:
    done: int  # heads knocked out so far
    total: int  # L × H


@dataclass
class HeadRanking:
    mode: str
    metric: str  # "loss": Δ mean loss (after − before); "logprob": Δ log p of the next token at `position`
    position: int
    baseline: float  # the metric without any knockout
    delta: Tensor  # [L, H]: the metric with that head knocked out, minus the baseline
    top: list[tuple[int, int, float]]  # (layer, head, Δ): the heads the text needs most first

    @property
    def harm(self) -> Tensor:
        """``[L, H]``, larger = the text needed the head more (loss up, log-probability down)."""
        return self.delta if self.metric == "loss" else -self.delta


def _metric(lens: GPT2Lens, final_hidden: Tensor, ids: Sequence[int], metric: Metric, position: int) -> Tensor:
    if metric == "loss":
        return mean_loss(token_logprobs(lens, final_hidden, ids))
    # only the one position is projected: the log-probability of the text's next token there
    logp = torch.log_softmax(final_hidden[:, position] @ lens.output_embedding.T, dim=-1)
    return logp[:, int(ids[position + 1])]


def rank_heads(
    lens: GPT2Lens,
    ids: Sequence[int],
    mode: str = "zero",
    *,
    metric: Metric = "loss",
    position: int | None = None,
    allowed: Tensor | None = None,
    cancel: Cancel = None,
    top: int = 5,
    batch: int | None = None,
) -> Iterator[RankProgress | HeadRanking]:
    """Knock every head out alone; yield progress after each batch, then the :class:`HeadRanking`.

    ``batch`` knockouts of one layer run as one forward (default: as many as fit about
    :data:`TOKENS_PER_BATCH` tokens, at most the layer's heads), resumed from the plain run's
    residual stream below that layer (the blocks below can't see a knockout above them)."""
    ids = _check_ids(lens, ids)
    mode = check_mode(mode)
    if metric not in ("loss", "logprob"):
        raise ValueError(f"unknown metric {metric!r}; choose loss or logprob")
    position = _position(ids, position)
    if metric == "logprob" and position >= len(ids) - 1:
        raise ValueError("the log-probability of the next token needs a position before the last token")
    if metric == "loss" and len(ids) < 2:
        raise ValueError("the next-token loss needs at least 2 tokens")
    cfg = lens.config
    L, H = cfg.n_layer, cfg.n_head
    size = batch or max(1, min(H, TOKENS_PER_BATCH // len(ids)))
    stop = cancel_check(cancel)
    plain = lens(torch.tensor([ids]), allowed=allowed, keep_attentions=False, keep_hidden=True, compute_logits=False)
    assert plain.hidden_states is not None
    baseline = float(_metric(lens, plain.final_hidden, ids, metric, position)[0])
    values = torch.empty(L, H)
    done = 0
    for layer in range(L):
        # a knockout in this layer leaves the blocks below as they were: start from their output
        below = plain.hidden_states[:, layer]
        for first in range(0, H, size):
            if stop():
                raise RankingCancelled(f"cancelled after {done} of {L * H} heads")
            chunk = list(range(first, min(first + size, H)))
            knocked = torch.zeros(len(chunk), L, H, dtype=torch.bool)
            knocked[torch.arange(len(chunk)), layer, torch.tensor(chunk)] = True
            out = lens(torch.tensor([ids] * len(chunk)), allowed=allowed, ablation=HeadAblation(knocked, mode),
                       resume=(layer, below.expand(len(chunk), -1, -1)), keep_attentions=False, keep_hidden=False,
                       compute_logits=False)
            values[layer, chunk] = _metric(lens, out.final_hidden, ids, metric, position)
            done += len(chunk)
            yield RankProgress(done=done, total=L * H)

    delta = values - baseline
    harm = delta if metric == "loss" else -delta
    order = torch.argsort(harm.flatten(), descending=True)[:top].tolist()
    named = [(i // H, i % H, float(delta.flatten()[i])) for i in order if math.isfinite(float(delta.flatten()[i]))]
    yield HeadRanking(mode=mode, metric=metric, position=position, baseline=baseline, delta=delta, top=named)


def run_rank_heads(lens: GPT2Lens, ids: Sequence[int], mode: str = "zero", *, cancel: Cancel = None,
                   progress: Callable[[RankProgress], None] | None = None, **kwargs) -> HeadRanking:
    """Drain :func:`rank_heads` and return its ranking, in the worker jobs' shape: ``cancel``
    (an Event) stops it between batches, ``progress`` gets each :class:`RankProgress`."""
    result = None
    for item in rank_heads(lens, ids, mode, cancel=cancel, **kwargs):
        if isinstance(item, HeadRanking):
            result = item
        elif progress is not None:
            progress(item)
    assert result is not None
    return result
