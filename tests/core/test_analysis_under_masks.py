"""The app's analysis under the designer's masks and a head knockout (the app side):
``compute_analysis`` and the fast edit path (core.fast_paths) must give the plain
computation's numbers -- core.analysis.leakage with the same ``allowed`` matrix, full lens
passes -- and a position the mask keeps away from the edit must stay exactly 0."""

from __future__ import annotations

import pytest
import torch

from attention_lab.core.analysis import leakage
from attention_lab.core.fast_paths import edit_update
from attention_lab.core.lens import HeadAblation
from attention_lab.core.masks import allowed_matrix, custom_mask, fit_custom, parse_mask_spec, reach
from attention_lab.core.models import load_model
from attention_lab.core.pipeline import AnalysisRequest, compute_analysis

TEXT = "The big dog bit the mailman. Then the cat slept on the warm mat. It was late"
FIELDS = ("causal", "bidirectional", "causal_layers", "bidirectional_layers")


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


def _spec(model, text):
    return parse_mask_spec(text, model.tokenizer)


def _same(ours, ref):
    for name in FIELDS:
        a, b = getattr(ours, name), getattr(ref, name)
        torch.testing.assert_close(a, b, atol=1e-6, rtol=0, msg=name)
        assert torch.equal(a == 0, b == 0), f"{name}: exact zeros differ"


@pytest.mark.parametrize("mask", ["prefix:4", "window:3", "documents:.", "bidirectional"])
@pytest.mark.parametrize("position", [1, 8, 15])
def test_fast_edit_under_a_mask_equals_plain_leakage(model, mask, position):
    lens = model.lens
    ids = model.tokenizer.encode(TEXT)
    allowed = allowed_matrix(_spec(model, mask), ids)
    fast = edit_update(lens, ids, position, 262, 1, allowed=allowed)
    _same(fast.leakage, leakage(lens, ids, position, 262, allowed=allowed))
    # the edited text's masked map is a full masked forward of it
    edited = list(ids)
    edited[position] = 262
    torch.testing.assert_close(fast.attention_causal, lens(edited, allowed=allowed).attentions[1][0], atol=1e-6, rtol=0)


def test_prefix_reuse_only_where_nothing_before_the_edit_sees_it(model):
    lens = model.lens
    ids = model.tokenizer.encode(TEXT)
    inside = allowed_matrix(_spec(model, "prefix:6"), ids)
    assert edit_update(lens, ids, 3, 262, 0, allowed=inside).reused_positions == 0  # 0..2 see position 3
    assert edit_update(lens, ids, 10, 262, 0, allowed=inside).reused_positions == 10
    window = allowed_matrix(_spec(model, "window:2"), ids)
    assert edit_update(lens, ids, 10, 262, 0, allowed=window).reused_positions == 10


@pytest.mark.parametrize("mask", ["prefix:5", "window:2", "documents:."])
def test_analysis_follows_the_mask_and_its_zeros_are_the_reach_grids(model, mask):
    spec = _spec(model, mask)
    position = 3
    state = compute_analysis(model, AnalysisRequest(1, TEXT, layer=1, position=position, replacement_id=262, mask=spec))
    ids = state.ids
    allowed = allowed_matrix(spec, ids)
    assert torch.equal(state.extras["allowed"], allowed)
    assert state.extras["mask_spec"] == mask
    # the maps: a forbidden cell gets exactly 0 weight, and the maps are the masked forward's
    assert bool((state.attention_causal[:, ~allowed] == 0).all())
    torch.testing.assert_close(state.attention_causal, model.lens(ids, allowed=allowed).attentions[1][0],
                               atol=1e-6, rtol=0)
    # the leakage diff: the positions that moved are exactly those the reach grid predicts
    moved = state.leakage.causal > 0
    predicted = reach(allowed, model.lens.config.n_layer)[:, position]
    assert torch.equal(moved, predicted)
    _same(state.leakage, leakage(model.lens, ids, position, 262, allowed=allowed))


def test_causal_spec_is_gpt2_as_before(model):
    plain = compute_analysis(model, AnalysisRequest(1, TEXT, layer=1))
    causal = compute_analysis(model, AnalysisRequest(1, TEXT, layer=1, mask=parse_mask_spec("causal")))
    assert causal.extras["allowed"] is None
    assert torch.equal(plain.attention_causal, causal.attention_causal)
    assert torch.equal(plain.leakage.causal, causal.leakage.causal)


def test_a_custom_grid_edit_changes_the_analysis(model):
    n = len(model.tokenizer.encode(TEXT))
    grid = torch.ones(n, n, dtype=torch.bool).tril()
    before = compute_analysis(model, AnalysisRequest(1, TEXT, layer=0, position=6, mask=custom_mask(grid)))
    grid[2, 6] = True  # let position 2 look ahead at the edited token
    after = compute_analysis(model, AnalysisRequest(1, TEXT, layer=0, position=6, mask=custom_mask(grid)))
    assert bool((before.attention_causal[:, 2, 6] == 0).all())
    assert bool((after.attention_causal[:, 2, 6] > 0).all())
    assert before.leakage.causal[2] == 0 and after.leakage.causal[2] > 0  # the label now leaks to position 2


def test_a_custom_grid_of_another_length_is_fitted(model):
    drawn = torch.ones(4, 4, dtype=torch.bool)  # bidirectional among the first 4
    fitted = fit_custom(drawn, 6)
    assert bool(fitted[:4, :4].all()) and torch.equal(fitted[4:], torch.ones(6, 6, dtype=torch.bool).tril()[4:])
    assert torch.equal(fit_custom(torch.ones(8, 8, dtype=torch.bool), 3), torch.ones(3, 3, dtype=torch.bool))


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_analysis_with_a_knockout_is_the_ablated_forward(model, mode):
    heads = ((0, 1), (1, 4))
    state = compute_analysis(model, AnalysisRequest(1, TEXT, layer=1, position=5, replacement_id=262,
                                                    knockout=heads, knockout_mode=mode))
    lens, ids = model.lens, state.ids
    ablation = HeadAblation.of(heads, mode, lens.config.n_layer, lens.config.n_head)
    full = lens(ids, ablation=ablation)
    torch.testing.assert_close(state.attention_causal, full.attentions[1][0], atol=1e-6, rtol=0)
    plain = compute_analysis(model, AnalysisRequest(1, TEXT, layer=1, position=5, replacement_id=262))
    assert not torch.allclose(state.attention_causal, plain.attention_causal)  # layer 0's knockout reaches layer 1
    probs = torch.softmax(full.logits[0, -1], -1)
    assert float(state.top_probs[-1, 0]) == pytest.approx(float(probs.max()), abs=1e-5)
    edited = list(ids)
    edited[5] = 262
    pair = lens(torch.tensor([ids, edited]), ablation=ablation, keep_attentions=False)
    moved = (pair.final_hidden[1] - pair.final_hidden[0]).norm(dim=-1) / pair.final_hidden[0].norm(dim=-1)
    torch.testing.assert_close(state.leakage.causal, moved, atol=1e-6, rtol=0)
    assert state.extras["knockout"] == heads
