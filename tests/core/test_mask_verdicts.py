"""The mask designer's verdicts, proven by measurement on the model.

- the positions that move after an edit are exactly the reach grid's (every position edited,
  an exact 0 everywhere else);
- the K/V-stability measurement is exactly 0 where the verdict says the cache is valid and
  non-zero where it says not;
- a sliding window of W reaches L·(W−1) positions back.
"""

from __future__ import annotations

import threading

import pytest
import torch

from checkpoints import make_checkpoint
from attention_lab.core import masks
from attention_lab.core.models import load_model

SEPARATOR = 13  # GPT-2's "."


@pytest.fixture(scope="module")
def deep_model(tmp_path_factory):
    """4 layers (reach grows over more steps than in the 2-layer tiny checkpoint)."""
    return load_model(str(make_checkpoint(tmp_path_factory.mktemp("deep-tiny"), seed=3, n_layer=4)))


@pytest.fixture(scope="module")
def tiny_model(tiny_checkpoint):
    return load_model(str(tiny_checkpoint))


def _ids(n: int, separators=(5, 11)) -> list[int]:
    ids = torch.randint(0, 50000, (n,), generator=torch.Generator().manual_seed(n)).tolist()
    ids = [t if t != SEPARATOR else t + 1 for t in ids]
    for p in separators:
        if p < n:
            ids[p] = SEPARATOR
    return ids


def _spec(text: str, model) -> masks.MaskSpec:
    return masks.parse_mask_spec(text, model.tokenizer)


# (spec, leaks the labels?, cache valid for a 16-token text?)
EXPECTED = {
    "causal": (False, True),
    "bidirectional": (True, False),
    "prefix:6": (True, True),  # the prefix is shorter than the text: appending falls in the causal part
    "prefix:40": (True, False),  # the appended token still lies in the prefix: earlier positions see it
    "window:2": (False, True),
    "window:3": (False, True),
    "documents:.": (False, True),
}


@pytest.mark.parametrize("which", ["tiny_model", "deep_model"])
@pytest.mark.parametrize("text", list(EXPECTED))
def test_verdicts_are_measured_and_match_reach(which, text, request):
    model = request.getfixturevalue(which)
    ids = _ids(16)
    report = masks.mask_report(model.lens, ids, _spec(text, model))
    leaks, cache_ok = EXPECTED[text]
    # every position was edited: the measured grid is the whole reach grid, exactly
    assert report.probed_columns == list(range(len(ids)))
    assert torch.equal(report.influence, report.reach), f"{text}: measured influence differs from reach"
    assert report.reach_confirmed
    assert report.leaks_labels is leaks and report.leaks_labels_measured is leaks
    assert report.kv_cache_valid is cache_ok and report.kv_cache_valid_predicted is cache_ok
    if cache_ok:
        assert report.kv_max_change == 0.0  # exactly: the earlier K and V did not move at all
    else:
        assert report.kv_max_change > 1e-6


@pytest.mark.parametrize("w", [1, 2, 3, 5])
def test_a_window_reaches_layers_times_w_minus_1_back(deep_model, w):
    ids = _ids(24, separators=())
    L = deep_model.lens.config.n_layer
    report = masks.mask_report(deep_model.lens, ids, _spec(f"window:{w}", deep_model))
    i = torch.arange(24)[:, None]
    j = torch.arange(24)[None, :]
    expected = (j <= i) & (i - j <= L * (w - 1))
    assert torch.equal(report.reach, expected)
    assert torch.equal(report.influence, expected)  # measured
    assert report.cache_positions_per_layer == w  # bounded memory: W positions per layer


def test_documents_never_reach_across_a_separator(deep_model):
    ids = _ids(16)
    report = masks.mask_report(deep_model.lens, ids, _spec("documents:.", deep_model))
    segments = [range(0, 6), range(6, 12), range(12, 16)]  # separators at 5 and 11 close their segment
    for a in segments:
        for b in segments:
            block = report.influence[a.start:a.stop, b.start:b.stop]
            if a == b:
                assert torch.equal(block, torch.ones(len(a), len(a), dtype=torch.bool).tril())
            else:
                assert not block.any()
    assert report.cache_positions_per_layer == 6  # the longest document


def test_edit_changes_exactly_the_reach_column(deep_model):
    """The lab's single edit: changed positions == reach[:, position], zeros elsewhere exact."""
    ids = _ids(16)
    lens = deep_model.lens
    for text in ("prefix:6", "window:2", "documents:."):
        allowed = masks.allowed_matrix(_spec(text, deep_model), ids)
        grid = masks.reach(allowed, lens.config.n_layer)
        for position in (3, 8, 15):
            change = masks.measure_edits(lens, ids, allowed, [(position, ids[position] + 1)])[0]
            assert torch.equal(change.final > 0, grid[:, position]), (text, position)
            assert bool((change.final[~grid[:, position]] == 0).all())  # exactly 0, not small
            # layer by layer too: after l blocks the change follows reach after l layers
            for layer in range(lens.config.n_layer + 1):
                assert torch.equal(change.layers[layer] > 0, masks.reach(allowed, layer)[:, position]), (text, layer)


@pytest.mark.parametrize("causal_part,valid", [(True, True), (False, False)])
def test_custom_mask_cache_verdict(tiny_model, causal_part, valid):
    """A custom matrix: its last token plays the appended one."""
    n = 10
    g = torch.Generator().manual_seed(1)
    m = (torch.rand(n, n, generator=g) < 0.5) | torch.eye(n, dtype=torch.bool)
    m = m.tril() if causal_part else m | torch.zeros(n, n, dtype=torch.bool).index_fill(1, torch.tensor([n - 1]), True)
    report = masks.mask_report(tiny_model.lens, _ids(n), masks.custom_mask(m))
    assert report.kv_cache_valid is valid and report.kv_cache_valid_predicted is valid
    assert (report.kv_max_change == 0.0) is valid
    assert report.reach_confirmed


def test_long_texts_probe_a_sample_with_the_leak_witness(tiny_model):
    ids = _ids(40)
    allowed = masks.allowed_matrix(_spec("prefix:3", tiny_model), ids)
    grid = masks.reach(allowed, 2)
    cols = masks.probe_columns(grid, limit=8)
    assert len(cols) <= 8 and 39 in cols and 2 in cols  # position 2 is seen by 0 and 1
    measured = masks.measure_influence(tiny_model.lens, ids, allowed, cols)
    assert torch.equal(measured, grid[:, cols])


def test_measurement_reports_progress_and_cancels_between_batches(tiny_model):
    seen = []
    masks.mask_report(tiny_model.lens, _ids(40), _spec("window:2", tiny_model), progress=lambda *p: seen.append(p))
    assert seen == [(15, 40), (30, 40), (40, 40)]  # 15 edits + the original per forward
    flag = threading.Event()

    def press_cancel(done, total):
        flag.set()  # the user presses cancel after the first batch

    with pytest.raises(masks.MeasurementCancelled, match="after 15 of 40"):
        masks.measure_influence(tiny_model.lens, _ids(40), masks.causal_matrix(40), cancel=flag, progress=press_cancel)


@pytest.mark.parametrize("text,message", [
    ("window:0", "the window must be at least 1, got 0"),
    ("prefix:-3", "the prefix length must be at least 0, got -3"),
    ("window:x", "window:W needs a whole number W"),
    ("diagonal", "unknown mask kind 'diagonal'"),
    ("causal:2", "causal takes no argument"),
    ("documents:", "needs the separator token"),
    ("documents: the end", "is 2 tokens, not one"),
    ("", "the mask is empty"),
])
def test_bad_specs_are_one_clear_line(tiny_model, text, message):
    with pytest.raises(masks.MaskSpecError, match=message):
        masks.parse_mask_spec(text, tiny_model.tokenizer)


def test_specs_print_as_they_parse(tiny_model):
    for text in ("causal", "bidirectional", "prefix:4", "window:2", "documents:."):
        assert str(masks.parse_mask_spec(text, tiny_model.tokenizer)) == text
    assert masks.parse_mask_spec("documents:\\n", tiny_model.tokenizer).separator == "\n"
    with pytest.raises(masks.MaskSpecError, match="diagonal"):
        masks.custom_mask(torch.zeros(3, 3))


def test_measured_cells_are_the_influence_and_name_where_it_differs_from_reach(tiny_model):
    """What the designer draws over its reach grid: the cells the model measured as changed
    (edited column, moved row) and any cell where that measurement disagrees with reach."""
    import dataclasses

    ids = _ids(12)
    report = masks.mask_report(tiny_model.lens, ids, _spec("window:2", tiny_model), grid_limit=5)
    changed, differs = masks.measured_cells(report)
    columns = report.probed_columns
    assert len(columns) < len(ids)  # a sample: the unprobed columns get no cell
    assert {j for _i, j in changed} <= set(columns)
    assert changed == [(i, j) for i in range(len(ids)) for j in columns if report.influence[i, columns.index(j)]]
    assert all(bool(report.reach[i, j]) for i, j in changed) and differs == []
    # a measurement that disagrees with the grid at one cell is named there
    influence = report.influence.clone()
    influence[0, len(columns) - 1] = ~influence[0, len(columns) - 1]
    _, differs = masks.measured_cells(dataclasses.replace(report, influence=influence))
    assert differs == [(0, columns[-1])]


@pytest.mark.parametrize("which", ["tiny_model", "deep_model"])
def test_a_prefix_lm_leaks_only_where_the_loss_is_taken_inside_its_prefix(which, request):
    """A prefix-LM takes no loss on the prefix: as trained it does not leak; scored everywhere it does,
    at exactly the prefix positions whose label lies inside the prefix."""
    model = request.getfixturevalue(which)
    ids = _ids(16)
    report = masks.mask_report(model.lens, ids, _spec("prefix:6", model))
    every = report.label_leak("every")
    assert every.leaks and every.start == 0
    assert every.positions == [0, 1, 2, 3, 4]  # position 5 (the prefix's last) predicts token 6, outside it
    assert every.measured == every.positions  # every edit was measured: the model agrees with the grid
    after = report.label_leak("after-prefix")
    assert not after.leaks and after.start == 5 and after.positions == [] and after.measured == []
    assert report.verdicts("after-prefix")["leaks_labels"] is False and report.verdicts()["leaks_labels"] is True
    # masks without a prefix: the choice changes nothing
    causal = masks.mask_report(model.lens, ids, _spec("bidirectional", model))
    assert causal.label_leak("after-prefix").positions == causal.label_leak("every").positions != []
    with pytest.raises(ValueError, match="loss choice"):
        report.label_leak("somewhere")
