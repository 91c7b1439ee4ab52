"""The Lab tour's core: step order, the progress state machine, and every step's measured fact.

Facts are checked against direct computations on the tiny random-weight checkpoint, so a
canned or mis-wired number fails here.
"""

from __future__ import annotations

import json

import pytest
import torch

from attention_lab.core import analysis, roles
from attention_lab.core.kvbench import run_kv_benchmark
from attention_lab.core.lab import SEED_TEXT
from attention_lab.core.tour import (
    FACTS,
    STEP_KEYS,
    STEPS,
    TourContext,
    TourProgress,
    compute_fact,
    head_reach,
)


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(str(tiny_checkpoint))


@pytest.fixture(scope="module")
def ctx(model) -> TourContext:
    return TourContext.from_model(model, SEED_TEXT)


# ---------------------------------------------------------------------------- the steps
def test_the_five_lab_steps_come_in_order_with_the_three_prose_points_between():
    lab = [s.lab_step for s in STEPS if s.lab_step is not None]
    assert lab == [1, 2, 3, 4, 5]
    assert len(STEPS) == 12  # the five lab steps, the three prose points, budget and induction, the two lessons beyond the chapter
    assert {s.key for s in STEPS if s.lab_step is None} == {"budget", "why_inf", "multihead_cost", "wo_mixes", "induction",
                                                             "mask_designer", "knockout"}
    # the two lessons beyond the chapter come after its five steps
    assert list(STEP_KEYS)[-2:] == ["mask_designer", "knockout"]
    order = list(STEP_KEYS)
    # the chapter's first idea (a fixed budget) opens the tour, in the head grid's budget view
    assert STEPS[0].key == "budget" and STEPS[0].view == "budget" and STEPS[0].panel == "panel.head_grid"
    # each prose point sits next to the lab step it explains
    assert order.index("why_inf") == order.index("mask") + 1
    assert order.index("maps") < order.index("multihead_cost") < order.index("wo_mixes") < order.index("leakage")
    assert set(FACTS) == set(STEP_KEYS)
    # only step 5 offers the benchmark, and the portrait is of layer 0 as in the chapter
    assert [s.key for s in STEPS if s.offers_benchmark] == ["kvcache"]
    assert next(s for s in STEPS if s.key == "portrait").layer == 0


# ---------------------------------------------------------------------------- the state machine
def test_next_and_back_stay_within_bounds_and_next_on_the_last_step_finishes():
    p = TourProgress()
    assert p.index == 0 and p.at_start and not p.finished
    assert p.back() is False and p.index == 0
    for i in range(1, len(STEPS)):
        assert p.next() is True
        assert p.index == i
    assert p.at_end and not p.finished
    assert p.next() is True and p.finished and p.index == len(STEPS) - 1
    assert p.next() is False  # already finished: nothing changes
    assert p.back() is True and p.index == len(STEPS) - 2 and not p.finished


def test_goto_by_index_or_key_and_rejects_unknown_steps():
    p = TourProgress()
    p.goto("leakage")
    assert p.step.key == "leakage"
    p.goto(0)
    assert p.step.key == "budget"
    with pytest.raises(ValueError):
        p.goto(len(STEPS))
    with pytest.raises(ValueError):
        p.goto("nonsense")
    p.goto(len(STEPS) - 1)
    p.next()
    assert p.finished
    p.restart()
    assert p.index == 0 and not p.finished


def test_progress_round_trips_through_a_dict_and_json():
    p = TourProgress()
    p.goto("portrait")
    data = json.loads(json.dumps(p.to_dict()))
    q = TourProgress.from_dict(data)
    assert (q.index, q.step.key, q.finished) == (p.index, "portrait", False)
    p.goto(len(STEPS) - 1)
    p.next()
    q = TourProgress.from_dict(p.to_dict())
    assert q.finished and q.at_end


def test_resume_from_a_saved_dict_as_qsettings_returns_it():
    # the INI backend gives strings back; the key wins over a stale index
    q = TourProgress.from_dict({"step": "wo_mixes", "index": "2", "finished": "false"})
    assert q.step.key == "wo_mixes" and not q.finished
    q = TourProgress.from_dict({"step": None, "index": "5", "finished": "true"})
    assert q.index == 5 and q.finished
    for junk in (None, {}, {"step": 3, "index": "x"}, {"index": 99}, {"index": -1}, "garbage"):
        q = TourProgress.from_dict(junk)  # type: ignore[arg-type]
        assert q.index == 0 and not q.finished


# ---------------------------------------------------------------------------- the facts
def test_mask_fact_counts_the_triangle_and_measures_exact_zero_on_the_future(ctx, model):
    fact = compute_fact("mask", ctx)
    n = len(model.tokenizer.encode(SEED_TEXT))
    assert fact.key == "mask"
    v = fact.values
    assert (v["n"], v["cells"], v["allowed"], v["forbidden"]) == (n, n * n, n * (n + 1) // 2, n * (n - 1) // 2)
    assert v["future_weight"] == 0.0  # e^−∞ = 0, exactly
    assert 0 <= v["row_error"] < 1e-5
    assert v["heads"] == model.lens.config.n_head
    assert fact.block is not None and fact.block.count("\n") == min(n, 8)  # header + one row per token
    assert "." in fact.block and fact.block.splitlines()[1].count(".") == min(n, 8) - 1


def test_why_inf_fact_matches_the_mask_mode_report(ctx, model):
    fact = compute_fact("why_inf", ctx)
    assert fact.key == "why_inf"
    v = fact.values
    replacement = ctx.replacement()
    rows = {r.mode: r for r in analysis.mask_mode_report(model.lens, ctx.ids, 0, ctx.n - 1, replacement)}
    assert v["inf_future"] == 0.0 and v["inf_leak"] == 0.0
    assert v["zero_future"] == rows["zero-score"].future_weight > 0.01  # e⁰ = 1: the future gets weight
    assert v["zero_leak"] == rows["zero-score"].max_leak_before > 0
    assert v["after_error"] == rows["zero-after-softmax"].max_row_sum_error > 0.01  # rows no longer sum to 1
    assert v["e9_future"] == 0.0 and v["finfo_future"] == 0.0
    assert v["pos"] == ctx.n - 1 and v["new"] == model.tokenizer.token_texts([replacement])[0]


def test_maps_fact_compares_causal_and_bidirectional(ctx, model):
    fact = compute_fact("maps", ctx)
    v = fact.values
    assert v["causal_future"] == 0.0 and v["causal_share_pct"] == 0.0 and v["first_self"] == 1.0
    out = model.lens(ctx.ids, causal=False, keep_attentions=[0], keep_hidden=False, compute_logits=False)
    bidir = out.attentions[0][0].double()
    n = ctx.n
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), 1)
    share = (bidir * future).sum(-1)[:, : n - 1].mean(-1)
    assert v["bidir_head"] == int(share.argmax())
    assert v["bidir_max_pct"] == pytest.approx(float(share.max()))
    assert v["bidir_mean_pct"] == pytest.approx(float(share.mean()))
    assert 0 < v["bidir_mean_pct"] < 1


def test_multihead_cost_fact_counts_the_models_real_parameters(ctx, model):
    fact = compute_fact("multihead_cost", ctx)
    v = fact.values
    cfg = model.lens.config
    d, h = cfg.n_embd, cfg.n_head
    layer = model.lens.weights.layers[0]
    assert (v["heads"], v["dk"], v["n"]) == (h, cfg.head_dim, ctx.n)  # from the reshape's real output
    assert v["width"] == h * cfg.head_dim == d
    assert v["c_attn"] == layer.c_attn_w.numel() + layer.c_attn_b.numel() == d * 3 * d + 3 * d
    assert v["c_proj"] == d * d + d
    assert v["per_layer"] == v["single"]  # H heads × d_k costs what 1 head × d costs
    assert v["multiplied"] == d * 3 * h * d + 3 * h * d + h * d * d + d
    assert v["ratio"] == pytest.approx(v["multiplied"] / v["per_layer"]) and v["ratio"] > h - 1
    assert v["total"] == cfg.n_layer * v["per_layer"]
    assert v["score_macs"] == v["single_score_macs"] == ctx.n * ctx.n * d
    # C2: the chapter's 768 = 12 × 64 beside this model's own split
    assert (v["chapter_d"], v["chapter_heads"], v["chapter_dk"]) == (768, 12, 64)
    assert v["same_as_chapter"] is (d == 768 and h == 12)


def test_wo_fact_counts_the_dimensions_each_head_reaches(ctx, model):
    cfg = model.lens.config
    fact = compute_fact("wo_mixes", ctx)
    v = fact.values
    # with c_proj a head reaches every output dimension; without it exactly its own d_k slice
    assert fact.key == "wo_mixes"
    assert v["with_min"] == v["with_max"] == cfg.n_embd
    assert v["without_min"] == v["without_max"] == cfg.head_dim
    assert v["identity_outside_pct"] == 0.0
    assert 0.5 < v["outside_pct"] < 1.0
    reach = head_reach(model.lens, ctx.ids, 1)  # another layer: the residual stream entering it
    assert len(reach) == cfg.n_head
    for r in reach:
        assert r.dims_identity == cfg.head_dim and r.outside_identity == 0.0
        assert r.dims_with_wo == cfg.n_embd
        assert (r.slice_lo, r.slice_hi) == (r.head * cfg.head_dim, (r.head + 1) * cfg.head_dim - 1)


def test_wo_identity_really_is_the_attention_block_without_c_proj(ctx, model):
    """The block lens behind the W^O fact reproduces the real model's attention output."""
    from attention_lab.core.tour import _block_lens, _block_output

    block, positions = _block_lens(model.lens, ctx.ids, 1)
    out = _block_output(block, positions, identity=False) - block.weights.wte  # attention block alone
    full = model.lens(ctx.ids, keep_attentions=False, keep_hidden=True, compute_logits=False)
    h1 = full.hidden_states[0, 1]
    # h2 = h1 + attn + mlp: recompute the MLP on h1 + attn and compare
    lw = model.lens.weights.layers[1]
    x = h1 + out
    m = torch.nn.functional.layer_norm(x, (x.shape[-1],), lw.ln_2_w, lw.ln_2_b, model.lens.config.layer_norm_epsilon)
    m = torch.nn.functional.gelu(m @ lw.c_fc_w + lw.c_fc_b, approximate="tanh") @ lw.mlp_proj_w + lw.mlp_proj_b
    torch.testing.assert_close(x + m, full.hidden_states[0, 2], atol=1e-5, rtol=1e-5)


def test_leakage_fact_is_exact_zero_before_the_edit_and_not_without_the_mask(ctx, model):
    fact = compute_fact("leakage", ctx)
    assert fact.key == "leakage"
    v = fact.values
    replacement = ctx.replacement()
    direct = analysis.leakage(model.lens, ctx.ids, ctx.n - 1, replacement)
    assert v["causal_max"] == 0.0 and v["causal_layers_max"] == 0.0
    assert v["bidir_first"] == float(direct.bidirectional[0]) > 0
    assert v["bidir_max"] == direct.bidirectional_max_before
    assert v["before"] == f"0–{ctx.n - 2}"
    first = compute_fact("leakage", TourContext.from_model(model, SEED_TEXT, position=0))
    assert first.key == "leakage.first" and first.values["bidir_after"] > 0


def test_portrait_fact_names_heads_by_role_with_their_numbers(ctx, model):
    out = model.lens(ctx.ids, keep_attentions=[0], keep_hidden=False, compute_logits=False)
    stats = analysis.head_portrait(out.attentions[0][0])
    fact = compute_fact("portrait", ctx)
    v = fact.values
    focus = min(stats, key=lambda s: s.entropy)
    assert (v["focus_head"], v["focus_sink_pct"]) == (focus.head, focus.sink_mass)
    # positional = the rule of core.roles: most weight on one offset back, named with that offset and share
    table = roles.role_map(stats, ctx.n)
    positional = [r.head for r in table if "positional" in r.roles]
    assert v["n_positional"] == len(positional)
    if positional:
        assert fact.key == "portrait"
        items = fact.lists["positional"][1]
        assert sorted(item["head"] for item in items) == sorted(positional)
        by_head = {s.head: s for s in stats}
        for item in items:
            assert (item["offset"], item["share_pct"]) == (by_head[item["head"]].offset, by_head[item["head"]].offset_share)
            assert item["variant"] == ("previous" if item["offset"] == 1 else "back")
    else:  # none in this layer: the fact names the nearest layer's, or says there are none
        assert fact.key in ("portrait.nearest", "portrait.nowhere")
    assert v["n_previous_token"] == sum("previous-token" in r.roles for r in table)
    assert v["n_sinks"] == sum("sink" in r.roles for r in table)
    where = fact.data["where"]
    assert set(where) == set(roles.ROLES) and all(w.layer == 0 for w in where.values())
    # loosened thresholds name heads, each listed with its own numbers
    loose = roles.RoleRules(sink=0.0)  # the portrait panel's controls, passed by the tour
    named = compute_fact("portrait", TourContext.from_model(model, SEED_TEXT, rules=loose))
    item_key, items = named.lists["sinks"]
    assert item_key == "sink" and len(items) == len(stats)
    by_head = {s.head: s for s in stats}
    for item in items:
        assert item["sink_pct"] == by_head[item["head"]].sink_mass


def test_budget_fact_is_the_views_numbers_and_follows_the_text(ctx, model):
    from attention_lab.core.budget import budget_rows, default_query

    fact = compute_fact("budget", ctx)
    assert fact.key == "budget"
    v = fact.values
    attention = model.lens(ctx.ids, keep_attentions=[0], keep_hidden=False, compute_logits=False).attentions[0][0]
    query = default_query(attention, ctx.tokens)
    assert ctx.tokens[query].strip("␣") == "bit" and v["query"] == query and v["token"] == "bit"  # the whole word
    rows = budget_rows(attention, query)
    assert v["avg_top"] == rows.average_top_weight and v["chosen"] == len(rows.keys_chosen)
    assert v["avg_entropy"] == rows.average_entropy and v["heads"] == model.lens.config.n_head
    other = compute_fact("budget", TourContext.from_model(model, "A small cat slept on the warm mat all day"))
    assert other.values["token"] != v["token"] and other.values["avg_top"] != v["avg_top"]
    assert compute_fact("budget", TourContext.from_model(model, "Hi")).key in ("budget", "too_short")


def test_induction_step_text_repeats_token_for_token_and_the_fact_is_honest(model):
    from attention_lab.core.tour import INDUCTION_WORDS, repeated_words_text

    text = repeated_words_text(model.tokenizer)
    ids = model.tokenizer.encode(text)
    assert len(ids) == 2 * INDUCTION_WORDS and ids[:INDUCTION_WORDS] == ids[INDUCTION_WORDS:]
    assert repeated_words_text(model.tokenizer, seed=1) != text
    ctx = TourContext.from_model(model, text)
    scores = analysis.head_detector(model.lens, ids, "induction")
    strict = compute_fact("induction", TourContext.from_model(model, text, rules=roles.RoleRules(induction=0.99)))
    assert strict.key == "induction.none" and strict.values["n_induction"] == 0  # none qualifies: said so
    v = strict.values
    assert v["best_score"] == float(scores.max())
    assert float(scores[v["best_layer"], v["best_head"]]) == v["best_score"]
    assert v["maximum"] == roles.induction_reference(ids)["maximum"]
    loose = compute_fact("induction", TourContext.from_model(model, text, rules=roles.RoleRules(induction=0.0)))
    assert loose.key == "induction" and loose.values["n_induction"] == scores.numel()
    assert loose.lists["heads"][1][0]["score"] == v["best_score"]  # strongest first
    assert compute_fact("induction", ctx).key in ("induction", "induction.none")
    assert compute_fact("induction", TourContext.from_model(model, SEED_TEXT)).key == "induction.no_repeat"


def test_kv_fact_gives_the_speedup_only_after_the_benchmark_ran(ctx, model):
    pending = compute_fact("kvcache", ctx)
    assert pending.key == "kvcache.pending"
    assert "speedup" not in pending.values
    assert pending.values["causal_kv_max"] == 0.0
    # n vs n+1 (ids alone vs ids + the appended token): rounding at most, never information
    assert 0.0 <= pending.values["n_vs_n1_max"] < 1e-5
    assert pending.values["bidir_layer0"] == 0.0 and pending.values["bidir_max"] > 0
    stability = analysis.kv_stability(model.lens, ctx.ids)
    assert pending.values["bidir_max"] == max(stability.max_per_layer("bidirectional")[1:])
    result = run_kv_benchmark(model.lens, ctx.ids, 5)
    done = compute_fact("kvcache", TourContext.from_model(model, SEED_TEXT, kv_result=result))
    # the wording follows the measured speedup (a busy machine can make it unclear): not a timed test
    assert done.key == ("kvcache.done" if result.speedup >= 1.2 else "kvcache.done.unclear")
    assert done.values["speedup"] == result.speedup and done.values["identical"] is True
    assert done.values["clear"] == (result.speedup >= 1.2)
    assert done.values["slope_ms_without"] == result.slope_ms_without
    assert done.values["new_tokens"] == 5 and done.values["cache_bytes"] == result.cache_bytes
    # a result of another prompt is not this text's speedup
    other = run_kv_benchmark(model.lens, ctx.ids[:3], 2)
    assert compute_fact("kvcache", TourContext.from_model(model, SEED_TEXT, kv_result=other)).key == "kvcache.pending"


def test_one_token_texts_get_a_fact_too(model):
    one = TourContext.from_model(model, "Hello")
    assert len(one.ids) == 1
    for step in STEPS:
        fact = compute_fact(step, one)
        assert fact.key  # no step crashes on the shortest text
    assert compute_fact("leakage", one).key == "too_short"
    assert compute_fact("mask", one).values["forbidden"] == 0


def test_portrait_fact_on_the_demo_model_names_layer_0s_previous_token_and_sink_heads():
    """The demo's layer 0 holds the chapter's heads: the step names the positional ones, each with the
    offset it looks at and its share, and the sink beside them."""
    from attention_lab.core.models import load_model

    demo = load_model("demo")
    fact = compute_fact("portrait", TourContext.from_model(demo, SEED_TEXT))
    assert fact.key == "portrait" and fact.values["layer"] == 0 and fact.values["n_positional"] >= 1
    here = fact.data["where"]["positional"].here
    assert [item["head"] for item in fact.lists["positional"][1]] == [h.head for h in here]
    assert any(item["offset"] == 1 and item["variant"] == "previous" for item in fact.lists["positional"][1])
    assert all(item["share_pct"] >= 0.4 for item in fact.lists["positional"][1])
    assert fact.values["n_previous_token"] >= 1 and fact.values["n_sinks"] >= 1
    # a long text takes the per-layer path and agrees with the one-forward path
    from attention_lab.core import tour

    short = tour._all_portraits(TourContext.from_model(demo, SEED_TEXT))
    budget = tour.ATTENTION_BUDGET
    try:
        tour.ATTENTION_BUDGET = 0
        per_layer = tour._all_portraits(TourContext.from_model(demo, SEED_TEXT))
    finally:
        tour.ATTENTION_BUDGET = budget
    assert [(s.layer, s.head) for s in per_layer] == [(s.layer, s.head) for s in short]
    assert [s.mean_distance for s in per_layer] == pytest.approx([s.mean_distance for s in short])


def test_mask_designer_fact_is_the_measured_reach_and_cache_of_a_window(ctx, model):
    from attention_lab.core.masks import allowed_matrix, parse_mask_spec, reach

    fact = compute_fact("mask_designer", ctx)
    v = fact.values
    allowed = allowed_matrix(parse_mask_spec(f"window:{v['w']}"), ctx.ids)
    grid = reach(allowed, model.lens.config.n_layer)
    # how far back the last position is reached, from the reach grid itself
    assert v["back"] == min(ctx.n - 1, model.lens.config.n_layer * (v["w"] - 1))
    assert bool(grid[ctx.n - 1, ctx.n - 1 - v["back"]])
    assert v["keep"] == v["w"] and v["kv_max"] == 0.0 and v["leaks"] is False and v["confirmed"] is True


def test_knockout_fact_names_the_head_whose_knockout_raises_the_loss_most(ctx, model):
    from attention_lab.core.ablation import knockout

    fact = compute_fact("knockout", ctx)
    v = fact.values
    layer, head = v["layer"], v["head"]  # two numbers, never "0.1" (reads as a decimal)
    alone = knockout(model.lens, ctx.ids, [(layer, head)], "zero")
    assert v["before"] == pytest.approx(alone.loss_before, abs=1e-5)
    assert v["after"] == pytest.approx(alone.loss_after, abs=1e-5)
    assert v["heads"] == model.lens.config.n_layer * model.lens.config.n_head
    assert fact.key == "knockout" and v["mask"] == "causal"


def test_knockout_fact_ranks_heads_under_the_mask_the_analysis_runs_with(ctx, model):
    """The tour's knockout step follows the designer's step: its ranking must use that window, as the
    knockout panel does, and say so."""
    from dataclasses import replace

    from attention_lab.core.ablation import knockout
    from attention_lab.core.masks import allowed_matrix, parse_mask_spec

    allowed = allowed_matrix(parse_mask_spec("window:2"), ctx.ids)
    fact = compute_fact("knockout", replace(ctx, allowed=allowed, mask_spec="window:2"))
    v = fact.values
    assert fact.key == "knockout.masked" and v["mask"] == "window:2"
    layer, head = v["layer"], v["head"]  # two numbers, never "0.1" (reads as a decimal)
    windowed = knockout(model.lens, ctx.ids, [(layer, head)], "zero", allowed=allowed)
    causal = knockout(model.lens, ctx.ids, [(layer, head)], "zero")
    assert v["before"] == pytest.approx(windowed.loss_before, abs=1e-5)
    assert v["after"] == pytest.approx(windowed.loss_after, abs=1e-5)
    assert abs(windowed.loss_before - causal.loss_before) > 1e-4  # the mask did change what was measured


@pytest.mark.parametrize("drift, variant", [([0.0, 0.0], "exact"), ([0.0, 3e-8], None)])
def test_kvcache_fact_says_the_same_to_the_last_bit_when_the_drift_is_exactly_0(ctx, monkeypatch, drift, variant):
    """Never "differ by at most 0": an exact 0 is said as the same keys and values to the last bit."""
    from attention_lab.core import tour

    monkeypatch.setattr(tour.analysis, "kv_append_drift", lambda *args: drift)
    fact = compute_fact("kvcache", ctx)
    item_key, (item,) = fact.lists["n_vs_n1"]
    assert item_key == "kvcache_drift" and item["variant"] == variant and item["n_vs_n1_max"] == max(drift)
    assert fact.key == ("kvcache.pending.one_layer" if ctx.lens.config.n_layer == 1 else "kvcache.pending")
