"""What the KV cache buys: greedy generation with and without it (step 5 of the lab).

:func:`kv_benchmark` is a generator so a UI can draw progress and stop it: it yields one
:class:`KVStep` per generated token and finally one :class:`KVResult`.  Cancellation is
checked between steps; a cancelled run raises :class:`BenchmarkCancelled` (nothing is
half-reported: there is no result for an incomplete run).
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Iterator, Literal, Sequence, Union

import torch

from .jobs import Cancelled
from .lens import GPT2Lens, KVCache

Mode = Literal["with-cache", "without-cache"]
Cancel = Union[Callable[[], bool], threading.Event, None]


class BenchmarkCancelled(Cancelled):
    """Raised by :func:`kv_benchmark` when its cancel flag is set between two steps."""


@dataclass
class KVStep:
    mode: Mode
    index: int  # 0-based index of the generated token
    seconds: float  # time for this token (the first step with the cache includes the prompt)
    token_id: int
    repetition: int = 0
    total: int = 0  # new tokens per run, for progress bars


@dataclass
class KVResult:
    new_tokens: int
    prompt_length: int
    repetitions: int
    seconds_with_cache: float  # median over repetitions of the whole run
    seconds_without_cache: float
    tokens_per_second_with: float
    tokens_per_second_without: float
    speedup: float  # without / with
    identical: bool  # both modes (and every repetition) produced the same ids
    generated_ids: list[int]
    generated_ids_without: list[int]
    cache_positions: int  # positions held by the cache when the last token was produced
    cache_bytes: int  # 2 (K and V) × layers × heads × head_dim × positions × bytes per value
    per_token_with: list[float] = field(default_factory=list)  # median per step
    per_token_without: list[float] = field(default_factory=list)


def cache_size_bytes(lens: GPT2Lens, positions: int, bytes_per_value: int = 4) -> int:
    cfg = lens.config
    return 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * positions * bytes_per_value


def _cancel_check(cancel: Cancel) -> Callable[[], bool]:
    if cancel is None:
        return lambda: False
    if isinstance(cancel, threading.Event) or hasattr(cancel, "is_set"):
        return cancel.is_set  # type: ignore[union-attr]
    if callable(cancel):
        return cancel
    raise TypeError("cancel must be a callable returning bool or a threading.Event")


def _full_forward_next(lens: GPT2Lens, ids: list[int]) -> torch.Tensor:
    """Without the cache: the whole sequence again, every step (only the last logits are computed)."""
    out = lens(ids, keep_attentions=False, keep_hidden=False, logits_positions=slice(-1, None))
    assert out.logits is not None
    return out.logits[0, -1]


def kv_benchmark(
    lens: GPT2Lens,
    prompt_ids: Sequence[int],
    new_tokens: int = 50,
    cancel: Cancel = None,
    repetitions: int = 1,
) -> Iterator[KVStep | KVResult]:
    """Generate ``new_tokens`` greedily with the KV cache, then by full recompute; time both.

    Yields a :class:`KVStep` per token of each run (``repetitions`` runs per mode, the
    reported times are medians), then the :class:`KVResult`.  Raises ``ValueError`` when the
    prompt plus the new tokens don't fit the model's context, :class:`BenchmarkCancelled`
    when ``cancel`` (a callable or a ``threading.Event``) becomes true between two steps.
    """
    prompt = [int(i) for i in prompt_ids]
    ctx = lens.config.n_positions
    if not prompt:
        raise ValueError("the prompt is empty")
    if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or new_tokens < 1:
        raise ValueError(f"new_tokens must be a positive integer, got {new_tokens!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ValueError(f"repetitions must be a positive integer, got {repetitions!r}")
    if len(prompt) + new_tokens > ctx:
        room = ctx - len(prompt)
        raise ValueError(
            f"the prompt ({len(prompt)} tokens) plus {new_tokens} new tokens exceed the model's context of "
            f"{ctx} positions; use at most {max(room, 0)} new tokens"
        )
    if min(prompt) < 0 or max(prompt) >= lens.config.vocab_size:
        raise ValueError(f"token ids must lie in [0, {lens.config.vocab_size})")
    cancelled = _cancel_check(cancel)

    # warm-up, untimed: the first call pays one-off allocation costs that belong to neither mode
    lens.next_token_logits(prompt, None)

    runs: dict[str, list[tuple[list[int], list[float]]]] = {"with-cache": [], "without-cache": []}
    last_cache: KVCache | None = None
    for rep in range(repetitions):
        for mode in ("with-cache", "without-cache"):
            ids = list(prompt)
            past: KVCache | None = None
            generated: list[int] = []
            times: list[float] = []
            for index in range(new_tokens):
                if cancelled():
                    raise BenchmarkCancelled(f"cancelled after {index} of {new_tokens} tokens ({mode})")
                start = time.perf_counter()
                if mode == "with-cache":
                    logits, past = lens.next_token_logits(ids, past)
                else:
                    logits = _full_forward_next(lens, ids)
                token = int(torch.argmax(logits))
                seconds = time.perf_counter() - start
                ids.append(token)
                generated.append(token)
                times.append(seconds)
                yield KVStep(mode, index, seconds, token, rep, new_tokens)  # type: ignore[arg-type]
            runs[mode].append((generated, times))
            if mode == "with-cache":
                last_cache = past

    def median_total(mode: str) -> float:
        return statistics.median(sum(times) for _, times in runs[mode])

    def per_token(mode: str) -> list[float]:
        return [statistics.median(t[i] for _, t in runs[mode]) for i in range(new_tokens)]

    with_s, without_s = median_total("with-cache"), median_total("without-cache")
    all_ids = [g for mode in runs for g, _ in runs[mode]]
    assert last_cache is not None
    positions = last_cache.length
    bytes_per_value = last_cache.keys[0].element_size()
    cache_bytes = cache_size_bytes(lens, positions, bytes_per_value)
    assert cache_bytes == last_cache.n_bytes  # the formula is what the cache really holds
    yield KVResult(
        new_tokens=new_tokens,
        prompt_length=len(prompt),
        repetitions=repetitions,
        seconds_with_cache=with_s,
        seconds_without_cache=without_s,
        tokens_per_second_with=new_tokens / with_s if with_s > 0 else float("inf"),
        tokens_per_second_without=new_tokens / without_s if without_s > 0 else float("inf"),
        speedup=without_s / with_s if with_s > 0 else float("inf"),
        identical=all(g == all_ids[0] for g in all_ids),
        generated_ids=runs["with-cache"][0][0],
        generated_ids_without=runs["without-cache"][0][0],
        cache_positions=positions,
        cache_bytes=cache_bytes,
        per_token_with=per_token("with-cache"),
        per_token_without=per_token("without-cache"),
    )


def run_kv_benchmark(lens: GPT2Lens, prompt_ids: Sequence[int], new_tokens: int = 50, **kwargs) -> KVResult:
    """Drain :func:`kv_benchmark` and return its result (for scripts and the headless lab)."""
    result = None
    for item in kv_benchmark(lens, prompt_ids, new_tokens, **kwargs):
        if isinstance(item, KVResult):
            result = item
    assert result is not None
    return result
