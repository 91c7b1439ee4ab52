"""Head knockout readouts and the ranking of every head (progress, cancel, agreement)."""

from __future__ import annotations

import threading

import pytest
import torch

from attention_lab.core import ablation, masks
from attention_lab.core.models import load_model


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


IDS = torch.randint(0, 50000, (12,), generator=torch.Generator().manual_seed(11)).tolist()


def test_knockout_reports_before_and_after(model):
    lens = model.lens
    result = ablation.knockout(lens, IDS, [(0, 2), (1, 7)], "zero", position=4)
    assert result.heads == [(0, 2), (1, 7)] and result.mode == "zero" and result.position == 4
    assert len(result.top_before) == len(result.top_after) == 5
    probs = [p for _, p in result.top_before]
    assert probs == sorted(probs, reverse=True) and 0 < probs[0] <= 1
    # "before" is the plain model: its loss is the cross-entropy of its own logits
    logits = lens(IDS).logits[0]
    plain = float(torch.nn.functional.cross_entropy(logits[:-1], torch.tensor(IDS[1:])))
    assert abs(result.loss_before - plain) < 1e-5
    assert result.loss_after != result.loss_before
    top = torch.softmax(logits[4], -1).topk(5)
    assert [t for t, _ in result.top_before] == top.indices.tolist()
    assert result.logprob_before == pytest.approx(float(torch.log_softmax(logits[4], -1)[IDS[5]]), abs=1e-5)
    at_end = ablation.knockout(lens, IDS, [(0, 2)], "mean")
    assert at_end.position == len(IDS) - 1 and at_end.logprob_before is None


def test_knockout_keeps_the_other_heads_maps_when_asked(model):
    lens = model.lens
    result = ablation.knockout(lens, IDS, [(0, 2)], "zero", keep_attentions=[1])
    plain = lens(IDS, keep_attentions=True).attentions
    assert result.attentions_after[0] is None
    # layer 0's maps are computed before the knockout acts; layer 1 sees a changed input
    assert not torch.allclose(result.attentions_after[1], plain[1][0])


@pytest.mark.parametrize("mode", ["zero", "mean"])
@pytest.mark.parametrize("metric", ["loss", "logprob"])
def test_ranking_agrees_with_single_knockouts(model, mode, metric):
    lens = model.lens
    cfg = lens.config
    items = list(ablation.rank_heads(lens, IDS, mode, metric=metric, position=5, batch=5))
    progress = [i for i in items if isinstance(i, ablation.RankProgress)]
    ranking = items[-1]
    assert isinstance(ranking, ablation.HeadRanking)
    total = cfg.n_layer * cfg.n_head
    # batches of 5 inside each layer (12 heads: 5 + 5 + 2), progress after each
    assert [p.done for p in progress] == [5, 10, 12, 17, 22, 24][: len(progress)] and progress[-1].done == total
    assert all(p.total == total for p in progress)
    assert ranking.delta.shape == (cfg.n_layer, cfg.n_head)
    for layer, head in [(0, 0), (1, 11), (0, 7)]:
        single = ablation.knockout(lens, IDS, [(layer, head)], mode, position=5)
        if metric == "loss":
            expected = single.loss_after - single.loss_before
        else:
            expected = single.logprob_after - single.logprob_before
        assert float(ranking.delta[layer, head]) == pytest.approx(expected, abs=2e-5)
    harm = [ranking.harm[layer, head] for layer, head, _ in ranking.top]
    assert len(ranking.top) == 5 and harm == sorted(harm, reverse=True)
    assert float(ranking.harm.max()) == float(harm[0])


def test_ranking_as_a_worker_job_reports_progress(model):
    seen = []
    ranking = ablation.run_rank_heads(model.lens, IDS, "zero", progress=seen.append, cancel=threading.Event())
    assert [p.done for p in seen] == [12, 24] and isinstance(ranking, ablation.HeadRanking)


def test_ranking_follows_the_mask(model):
    lens = model.lens
    allowed = masks.allowed_matrix(masks.parse_mask_spec("window:2"), IDS)
    ranked = ablation.run_rank_heads(lens, IDS, "zero", allowed=allowed)
    single = ablation.knockout(lens, IDS, [(1, 3)], "zero", allowed=allowed)
    assert float(ranked.delta[1, 3]) == pytest.approx(single.loss_after - single.loss_before, abs=2e-5)


def test_ranking_cancels_between_batches(model):
    flag = threading.Event()
    seen = []
    with pytest.raises(ablation.RankingCancelled):
        for item in ablation.rank_heads(model.lens, IDS, "zero", batch=4, cancel=flag):
            seen.append(item)
            flag.set()  # the user presses cancel after the first batch
    assert len(seen) == 1 and seen[0].done == 4


@pytest.mark.parametrize("text,message", [
    ("99.0", "head 99.0 does not exist"),
    ("0.1,0.1", "head 0.1 is listed twice"),
    ("0.12", "head 0.12 does not exist"),
    ("1", "is not LAYER.HEAD"),
    ("a.b", "is not LAYER.HEAD"),
    ("0.-1", "is not LAYER.HEAD"),
    ("0.1,", "is not LAYER.HEAD"),
    ("", "no heads given"),
])
def test_bad_head_lists(text, message):
    with pytest.raises(ValueError, match=message):
        ablation.parse_heads(text, 2, 12)


def test_head_lists_parse():
    assert ablation.parse_heads("0.3, 1.11", 2, 12) == [(0, 3), (1, 11)]


def test_ranking_input_checks(model):
    with pytest.raises(ValueError, match="before the last token"):
        ablation.run_rank_heads(model.lens, IDS, "zero", metric="logprob")
    with pytest.raises(ValueError, match="at least 2 tokens"):
        ablation.run_rank_heads(model.lens, IDS[:1], "zero")
    with pytest.raises(ValueError, match="unknown ablation"):
        ablation.run_rank_heads(model.lens, IDS, "half")


def test_bench_row_times_the_ranking_against_one_analysis_per_head(model):
    from pathlib import Path

    from attention_lab.devtools import bench

    bm = bench.BenchModel("tiny", "tiny", Path(model.path), model, measure_memory=False)
    row = bench.bench_head_ranking(bm, bench.Settings(reps=1, quick=True))
    heads = model.lens.config.n_layer * model.lens.config.n_head
    assert row.id == "rank_heads_32" and row.tokens == 32 and row.goal == "ratio ≤ 3.0"
    assert len(row.ours_samples) == len(row.theirs_samples) == 1
    assert row.ratio == pytest.approx(row.ours / row.theirs) and row.verdict in ("met", "not met")
    assert row.theirs == pytest.approx(row.theirs_samples[0]) and f"× {heads} heads" in row.compared_with
