"""Generation one token at a time (core.generation): the cache against the recompute, measured."""

from __future__ import annotations

import threading

import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

from attention_lab.core import jobs
from attention_lab.core.generation import (
    Generation, GenerationError, GenerationSettings, generation_view, stale_cache_run, step_work,
)
from attention_lab.core.job_protocol import Cancelled
from attention_lab.core.lens import GPT2Config
from attention_lab.core.models import load_model

TEXT = "The big dog bit the mailman yesterday"
STEPS = 6


@pytest.fixture(scope="module")
def tiny(tiny_checkpoint):
    return load_model(tiny_checkpoint)


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module", params=["tiny", "demo"])
def model(request, tiny, demo):
    return {"tiny": tiny, "demo": demo}[request.param]


def _run(model, steps=STEPS, **settings) -> Generation:
    run = Generation(model.lens, model.tokenizer.encode(TEXT), GenerationSettings(**settings), model.tokenizer)
    run.advance_to(steps)
    return run


@pytest.mark.parametrize("which", ["tiny_checkpoint", "demo"])
def test_greedy_tokens_are_transformers_generate(which, request):
    from transformers import GPT2LMHeadModel

    from attention_lab.core.models import demo_model_dir

    folder = request.getfixturevalue("tiny_checkpoint") if which == "tiny_checkpoint" else demo_model_dir()
    ours = load_model(folder)
    ids = ours.tokenizer.encode(TEXT)
    hf = GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager", dtype=torch.float32).eval()
    with torch.no_grad():
        expected = hf.generate(torch.tensor([ids]), attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                               max_new_tokens=10, do_sample=False, pad_token_id=0)[0, len(ids):].tolist()
    run = Generation(ours.lens, ids, GenerationSettings(), ours.tokenizer)
    run.advance_to(10)
    assert [s.token_id for s in run.steps] == expected
    assert run.ids == ids + expected


def test_cached_and_recomputed_logits_agree(model):
    run = _run(model)
    assert all(s.logits_max_diff <= 1e-4 for s in run.steps)
    assert all(s.top1_agrees for s in run.steps)
    assert all(max(s.kv_drift) < 1e-5 for s in run.steps)  # rounding only: the cached K/V are the recomputed ones


def test_earlier_rows_change_by_exactly_0_under_the_mask_and_not_without(model):
    causal, bidirectional = _run(model), _run(model, causal=False)
    assert [s.earlier_rows_max_change for s in causal.steps] == [0.0] * STEPS
    assert all(len(s.earlier_rows_change) == model.lens.config.n_layer for s in causal.steps)
    assert all(s.earlier_rows_max_change > 1e-3 for s in bidirectional.steps)


def test_the_new_row_is_the_recomputed_maps_last_row(model):
    run = _run(model)
    last = run.steps[-1]
    for layer in range(model.lens.config.n_layer):
        full = run.attention_map(layer)  # [H, n, n]: the recompute of the last step
        assert full.shape[-1] == last.cache_positions
        torch.testing.assert_close(last.attention_rows[layer], full[:, -1], atol=1e-5, rtol=0)
        assert bool((full.triu(1) == 0).all())
    torch.testing.assert_close(last.attention_rows.sum(-1), torch.ones(last.attention_rows.shape[:2]), atol=1e-5, rtol=0)


def test_inside_the_head_recomposes_the_layers_output(model):
    run = _run(model)
    cfg = model.lens.config
    for layer in range(cfg.n_layer):
        for head in (0, cfg.n_head - 1):
            inside = run.inside_head(STEPS - 1, layer, head)
            assert inside.max_error_vs_layer <= 1e-5 and inside.weights_vs_layer <= 1e-6
            n = run.steps[-1].cache_positions
            assert inside.q.shape == (cfg.head_dim,) and inside.keys.shape == (n, cfg.head_dim)
            assert inside.hidden == 0 and inside.position == n - 1
            torch.testing.assert_close(inside.scores, inside.keys @ inside.q, atol=1e-4, rtol=1e-5)
            torch.testing.assert_close(inside.scaled, inside.scores / cfg.head_dim ** 0.5, atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(inside.weights, torch.softmax(inside.scaled, -1))
            assert abs(float(inside.weights.sum()) - 1) < 1e-5
            torch.testing.assert_close(inside.head_output, inside.weights @ inside.values, atol=1e-5, rtol=1e-5)
            dk = cfg.head_dim
            assert torch.equal(inside.concat[head * dk:(head + 1) * dk], inside.head_output)
    # an earlier step reads the cache as it was then
    first = run.inside_head(0, 1, 0)
    assert first.keys.shape[0] == run.steps[0].cache_positions and first.max_error_vs_layer <= 1e-5


def test_back_then_next_gives_the_same_step(model):
    run = _run(model)
    last = run.steps[-1]
    assert run.back() is last and len(run.ids) == last.position
    again = run.next()
    assert again.same_step(last)
    before = list(run.steps)
    run.advance_to(2)
    assert len(run.steps) == 2 and len(run.ids) == len(run.prompt) + 2
    run.advance_to(STEPS)
    assert all(a.same_step(b) for a, b in zip(before, run.steps))
    run.reset()
    assert run.steps == [] and run.ids == list(run.prompt)
    assert run.next().same_step(before[0])


def test_sampling_is_reproducible_with_its_seed(demo):
    a = _run(demo, 8, temperature=1.5, seed=7)
    b = _run(demo, 8, temperature=1.5, seed=7)
    assert [s.token_id for s in a.steps] == [s.token_id for s in b.steps]
    a.advance_to(3)
    a.advance_to(8)
    assert [s.token_id for s in a.steps] == [s.token_id for s in b.steps]
    others = {tuple(s.token_id for s in _run(demo, 8, temperature=1.5, seed=seed).steps) for seed in range(4)}
    assert len(others) > 1  # the seed matters
    for s in a.steps:  # the probabilities shown are the tempered distribution the token was drawn from
        assert sum(t.p for t in s.top) <= 1 + 1e-6 and s.top[0].p >= s.top[-1].p and 0 < s.p <= 1


@pytest.mark.parametrize("value", [-1, float("nan"), float("inf"), True])
def test_bad_settings_are_refused(value):
    with pytest.raises(GenerationError):
        GenerationSettings(temperature=value)
    with pytest.raises(GenerationError):
        GenerationSettings(seed=-1)


def test_cache_bytes_follow_the_formula(model):
    cfg = model.lens.config
    for s in _run(model).steps:
        assert s.cache_positions == s.position
        assert s.cache_bytes == 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * s.cache_positions * 4


def _counted_macs(fn) -> int:
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() // 2


def test_work_is_what_torch_counts(model):
    """The multiply-adds counted from the config are the ones torch's flop counter sees (minus, without
    the cache, the masked upper triangle, which the lens computes and then throws away)."""
    lens, cfg = model.lens, model.lens.config
    run = _run(model, 3)
    ids, cache = run.ids, run._cache
    work = step_work(cfg, len(ids))
    cached = _counted_macs(lambda: lens.forward([ids[-1]], past=cache, use_cache=True, keep_attentions=True,
                                                keep_hidden=False, logits_positions=slice(-1, None)))
    full = _counted_macs(lambda: lens.forward(ids, keep_attentions=True, keep_hidden=False,
                                              logits_positions=slice(-1, None)))
    n, d = len(ids), cfg.n_embd
    assert cached == work.total_cached
    assert full - cfg.n_layer * 2 * d * (n * (n - 1) // 2) == work.total_recompute
    assert work.attention_recompute == work.attention_cached * (n + 1) // 2
    without_mask = step_work(cfg, n, causal=False)
    assert without_mask.attention_recompute == work.attention_cached * n


def test_work_on_gpt2_small_shapes():
    w = step_work(GPT2Config(), 10)
    assert w.attention_cached == 12 * 2 * 768 * 10
    assert w.total_cached == w.attention_cached + 12 * (4 * 768 ** 2 + 2 * 768 * 3072) + 768 * 50257


def test_without_the_mask_the_stale_cache_drifts(model):
    ids = model.tokenizer.encode(TEXT)
    stale = stale_cache_run(model.lens, ids, STEPS, model.tokenizer)
    drift = stale.kv_drift_per_step
    assert len(drift) == STEPS and all(len(row) == model.lens.config.n_layer for row in drift)
    assert all(row[0] < 1e-5 for row in drift)  # layer 0's K/V see only their own token: nothing to go stale
    assert all(max(row[1:]) > 1e-3 for row in drift)
    assert 0 <= stale.top1_agreement <= 1 and stale.max_prob_diff > 0
    assert stale.top1_agreement == sum(r.top1_agrees for r in stale.records) / STEPS
    assert set(stale.as_json()) >= {"kv_drift_per_step", "top1_agreement", "max_prob_diff"}


def test_the_context_limits_the_steps(tiny):
    ctx = tiny.lens.config.n_positions
    run = Generation(tiny.lens, list(range(ctx - 2)), GenerationSettings(), tiny.tokenizer)
    run.advance_to(2)
    with pytest.raises(GenerationError, match="full"):
        run.next()
    with pytest.raises(GenerationError, match="don't fit"):
        run.advance_to(3)
    with pytest.raises(GenerationError, match="no room"):
        Generation(tiny.lens, list(range(ctx)), GenerationSettings())
    with pytest.raises(GenerationError, match="no tokens"):
        Generation(tiny.lens, [], GenerationSettings())


def test_one_token_prompt_has_no_prefill_and_no_earlier_rows(tiny):
    run = Generation(tiny.lens, [464], GenerationSettings(), tiny.tokenizer)
    first = run.next()
    assert first.position == 1 and first.cache_positions == 1 and first.earlier_rows_max_change == 0
    assert run.inside_head(0, 0, 0).weights.tolist() == [1.0]


def test_bad_layer_head_and_step_are_one_sentence(tiny):
    run = _run(tiny, 2)
    for args, words in (((5, 0, 0), "step 5"), ((0, 2, 0), "layer 2"), ((0, 0, 12), "head 12")):
        with pytest.raises(GenerationError, match=words):
            run.inside_head(*args)


def test_the_view_reuses_its_generation_and_starts_over_when_the_inputs_change(tiny):
    ids = tiny.tokenizer.encode(TEXT)
    done = []
    view = jobs.generation_job(None, tiny.lens, tiny.tokenizer, ids, GenerationSettings(), 3, 1, 2,
                               progress=done.append)
    assert done == [(1, 3), (2, 3), (3, 3)]
    assert len(view.steps) == 3 and view.ids == tuple(ids + [s.token_id for s in view.steps])
    assert view.attention.shape == (12, len(ids) + 2, len(ids) + 2)
    assert view.inside is not None and (view.inside.layer, view.inside.head, view.inside.step) == (1, 2, 2)
    assert view.totals["total_cached"] == sum(s.work.total_cached for s in view.steps)
    more = jobs.generation_job(view.generation, tiny.lens, tiny.tokenizer, ids, GenerationSettings(), 4, 0, 0)
    assert more.generation is view.generation and more.steps[:3] == view.steps  # the same records, not redone
    other = jobs.generation_job(view.generation, tiny.lens, tiny.tokenizer, ids, GenerationSettings(causal=False),
                                1, 0, 0)
    assert other.generation is not view.generation and len(other.steps) == 1
    back = jobs.generation_job(more.generation, tiny.lens, tiny.tokenizer, ids, GenerationSettings(), 0, 0, 0)
    assert back.steps == () and back.inside is None and back.attention.shape == (12, len(ids) - 1, len(ids) - 1)


def test_the_job_stops_between_steps_when_cancelled(tiny):
    cancel = threading.Event()
    ids = tiny.tokenizer.encode(TEXT)

    def stop_after_one(_progress):
        cancel.set()

    with pytest.raises(Cancelled):
        jobs.generation_job(None, tiny.lens, tiny.tokenizer, ids, GenerationSettings(), 5, 0, 0,
                            cancel=cancel, progress=stop_after_one)
