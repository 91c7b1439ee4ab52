"""The KV-cache benchmark: same tokens with and without the cache, progress, cancel, sizes."""

from __future__ import annotations

import threading

import pytest

from attention_lab.core.kvbench import (
    BenchmarkCancelled,
    KVResult,
    KVStep,
    cache_size_bytes,
    kv_benchmark,
    run_kv_benchmark,
)


@pytest.fixture(scope="module")
def lens(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(tiny_checkpoint).lens


PROMPT = [464, 1263, 3290, 1643, 262, 6920, 582]


def greedy_by_full_recompute(lens, prompt, n):
    ids = list(prompt)
    for _ in range(n):
        ids.append(int(lens(ids).logits[0, -1].argmax()))
    return ids[len(prompt):]


def test_steps_then_result_with_identical_ids(lens):
    n = 12
    items = list(kv_benchmark(lens, PROMPT, new_tokens=n))
    steps, result = items[:-1], items[-1]
    assert isinstance(result, KVResult) and all(isinstance(s, KVStep) for s in steps)
    assert [(s.mode, s.index) for s in steps] == [("with-cache", i) for i in range(n)] + [
        ("without-cache", i) for i in range(n)
    ]
    assert all(s.seconds > 0 and s.total == n for s in steps)
    assert result.identical
    assert result.generated_ids == result.generated_ids_without == [s.token_id for s in steps[:n]]
    assert result.generated_ids == greedy_by_full_recompute(lens, PROMPT, n)
    assert len(result.per_token_with) == len(result.per_token_without) == n
    assert result.seconds_with_cache == pytest.approx(sum(result.per_token_with))
    assert result.speedup == pytest.approx(result.seconds_without_cache / result.seconds_with_cache)
    assert result.tokens_per_second_with == pytest.approx(n / result.seconds_with_cache)


def test_cache_bytes_formula(lens):
    cfg = lens.config
    result = run_kv_benchmark(lens, PROMPT, new_tokens=5)
    # the cache holds every position fed to the model: the prompt and all but the last new token
    positions = len(PROMPT) + 5 - 1
    assert result.cache_positions == positions
    assert result.cache_bytes == 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * positions * 4
    assert cache_size_bytes(lens, 1024) == 2 * 2 * 12 * 4 * 1024 * 4
    # GPT-2 small at 1024 positions: the figure the chapter's reader can check by hand
    from attention_lab.core.lens import GPT2Config

    class Small:
        config = GPT2Config()

    assert cache_size_bytes(Small(), 1024) == 2 * 12 * 12 * 64 * 1024 * 4 == 75_497_472


def test_repetitions_report_medians(lens):
    items = list(kv_benchmark(lens, PROMPT, new_tokens=3, repetitions=3))
    steps, result = items[:-1], items[-1]
    assert len(steps) == 3 * 2 * 3 and {s.repetition for s in steps} == {0, 1, 2}
    assert result.repetitions == 3 and result.identical
    totals = sorted(
        sum(s.seconds for s in steps if s.mode == "with-cache" and s.repetition == r) for r in range(3)
    )
    assert result.seconds_with_cache == pytest.approx(totals[1])


@pytest.mark.parametrize("kind", ["event", "callable"])
def test_cancel_between_steps(lens, kind):
    event = threading.Event()
    cancel = event if kind == "event" else event.is_set
    seen = []
    with pytest.raises(BenchmarkCancelled, match="cancelled after 3 of 20"):
        for item in kv_benchmark(lens, PROMPT, new_tokens=20, cancel=cancel):
            seen.append(item)
            if len(seen) == 3:
                event.set()
    assert len(seen) == 3 and not any(isinstance(i, KVResult) for i in seen)


def test_cancel_before_start(lens):
    event = threading.Event()
    event.set()
    with pytest.raises(BenchmarkCancelled):
        next(kv_benchmark(lens, PROMPT, new_tokens=5, cancel=event))


def test_context_is_checked_with_a_clear_error(lens):
    ctx = lens.config.n_positions
    with pytest.raises(ValueError, match=f"context of {ctx}.*at most {ctx - len(PROMPT)} new tokens"):
        next(kv_benchmark(lens, PROMPT, new_tokens=ctx))
    # exactly filling the context is fine
    result = run_kv_benchmark(lens, [464] * (ctx - 2), new_tokens=2)
    assert result.identical and len(result.generated_ids) == 2


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(prompt_ids=[]), "empty"),
        (dict(new_tokens=0), "positive"),
        (dict(new_tokens=2.5), "positive"),
        (dict(repetitions=0), "positive"),
        (dict(prompt_ids=[10**6]), "token ids"),
    ],
)
def test_bad_arguments(lens, kwargs, match):
    args = dict(prompt_ids=PROMPT, new_tokens=3) | kwargs
    with pytest.raises(ValueError, match=match):
        next(kv_benchmark(lens, **args))


def test_bad_cancel_type(lens):
    with pytest.raises(TypeError):
        next(kv_benchmark(lens, PROMPT, new_tokens=2, cancel=42))
