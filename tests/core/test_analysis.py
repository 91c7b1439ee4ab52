"""The analyses: hand-made matrices with known answers, and the chapter's claims on a real forward."""

from __future__ import annotations

import math

import pytest
import torch

from attention_lab.core import analysis
from attention_lab.core.analysis import (
    ascii_mask,
    detector_scores,
    duplicate_token_pattern,
    head_detector,
    head_portrait,
    induction_pattern,
    induction_scores,
    induction_scores_on_repeats,
    kv_stability,
    leakage,
    mask_mode_report,
    previous_token_pattern,
    previous_token_scores,
    relative_change,
    repeated_random_tokens,
)
from attention_lab.core.lens import MaskMode


@pytest.fixture(scope="module")
def tiny(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(tiny_checkpoint)


@pytest.fixture(scope="module")
def ids(tiny):
    return tiny.tokenizer.encode("The big dog bit the mailman yesterday")


# ---------------------------------------------------------------------------- hand-made maps
def one_hot_rows(n: int, target) -> torch.Tensor:
    """Row i puts all its weight on key target(i)."""
    a = torch.zeros(n, n)
    for i in range(n):
        a[i, target(i)] = 1.0
    return a


def uniform_causal(n: int) -> torch.Tensor:
    return torch.tril(torch.ones(n, n)) / torch.arange(1, n + 1)[:, None]


def test_sink_head_known_values():
    n = 5
    (s,) = head_portrait(one_hot_rows(n, lambda i: 0)[None])
    assert s.sink_mass == 1.0
    assert s.entropy == 0.0  # 0·ln0 = 0: one-hot rows have zero entropy, not NaN
    assert s.mean_distance == pytest.approx((1 + 2 + 3 + 4) / 4)
    assert s.previous_token == pytest.approx(0.25)  # only row 1's key 0 is also its predecessor
    assert s.current_token == 0.0


def test_previous_token_head_known_values():
    (s,) = head_portrait(one_hot_rows(6, lambda i: max(i - 1, 0))[None])
    assert s.previous_token == 1.0 and s.mean_distance == 1.0 and s.entropy == 0.0
    assert s.sink_mass == pytest.approx(1 / 5)


def test_current_token_head_known_values():
    (s,) = head_portrait(torch.eye(4)[None])
    assert (s.current_token, s.mean_distance, s.sink_mass, s.previous_token) == (1.0, 0.0, 0.0, 0.0)


def test_uniform_head_is_broad_with_the_maximal_entropy():
    n = 7
    (s,) = head_portrait(uniform_causal(n)[None])
    expected_entropy = sum(math.log(i + 1) for i in range(1, n)) / (n - 1)
    assert s.entropy == pytest.approx(expected_entropy, abs=1e-6)
    assert s.mean_distance == pytest.approx(sum(i / 2 for i in range(1, n)) / (n - 1), abs=1e-6)
    assert s.sink_mass == pytest.approx(sum(1 / (i + 1) for i in range(1, n)) / (n - 1), abs=1e-6)


def test_a_head_two_tokens_back_and_two_tokens_are_enough():
    # looks two tokens back (row 1 has only key 0): sink 0.5, previous 0.25, entropy 0
    a = one_hot_rows(5, lambda i: max(i - 2, 0))
    (s,) = head_portrait(a[None])
    assert (s.sink_mass, s.previous_token, s.current_token, s.entropy) == (0.5, 0.25, 0.0, 0.0)
    assert s.mean_distance == pytest.approx((1 + 2 + 2 + 2) / 4)
    (half,) = head_portrait(torch.tensor([[[1.0, 0.0], [0.5, 0.5]]]))
    assert half.entropy == pytest.approx(math.log(2))


def test_the_portrait_carries_numbers_only_the_roles_come_from_one_place():
    """One role system: the chapter's (core.roles); a head's numbers carry no label of their own."""
    (s,) = head_portrait(one_hot_rows(5, lambda i: 0)[None])
    assert not hasattr(s, "role")


def test_row_zero_is_ignored():
    a = one_hot_rows(4, lambda i: max(i - 1, 0))
    b = a.clone()
    b[0] = torch.tensor([0.25, 0.25, 0.25, 0.25])  # only possible without the mask; never counted
    assert head_portrait(a[None]) == head_portrait(b[None])


def test_layers_and_heads_are_numbered():
    stack = torch.stack([torch.stack([torch.eye(3), one_hot_rows(3, lambda i: 0)])] * 2)  # [2, 2, 3, 3]
    stats = head_portrait(stack, layer_offset=5)
    assert [(s.layer, s.head, s.current_token, s.sink_mass) for s in stats] == [
        (5, 0, 1.0, 0.0), (5, 1, 0.0, 1.0), (6, 0, 1.0, 0.0), (6, 1, 0.0, 1.0)
    ]


def test_portrait_needs_two_tokens_and_square_maps():
    with pytest.raises(ValueError, match="at least 2 tokens"):
        head_portrait(torch.ones(3, 1, 1))
    with pytest.raises(ValueError, match=r"\[H, n, n\]"):
        head_portrait(torch.ones(3, 4, 5))
    with pytest.raises(ValueError):
        head_portrait(torch.ones(4, 4))


def test_portrait_does_not_modify_its_input():
    a = uniform_causal(5)[None].clone()
    before = a.clone()
    head_portrait(a)
    assert torch.equal(a, before)


# ---------------------------------------------------------------------------- detectors
def test_detection_patterns():
    assert torch.equal(previous_token_pattern(3), torch.tensor([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]]))
    dup = duplicate_token_pattern([5, 6, 5, 6])
    assert dup.nonzero().tolist() == [[2, 0], [3, 1]]
    ind = induction_pattern([5, 6, 5, 6])
    # at the second 5 (i=2) an induction head looks at what followed the first 5: the 6 at j=1
    assert ind.nonzero().tolist() == [[2, 1], [3, 2]]


def test_detector_score_is_weight_on_the_pattern_over_total_weight():
    a = one_hot_rows(4, lambda i: max(i - 1, 0))  # a perfect previous-token head
    assert float(previous_token_scores(a[None])[0]) == pytest.approx(3 / 4)  # row 0 can't look back
    assert float(previous_token_scores(a[None], exclude_bos=True)[0]) == pytest.approx(1.0)
    assert float(previous_token_scores(torch.eye(4)[None])[0]) == 0.0
    assert float(previous_token_scores(torch.eye(4)[None], exclude_current_token=True)[0]) == 0.0  # 0/0 -> 0


def test_induction_score_on_a_perfect_induction_map():
    ids = [7, 8, 9, 7, 8, 9]
    target = {3: 1, 4: 2, 5: 3}  # second half looks at the token after its earlier copy
    a = one_hot_rows(6, lambda i: target.get(i, 0))
    assert float(induction_scores(a[None], ids)[0]) == pytest.approx(3 / 6)
    assert float(induction_scores(a[None], ids, exclude_bos=True)[0]) == pytest.approx(1.0)


def test_detectors_never_mutate_the_attention():
    a = uniform_causal(6)[None].repeat(2, 1, 1)
    before = a.clone()
    detector_scores(a, previous_token_pattern(6), exclude_bos=True, exclude_current_token=True)
    induction_scores(a, [1, 2, 3, 1, 2, 3], exclude_bos=True, exclude_current_token=True)
    assert torch.equal(a, before)


def test_detector_rejects_mismatched_pattern():
    with pytest.raises(ValueError, match="does not match"):
        detector_scores(torch.eye(4)[None], previous_token_pattern(3))


def test_head_detector_honours_keywords_for_lists_of_prompts(tiny):
    prompts = [[464, 1263, 3290, 1263, 3290], [262, 3797, 262, 3797]]
    kwargs = dict(exclude_bos=True, exclude_current_token=True)
    together = head_detector(tiny.lens, prompts, "duplicate-token", **kwargs)
    one_by_one = torch.stack([head_detector(tiny.lens, p, "duplicate-token", **kwargs) for p in prompts]).mean(0)
    assert together.shape == (2, 12)
    torch.testing.assert_close(together, one_by_one)
    assert not torch.allclose(together, head_detector(tiny.lens, prompts, "duplicate-token"))


def test_induction_on_repeated_random_tokens(tiny):
    seq = repeated_random_tokens(10, seed=3, vocab_size=50257, bos_id=50256)
    assert seq[0] == 50256 and seq[1:11] == seq[11:] and len(set(seq[1:11])) == 10
    assert 50256 not in seq[1:]
    assert repeated_random_tokens(10, seed=3) == seq[1:]  # seeded: same sequence every time
    scores, used = induction_scores_on_repeats(tiny.lens, half_length=10, seed=3)
    assert used == seq[1:]
    assert scores.shape == (2, 12) and bool(((scores >= 0) & (scores <= 1)).all())
    with pytest.raises(ValueError, match="does not fit"):
        induction_scores_on_repeats(tiny.lens, half_length=40)


# ---------------------------------------------------------------------------- leakage
def test_relative_change():
    a = torch.tensor([[3.0, 4.0], [0.0, 0.0]])
    b = torch.tensor([[3.0, 4.0], [1.0, 0.0]])
    assert relative_change(a, a).tolist() == [0.0, 0.0]
    assert relative_change(a, torch.zeros(2, 2)).tolist() == [1.0, 0.0]
    assert relative_change(a, b).tolist() == [0.0, 1.0]  # a zero original: the absolute change


def test_leakage_causal_is_exactly_zero_before_the_edit(tiny, ids):
    p = 4
    leak = leakage(tiny.lens, ids, p, replacement_id=3797)  # " cat"
    n, layers = len(ids), tiny.lens.config.n_layer + 1
    assert leak.causal.shape == (n,) and leak.causal_layers.shape == (layers, n)
    assert torch.equal(leak.causal[:p], torch.zeros(p))  # exactly 0, not "close"
    assert torch.equal(leak.causal_layers[:, :p], torch.zeros(layers, p))
    assert leak.causal_max_before == 0.0
    assert bool((leak.causal[p:] > 1e-4).all())  # the edit and everything after it moved
    # without the mask every position hears about the edit, from the first block on
    assert bool((leak.bidirectional[:p] > 1e-4).all())
    assert leak.bidirectional_max_before > 1e-4
    # the embeddings (row 0) are per token: only the edited position differs, in both modes
    assert torch.equal(leak.bidirectional_layers[0, :p], torch.zeros(p))
    assert bool((leak.bidirectional_layers[1:, :p] > 0).all())


def test_leakage_matches_a_direct_computation(tiny, ids):
    p, r = len(ids) - 1, 3797
    edited = list(ids)
    edited[p] = r
    leak = leakage(tiny.lens, ids, p, r)
    for causal, final, layers in ((True, leak.causal, leak.causal_layers), (False, leak.bidirectional, leak.bidirectional_layers)):
        a = tiny.lens(ids, causal=causal)
        b = tiny.lens(edited, causal=causal)
        by_hand = (b.final_hidden[0] - a.final_hidden[0]).norm(dim=-1) / a.final_hidden[0].norm(dim=-1)
        torch.testing.assert_close(final, by_hand, atol=1e-5, rtol=1e-4)
        by_hand_layers = (b.hidden_states[0] - a.hidden_states[0]).norm(dim=-1) / a.hidden_states[0].norm(dim=-1)
        torch.testing.assert_close(layers, by_hand_layers, atol=1e-5, rtol=1e-4)


def test_leakage_mask_modes(tiny, ids):
    p = len(ids) - 1
    for mode in (MaskMode.NEG_INF, MaskMode.FINFO_MIN, MaskMode.NEG_1E9):
        assert leakage(tiny.lens, ids, p, 3797, mask_mode=mode).causal_max_before == 0.0
    # a zero score is e⁰ = 1 after the softmax: the future leaks in
    assert leakage(tiny.lens, ids, p, 3797, mask_mode="zero-score").causal_max_before > 1e-4


def test_leakage_rejects_bad_input(tiny, ids):
    with pytest.raises(ValueError, match="out of range"):
        leakage(tiny.lens, ids, len(ids), 3797)
    with pytest.raises(ValueError, match="not a token id"):
        leakage(tiny.lens, ids, 0, 10**6)
    with pytest.raises(ValueError, match="mask mode"):
        leakage(tiny.lens, ids, 0, 1, mask_mode="zero")


# ---------------------------------------------------------------------------- mask modes
def test_rows_sum_to_one_only_with_a_proper_mask(tiny, ids):
    report = {r.mode: r for r in mask_mode_report(tiny.lens, ids, layer=1)}
    assert set(report) == {m.value for m in MaskMode}
    for mode in ("-inf", "finfo.min", "-1e9"):
        assert report[mode].max_row_sum_error < 1e-5
        assert report[mode].future_weight == 0.0
        assert report[mode].max_leak_before == 0.0
    assert report["zero-score"].max_row_sum_error < 1e-5  # sums to 1 ...
    assert report["zero-score"].future_weight > 0.01  # ... by giving the future weight
    assert report["zero-score"].max_leak_before > 1e-4
    assert report["zero-after-softmax"].max_row_sum_error > 0.1  # the budget is broken
    assert report["zero-after-softmax"].future_weight == 0.0


# ---------------------------------------------------------------------------- K/V stability
def test_kv_stability_exact_zero_causal_and_layer_zero(tiny, ids):
    st = kv_stability(tiny.lens, ids)
    L, n = tiny.lens.config.n_layer, len(ids)
    top = analysis.next_token_candidates(tiny.lens, ids, 2)
    assert (st.appended_id, st.reference_id, st.n) == (top[0], top[1], n)
    for t in (st.causal_keys, st.causal_values):
        assert t.shape == (L, n) and torch.equal(t, torch.zeros(L, n))
    for t in (st.bidirectional_keys, st.bidirectional_values):
        assert torch.equal(t[0], torch.zeros(n))  # layer 0: token + position only
        assert bool((t[1:] > 1e-5).all())  # from layer 1 on everything moved
    assert st.max_per_layer("causal") == [0.0] * L
    assert st.max_per_layer("bidirectional")[0] == 0.0


def test_kv_stability_matches_a_direct_computation(tiny, ids):
    a, r = 3797, 3290
    st = kv_stability(tiny.lens, ids, appended_id=a, reference_id=r)
    n = len(ids)
    for causal, keys, values in ((True, st.causal_keys, st.causal_values), (False, st.bidirectional_keys, st.bidirectional_values)):
        with_a = tiny.lens(ids + [a], causal=causal, keep_kv=True)
        with_r = tiny.lens(ids + [r], causal=causal, keep_kv=True)
        for layer in range(tiny.lens.config.n_layer):
            for name, got in (("keys", keys), ("values", values)):
                x = getattr(with_r, name)[layer][0, :, :n].permute(1, 0, 2).reshape(n, -1)
                y = getattr(with_a, name)[layer][0, :, :n].permute(1, 0, 2).reshape(n, -1)
                by_hand = (y - x).norm(dim=-1) / x.norm(dim=-1)
                torch.testing.assert_close(got[layer], by_hand, atol=1e-6, rtol=1e-4)


def test_kv_of_the_prefix_alone_agree_with_the_appended_run(tiny, ids):
    # What the cache relies on, measured against the n-token run itself: equal up to float
    # rounding (kernels of a different size may sum in another order), and layer 0's K and V
    # are the same with and without the mask.
    alone = tiny.lens(ids, keep_kv=True)
    appended = tiny.lens(ids + [3797], keep_kv=True)
    bidirectional = tiny.lens(ids + [3797], causal=False, keep_kv=True)
    n = len(ids)
    for layer in range(tiny.lens.config.n_layer):
        torch.testing.assert_close(appended.keys[layer][:, :, :n], alone.keys[layer], atol=1e-5, rtol=0)
        torch.testing.assert_close(appended.values[layer][:, :, :n], alone.values[layer], atol=1e-5, rtol=0)
    assert torch.equal(bidirectional.keys[0], appended.keys[0])
    assert torch.equal(bidirectional.values[0], appended.values[0])


def test_kv_stability_rejects_bad_input(tiny, ids):
    with pytest.raises(ValueError, match="must differ"):
        kv_stability(tiny.lens, ids, appended_id=5, reference_id=5)
    with pytest.raises(ValueError, match="context"):
        kv_stability(tiny.lens, [1] * tiny.lens.config.n_positions)
    with pytest.raises(ValueError, match="empty"):
        kv_stability(tiny.lens, [])


# ---------------------------------------------------------------------------- the triangle print
def test_ascii_mask_is_the_chapters_triangle():
    text = ascii_mask(3, ["a", "b", "c"], width=3)
    assert text.splitlines() == [
        "   a  b  c ",
        "a[ 1  .  . ]",
        "b[ 1  1  . ]",
        "c[ 1  1  1 ]",
    ]
    assert ascii_mask(5).count(".") == 5 * 4 // 2


def test_ascii_mask_with_values_and_without_mask():
    values = [[1.0, 0.0], [0.41, 0.59]]
    lines = ascii_mask(2, ["x", "y"], values).splitlines()
    assert "1.00" in lines[1] and "." in lines[1]
    assert "0.41" in lines[2] and "0.59" in lines[2]
    unmasked = ascii_mask(2, ["x", "y"], values, causal=False).splitlines()
    assert unmasked[1].split("[")[1].split() == ["1.00", "0.00", "]"]  # nothing forbidden
    with pytest.raises(ValueError):
        ascii_mask(2, ["x"])
    with pytest.raises(ValueError):
        ascii_mask(2, ["x", "y"], [[1.0]])


@pytest.mark.slow
def test_exact_zeros_hold_at_gpt2_small_shapes(gpt2_small_checkpoint):
    from attention_lab.core.models import load_model

    lens = load_model(gpt2_small_checkpoint).lens
    for n in (2, 3, 15, 16, 17):  # lengths where kernels of size n and n+1 sum differently
        ids = torch.randint(0, 50256, (n,), generator=torch.Generator().manual_seed(n)).tolist()
        leak = leakage(lens, ids, n - 1, (ids[-1] + 1) % 50256)
        assert torch.equal(leak.causal_layers[:, : n - 1], torch.zeros(13, n - 1))
        assert leak.bidirectional_max_before > 0
        st = kv_stability(lens, ids)
        assert torch.equal(st.causal_keys, torch.zeros(12, n)) and torch.equal(st.causal_values, torch.zeros(12, n))
        assert torch.equal(st.bidirectional_keys[0], torch.zeros(n)) and bool((st.bidirectional_keys[1:] > 0).all())


def test_mask_mode_passes_stop_between_modes_and_agree_with_leakage(tiny):
    """A closing window waits for one pass at most; each mode's leak is leakage()'s number."""
    from attention_lab.core.analysis import leakage, mask_mode_passes

    ids = tiny.tokenizer.encode("The big dog bit the mailman yesterday")
    asked = []

    def stop_after_two() -> bool:
        asked.append(1)
        return len(asked) > 2

    passes = list(mask_mode_passes(tiny.lens, ids, 1, should_stop=stop_after_two))
    assert len(passes) == 2 and len(asked) == 3
    for row, attn, leak in mask_mode_passes(tiny.lens, ids, 1, position=5, replacement_id=42):
        reference = leakage(tiny.lens, ids, 5, 42, mask_mode=row.mode)
        assert row.max_leak_before == pytest.approx(reference.causal_max_before, abs=1e-6)
        assert torch.allclose(leak, reference.causal, atol=1e-6)
        assert attn.shape == (tiny.lens.config.n_head, len(ids), len(ids))


def test_attention_hook_sees_every_layer_while_only_the_shown_one_is_kept(tiny):
    """The app summarises all layers through the hook and keeps one map (memory at 1024 tokens)."""
    ids = tiny.tokenizer.encode("The big dog bit the mailman yesterday")
    full = tiny.lens(ids, keep_attentions=True, keep_hidden=False, compute_logits=False)
    seen: dict[int, torch.Tensor] = {}
    lean = tiny.lens(ids, keep_attentions=[1], keep_hidden=False, compute_logits=False,
                     attention_hook=lambda i, a: seen.__setitem__(i, a))
    assert sorted(seen) == list(range(tiny.lens.config.n_layer))
    for i, attn in seen.items():
        assert torch.equal(attn, full.attentions[i])
    assert lean.attentions[0] is None and torch.equal(lean.attentions[1], full.attentions[1])
