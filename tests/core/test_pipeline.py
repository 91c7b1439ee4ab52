"""The analysis the panels show (``core.pipeline.compute_analysis``) takes the fast edit path
(core.fast_paths) and drops the attention maps nobody shows: its numbers must still be the
plain computation's -- core.analysis.leakage, full lens passes, every layer's portrait."""

from __future__ import annotations

import pytest
import torch

from attention_lab.core.analysis import head_portrait, leakage
from attention_lab.core.models import load_model
from attention_lab.core.pipeline import AnalysisRequest, compute_analysis

TEXT = "The big dog bit the mailman yesterday while the cat slept on the warm mat"


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


@pytest.mark.parametrize("position, mask_mode", [(None, "-inf"), (5, "-inf"), (0, "-inf"), (9, "zero-score")])
def test_compute_analysis_equals_the_plain_computation(model, position, mask_mode):
    request = AnalysisRequest(request_id=1, text=TEXT, layer=1, position=position, replacement_id=262,
                              mask_mode=mask_mode)
    state = compute_analysis(model, request)
    lens, ids = model.lens, state.ids
    plain = leakage(lens, ids, state.position, state.replacement_id, mask_mode=mask_mode)
    for name in ("causal", "bidirectional", "causal_layers", "bidirectional_layers"):
        ours, ref = getattr(state.leakage, name), getattr(plain, name)
        torch.testing.assert_close(ours, ref, atol=1e-6, rtol=0, msg=name)
        assert torch.equal(ours == 0, ref == 0), f"{name}: exact zeros differ"
    full = lens(ids, causal=True, mask_mode=mask_mode)
    torch.testing.assert_close(state.attention_causal, full.attentions[1][0], atol=1e-6, rtol=0)
    torch.testing.assert_close(state.attention_bidirectional, lens(ids, causal=False).attentions[1][0], atol=1e-6, rtol=0)
    expected = [s for i, a in enumerate(full.attentions) for s in head_portrait(a[0], layer_offset=i)]
    assert [(s.layer, s.head) for s in state.overview] == [(s.layer, s.head) for s in expected]
    for ours, ref in zip(state.overview, expected):
        assert ours.entropy == pytest.approx(ref.entropy, abs=1e-6)
        assert ours.sink_mass == pytest.approx(ref.sink_mass, abs=1e-6)
    assert [s.layer for s in state.portrait] == [1] * 12
