"""Generation one token at a time, on the app's own lens: watch the mask make the cache possible.

A :class:`Generation` starts from a text's ids.  The prompt's positions but the last go into the
K/V cache first (the prefill); then every :meth:`Generation.next` is one step: the sequence's last
token is the new query, it reads the cached keys, and the model's next token is appended.  Each step
is computed twice -- with the cache (one query row against n keys) and by a full recompute of the
n positions -- and the :class:`StepRecord` holds what the two ways give and cost:

* the chosen token and the top 5 (greedy by default; sampling with a temperature and a seed is
  reproducible: the draw for a position depends only on the seed and the position);
* the new query's attention row for every head of every layer, and how much the earlier rows
  changed, measured: the previous step's rows and this step's are recomputed side by side at the
  same width (the previous step with the new position hidden), so float rounding from matrices of
  another shape can't pass for a change -- under the causal mask the change is exactly 0; without
  the mask it is not;
* the cached and recomputed logits' largest difference, the next-token probabilities' largest
  difference, each layer's cached K/V against the recomputed ones (relative change), timings;
* the work in multiply-adds of the matrix products (:func:`step_work`).

``causal=False`` is the same weights without the mask, with a cache anyway: the cache then holds
K/V computed before the later tokens existed, which a bidirectional model would have changed
(:func:`stale_cache_run` summarises how far that drifts).  :meth:`Generation.inside_head` writes out
one head's arithmetic for a step with the real numbers and checks it against the layer's output.
Nothing here imports Qt.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Sequence

import torch

from .analysis import relative_change
from .job_protocol import Cancel, Cancelled, cancel_check
from .kvbench import cache_size_bytes
from .lens import GPT2Config, GPT2Lens, KVCache

Tensor = torch.Tensor
TOP_K = 5
BYTES_PER_VALUE = 4  # the app keeps K and V in float32


class GenerationError(ValueError):
    """A step or a view that can't be made (the context is full, a head that doesn't exist): one sentence."""


@dataclass(frozen=True)
class GenerationSettings:
    """How tokens are chosen: greedy (``temperature`` 0) or sampled with ``temperature`` and ``seed``;
    ``causal=False`` generates with the same weights without the mask, with a cache anyway."""

    causal: bool = True
    temperature: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float)) or not math.isfinite(t) or t < 0:
            raise GenerationError(f"the temperature must be a number ≥ 0 (0 = greedy), got {t!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise GenerationError(f"the seed must be an integer ≥ 0, got {self.seed!r}")

    @property
    def greedy(self) -> bool:
        return self.temperature == 0


@dataclass(frozen=True)
class Work:
    """Multiply-adds of one step's matrix products (projections, attention, MLP, the vocabulary)."""

    attention_cached: int
    attention_recompute: int
    total_cached: int
    total_recompute: int

    def as_dict(self) -> dict:
        return {"attention_cached": self.attention_cached, "attention_recompute": self.attention_recompute,
                "total_cached": self.total_cached, "total_recompute": self.total_recompute}


def step_work(cfg: GPT2Config, positions: int, causal: bool = True) -> Work:
    """Count one step's multiply-adds from the config, for ``positions`` keys (the new query's included).

    Per layer and per computed row: Q, K, V (d × 3d), W^O (d × d) and the MLP (2 × d × inner).  The
    attention: q·k and the weighted sum of v, d multiply-adds each per (query, key) pair; with the
    cache one row of ``positions`` pairs, without it every row again: the triangle's n(n+1)/2 pairs
    under the mask (the masked cells contribute nothing), n² without it.  Both ways end with one
    position's logits (d × vocab).  Layer norms, softmax and biases are not multiply-adds of a matrix
    product and are left out."""
    n, d, layers = int(positions), cfg.n_embd, cfg.n_layer
    per_row = 4 * d * d + 2 * d * cfg.inner_dim
    pairs = n * (n + 1) // 2 if causal else n * n
    attention_cached = layers * 2 * d * n
    attention_recompute = layers * 2 * d * pairs
    logits = d * cfg.vocab_size
    return Work(
        attention_cached=attention_cached,
        attention_recompute=attention_recompute,
        total_cached=attention_cached + layers * per_row + logits,
        total_recompute=attention_recompute + layers * per_row * n + logits,
    )


@dataclass(frozen=True)
class TopToken:
    id: int
    token: str
    p: float


@dataclass(frozen=True)
class StepRecord:
    """One generated token and everything measured while making it (see the module docstring)."""

    index: int  # 0-based: the step's number since Reset
    position: int  # where the chosen token goes; the new query is position − 1
    token_id: int
    token: str
    p: float  # the chosen token's probability (the distribution it was drawn from)
    top: tuple[TopToken, ...]
    cache_positions: int  # K/V positions in the cache after the step (the new query's included)
    cache_bytes: int  # 2 × layers × heads × d_k × positions × 4
    attention_rows: Tensor  # [L, H, positions]: the new query's row, computed with the cache
    earlier_rows_change: tuple[float, ...]  # per layer: largest change of rows 0 … position − 2
    logits_max_diff: float  # cached vs recomputed logits
    prob_max_diff: float  # cached vs recomputed next-token probabilities
    top1_agrees: bool  # the cached and the recomputed logits have the same top token
    kv_drift: tuple[float, ...]  # per layer: cached K/V vs recomputed, largest relative change
    work: Work
    seconds_cached: float
    seconds_recompute: float

    @property
    def query_position(self) -> int:
        return self.position - 1

    @property
    def earlier_rows_max_change(self) -> float:
        return max(self.earlier_rows_change, default=0.0)

    def as_json(self, layer: int) -> dict:
        """The lab's record of this step, ``attention_row`` being layer ``layer``'s (heads × positions)."""
        return {
            "position": self.position,
            "token_id": self.token_id,
            "token": self.token,
            "top": [{"id": t.id, "token": t.token, "p": t.p} for t in self.top],
            "cache_positions": self.cache_positions,
            "cache_bytes": self.cache_bytes,
            "attention_row": self.attention_rows[layer].double().tolist(),
            "earlier_rows_max_change": self.earlier_rows_max_change,
            "earlier_rows_change_per_layer": list(self.earlier_rows_change),
            "logits_max_diff_cache_vs_recompute": self.logits_max_diff,
            "prob_max_diff_cache_vs_recompute": self.prob_max_diff,
            "kv_drift_per_layer": list(self.kv_drift),
            "work": self.work.as_dict(),
            "seconds_cached": self.seconds_cached,
            "seconds_recompute": self.seconds_recompute,
        }

    def same_step(self, other: "StepRecord") -> bool:
        """Everything but the timings equal (Back then Next must give the same step)."""
        return (
            (self.index, self.position, self.token_id, self.top, self.cache_positions, self.cache_bytes,
             self.earlier_rows_change, self.logits_max_diff, self.prob_max_diff, self.kv_drift, self.work)
            == (other.index, other.position, other.token_id, other.top, other.cache_positions, other.cache_bytes,
                other.earlier_rows_change, other.logits_max_diff, other.prob_max_diff, other.kv_drift, other.work)
            and torch.equal(self.attention_rows, other.attention_rows)
        )


@dataclass(frozen=True)
class InsideHead:
    """One head's arithmetic for one step's new query, with the real numbers (all float32 tensors)."""

    step: int
    layer: int
    head: int
    position: int  # the query's position
    d_k: int
    scale: float  # 1/√d_k (GPT-2's scaling)
    q: Tensor  # [d_k]
    keys: Tensor  # [n, d_k]: the cached keys, the query's own last
    scores: Tensor  # [n]: q·k
    scaled: Tensor  # [n]: q·k × scale
    hidden: int  # keys the mask hides from this row: 0 for the newest query (nothing lies in its future)
    weights: Tensor  # [n]: the softmax, summing to 1
    values: Tensor  # [n, d_k]
    head_output: Tensor  # [d_k]: Σ weights × values
    concat: Tensor  # [d]: every head's output, side by side
    projected: Tensor  # [d]: concat × W^O + b: what the layer adds to the residual stream
    max_error_vs_layer: float  # projected vs the layer's own output at this position
    weights_vs_layer: float  # these weights vs the layer's attention row for this head

    def as_json(self) -> dict:
        def lst(t: Tensor) -> list:
            return t.double().tolist()

        return {
            "step": self.step, "layer": self.layer, "head": self.head, "position": self.position,
            "d_k": self.d_k, "scale": self.scale, "hidden_keys": self.hidden,
            "q": lst(self.q), "keys": lst(self.keys), "scores": lst(self.scores), "scaled": lst(self.scaled),
            "weights": lst(self.weights), "values": lst(self.values), "head_output": lst(self.head_output),
            "concat": lst(self.concat), "projected": lst(self.projected),
            "max_error_vs_layer": self.max_error_vs_layer, "weights_error_vs_layer": self.weights_vs_layer,
        }


def _truncated(cache: KVCache | None, positions: int) -> KVCache | None:
    """The cache as it was when it held ``positions`` positions (its entries never change afterwards)."""
    if cache is None or positions <= 0:
        return None
    return KVCache([k[:, :, :positions] for k in cache.keys], [v[:, :, :positions] for v in cache.values])


def _per_position(t: Tensor) -> Tensor:
    """``[B, H, n, d_k]`` -> ``[n, H·d_k]``: one vector per position, for a relative change."""
    return t[0].transpose(0, 1).reshape(t.shape[2], -1)


class Generation:
    """Step-by-step generation over ``lens`` from ``prompt_ids`` (see the module docstring).

    Lives on one thread (the app's worker); :meth:`advance_to` brings it to a number of steps,
    going forward or back, so a request says where to be rather than what to press."""

    def __init__(self, lens: GPT2Lens, prompt_ids: Sequence[int], settings: GenerationSettings = GenerationSettings(),
                 tokenizer=None):
        cfg = lens.config
        prompt = [int(i) for i in prompt_ids]
        if not prompt:
            raise GenerationError("the text has no tokens: there is nothing to continue")
        if min(prompt) < 0 or max(prompt) >= cfg.vocab_size:
            raise GenerationError(f"token ids must lie in [0, {cfg.vocab_size})")
        if len(prompt) >= cfg.n_positions:
            raise GenerationError(f"the text is {len(prompt)} tokens long and fills the model's context of "
                                  f"{cfg.n_positions}: there is no room for a new token")
        self.lens, self.settings, self.tokenizer = lens, settings, tokenizer
        self.prompt: tuple[int, ...] = tuple(prompt)
        self.steps: list[StepRecord] = []
        self._generated: list[int] = []
        self._prefill = self._run_prefill()
        self._cache: KVCache | None = self._prefill
        self._maps: dict[int, Tensor] = {}  # layer -> [H, m, m] over the positions that have been queries so far
        #: the layer whose map each step keeps as it is recomputed (a view's; the others are made when asked:
        #: every layer's maps of GPT-2 small at 1024 tokens would hold 600 MB)
        self.shown_layer: int | None = None

    # ------------------------------------------------------------------ state
    @property
    def config(self) -> GPT2Config:
        return self.lens.config

    @property
    def ids(self) -> list[int]:
        return list(self.prompt) + self._generated

    @property
    def room(self) -> int:
        """How many more tokens fit the context."""
        return self.config.n_positions - len(self.prompt) - len(self._generated)

    def matches(self, lens: GPT2Lens, prompt_ids: Sequence[int], settings: GenerationSettings) -> bool:
        return lens is self.lens and tuple(int(i) for i in prompt_ids) == self.prompt and settings == self.settings

    def token_text(self, token_id: int) -> str:
        if self.tokenizer is None:
            return str(token_id)
        return self.tokenizer.token_texts([int(token_id)])[0]

    def _run_prefill(self) -> KVCache | None:
        if len(self.prompt) < 2:
            return None
        out = self.lens.forward(list(self.prompt[:-1]), causal=self.settings.causal, use_cache=True,
                                keep_attentions=False, keep_hidden=False, compute_logits=False)
        return out.cache

    # ------------------------------------------------------------------ moving
    def reset(self) -> None:
        self.steps.clear()
        self._generated.clear()
        self._cache = self._prefill
        self._maps = {}

    def back(self) -> StepRecord | None:
        """Undo the last step (its token and its cache column); None when there is none."""
        if not self.steps:
            return None
        record = self.steps.pop()
        self._generated.pop()
        self._cache = _truncated(self._cache, record.cache_positions - 1)
        self._maps = {}
        return record

    def advance_to(self, count: int, cancel: Cancel = None, on_step=None) -> None:
        """Step forward or back until ``count`` tokens are generated; ``Cancelled`` between two steps;
        ``on_step(done, total)`` after each step forward."""
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise GenerationError(f"the number of steps must be an integer ≥ 0, got {count!r}")
        if count - len(self.steps) > self.room:
            raise GenerationError(f"{count} tokens don't fit: the context of {self.config.n_positions} positions "
                                  f"leaves room for {len(self.steps) + self.room}")
        stop = cancel_check(cancel)
        while len(self.steps) > count:
            self.back()
        first = len(self.steps)
        while len(self.steps) < count:
            if stop():
                raise Cancelled(f"stopped after {len(self.steps)} of {count} steps")
            self.next()
            if on_step is not None:
                on_step(len(self.steps) - first, count - first)

    @torch.inference_mode()
    def next(self) -> StepRecord:
        """One step: the new query against the cache, the same step by full recompute, and the comparisons."""
        lens, cfg, causal = self.lens, self.config, self.settings.causal
        ids = self.ids
        n = len(ids)  # keys after this step; the new query is position n − 1
        if n >= cfg.n_positions:
            raise GenerationError(f"the context of {cfg.n_positions} positions is full: no token can be added")

        # with the cache: one query row against the n keys (every layer's row kept, for the views)
        start = time.perf_counter()
        cached = lens.forward([ids[-1]], causal=causal, past=self._cache, use_cache=True, keep_attentions=True,
                              keep_hidden=False, logits_positions=slice(-1, None))
        seconds_cached = time.perf_counter() - start
        # without it: every position again
        start = time.perf_counter()
        full = lens.forward(ids, causal=causal, keep_attentions=False, keep_hidden=False, keep_kv=True,
                            logits_positions=slice(-1, None))
        seconds_recompute = time.perf_counter() - start
        assert cached.logits is not None and full.logits is not None and cached.cache is not None

        logits, logits_full = cached.logits[0, -1], full.logits[0, -1]
        probs_model, probs_full = torch.softmax(logits, -1), torch.softmax(logits_full, -1)
        probs = probs_model if self.settings.greedy else torch.softmax(logits / self.settings.temperature, -1)
        if self.settings.greedy:
            token = int(torch.argmax(logits))
        else:  # the draw depends on the seed and the position only: Back then Next draws the same token
            gen = torch.Generator().manual_seed(self.settings.seed * 1_000_003 + n)
            token = int(torch.multinomial(probs, 1, generator=gen))
        top_p, top_i = torch.topk(probs, min(TOP_K, probs.numel()))
        top = tuple(TopToken(int(i), self.token_text(int(i)), float(p)) for p, i in zip(top_p, top_i))

        kv_drift = tuple(
            float(torch.maximum(relative_change(_per_position(fk), _per_position(ck)),
                                relative_change(_per_position(fv), _per_position(cv))).max())
            for fk, fv, ck, cv in zip(full.keys, full.values, cached.cache.keys, cached.cache.values)
        )
        record = StepRecord(
            index=len(self.steps),
            position=n,
            token_id=token,
            token=self.token_text(token),
            p=float(probs[token]),
            top=top,
            cache_positions=cached.cache.length,
            cache_bytes=cache_size_bytes(lens, cached.cache.length, BYTES_PER_VALUE),
            attention_rows=torch.stack([a[0, :, 0, :] for a in cached.attentions]).clone(),  # type: ignore[index]
            earlier_rows_change=self._earlier_rows_change(ids),
            logits_max_diff=float((logits - logits_full).abs().max()),
            prob_max_diff=float((probs_model - probs_full).abs().max()),
            top1_agrees=int(torch.argmax(logits)) == int(torch.argmax(logits_full)),
            kv_drift=kv_drift,
            work=step_work(cfg, n, causal),
            seconds_cached=seconds_cached,
            seconds_recompute=seconds_recompute,
        )
        assert record.cache_bytes == cached.cache.n_bytes  # the formula is what the cache really holds
        self._cache = cached.cache
        self._generated.append(token)
        self.steps.append(record)
        return record

    def _earlier_rows_change(self, ids: list[int]) -> tuple[float, ...]:
        """Per layer, the largest change of rows 0 … n − 2 between the previous step and this one.

        Both are recomputed in one batch at this step's width: this step's sequence, and the previous
        step's padded with a stand-in token that the mask hides from every other row.  The same shapes
        mean the same float rounding, so what differs is what the new token changed (a different width
        can change the rounding by ~1e-7: not information).  Each layer's maps are compared as they are
        made and dropped; only the shown layer's map of this step is kept."""
        n = len(ids)
        self._maps = {}
        if n < 2:
            return tuple(0.0 for _ in range(self.config.n_layer))
        stand_in = 0 if ids[-1] != 0 else 1
        now = torch.ones(n, n, dtype=torch.bool)
        if self.settings.causal:
            now = now.tril()
        before = now.clone()
        before[:, n - 1] = False
        before[n - 1, n - 1] = True  # the stand-in sees itself (a row needs one key); no one else sees it
        changes = [0.0] * self.config.n_layer

        def compare(layer: int, attention: Tensor) -> None:  # [2, H, n, n]: now, before
            changes[layer] = float((attention[0, :, : n - 1] - attention[1, :, : n - 1]).abs().max())
            if layer == self.shown_layer:
                self._maps[layer] = attention[0].clone()

        self.lens.forward([ids, ids[:-1] + [stand_in]], allowed=torch.stack([now, before]), keep_attentions=False,
                          keep_hidden=False, compute_logits=False, attention_hook=compare)
        return tuple(changes)

    # ------------------------------------------------------------------ views
    @torch.inference_mode()
    def attention_map(self, layer: int) -> Tensor:
        """Layer ``layer``'s attention ``[H, m, m]`` over the m positions that have been queries so far."""
        self._check_layer(layer)
        if layer not in self._maps:
            m = len(self.ids) - 1
            if m == 0:
                return torch.zeros(self.config.n_head, 0, 0)
            out = self.lens.forward(self.ids[:m], causal=self.settings.causal, keep_attentions=[layer],
                                    keep_hidden=False, compute_logits=False)
            self._maps[layer] = out.attentions[layer][0]  # type: ignore[index]
        return self._maps[layer]

    def totals(self) -> dict:
        """Running totals since Reset: multiply-adds and seconds, both ways."""
        fields = ("attention_cached", "attention_recompute", "total_cached", "total_recompute")
        totals = {f: sum(getattr(s.work, f) for s in self.steps) for f in fields}
        totals["seconds_cached"] = sum(s.seconds_cached for s in self.steps)
        totals["seconds_recompute"] = sum(s.seconds_recompute for s in self.steps)
        return totals

    def _check_layer(self, layer: int) -> None:
        L = self.config.n_layer
        if isinstance(layer, bool) or not isinstance(layer, int) or not 0 <= layer < L:
            raise GenerationError(f"layer {layer!r} doesn't exist: the model has {L} layers (0..{L - 1})")

    def _check_head(self, head: int) -> None:
        H = self.config.n_head
        if isinstance(head, bool) or not isinstance(head, int) or not 0 <= head < H:
            raise GenerationError(f"head {head!r} doesn't exist: the model has {H} heads per layer (0..{H - 1})")

    @torch.inference_mode()
    def inside_head(self, step: int, layer: int, head: int) -> InsideHead:
        """Step ``step``'s new query through head ``head`` of layer ``layer``, number by number, recomposed
        into the layer's attention output and compared with the layer's own (the cache as it was then)."""
        if isinstance(step, bool) or not isinstance(step, int) or not 0 <= step < len(self.steps):
            raise GenerationError(f"step {step!r} doesn't exist: {len(self.steps)} steps were made")
        self._check_layer(layer)
        self._check_head(head)
        cfg, lw = self.config, self.lens.weights.layers[layer]
        record = self.steps[step]
        query = record.query_position
        seen: dict[int, Tensor] = {}
        out = self.lens.forward([self.ids[query]], causal=self.settings.causal, past=_truncated(self._cache, query),
                                keep_attentions=[layer], keep_hidden=True, keep_kv=True, compute_logits=False,
                                output_hook=lambda i, mixed: seen.__setitem__(i, mixed) if i == layer else None)
        assert out.hidden_states is not None and out.keys is not None and out.values is not None
        d, H, dk = cfg.n_embd, cfg.n_head, cfg.head_dim
        x = torch.nn.functional.layer_norm(out.hidden_states[0, layer, 0], (d,), lw.ln_1_w, lw.ln_1_b,
                                           cfg.layer_norm_epsilon)
        # the lens's own operations, in its order and shapes, so the check compares arithmetic, not rounding
        q_all = torch.addmm(lw.c_attn_b, x[None], lw.c_attn_w)[0, :d].view(H, 1, dk)
        keys, values = out.keys[layer][0], out.values[layer][0]  # [H, n, d_k]
        scale = 1.0 / math.sqrt(dk) if cfg.scale_attn_weights else 1.0
        if cfg.scale_attn_by_inverse_layer_idx:
            scale /= layer + 1
        scores = torch.matmul(q_all, keys.transpose(-1, -2))[:, 0]  # [H, n]
        scaled = torch.matmul(q_all * scale, keys.transpose(-1, -2))[:, 0]
        weights = torch.softmax(scaled, dim=-1)  # the newest row: no key lies in its future, nothing to hide
        per_head = torch.matmul(weights[:, None], values)[:, 0]  # [H, d_k]
        concat = per_head.reshape(d)
        projected = torch.addmm(lw.c_proj_b, concat[None], lw.c_proj_w)[0]
        layer_row = out.attentions[layer][0, head, 0]  # type: ignore[index]
        return InsideHead(
            step=step, layer=layer, head=head, position=query, d_k=dk, scale=scale,
            q=q_all[head, 0].clone(), keys=keys[head].clone(), scores=scores[head].clone(), scaled=scaled[head].clone(),
            hidden=0, weights=weights[head].clone(), values=values[head].clone(), head_output=per_head[head].clone(),
            concat=concat.clone(), projected=projected.clone(),
            max_error_vs_layer=float((projected - seen[layer][0, 0]).abs().max()),
            weights_vs_layer=float((weights[head] - layer_row).abs().max()),
        )


# ---------------------------------------------------------------------------- the stale cache, summarised
@dataclass(frozen=True)
class StaleCacheRun:
    """The same weights without the mask, generating with a cache anyway, ``steps`` steps."""

    records: tuple[StepRecord, ...]

    @property
    def kv_drift_per_step(self) -> list[list[float]]:
        return [list(r.kv_drift) for r in self.records]

    @property
    def top1_agreement(self) -> float:
        return sum(r.top1_agrees for r in self.records) / len(self.records) if self.records else 1.0

    @property
    def max_prob_diff(self) -> float:
        return max((r.prob_max_diff for r in self.records), default=0.0)

    def as_json(self) -> dict:
        return {
            "steps": len(self.records),
            "tokens": [r.token for r in self.records],
            "token_ids": [r.token_id for r in self.records],
            "kv_drift_per_step": self.kv_drift_per_step,
            "top1_agreement": self.top1_agreement,
            "max_prob_diff": self.max_prob_diff,
            "prob_diff_per_step": [r.prob_max_diff for r in self.records],
            "earlier_rows_max_change_per_step": [r.earlier_rows_max_change for r in self.records],
        }


def stale_cache_run(lens: GPT2Lens, prompt_ids: Sequence[int], steps: int, tokenizer=None,
                    cancel: Cancel = None) -> StaleCacheRun:
    """Greedy generation without the mask but with a cache: each step's cached K/V against a full
    recompute, and the next-token distribution from the stale cache against the recomputed one."""
    run = Generation(lens, prompt_ids, GenerationSettings(causal=False), tokenizer)
    run.advance_to(steps, cancel)
    return StaleCacheRun(tuple(run.steps))


# ---------------------------------------------------------------------------- what a view shows
@dataclass(frozen=True)
class GenerationView:
    """A generation brought to a number of steps, as the panel shows it: plain data that is never
    mutated afterwards, plus the :class:`Generation` itself to hand to the next request (it is only
    ever used on the thread that steps it)."""

    generation: Generation
    settings: GenerationSettings
    prompt_length: int
    ids: tuple[int, ...]
    tokens: tuple[str, ...]
    steps: tuple[StepRecord, ...]
    layer: int
    head: int
    attention: Tensor  # [H, m, m]: layer ``layer``'s map over the positions that have been queries
    inside: InsideHead | None  # the last step's arithmetic for (layer, head); None before the first step
    totals: dict
    config: GPT2Config
    room: int  # tokens that still fit the context

    @property
    def last(self) -> StepRecord | None:
        return self.steps[-1] if self.steps else None


def generation_view(current: Generation | None, lens: GPT2Lens, tokenizer, prompt_ids: Sequence[int],
                    settings: GenerationSettings, count: int, layer: int, head: int,
                    cancel: Cancel = None, progress=None) -> GenerationView:
    """Bring ``current`` (or a new :class:`Generation`, when it was made for another model, text or
    settings) to ``count`` steps and describe it for ``layer`` and ``head``.  ``progress(done, total)``
    after each step forward."""
    run = current if current is not None and current.matches(lens, prompt_ids, settings) else None
    if run is None:
        run = Generation(lens, prompt_ids, settings, tokenizer)
    run._check_layer(layer)
    run._check_head(head)
    run.shown_layer = layer
    run.advance_to(count, cancel, progress)
    ids = run.ids
    return GenerationView(
        generation=run,
        settings=settings,
        prompt_length=len(run.prompt),
        ids=tuple(ids),
        tokens=tuple(tokenizer.token_texts(ids)) if tokenizer is not None else tuple(map(str, ids)),
        steps=tuple(run.steps),
        layer=layer,
        head=head,
        attention=run.attention_map(layer).clone(),
        inside=run.inside_head(len(run.steps) - 1, layer, head) if run.steps else None,
        totals=run.totals(),
        config=run.config,
        room=run.room,
    )
