"""Predict, then reveal: the tour's questions, and what the measurement answers.

At the tour's measured steps the learner is asked one yes/no question before the measurement is
shown (learners remember what they predicted and then saw measured).  The answer is never
written here: :func:`measured_answer` reads it from the step's :class:`~attention_lab.core.tour.Fact`,
computed on the learner's own model and text, so a model or a text that behaves otherwise is
answered otherwise.  Nothing is graded; the learner may skip; the predictions stay on the machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

YES, NO, UNSURE = "yes", "no", "unsure"
CHOICES = (YES, NO, UNSURE)


@dataclass(frozen=True)
class Question:
    """One step's question: its text's key and how its fact answers it (None: no answer to read)."""

    step: str
    text_key: str
    answer: Callable[[Any], str | None]


def _values(fact: Any, *kinds: str) -> Mapping[str, Any] | None:
    """The fact's values when it is one of ``kinds`` (a fact of another kind doesn't answer)."""
    return fact.values if getattr(fact, "key", None) in kinds else None


def _future_weight_of_a_zero_score(fact: Any) -> str | None:
    v = _values(fact, "why_inf")
    return None if v is None else (YES if v["zero_future"] > 0 else NO)


def _past_moves_with_the_mask(fact: Any) -> str | None:
    v = _values(fact, "leakage", "leakage.leaks")
    return None if v is None else (YES if v["causal_max"] > 0 else NO)


def _earlier_kv_move_on_append(fact: Any) -> str | None:
    v = _values(fact, "kvcache.pending", "kvcache.done", "kvcache.done.unclear")
    return None if v is None else (YES if v["causal_kv_max"] > 0 else NO)


def _window_reaches_further_than_itself(fact: Any) -> str | None:
    v = _values(fact, "mask_designer")
    return None if v is None else (YES if v["back"] > v["w"] else NO)


def _one_head_matters(fact: Any) -> str | None:
    v = _values(fact, "knockout", "knockout.masked")
    return None if v is None else (YES if v["delta"] > 0 else NO)


QUESTIONS: dict[str, Question] = {q.step: q for q in (
    Question("why_inf", "predict.why_inf", _future_weight_of_a_zero_score),
    Question("leakage", "predict.leakage", _past_moves_with_the_mask),
    Question("kvcache", "predict.kvcache", _earlier_kv_move_on_append),
    Question("mask_designer", "predict.mask_designer", _window_reaches_further_than_itself),
    Question("knockout", "predict.knockout", _one_head_matters),
)}


def question_for(step_key: str) -> Question | None:
    return QUESTIONS.get(step_key)


def measured_answer(step_key: str, fact: Any) -> str | None:
    """YES or NO as the step's fact measured it; None when the step asks nothing or its fact doesn't
    answer (too short a text, say)."""
    question = QUESTIONS.get(step_key)
    return None if question is None else question.answer(fact)


@dataclass(frozen=True)
class Tally:
    """How the learner's predictions compared with the measurements, over the steps both exist for."""

    as_predicted: int  # a yes or no that the measurement confirmed
    answered: int  # the steps with a measurement and a prediction (an "unsure" counts, never as predicted)

    def as_dict(self) -> dict[str, int]:
        return {"as_predicted": self.as_predicted, "answered": self.answered}


def tally(predictions: Mapping[str, str], measured: Mapping[str, str | None]) -> Tally:
    """``predictions``: step -> the learner's choice; ``measured``: step -> the measured answer."""
    steps = [s for s, p in predictions.items() if p in CHOICES and measured.get(s) in (YES, NO)]
    return Tally(sum(predictions[s] == measured[s] for s in steps), len(steps))
