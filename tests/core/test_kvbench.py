"""The KV-cache benchmark: same tokens with and without the cache, progress, cancel, sizes."""

from __future__ import annotations

import threading

import pytest

import torch

from attention_lab.core import kvbench
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
    items = list(kv_benchmark(lens, PROMPT, new_tokens=n, repetitions=1))
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


def test_repetitions_interleave_and_report_each_positions_minimum(lens):
    items = list(kv_benchmark(lens, PROMPT, new_tokens=3))  # the default: 3 repetitions
    steps, result = items[:-1], items[-1]
    assert len(steps) == 3 * 2 * 3 and {s.repetition for s in steps} == {0, 1, 2}
    # with and without alternate: w w w, o o o, w w w, ...
    assert [s.mode for s in steps[::3]] == ["with-cache", "without-cache"] * 3
    assert result.repetitions == 3 and result.identical
    for mode, per_token, totals in (("with-cache", result.per_token_with, result.totals_with),
                                    ("without-cache", result.per_token_without, result.totals_without)):
        for i in range(3):
            assert per_token[i] == min(s.seconds for s in steps if s.mode == mode and s.index == i)
        assert totals == pytest.approx([sum(s.seconds for s in steps if s.mode == mode and s.repetition == r)
                                        for r in range(3)])
    assert result.seconds_with_cache == pytest.approx(sum(result.per_token_with))
    assert result.seconds_with_cache <= min(result.totals_with)


def test_one_thread_while_timing_then_the_callers_setting_again(lens):
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen = []
        for item in kv_benchmark(lens, PROMPT, new_tokens=2):
            seen.append(torch.get_num_threads())
        assert set(seen[:-1]) == {1} and torch.get_num_threads() == 2
        assert run_kv_benchmark(lens, PROMPT, new_tokens=2, threads=None).threads == 2
        event = threading.Event()
        with pytest.raises(BenchmarkCancelled):
            for _ in kv_benchmark(lens, PROMPT, new_tokens=5, cancel=event):
                event.set()
        assert torch.get_num_threads() == 2  # restored after a cancelled run too
        run = kv_benchmark(lens, PROMPT, new_tokens=5)
        next(run)
        run.close()  # a consumer that walks away
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_fitted_slope_is_ms_per_position_without_the_first_step():
    # first step (the prompt) is slow and left out; then 1 ms + 0.05 ms per position
    seconds = [0.5] + [1e-3 + 5e-5 * i for i in range(1, 30)]
    assert kvbench.fitted_slope_ms(seconds) == pytest.approx(0.05)
    assert kvbench.fitted_slope_ms([0.1, 0.1]) == 0.0


def test_fitted_line_goes_through_a_straight_line_and_skips_the_first_step():
    """Step 0 (the prompt's whole pass with the cache) is left out of the fit: a slow first
    step does not tilt the line."""
    seconds = [0.5] + [0.002 + 0.0001 * i for i in range(1, 30)]  # ms: 2 + 0.1·i, and a 500 ms first step
    intercept, slope = kvbench.fitted_line_ms(seconds)
    assert slope == pytest.approx(0.1) and intercept == pytest.approx(2.0)
    assert kvbench.fitted_line_ms([0.004]) == (pytest.approx(4.0), 0.0)
    assert kvbench.fitted_line_ms([]) == (0.0, 0.0)


def _result(speedup: float, slope_with: float, slope_without: float) -> KVResult:
    return KVResult(new_tokens=50, prompt_length=7, repetitions=3, seconds_with_cache=1.0,
                    seconds_without_cache=speedup, tokens_per_second_with=50.0,
                    tokens_per_second_without=50.0 / speedup, speedup=speedup, identical=True,
                    generated_ids=[], generated_ids_without=[], cache_positions=56, cache_bytes=0,
                    slope_ms_with=slope_with, slope_ms_without=slope_without)


@pytest.mark.parametrize("lang", ["en", "pt_BR"])
def test_a_small_speedup_is_never_worded_as_faster(lang):
    slow = kvbench.speedup_sentence(_result(0.59, 0.0, 0.0), lang)
    assert ("0,59" if lang == "pt_BR" else "0.59") in slow and "faster" not in slow and "mais rápido" not in slow
    assert str(kvbench.LONG_RUN_TOKENS) in slow and "GPT-2 small" in slow
    fast = kvbench.speedup_sentence(_result(2.34, 0.0, 0.04), lang)
    assert fast.startswith("2,3×" if lang == "pt_BR" else "2.3×")
    assert kvbench.speedup_sentence(_result(1.19, 0, 0), lang) != kvbench.speedup_sentence(_result(1.21, 0, 0), lang)


def test_growth_sentence_says_the_slopes():
    flat = kvbench.growth_sentence(_result(3.0, 0.001, 0.04))
    assert "0.04 ms more than the one before" in flat and "flat" in flat
    rising = kvbench.growth_sentence(_result(3.0, 0.02, 0.04))
    assert "flat" not in rising and "0.02 ms more" in rising
    noise = kvbench.growth_sentence(_result(1.0, 0.01, -0.002), "pt_BR")
    assert "não cresce" in noise and str(kvbench.LONG_RUN_TOKENS) in noise


def test_measured_slopes_come_from_the_run(lens):
    result = run_kv_benchmark(lens, PROMPT, new_tokens=6)
    assert result.slope_ms_with == pytest.approx(kvbench.fitted_slope_ms(result.per_token_with))
    assert result.slope_ms_without == pytest.approx(kvbench.fitted_slope_ms(result.per_token_without))


def test_gpt2_shapes_benchmark_model_is_built_in_memory_with_random_weights(tiny_checkpoint):
    from attention_lab.core.models import load_model

    target = kvbench.benchmark_model("gpt2-shapes")
    cfg = target.lens.config
    assert (cfg.n_layer, cfg.n_head, cfg.n_embd, cfg.vocab_size, cfg.n_positions) == (12, 12, 768, 50257, 1024)
    assert target.lens.parameter_count() == 124_439_808  # GPT-2 small's count, tied embeddings
    assert target.random_weights and "random weights" in target.name
    ids = target.tokenizer.encode("The big dog bit the mailman yesterday")
    assert ids[:6] == [464, 1263, 3290, 1643, 262, 6920]  # GPT-2's tokenizer: "The big dog bit the mail"
    result = run_kv_benchmark(target.lens, ids, new_tokens=2, repetitions=1)
    assert result.identical and result.cache_bytes == 2 * 12 * 12 * 64 * (len(ids) + 1) * 4
    loaded = load_model(tiny_checkpoint)
    same = kvbench.benchmark_model("loaded", loaded)
    assert same.lens is loaded.lens and not same.random_weights
    with pytest.raises(ValueError, match="gpt2-shapes"):
        kvbench.benchmark_model("gpt2-xl")
    for by_lang in kvbench.KV_TEXTS.values():
        assert set(by_lang) == {"en", "pt_BR"}


def test_the_apps_job_times_gpt2_shapes_on_the_learners_text_with_its_own_tokenizer():
    """What the KV panel's "GPT-2 small's shapes" choice runs on the worker: the model built
    there, the text tokenized by GPT-2's tokenizer, and what the result is read with."""
    from attention_lab.core.jobs import kv_benchmark_target_job

    steps = []
    run = kv_benchmark_target_job("gpt2-shapes", "The big dog bit the mailman yesterday", 2, 1, progress=steps.append)
    assert run.random_weights and "random weights" in run.model_name
    assert run.prompt_ids == run.tokenizer.encode("The big dog bit the mailman yesterday")
    assert run.config.n_embd == 768 and run.result.prompt_length == len(run.prompt_ids)
    assert run.result.new_tokens == 2 and len(steps) == 4  # 2 per mode, as progress


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
