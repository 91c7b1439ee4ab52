"""The fast edit update must give the plain computation's numbers (core.analysis.leakage and
full forwards of the edited text), with the exact zeros of the causal mask kept exact."""

from __future__ import annotations

import pytest
import torch

from attention_lab.core.analysis import leakage
from attention_lab.core.fast_paths import EditBase, edit_update, prepare_edit_base
from attention_lab.core.models import load_model

TOL = 1e-6
FIELDS = ("causal", "bidirectional", "causal_layers", "bidirectional_layers")


@pytest.fixture(scope="module")
def lens(tiny_checkpoint):
    return load_model(tiny_checkpoint).lens


def _ids(n: int, seed: int) -> list[int]:
    return torch.randint(0, 50257, (n,), generator=torch.Generator().manual_seed(seed)).tolist()


def _assert_same_leakage(fast, plain):
    assert (fast.position, fast.replacement_id, fast.original_id, fast.mask_mode) == (
        plain.position, plain.replacement_id, plain.original_id, plain.mask_mode)
    for name in FIELDS:
        ours, ref = getattr(fast, name), getattr(plain, name)
        assert ours.shape == ref.shape, name
        torch.testing.assert_close(ours, ref, atol=TOL, rtol=0, msg=name)
        # "no change" must stay an exact 0, and a real change must not become one
        assert torch.equal(ours == 0, ref == 0), f"{name}: exact zeros differ"


@pytest.mark.parametrize("mode", ["-inf", "finfo.min", "-1e9", "zero-score", "zero-after-softmax"])
@pytest.mark.parametrize("n, position", [(17, 16), (17, 9), (17, 0), (40, 38), (1, 0)])
def test_fast_leakage_equals_plain(lens, mode, n, position):
    ids = _ids(n, seed=n + position)
    replacement = (ids[position] + 4321) % 50257
    plain = leakage(lens, ids, position, replacement, mask_mode=mode)
    fast = edit_update(lens, ids, position, replacement, layer=1, mask_mode=mode)
    _assert_same_leakage(fast.leakage, plain)


@pytest.mark.parametrize("mode", ["-inf", "zero-score"])
def test_maps_are_the_edited_texts(lens, mode):
    ids = _ids(23, seed=3)
    position, layer = 19, 1
    fast = edit_update(lens, ids, position, 777, layer=layer, mask_mode=mode)
    edited = list(ids)
    edited[position] = 777
    assert fast.ids == edited
    causal = lens(edited, causal=True, mask_mode=mode).attentions[layer][0]
    bidirectional = lens(edited, causal=False).attentions[layer][0]
    torch.testing.assert_close(fast.attention_causal, causal, atol=TOL, rtol=0)
    torch.testing.assert_close(fast.attention_bidirectional, bidirectional, atol=TOL, rtol=0)
    assert torch.equal(fast.attention_causal == 0, causal == 0)  # the masked triangle is exactly 0


def test_prefix_is_reused_and_exactly_unchanged_under_the_mask(lens):
    ids = _ids(30, seed=5)
    position = 25
    fast = edit_update(lens, ids, position, 42, layer=0)
    assert fast.reused_positions == position
    leak = fast.leakage
    assert torch.all(leak.causal_layers[:, :position] == 0) and torch.all(leak.causal[:position] == 0)
    assert leak.causal_max_before == 0.0
    assert torch.all(leak.causal_layers[1:, position:] > 0)  # the edit itself and what follows do move
    assert leak.bidirectional_max_before > 0  # without the mask the past moves


@pytest.mark.parametrize("mode", ["zero-score", "zero-after-softmax"])
def test_leaking_masks_get_no_prefix_reuse(lens, mode):
    ids = _ids(20, seed=6)
    fast = edit_update(lens, ids, 15, 42, layer=0, mask_mode=mode)
    assert fast.reused_positions == 0
    assert fast.leakage.causal_max_before > 0  # these masks let the future leak: the past moves


def test_a_base_is_reused_only_for_its_own_text_layer_and_mask(lens):
    ids = _ids(21, seed=7)
    base = prepare_edit_base(lens, ids, layer=1)
    with_base = edit_update(lens, ids, 18, 99, layer=1, base=base)
    without = edit_update(lens, ids, 18, 99, layer=1)
    for name in FIELDS:
        assert torch.equal(getattr(with_base.leakage, name), getattr(without.leakage, name))
    # a base of another text (or layer) must not leak into the result
    other = prepare_edit_base(lens, _ids(21, seed=8), layer=1)
    wrong_layer = prepare_edit_base(lens, ids, layer=0)
    plain = leakage(lens, ids, 18, 99)
    _assert_same_leakage(edit_update(lens, ids, 18, 99, layer=1, base=other).leakage, plain)
    _assert_same_leakage(edit_update(lens, ids, 18, 99, layer=1, base=wrong_layer).leakage, plain)
    assert edit_update(lens, ids, 18, 99, layer=1, base=wrong_layer).attention_causal.shape == (12, 21, 21)


def test_base_from_outputs_the_caller_already_has(lens):
    ids = _ids(12, seed=9)
    causal = lens(ids, keep_attentions=[1], keep_hidden=True, use_cache=True, compute_logits=False)
    bidi = lens(ids, causal=False, keep_attentions=[1], keep_hidden=True, compute_logits=False)
    base = EditBase.from_outputs(ids, 1, "-inf", causal, bidi)
    fast = edit_update(lens, ids, 10, 5, layer=1, base=base)
    assert fast.reused_positions == 10
    _assert_same_leakage(fast.leakage, leakage(lens, ids, 10, 5))
    no_hidden = lens(ids, keep_attentions=[1], keep_hidden=False)
    with pytest.raises(ValueError, match="hidden states"):
        EditBase.from_outputs(ids, 1, "-inf", no_hidden, bidi)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(position=12), "out of range"),
        (dict(position=-1), "out of range"),
        (dict(replacement_id=50257), "not a token id"),
        (dict(layer=2), "layer"),
    ],
)
def test_bad_arguments_are_clear_errors(lens, kwargs, message):
    args = dict(position=3, replacement_id=7, layer=0) | kwargs
    with pytest.raises(ValueError, match=message):
        edit_update(lens, _ids(12, seed=1), **args)
    with pytest.raises(ValueError, match="empty"):
        edit_update(lens, [], 0, 1, 0)
