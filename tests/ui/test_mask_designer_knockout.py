"""The mask designer and the head knockout panels (the app side), with a real
session and worker on a tiny generated GPT-2: the mask chosen reaches the analysis, the
verdicts shown are core's (computed on the worker), a custom grid's edit changes the
analysis, the knockout's before/after and the head ranking are core's, and ranking can be
cancelled."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402

from attention_lab.core.ablation import knockout, run_rank_heads  # noqa: E402
from attention_lab.core.masks import allowed_matrix, mask_report, parse_mask_spec  # noqa: E402
from attention_lab.ui.i18n import translator  # noqa: E402
from attention_lab.ui.panels import head_grid as head_grid_module  # noqa: E402
from attention_lab.ui.panels.head_grid import HeadGridPanel  # noqa: E402
from attention_lab.ui.panels.knockout import KnockoutPanel  # noqa: E402
from attention_lab.ui.panels.mask_designer import MaskDesignerPanel  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.wiring import connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import load  # noqa: E402

LONG = 60_000
TEXT = "The cat sat. The dog ran. A bird sang"


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load(tiny_checkpoint)


@pytest.fixture
def session(qtbot, model):
    s = Session(InferenceWorker(name="test-designer"), debounce_ms=0)
    s.set_model(model)
    yield s
    assert s.shutdown(5.0)
    translator.set_language("en")


def analysed(qtbot, session, **expect):
    """Run the session's current inputs; the state once it is the one asked for."""
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        session.analyse_now()
    return blocker.args[0]


def make_panel(qtbot, session, cls):
    panel = cls()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    session.state_ready.connect(panel.show_state)
    connect_panel(session, panel)
    return panel


@pytest.mark.parametrize("mask", ["prefix:3", "window:2", "documents:."])
def test_the_chosen_mask_runs_the_analysis_and_its_verdicts_are_cores(qtbot, session, model, mask):
    session.set_text(TEXT)
    panel = make_panel(qtbot, session, MaskDesignerPanel)
    analysed(qtbot, session)
    kind, _, arg = mask.partition(":")
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        if kind == "documents":
            panel.set_choice(kind, separator=arg)
        else:
            panel.set_choice(kind, size=int(arg))
    state = blocker.args[0]
    spec = parse_mask_spec(mask, model.tokenizer)
    allowed = allowed_matrix(spec, state.ids)
    assert state.extras["mask_spec"] == mask and torch.equal(state.extras["allowed"], allowed)
    assert bool((state.attention_causal[:, ~allowed] == 0).all())  # the heatmaps follow the mask
    qtbot.waitUntil(lambda: panel.shown_verdicts() is not None, timeout=LONG)
    expected = mask_report(model.lens, state.ids, spec)
    assert panel.shown_verdicts() == expected.verdicts()
    assert torch.equal(panel._report.reach, expected.reach)
    assert panel.reach_image.image is not None
    text = panel.verdicts.text()
    assert ("Yes." in text.split("KV cache?")[1][:8]) == expected.kv_cache_valid
    # the measured cells drawn over the reach grid: a dot where editing column j moved row i
    dots, crosses = panel.measured_marks_shown()
    measured = sorted((int(i), expected.probed_columns[int(c)]) for i, c in torch.nonzero(expected.influence).tolist())
    assert dots == measured and dots  # the model's measurement, not the grid
    assert all(bool(expected.reach[i, j]) for i, j in dots) and crosses == []  # and here it matches the grid
    assert f"{len(expected.probed_columns)} of {state.n_tokens}" in panel.reach_note.text()
    translator.set_language("pt_BR")
    assert "cache KV" in panel.verdicts.text()
    assert panel.reach_note.text().startswith("Pontos")


def test_a_custom_grid_edit_changes_the_analysis(qtbot, session, model):
    session.set_text(TEXT)
    panel = make_panel(qtbot, session, MaskDesignerPanel)
    before = analysed(qtbot, session)
    with qtbot.waitSignal(session.state_ready, timeout=LONG):
        panel.edit_as_custom()  # the causal preset copied into the custom grid
    assert panel.kind() == "custom" and not panel.toggle_cell(3, 3)  # the diagonal stays allowed
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        assert panel.toggle_cell(1, 4)  # position 1 may now look at the later token 4
    after = blocker.args[0]
    assert after.extras["mask_spec"] == "custom" and bool(after.extras["allowed"][1, 4])
    assert bool((before.attention_causal[:, 1, 4] == 0).all())
    assert bool((after.attention_causal[:, 1, 4] > 0).all())
    qtbot.waitUntil(lambda: panel.shown_verdicts() is not None, timeout=LONG)
    assert panel.shown_verdicts()["leaks_labels"] is True  # computed from this grid's reach


def test_knockout_before_after_and_the_heatmaps_follow(qtbot, session, model):
    session.set_text(TEXT)
    session.set_layer(1)
    panel = make_panel(qtbot, session, KnockoutPanel)
    plain = analysed(qtbot, session)
    panel.set_mode("mean")
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        panel.toggle_head(0, 2)
    state = blocker.args[0]
    assert state.extras["knockout"] == ((0, 2),) and state.extras["knockout_mode"] == "mean"
    assert not torch.allclose(state.attention_causal, plain.attention_causal)  # layer 1's maps without head 0.2
    qtbot.waitUntil(lambda: panel.result() is not None, timeout=LONG)
    expected = knockout(model.lens, state.ids, [(0, 2)], "mean", state.n_tokens - 1)
    shown = panel.result()
    assert panel.position_box.value() == state.n_tokens - 1  # the last token, by default
    assert shown.top_after == expected.top_after and shown.loss_after == pytest.approx(expected.loss_after)
    assert panel.table.item(0, 2).text() == model.tokenizer.token_texts([expected.top_after[0][0]])[0]
    assert "→" in panel.loss_label.text()
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        panel.set_heads(())
    assert blocker.args[0].extras["knockout"] == ()


def test_the_layer_shown_changes_only_with_knocked_heads_below_or_in_it(qtbot, session, model):
    session.set_text(TEXT)
    session.set_layer(0)
    plain = analysed(qtbot, session)
    session.set_knockout([(1, 0)], "zero")  # a head above layer 0 can't change layer 0's maps
    state = analysed(qtbot, session)
    assert torch.equal(state.attention_causal, plain.attention_causal)
    assert not torch.equal(state.top_probs[-1], plain.top_probs[-1])


def test_ranking_is_cores_and_can_be_cancelled(qtbot, session, model):
    session.set_text(TEXT)
    panel = make_panel(qtbot, session, KnockoutPanel)
    state = analysed(qtbot, session)
    with qtbot.waitSignal(session.ranking_ready, timeout=LONG):
        panel.rank()
    expected = run_rank_heads(model.lens, state.ids, "zero")
    torch.testing.assert_close(panel.ranking().delta, expected.delta)
    assert panel.ranking().top == expected.top
    assert f"layer {expected.top[0][0]}, head {expected.top[0][1]} (" in panel.top_label.text()  # never "1.6"
    assert panel.rank_button.isEnabled() and not panel.progress.isVisible()
    panel.show_state(state)  # the same text again: the map stays
    assert panel.ranking() is not None
    # cancel: the worker sees the flag between batches and nothing is delivered
    with qtbot.waitSignal(session.ranking_cancelled, timeout=LONG):
        panel.rank()
        panel.ranking_cancel_wanted.emit()
    assert panel.rank_button.isEnabled()
    assert panel.ranking() is None
    # a ranking of another text is dropped when a new text arrives
    with qtbot.waitSignal(session.ranking_ready, timeout=LONG):
        panel.rank()
    session.set_text(TEXT + " again")
    analysed(qtbot, session)
    assert panel.ranking() is None


def test_shift_click_in_the_head_grid_knocks_the_head_out(qtbot, session, monkeypatch):
    session.set_text(TEXT)
    grid = make_panel(qtbot, session, HeadGridPanel)
    knock = make_panel(qtbot, session, KnockoutPanel)
    analysed(qtbot, session)
    monkeypatch.setattr(head_grid_module.QApplication, "keyboardModifiers",
                        staticmethod(lambda: head_grid_module.Qt.KeyboardModifier.ShiftModifier))
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        grid._grid_click("mosaic", (3, 0, 0))  # head 3's cell (query 0, key 0)
    assert blocker.args[0].extras["knockout"] == ((0, 3),)
    assert knock.heads() == ((0, 3),)


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_portrait_knocks_heads_out_by_shift_click_and_its_menu(qtbot, session, monkeypatch, language):
    """Heads are clicked out in the grid or the portrait: the portrait's Shift+click and its
    row menu send the head grid's intent, the knockout panel shows the set, the row is marked."""
    from attention_lab.ui.i18n import tr
    from attention_lab.ui.panels import portrait as portrait_module
    from attention_lab.ui.panels.portrait import PortraitPanel

    translator.set_language(language)
    session.set_text(TEXT)
    portrait = make_panel(qtbot, session, PortraitPanel)
    knock = make_panel(qtbot, session, KnockoutPanel)
    analysed(qtbot, session)
    assert tr("portrait.knockout_hint") in portrait.explain.source_text()  # behind "More…"
    row = next(r for r in range(portrait.table.rowCount()) if portrait._head_at_row(r) == 2)
    monkeypatch.setattr(portrait_module.QApplication, "keyboardModifiers",
                        staticmethod(lambda: portrait_module.Qt.KeyboardModifier.ShiftModifier))
    selected = []
    portrait.head_selected.connect(lambda layer, head: selected.append(head))
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        portrait._on_cell_clicked(row, 1)
    assert blocker.args[0].extras["knockout"] == ((0, 2),) and selected == []  # knocked out, not opened
    assert knock.heads() == ((0, 2),)
    assert portrait.knocked_out() == {2}
    row = next(r for r in range(portrait.table.rowCount()) if portrait._head_at_row(r) == 2)
    assert portrait.table.item(row, 0).text().endswith("✕")
    # the row's menu offers to put it back, and does
    menu = portrait.knockout_menu(2)
    action = menu.actions()[0]
    assert action.text() == tr("portrait.put_back", layer=0, head=2)
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        action.trigger()
    assert blocker.args[0].extras["knockout"] == ()
    assert portrait.knockout_menu(2).actions()[0].text() == tr("portrait.knock_out", layer=0, head=2)
    # the scatter's point does the same
    point = next(p for p in portrait.scatter.points() if p.data() == 1)
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        portrait._on_points_clicked(portrait.scatter, [point])
    assert blocker.args[0].extras["knockout"] == ((0, 1),)


def test_the_head_grid_hatches_the_designed_masks_walls_and_the_texts_name_the_mask(qtbot, model):
    from attention_lab.core.pipeline import AnalysisRequest, compute_analysis
    from attention_lab.ui.panels.leakage import LeakagePanel
    from attention_lab.ui.panels.mask_overlay import masked_overlay
    from attention_lab.ui.panels.mosaic import tile_overlay

    spec = parse_mask_spec("window:2")
    state = compute_analysis(model, AnalysisRequest(1, TEXT, position=5, mask=spec))
    n = state.n_tokens
    overlay = masked_overlay(state, n)
    factor = overlay.shape[0] // n
    hatched = overlay[factor // 2::factor, factor // 2::factor, 3] > 0  # each cell's centre pixel
    assert torch.equal(torch.from_numpy(hatched), ~allowed_matrix(spec, state.ids))
    grid = HeadGridPanel()
    qtbot.addWidget(grid)
    grid.resize(900, 700)
    grid.show()
    grid.show_state(state)
    qtbot.waitUntil(lambda: grid.mosaic.geometry is not None and grid.mosaic_overlay.image is not None, timeout=LONG)
    assert grid.mosaic.geometry.pixels == n  # a short text: one pixel per cell, so the tile is the overlay
    # every head's tile hatches the window's walls, not the causal triangle
    assert (grid.mosaic_overlay.image == tile_overlay(overlay, grid.mosaic.geometry)).all()
    # the mode switch names the mask it shows, in words (never its spec "window:2")
    assert "sliding window of 2" in grid.causal.text() and "window:2" not in grid.causal.text()
    leak = LeakagePanel()
    qtbot.addWidget(leak)
    leak.show()
    leak.show_state(state)
    qtbot.waitUntil(lambda: "sliding window of 2" in leak.summary.text(), timeout=LONG)
    assert "window:2" not in leak.summary.text()


def test_each_verdict_sentence_comes_from_its_own_measured_field(model):
    from attention_lab.ui.panels.mask_designer import verdict_lines

    ids = model.tokenizer.encode(TEXT)
    tokens = model.tokenizer.token_texts(ids)
    report = mask_report(model.lens, ids, parse_mask_spec("prefix:4"))
    text = " ".join(verdict_lines(report, tokens))
    assert "Loss taken at every position: does parallel training leak labels? Yes." in text
    assert "3 scored positions see a later token (#0–#2)" in text and "moved a scored earlier position" in text
    assert ("KV cache? Yes." if report.kv_cache_valid else "KV cache? No.") in text
    # as trained, the loss after the prefix only: no leak, and the sentence says where the loss starts
    trained = " ".join(verdict_lines(report, tokens, "after-prefix"))
    assert "Loss taken only after the prefix: does parallel training leak labels? No." in trained
    assert f"The loss starts at #3 “{tokens[3]}”" in trained and "moved no scored earlier position" in trained
    report.influence = torch.zeros_like(report.influence)  # as if the measurement had disagreed with the reach grid
    report.kv_cache_valid = not report.kv_cache_valid
    text = " ".join(verdict_lines(report, tokens))
    assert "moved no scored earlier position" in text
    assert ("KV cache? Yes." if report.kv_cache_valid else "KV cache? No.") in text


def test_the_learner_chooses_where_the_loss_is_taken_and_the_verdict_follows(qtbot, session, model):
    """A prefix-LM as trained takes no loss on its prefix: the verdict is computed for the choice."""
    session.set_text(TEXT)
    panel = make_panel(qtbot, session, MaskDesignerPanel)
    analysed(qtbot, session)
    with qtbot.waitSignal(session.state_ready, timeout=LONG):
        panel.set_choice("prefix", 4)
    qtbot.waitUntil(lambda: panel.shown_verdicts() is not None, timeout=LONG)
    assert panel.loss_choice.isEnabled() and panel.loss() == "every"
    every = panel.shown_verdicts()
    assert every["leaks_labels"] is True and every["leaking_positions"] == [0, 1, 2]
    assert "3 scored positions see a later token (#0–#2)" in panel.verdicts.text()
    panel.set_loss("after-prefix")
    trained = panel.shown_verdicts()
    assert trained["loss"] == "after-prefix" and trained["leaks_labels"] is False and trained["leaking_positions"] == []
    assert "Loss taken only after the prefix: does parallel training leak labels? No." in panel.verdicts.text()
    with qtbot.waitSignal(session.state_ready, timeout=LONG):
        panel.set_choice("window", 2)  # no prefix: the choice does not apply, and says every position
    qtbot.waitUntil(lambda: panel.shown_verdicts() is not None and panel.spec().kind == "window", timeout=LONG)
    assert not panel.loss_choice.isEnabled() and "Loss taken at every position" in panel.verdicts.text()
