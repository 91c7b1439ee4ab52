"""The panels behind tabs are built and drawn while the window is idle, so a tab's
first opening does not stall the window building it."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QEvent  # noqa: E402

from paint_counter import EventCounter, PaintCounter  # noqa: E402

from attention_lab.ui.docks import FIRST_VIEW_PANELS
from attention_lab.ui import idle_build
from attention_lab.ui.idle_build import install_idle_build

TIMEOUT_MS = 60000


def test_idle_build_leaves_every_panel_built_drawn_and_working(qtbot, make_window):
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10, turn_ms=5)
    hidden = [pid for pid in window.docks if pid not in FIRST_VIEW_PANELS]
    assert hidden and all(window.built_panel(pid) is None for pid in hidden)  # not with the window
    qtbot.waitUntil(lambda: builder.done, timeout=TIMEOUT_MS)
    state = window.last_state
    for pid in hidden:
        panel = window.built_panel(pid)
        assert panel is not None, pid
        assert pid not in window.panels_waiting, pid  # the newest analysis drawn, out of sight
    # opening a tab shows what exists: the panel built in idle time, already drawn
    mask = window.built_panel("panel.mask")
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: mask.has_data(), timeout=TIMEOUT_MS)
    assert window.panel("panel.mask") is mask
    # and it keeps working: an edit reaches it like any panel in sight
    window.session.set_layer(1)
    qtbot.waitUntil(lambda: window.last_state is not None and window.last_state.layer == 1, timeout=TIMEOUT_MS)
    assert window.last_state is not state
    qtbot.waitUntil(lambda: mask.has_data() and "panel.mask" not in window.panels_waiting, timeout=TIMEOUT_MS)


def _build_parts_in_sight(window) -> None:
    """What the idle builder does first (the later parts of the panels in sight), done by hand."""
    for pid in FIRST_VIEW_PANELS:
        while window.panel(pid).build_later_part():
            pass


def test_the_parts_of_the_panels_in_sight_come_before_the_hidden_panels(qtbot, make_window):
    """The head grid's "one head" plots (one click away) are the idle build's first
    turns, before any hidden panel (a tab away): last in line, the soak's learner opened that
    tab before they existed and its click made them."""
    from attention_lab.ui.panels.ids import PanelId

    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10_000, turn_ms=10_000)  # stepped by hand
    qtbot.waitUntil(lambda: window.last_state is not None and not window.session.worker.busy, timeout=TIMEOUT_MS)
    grid = window.panel(PanelId.HEAD_GRID)
    assert grid._head_plot_pool == [] and grid._head_bar is None
    for _turn in range(3):
        builder.step()
    assert builder.steps == [("part", PanelId.HEAD_GRID)] * 3
    assert len(grid._head_plot_pool) == 2 and grid._head_bar is not None
    builder.step()
    assert builder.steps[-1][0] == "build"  # then the hidden panels


def test_idle_build_waits_for_an_analysis_being_drawn(qtbot, make_window):
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10_000, turn_ms=5)
    qtbot.waitUntil(lambda: window.last_state is not None and not window.session.worker.busy, timeout=TIMEOUT_MS)
    redraw = window.redraw
    redraw.showing = object()  # a newer state's round under way
    try:
        builder.step()
        assert all(window.built_panel(pid) is None for pid in window.docks if pid not in FIRST_VIEW_PANELS)
    finally:
        redraw.showing = redraw.last_state
    _build_parts_in_sight(window)
    builder.step()  # now it builds one panel ...
    built = [pid for pid in window.docks if pid not in FIRST_VIEW_PANELS and window.built_panel(pid) is not None]
    assert len(built) == 1
    builder.step()  # ... shows it on the next turn ...
    builder.step()  # ... and draws it on the one after
    assert builder.steps[-2:] == [("show", built[0]), ("draw", built[0])]
    assert built[0] not in window.panels_waiting


def test_one_unit_per_turn_and_the_window_keeps_its_minimum_size(qtbot, make_window):
    """Each turn builds one panel, or draws one, or builds one part a panel left for later (the
    KV panel's stability tab: its own turn); the window's minimum size never changes."""
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10_000, turn_ms=10_000)  # stepped by hand
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=TIMEOUT_MS)
    qtbot.wait(50)
    minimum = window.minimumSizeHint()
    turns = 0
    while not builder.done:
        before = len(builder.steps)
        builder.step()
        turns += 1
        assert len(builder.steps) - before <= 1  # at most one unit of work per turn
        qtbot.wait(1)  # the turn's layout requests handled
        assert window.minimumSizeHint() == minimum, builder.steps[-1]
        assert turns < 100 + 6 * idle_build.WORKER_WAIT_TURNS  # (the waits for the worker: bounded)
    kinds = [kind for kind, _pid in builder.steps if kind != "wait"]
    hidden = [pid for pid in window.docks if pid not in FIRST_VIEW_PANELS]
    assert kinds.count("build") == kinds.count("show") == kinds.count("draw") == len(hidden)
    # the stability tab, in turns of its own: its words, a map, the other map, the colour bar,
    # the cells' labels with the numbers
    kv = [step for step in builder.steps if step[1] == "panel.kvbench" and step[0] != "wait"]
    # then painted off-screen twice: the axes measure their labels, then are drawn at their widths
    assert kv == [("build", "panel.kvbench"), ("show", "panel.kvbench"), ("draw", "panel.kvbench")] + [
        ("part", "panel.kvbench")] * 5 + [("paint", "panel.kvbench")] * 2
    assert not window.built_panel("panel.kvbench").build_later_part()  # nothing left
    # the mask's two bar plots, one per turn
    assert [step for step in builder.steps if step[1] == "panel.mask" and step[0] != "wait"] == [
        ("build", "panel.mask"), ("show", "panel.mask"), ("draw", "panel.mask")] + [("part", "panel.mask")] * 2 + [
        ("paint", "panel.mask")] * 2
    assert not window.built_panel("panel.mask").build_later_part()


def test_a_panel_is_shown_on_the_turn_after_its_build_and_the_worker_is_waited_for(qtbot, make_window, monkeypatch):
    """Built hidden, shown (polished, laid out) on a turn of its own; while the worker computes,
    a step waits (its Python and the worker's would take the GIL by turns), for a while only."""
    from attention_lab.ui.worker import InferenceWorker

    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10_000, turn_ms=10_000)  # stepped by hand
    qtbot.waitUntil(lambda: window.last_state is not None and not window.session.worker.busy, timeout=TIMEOUT_MS)
    _build_parts_in_sight(window)
    builder.step()
    (kind, pid), = builder.steps
    panel = window.built_panel(pid)
    assert kind == "build" and panel.isHidden()
    monkeypatch.setattr(InferenceWorker, "busy", property(lambda _self: True))  # a job running
    for _turn in range(idle_build.WORKER_WAIT_TURNS):
        builder.step()
    assert builder.steps[1:] == [("wait", pid)] * idle_build.WORKER_WAIT_TURNS and panel.isHidden()
    builder.step()  # waited long enough: on with it
    assert builder.steps[-1] == ("show", pid) and not panel.isHidden()
    monkeypatch.undo()
    builder.step()
    assert builder.steps[-1] == ("draw", pid)


def test_the_kv_stability_tab_is_built_when_first_shown(qtbot, make_window):
    window = make_window()
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=TIMEOUT_MS)
    kv = window.panel("panel.kvbench")
    assert not hasattr(kv, "stab_view")  # the costly part: not with the panel
    window.docks["panel.kvbench"].raise_()
    qtbot.waitUntil(lambda: kv.has_data(), timeout=TIMEOUT_MS)
    assert not hasattr(kv, "stab_view")  # the benchmark tab in sight, not the stability one
    kv.tabs.setCurrentWidget(kv.stability_tab)  # the learner clicks its tab
    assert hasattr(kv, "stab_view")  # its words and view now, its plots in the next turns
    qtbot.waitUntil(lambda: kv._stability_built, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: kv.stability() is not None, timeout=TIMEOUT_MS)
    qtbot.waitUntil(lambda: kv.stab_images["causal"].image is not None, timeout=TIMEOUT_MS)
    assert kv._stab_cells["causal"].texts()  # the cells' values written


def _tab_in_sight(window, pid):
    dock = window.docks[pid]
    return next(other for other in window.tabifiedDockWidgets(dock) if other.objectName() in FIRST_VIEW_PANELS)


def test_a_tab_built_in_idle_time_opens_without_a_new_layout_or_a_second_paint(qtbot, make_window):
    """Qt lays out only the tab in sight; the docks behind it kept the size they were added
    with (566 × 312, the KV panel's 100 × 30), so a panel built there was laid out again when its tab
    opened, every plot resized; and pyqtgraph sizes an axis to its labels only when it paints them, so
    that first paint re-laid the plots out and painted them all a second time.  Now each is laid out
    at its tab's size and painted once off-screen in idle time: opening it paints each plot once."""
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10, turn_ms=5)
    qtbot.waitUntil(lambda: builder.done and not window.session.worker.busy, timeout=TIMEOUT_MS)
    qtbot.wait(100)
    for pid in window.docks:
        if pid not in FIRST_VIEW_PANELS:
            assert window.docks[pid].size() == _tab_in_sight(window, pid).size(), pid
    mask = window.built_panel("panel.mask")
    # its five modes measured too: a measurement still on its way when the tab opens is drawn then,
    # a second paint of the table and bars that this test is not about (a guard on the set-up: the
    # one failure seen was a partial repaint, counted apart below)
    qtbot.waitUntil(lambda: mask.mode_details() is not None and not window.session.worker.busy, timeout=TIMEOUT_MS)
    qtbot.wait(100)
    views = mask.findChildren(pg.GraphicsView)
    assert len(views) == 3  # the grid and the two bar plots
    resized = [EventCounter(view, QEvent.Type.Resize) for view in views]
    # whole repaints only: a part of a view repainted later (a label's change beside it: 122 x 75 of
    # the bar plot's 164 x 194, once in three runs) is not the plot drawn a second time
    painted = [PaintCounter(view.viewport(), min_fraction=0.5) for view in views]
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: all(p.count for p in painted), timeout=TIMEOUT_MS)
    qtbot.wait(300)
    assert [r.count for r in resized] == [0, 0, 0]
    assert [p.count for p in painted] == [1, 1, 1], [p.rects for p in painted]


def test_a_tab_opened_after_an_edit_keeps_its_plots_sizes_until_its_measurement_is_drawn(qtbot, make_window):
    """The Mask tab opened after an edit draws the new analysis, asks for its five modes and draws them:
    its plots keep their size throughout (the sentence under the table kept its room while measuring; its
    emptying and refilling resized the bar plots twice, and in a dock just too short for the panel took
    its scroll bar away and back: two more layouts of the whole panel)."""
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10, turn_ms=5)
    qtbot.waitUntil(lambda: builder.done and not window.session.worker.busy, timeout=TIMEOUT_MS)
    mask = window.built_panel("panel.mask")
    assert mask.mode_details() is not None and mask.selected_text.text()  # measured in idle time
    state = window.last_state
    window.session.set_layer(1)
    qtbot.waitUntil(lambda: window.last_state is not state, timeout=TIMEOUT_MS)
    assert "panel.mask" in window.panels_waiting
    views = mask.findChildren(pg.GraphicsView)
    resized = [EventCounter(view, QEvent.Type.Resize) for view in views]
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: mask.state is window.last_state and mask.mode_details() is not None, timeout=TIMEOUT_MS)
    qtbot.wait(300)
    assert [r.count for r in resized] == [0] * len(views)
