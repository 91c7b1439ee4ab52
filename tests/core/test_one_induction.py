"""One induction number: one definition (head_detector's induction score), one measurement per
model (core.roles.model_induction, on one named sequence), and the same figure in the portrait,
the tour's portrait step and its induction step.  A learner read 0.09, 0.11 and 0.183 for the
same head in those three places (three sequences: random tokens without BOS, random tokens after
BOS, and the tour's words said twice)."""

from __future__ import annotations

import pytest
import torch

from attention_lab.core import roles
from attention_lab.core.jobs import induction_job
from attention_lab.core.lab import SEED_TEXT
from attention_lab.core.tour import TourContext, induction_fact, portrait_fact, repeated_words_text


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(str(tiny_checkpoint))


def test_the_tour_step_portrait_and_portrait_fact_quote_one_measurement(model):
    tok = model.tokenizer
    scores, ids = roles.model_induction(model.lens, tok)
    # the sequence is named: the words the tour's induction step puts in the editor, BOS on
    assert ids == [tok.eos_id] + tok.encode(repeated_words_text(tok))
    job_scores, job_ids = induction_job(model.lens, tok)  # what the portrait panel shows
    assert list(job_ids) == ids and torch.equal(job_scores, scores.to(torch.float32))
    # the tour's induction step, on the editor's text with BOS on: the same figure
    step = TourContext(lens=model.lens, ids=ids, tokens=tok.token_texts(ids), tokenizer=tok)
    fact = induction_fact(step)
    assert fact.values["best_score"] == pytest.approx(float(scores.max()), abs=1e-6)
    # the tour's portrait step quotes the same scores for its layer's heads
    portrait = portrait_fact(TourContext.from_model(model, SEED_TEXT))
    for head, row in portrait.data["roles"].items():
        assert row.scores["induction"] == pytest.approx(float(scores[0, head]), abs=1e-6)


def test_the_sequence_fits_a_short_context_and_stays_said_twice(model):
    ids = roles.induction_ids(model.tokenizer, context=9)
    assert len(ids) <= 9 and ids[0] == model.tokenizer.eos_id
    body = ids[1:]
    assert body[: len(body) // 2] == body[len(body) // 2:]
