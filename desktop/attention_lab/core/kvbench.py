"""What the KV cache buys: greedy generation with and without it (step 5 of the lab).

:func:`kv_benchmark` is a generator so a UI can draw progress and stop it: it yields one
:class:`KVStep` per generated token and finally one :class:`KVResult`.  Cancellation is
checked between steps; a cancelled run raises :class:`BenchmarkCancelled` (nothing is
half-reported: there is no result for an incomplete run).

Timing a learner's laptop, where a browser or a second program competes for the cores:

* an untimed warm-up of both modes first (the first calls pay one-off allocations);
* then with-cache and without-cache runs alternate, ``repetitions`` times each (3 by
  default), so a busy spell of the machine hits both sides rather than one;
* torch runs on one thread while timing (restored after): with several threads, one busy
  core stalls every matmul of the step, and the noise then swamps the small model's steps;
* each position's time is its **minimum** over the repetitions: noise only ever adds time,
  so the minimum is the best estimate of what the step costs.

The result also fits a line to each side's per-token times (ms per extra position): the
chapter's claim in numbers -- without the cache each token recomputes the whole prefix, so
its cost grows with the position; with it the step is one new row.  :func:`speedup_sentence`
and :func:`growth_sentence` word the result in English or Brazilian Portuguese; below
:data:`CLEAR_SPEEDUP` they never say "faster".

:func:`benchmark_model` offers GPT-2 small's shapes with random weights (built in memory
from a config, never downloaded) as the model to time, so the gain seen is the one of
GPT-2 small's 124 M parameters rather than the demo model's.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Iterator, Literal, Sequence

import torch

from .job_protocol import Cancel, Cancelled, cancel_check
from .lens import GPT2Lens, KVCache
from .numbers import number, words

Mode = Literal["with-cache", "without-cache"]
DEFAULT_REPETITIONS = 3  # with/without interleaved this many times
TIMING_THREADS = 1
WARMUP_TOKENS = 4  # untimed tokens of each mode before the timed runs
CLEAR_SPEEDUP = 1.2  # below this the result is worded "no clear gain", never "× faster"
LONG_RUN_TOKENS = 200  # the longer run the lesson suggests (the contrast grows with the length)
KV_MODELS = ("loaded", "gpt2-shapes")


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
    seconds_with_cache: float  # sum over positions of each position's minimum over the repetitions
    seconds_without_cache: float
    tokens_per_second_with: float
    tokens_per_second_without: float
    speedup: float  # without / with
    identical: bool  # both modes (and every repetition) produced the same ids
    generated_ids: list[int]
    generated_ids_without: list[int]
    cache_positions: int  # positions held by the cache when the last token was produced
    cache_bytes: int  # 2 (K and V) × layers × heads × head_dim × positions × bytes per value
    per_token_with: list[float] = field(default_factory=list)  # minimum over the repetitions, per step
    per_token_without: list[float] = field(default_factory=list)
    slope_ms_with: float = 0.0  # fitted growth of the per-token time: ms per extra position
    slope_ms_without: float = 0.0
    totals_with: list[float] = field(default_factory=list)  # each repetition's whole run (the spread)
    totals_without: list[float] = field(default_factory=list)
    threads: int = TIMING_THREADS  # torch threads while timing

    @property
    def clear(self) -> bool:
        """Whether the measured gain is clear enough to be worded as "× faster"."""
        return self.speedup >= CLEAR_SPEEDUP


def cache_size_bytes(lens: GPT2Lens, positions: int, bytes_per_value: int = 4) -> int:
    cfg = lens.config
    return 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * positions * bytes_per_value


def _full_forward_next(lens: GPT2Lens, ids: list[int]) -> torch.Tensor:
    """Without the cache: the whole sequence again, every step (only the last logits are computed)."""
    out = lens(ids, keep_attentions=False, keep_hidden=False, logits_positions=slice(-1, None))
    assert out.logits is not None
    return out.logits[0, -1]


def fitted_line_ms(seconds: Sequence[float]) -> tuple[float, float]:
    """Least-squares line through per-token times (seconds) against the step index:
    ``(ms at step 0, ms per extra position)`` -- what the panel draws over its curves.

    The first step is left out: with the cache it also reads the whole prompt.  Fewer than
    three steps: a flat line at the last time (no slope can be measured)."""
    ys = [1e3 * t for t in seconds[1:]]
    if len(ys) < 2:
        return (1e3 * seconds[-1] if len(seconds) else 0.0), 0.0
    xs = range(1, len(seconds))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return my - slope * mx, slope


def fitted_slope_ms(seconds: Sequence[float]) -> float:
    """Least-squares slope of per-token times (seconds) against the position: ms per extra position."""
    return fitted_line_ms(seconds)[1]


def _generate(lens: GPT2Lens, prompt: list[int], steps: int, mode: str) -> Iterator[tuple[int, float, KVCache | None]]:
    """Greedy generation in ``mode``: yields (token, seconds for this step, cache) per step."""
    ids = list(prompt)
    past: KVCache | None = None
    for _ in range(steps):
        start = time.perf_counter()
        if mode == "with-cache":
            logits, past = lens.next_token_logits(ids, past)
        else:
            logits = _full_forward_next(lens, ids)
        token = int(torch.argmax(logits))
        seconds = time.perf_counter() - start
        ids.append(token)
        yield token, seconds, past


def kv_benchmark(
    lens: GPT2Lens,
    prompt_ids: Sequence[int],
    new_tokens: int = 50,
    cancel: Cancel = None,
    repetitions: int = DEFAULT_REPETITIONS,
    threads: int | None = TIMING_THREADS,
) -> Iterator[KVStep | KVResult]:
    """Generate ``new_tokens`` greedily with the KV cache, then by full recompute; time both.

    After an untimed warm-up, yields a :class:`KVStep` per token of each run (``repetitions``
    runs per mode, with and without alternating), then the :class:`KVResult`, whose times are
    each position's minimum over the repetitions.  torch runs on ``threads`` threads meanwhile
    (``None``: as it is); the caller's setting is restored however the generator ends.
    Raises ``ValueError`` when the prompt plus the new tokens don't fit the model's context,
    :class:`BenchmarkCancelled` when ``cancel`` (a callable or a ``threading.Event``) becomes
    true between two steps.
    """
    prompt = [int(i) for i in prompt_ids]
    ctx = lens.config.n_positions
    if not prompt:
        raise ValueError("the prompt is empty")
    if isinstance(new_tokens, bool) or not isinstance(new_tokens, int) or new_tokens < 1:
        raise ValueError(f"new_tokens must be a positive integer, got {new_tokens!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
        raise ValueError(f"repetitions must be a positive integer, got {repetitions!r}")
    if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
        raise ValueError(f"threads must be a positive integer or None, got {threads!r}")
    if len(prompt) + new_tokens > ctx:
        room = ctx - len(prompt)
        raise ValueError(
            f"the prompt ({len(prompt)} tokens) plus {new_tokens} new tokens exceed the model's context of "
            f"{ctx} positions; use at most {max(room, 0)} new tokens"
        )
    if min(prompt) < 0 or max(prompt) >= lens.config.vocab_size:
        raise ValueError(f"token ids must lie in [0, {lens.config.vocab_size})")
    cancelled = cancel_check(cancel)
    if cancelled():
        raise BenchmarkCancelled(f"cancelled after 0 of {new_tokens} tokens (with-cache)")

    callers_threads = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        # warm-up, untimed: the first calls pay one-off allocation costs that belong to neither mode
        for mode in ("with-cache", "without-cache"):
            for _ in _generate(lens, prompt, min(new_tokens, WARMUP_TOKENS), mode):
                pass

        runs: dict[str, list[tuple[list[int], list[float]]]] = {"with-cache": [], "without-cache": []}
        last_cache: KVCache | None = None
        for rep in range(repetitions):
            for mode in ("with-cache", "without-cache"):
                generated: list[int] = []
                times: list[float] = []
                steps = _generate(lens, prompt, new_tokens, mode)
                for index in range(new_tokens):
                    if cancelled():
                        raise BenchmarkCancelled(f"cancelled after {index} of {new_tokens} tokens ({mode})")
                    token, seconds, past = next(steps)
                    generated.append(token)
                    times.append(seconds)
                    yield KVStep(mode, index, seconds, token, rep, new_tokens)  # type: ignore[arg-type]
                runs[mode].append((generated, times))
                if mode == "with-cache":
                    last_cache = past
    finally:
        torch.set_num_threads(callers_threads)

    def per_token(mode: str) -> list[float]:
        return [min(t[i] for _, t in runs[mode]) for i in range(new_tokens)]

    fastest_with, fastest_without = per_token("with-cache"), per_token("without-cache")
    with_s, without_s = sum(fastest_with), sum(fastest_without)
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
        per_token_with=fastest_with,
        per_token_without=fastest_without,
        slope_ms_with=fitted_slope_ms(fastest_with),
        slope_ms_without=fitted_slope_ms(fastest_without),
        totals_with=[sum(t) for _, t in runs["with-cache"]],
        totals_without=[sum(t) for _, t in runs["without-cache"]],
        threads=threads if threads is not None else callers_threads,
    )


def run_kv_benchmark(lens: GPT2Lens, prompt_ids: Sequence[int], new_tokens: int = 50, **kwargs) -> KVResult:
    """Drain :func:`kv_benchmark` and return its result (for scripts and the headless lab)."""
    result = None
    for item in kv_benchmark(lens, prompt_ids, new_tokens, **kwargs):
        if isinstance(item, KVResult):
            result = item
    assert result is not None
    return result


# ---------------------------------------------------------------------------- which model to time
@dataclass
class BenchTarget:
    """The model a benchmark times: its lens, the tokenizer for its prompt and how to label it."""

    lens: GPT2Lens
    tokenizer: object  # core.tokens.Tokenizer
    name: str
    random_weights: bool


def benchmark_model(choice: str, loaded=None, seed: int = 0) -> BenchTarget:
    """``"loaded"``: the ``LoadedModel`` given; ``"gpt2-shapes"``: GPT-2 small's shapes with random
    weights, built in memory (a second or two, ~500 MB; never downloaded), with the bundled
    GPT-2 tokenizer for the prompt."""
    if choice == "loaded":
        if loaded is None:
            raise ValueError("the loaded model is needed for the 'loaded' benchmark model")
        return BenchTarget(loaded.lens, loaded.tokenizer, loaded.name, random_weights=False)
    if choice == "gpt2-shapes":
        from . import paths
        from .checkpoints import random_gpt2_lens
        from .tokens import Tokenizer

        lens = random_gpt2_lens(seed)
        return BenchTarget(lens, Tokenizer.from_folder(paths.tokenizer_dir()), lens.name, random_weights=True)
    raise ValueError(f"unknown benchmark model {choice!r}; choose one of: {', '.join(KV_MODELS)}")


def benchmark_config(choice: str, loaded=None):
    """The config a run on ``choice`` would time, without building its weights: the panel's
    cache-size formula before a run is the chosen model's, not the loaded one's."""
    if choice == "loaded":
        if loaded is None:
            raise ValueError("the loaded model is needed for the 'loaded' benchmark model")
        return loaded.lens.config
    if choice == "gpt2-shapes":
        from .checkpoints import GPT2_SMALL_SHAPES
        from .lens import GPT2Config

        return GPT2Config(**GPT2_SMALL_SHAPES)  # random_gpt2_lens builds this very config
    raise ValueError(f"unknown benchmark model {choice!r}; choose one of: {', '.join(KV_MODELS)}")


# ---------------------------------------------------------------------------- words
KV_TEXTS: dict[str, dict[str, str]] = {
    "kv.speedup.clear": {
        "en": "{x:.1f}× faster with the cache",
        "pt_BR": "{x:.1f}× mais rápido com o cache",
    },
    "kv.speedup.unclear": {
        "en": "No clear gain from the cache in this run (time without ÷ time with = {x:.2f}): on a model this "
        "small, or on a busy machine, the fixed cost of each step hides the prefix the cache saves recomputing. "
        "Try the longer run ({long} tokens) or GPT-2 small's shapes.",
        "pt_BR": "Nenhum ganho claro do cache nesta execução (tempo sem ÷ tempo com = {x:.2f}): num modelo tão "
        "pequeno, ou numa máquina ocupada, o custo fixo de cada passo esconde o prefixo que o cache evita "
        "recalcular. Tente a execução mais longa ({long} tokens) ou os formatos do GPT-2 small.",
    },
    "kv.growth": {
        "en": "Without the cache each new token costs {without} ms more than the one before (the whole prefix "
        "is computed again); with it, {with_} ms more.",
        "pt_BR": "Sem o cache cada token novo custa {without} ms a mais que o anterior (o prefixo inteiro é "
        "calculado de novo); com ele, {with_} ms a mais.",
    },
    "kv.growth.flat": {
        "en": "Without the cache each new token costs {without} ms more than the one before (the whole prefix "
        "is computed again); with it, flat ({with_} ms per position: one new row each step).",
        "pt_BR": "Sem o cache cada token novo custa {without} ms a mais que o anterior (o prefixo inteiro é "
        "calculado de novo); com ele, plano ({with_} ms por posição: uma linha nova a cada passo).",
    },
    "kv.growth.none": {
        "en": "The per-token time does not grow measurably here (without the cache {without} ms per position, "
        "with it {with_} ms): too few positions, or the machine's noise is larger than the growth. Try the "
        "longer run ({long} tokens).",
        "pt_BR": "O tempo por token não cresce de forma mensurável aqui (sem o cache {without} ms por posição, "
        "com ele {with_} ms): posições de menos, ou o ruído da máquina é maior que o crescimento. Tente a "
        "execução mais longa ({long} tokens).",
    },
    "kv.random_weights": {
        "en": "GPT-2 small's shapes with random weights: the text is gibberish, the timing is GPT-2 small's.",
        "pt_BR": "Os formatos do GPT-2 small com pesos aleatórios: o texto é sem sentido, o tempo é o do GPT-2 small.",
    },
}
FLAT_SHARE = 0.1  # "flat": the cached side grows by less than a tenth of the uncached side's growth


def kv_text(key: str, lang: str = "en", **values: object) -> str:
    return words(KV_TEXTS, key, lang, **values)


def speedup_sentence(result: KVResult, lang: str = "en") -> str:
    """"2.3× faster with the cache", or, below :data:`CLEAR_SPEEDUP`, what the ratio means and what to try."""
    if result.clear:
        return kv_text("kv.speedup.clear", lang, x=result.speedup)
    return kv_text("kv.speedup.unclear", lang, x=result.speedup, long=LONG_RUN_TOKENS)


def _ms(value: float, lang: str) -> str:
    return number(value, ".2g" if abs(value) < 0.01 else ".3g", lang)


def growth_sentence(result: KVResult, lang: str = "en") -> str:
    """The fitted slopes in words ("without the cache each new token costs 0.04 ms more … with it, flat")."""
    without, with_ = result.slope_ms_without, result.slope_ms_with
    if without <= 0 or with_ >= without:
        return kv_text("kv.growth.none", lang, without=_ms(without, lang), with_=_ms(with_, lang), long=LONG_RUN_TOKENS)
    key = "kv.growth.flat" if with_ <= FLAT_SHARE * without else "kv.growth"
    return kv_text(key, lang, without=_ms(without, lang), with_=_ms(with_, lang))
