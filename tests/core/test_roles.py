"""The chapter's head roles: rules over measured numbers, where each role lives, words in both languages."""

from __future__ import annotations

import math
import string

import pytest
import torch

from attention_lab.core import analysis, roles
from attention_lab.core.roles import RoleRules, role_map, where, where_sentence


def _maps(n: int = 12) -> torch.Tensor:
    """Four synthetic heads: previous-token, split between i and i−2 (mean distance 1),
    sink, and uniform over the past."""
    prev = torch.zeros(n, n)
    split = torch.zeros(n, n)
    sink = torch.zeros(n, n)
    for i in range(n):
        prev[i, max(i - 1, 0)] = 1.0
        sink[i, 0] = 1.0
        if i >= 2:
            split[i, i] = split[i, i - 2] = 0.5
        else:
            split[i, 0] = 1.0
    uniform = torch.tril(torch.ones(n, n))
    uniform = uniform / uniform.sum(-1, keepdim=True)
    return torch.stack([prev, split, sink, uniform])


def _roles(attn, induction=None, rules=None):
    stats = analysis.head_portrait(attn)
    return role_map(stats, attn.shape[-1], induction, rules)


def test_rules_on_synthetic_heads():
    prev, split, sink, uniform = _roles(_maps())
    assert prev.roles == ("positional", "previous-token")
    # mean distance ≈ 1 but the weight on i−1 is 0: positional by the chapter's rule, never previous-token
    assert abs(split.scores["positional"] - 1) < 0.1 and split.roles == ("positional",)
    assert sink.roles == ("sink",)
    assert uniform.roles == () and uniform.entropy_ratio == pytest.approx(1.0)


def test_thresholds_are_parameters_and_move_the_result():
    attn = _maps()
    split = _roles(attn)[1]
    # its entropy is ln 2 per row: above a strict entropy bound it stops being positional
    strict = RoleRules(positional_entropy=split.entropy_ratio * 0.99)
    assert "positional" not in _roles(attn, rules=strict)[1].roles
    assert "positional" in _roles(attn, rules=RoleRules(positional_entropy=split.entropy_ratio * 1.01))[1].roles
    two_back = torch.zeros(12, 12)
    for i in range(12):
        two_back[i, max(i - 2, 0)] = 1.0  # mean distance (1 + 2·10) / 11 ≈ 1.9
    assert _roles(two_back[None])[0].roles == ()
    assert _roles(two_back[None], rules=RoleRules(positional_tolerance=1.0))[0].roles == ("positional",)
    assert "sink" not in _roles(attn, rules=RoleRules(sink=1.01))[2].roles


def test_induction_role_needs_a_measured_score():
    attn = _maps()
    assert all("induction" not in h.roles for h in _roles(attn))
    assert all(math.isnan(h.scores["induction"]) for h in _roles(attn))
    scores = torch.tensor([[0.05, 0.3, 0.0, 0.19]])
    got = _roles(attn, induction=scores)
    assert [h.has("induction") for h in got] == [False, True, False, False]
    assert got[1].scores["induction"] == pytest.approx(0.3)


def test_induction_reference_is_computed_from_the_sequence():
    ids = analysis.repeated_random_tokens(20, seed=3, vocab_size=1000)
    ref = roles.induction_reference(ids)
    assert ref["maximum"] == pytest.approx(20 / 40)  # the first copy has nothing to look back at
    # a uniform head: row i (second copy) puts 1/(i+1) on its one target
    assert ref["uniform"] == pytest.approx(sum(1 / (i + 1) for i in range(20, 40)) / 40)
    longer = roles.induction_reference(analysis.repeated_random_tokens(20, seed=3, vocab_size=1000, bos_id=999))
    assert longer["maximum"] == pytest.approx(20 / 41)


def _three_layers():
    """Layer 0: a sink; layer 1: nothing; layer 2: two previous-token heads of different strength."""
    n = 10
    _prev, _split, sink, uniform = _maps(n)
    strong = torch.zeros(n, n)
    weak = torch.zeros(n, n)
    for i in range(n):
        strong[i, max(i - 1, 0)] = 1.0
        weak[i, max(i - 1, 0)] += 0.6
        weak[i, i] += 0.4
    layers = torch.stack([
        torch.stack([sink, uniform]),
        torch.stack([uniform, uniform]),
        torch.stack([weak, strong]),
    ])
    return role_map(analysis.head_portrait(layers), n)


def test_where_ranks_the_nearest_layer_first():
    table = _three_layers()
    found = where(table, "previous-token", 0)
    assert found.here == [] and found.nearest_layer == 2
    assert [(h.layer, h.head) for h in found.nearest()] == [(2, 1), (2, 0)]  # strongest first
    assert [h.score for h in found.nearest()] == [pytest.approx(1.0), pytest.approx(0.6)]
    here = where(table, "sink", 0)
    assert [(h.layer, h.head) for h in here.here] == [(0, 0)] and here.elsewhere == []
    from_1 = where(table, "sink", 1)
    assert from_1.nearest_layer == 0
    with pytest.raises(ValueError, match="unknown role"):
        where(table, "syntactic", 0)


def test_where_sentence_names_heads_and_says_when_none_qualify():
    table = _three_layers()
    en = where_sentence(where(table, "previous-token", 0))
    assert en.startswith("previous-token heads: none in layer 0; layer 2 has H1 (1.00) and H0 (")
    pt = where_sentence(where(table, "previous-token", 0), "pt_BR")
    assert pt.startswith("cabeças de token anterior: nenhuma na camada 0; a camada 2 tem H1 (1,00) e H0 (")  # decimal comma
    induction = where(role_map(analysis.head_portrait(_maps()[None]), 12, torch.tensor([[0.01, 0.02, 0.0, 0.05]])),
                      "induction", 0)
    assert induction.best is not None and (induction.best.head, induction.best.score) == (3, pytest.approx(0.05))
    assert "no head of this model qualifies (the best: layer 0, H3, 0.05)" in where_sentence(induction)
    assert "nenhuma cabeça deste modelo se qualifica" in where_sentence(induction, "pt_BR")


def test_texts_exist_in_both_languages_and_never_equate_distance_one_with_previous_token():
    for key, by_lang in roles.ROLE_TEXTS.items():
        assert set(by_lang) == set(roles.LANGUAGES), key
        fields = {lang: {f for _, f, _, _ in string.Formatter().parse(t) if f} for lang, t in by_lang.items()}
        assert fields["en"] == fields["pt_BR"], key
    for role in roles.ROLES:
        for lang in roles.LANGUAGES:
            d = roles.describe(role, RoleRules(), lang, reference={"maximum": 0.5, "uniform": 0.02})
            assert all(d.values())
    rule = roles.describe("positional", RoleRules(positional_tolerance=0.25))["rule"]
    assert "0.25" in rule  # the thresholds in force, not the defaults
    about = roles.describe("positional")["about"].lower()
    assert "≈ 1 means previous" not in about and "does not say which token" in about


# ---------------------------------------------------------------------------- measured on real checkpoints
def _model_roles(model, text, rules=None):
    ids = model.tokenizer.encode(text)
    out = model.lens(ids, keep_attentions=True, keep_hidden=False, compute_logits=False)
    stats = [s for layer, a in enumerate(out.attentions) for s in analysis.head_portrait(a[0], layer_offset=layer)]
    induction, _ = analysis.induction_scores_on_repeats(model.lens)
    return role_map(stats, len(ids), induction, rules)


@pytest.fixture(scope="module")
def demo():
    from attention_lab.core.models import load_model

    return load_model("demo")


def test_demo_model_layer_0_has_positional_heads_and_previous_token_heads_live_in_layer_2(demo):
    table = _model_roles(demo, "The big dog bit the mailman yesterday")
    positional = where(table, "positional", 0)
    assert positional.here, "the chapter's rule finds a positional head in layer 0 of the demo model"
    prev = where(table, "previous-token", 0)
    assert prev.here == [] and prev.nearest_layer == 2
    # numbers computed, not canned: another text gives other scores
    other = where(_model_roles(demo, "o cachorro grande mordeu o carteiro ontem"), "previous-token", 0)
    assert [h.score for h in other.nearest()] != [h.score for h in prev.nearest()]
    # stricter thresholds: the same model, no positional head left in layer 0
    strict = where(_model_roles(demo, "The big dog bit the mailman yesterday", RoleRules(positional_entropy=0.05)),
                   "positional", 0)
    assert strict.here == []


def test_random_weights_hold_no_role(gpt2_small_checkpoint):
    from attention_lab.core.models import load_model

    table = _model_roles(load_model(gpt2_small_checkpoint), "The big dog bit the mailman yesterday")
    assert all(h.roles == () for h in table)
    assert min(h.entropy_ratio for h in table) > 0.9  # why 0.7 × uniform is a safe positional bound
