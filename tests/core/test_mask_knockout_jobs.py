"""The worker jobs of the mask designer and the head knockout (core.jobs): what the app's
Session submits gives core's own results, a documents separator typed in the app is
resolved with the tokenizer, a custom grid drawn for another length is fitted, the ranking
stops on its cancel event, and progress reaches the GUI thread throttled."""

from __future__ import annotations

import threading

import pytest
import torch

from attention_lab.core import job_protocol, jobs
from attention_lab.core.ablation import knockout, run_rank_heads
from attention_lab.core.masks import MaskSpec, custom_mask, fit_custom, mask_report, parse_mask_spec
from attention_lab.core.models import load_model

TEXT = "One cat sat. Two dogs ran. A bird"


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


def test_a_documents_mask_typed_in_the_app_is_resolved_with_the_tokenizer(model):
    ids = model.tokenizer.encode(TEXT)
    typed = MaskSpec("documents", separator=".")  # as the designer panel sends it: no token id yet
    report = jobs.mask_report_job(model.lens, model.tokenizer, ids, typed)
    expected = mask_report(model.lens, ids, parse_mask_spec("documents:.", model.tokenizer))
    assert torch.equal(report.allowed, expected.allowed) and report.verdicts() == expected.verdicts()


def test_a_custom_grid_of_another_length_is_fitted_before_measuring(model):
    ids = model.tokenizer.encode(TEXT)
    drawn = torch.ones(4, 4, dtype=torch.bool)  # bidirectional among the first 4, drawn on a shorter text
    report = jobs.mask_report_job(model.lens, model.tokenizer, ids, custom_mask(drawn))
    assert torch.equal(report.allowed, fit_custom(drawn, len(ids)))
    assert report.leaks_labels and report.leaks_labels_measured


def test_knockout_and_ranking_jobs_are_cores(model):
    ids = model.tokenizer.encode(TEXT)
    allowed = torch.ones(len(ids), len(ids), dtype=torch.bool).tril()
    got = jobs.knockout_job(model.lens, ids, ((0, 1),), "zero", 3, allowed)
    want = knockout(model.lens, ids, [(0, 1)], "zero", 3, allowed=allowed)
    assert got.top_after == want.top_after and got.loss_after == want.loss_after
    seen = []
    ranking = jobs.rank_heads_job(model.lens, ids, "mean", None, progress=seen.append)
    torch.testing.assert_close(ranking.delta, run_rank_heads(model.lens, ids, "mean").delta)
    total = model.lens.config.n_layer * model.lens.config.n_head
    assert seen and seen[-1] == (total, total)  # the last report always arrives


def test_ranking_stops_on_its_cancel_event(model):
    ids = model.tokenizer.encode(TEXT)
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(job_protocol.Cancelled):
        jobs.rank_heads_job(model.lens, ids, "zero", None, cancel=cancel)


def test_progress_is_throttled_but_the_end_always_reported(monkeypatch):
    import time

    clock = iter([0.0, 0.01, 0.02, 0.2, 0.21, 0.22])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    seen = []
    report = jobs.throttled(seen.append, interval=0.1)
    for done in range(1, 7):
        report(done, 6)
    assert seen == [(1, 6), (4, 6), (6, 6)]
    assert jobs.throttled(None) is None


def test_keys_tell_masks_and_grids_apart():
    a = torch.ones(3, 3, dtype=torch.bool).tril()
    b = a.clone()
    b[0, 2] = True
    assert job_protocol.mask_key(custom_mask(a)) != job_protocol.mask_key(custom_mask(b))
    assert job_protocol.mask_key(custom_mask(a)) == job_protocol.mask_key(custom_mask(a.clone()))
    assert job_protocol.mask_key(parse_mask_spec("window:3")) != job_protocol.mask_key(parse_mask_spec("window:4"))
