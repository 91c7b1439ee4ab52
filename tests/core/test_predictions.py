"""Predict, then reveal: the tour's questions are answered by the step's measurement, never by a constant."""

from __future__ import annotations

import dataclasses

import pytest

from attention_lab.core import predictions
from attention_lab.core.lab import SEED_TEXT
from attention_lab.core.predictions import NO, UNSURE, YES, measured_answer, question_for, tally
from attention_lab.core.tour import STEP_KEYS, Fact, TourContext, compute_fact


@pytest.fixture(scope="module")
def ctx(tiny_checkpoint) -> TourContext:
    from attention_lab.core.models import load_model

    return TourContext.from_model(load_model(str(tiny_checkpoint)), SEED_TEXT)


def test_every_question_belongs_to_a_step_of_the_tour():
    assert set(predictions.QUESTIONS) <= set(STEP_KEYS)
    assert len(predictions.QUESTIONS) == 5
    assert question_for("budget") is None and measured_answer("budget", Fact("budget", {})) is None


@pytest.mark.parametrize("step, expected", [
    ("why_inf", YES),  # a score of 0 gives the future e⁰ = 1 before the softmax: it gets weight
    ("leakage", NO),  # the mask: the positions before the edit move by exactly 0
    ("kvcache", NO),  # earlier K and V do not move when a token is appended
    ("knockout", YES),  # the head the text needs most raises its loss
])
def test_the_answers_are_read_from_the_measured_facts(ctx, step, expected):
    fact = compute_fact(step, ctx)
    assert measured_answer(step, fact) == expected, fact


def test_a_window_mask_reaches_further_back_than_its_width_through_the_layers(ctx):
    fact = compute_fact("mask_designer", ctx)
    # two layers of a window of 3 reach up to 4 back on a 10-token text
    assert fact.values["back"] > fact.values["w"]
    assert measured_answer("mask_designer", fact) == YES


def test_a_different_measurement_gives_a_different_answer(ctx):
    """Nothing is hard-coded: the same fact with the opposite number answers the other way."""
    leak = compute_fact("leakage", ctx)
    leaked = dataclasses.replace(leak, key="leakage.leaks", values={**leak.values, "causal_max": 0.2})
    assert measured_answer("leakage", leaked) == YES
    why = compute_fact("why_inf", ctx)
    assert measured_answer("why_inf", dataclasses.replace(why, values={**why.values, "zero_future": 0.0})) == NO


def test_a_fact_that_measured_nothing_answers_nothing():
    assert measured_answer("leakage", Fact("too_short", {"n": 1})) is None
    assert measured_answer("leakage", Fact("leakage.first", {"pos": 0})) is None


def test_the_tally_counts_only_steps_with_both_a_prediction_and_a_measurement():
    measured = {"why_inf": YES, "leakage": NO, "kvcache": NO, "mask_designer": None, "knockout": YES}
    chosen = {"why_inf": YES, "leakage": YES, "kvcache": UNSURE, "mask_designer": YES}
    assert tally(chosen, measured).as_dict() == {"as_predicted": 1, "answered": 3}
    assert tally({}, measured).answered == 0
    assert tally({"leakage": "maybe"}, measured).answered == 0  # not a choice the question offers
