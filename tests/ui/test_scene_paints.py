"""The window is painted once per turn, not once per pass of each graphics scene (a
scene sends its views' window the update request inside its own queued call, so a turn that
changed several views painted the whole window several times over)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg
from attention_lab.ui.scene_paints import paint_once_per_turn, scene_paints
from paint_counter import EventCounter, PaintCounter
from PySide6.QtCore import QEvent
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

TIMEOUT_MS = 60_000


def _window(qtbot, coalesced: bool):
    scene_paints()  # the scenes made from now on are watched
    window = QWidget()
    layout = QVBoxLayout(window)
    plots = [pg.PlotWidget(window) for _ in range(3)]
    label = QLabel("before", window)
    for plot in plots:
        layout.addWidget(plot)
    layout.addWidget(label)
    curves = [plot.plot([0, 1, 2], [0, 1, 0]) for plot in plots]
    for plot in plots:
        plot.getPlotItem().getViewBox().disableAutoRange()  # the data change repaints, it does not relayout
    qtbot.addWidget(window)
    window.resize(400, 600)
    window.show()
    qtbot.waitExposed(window)
    qtbot.wait(200)
    # installed before the window's own filter: it counts the requests that get through to the window
    passes = EventCounter(window, QEvent.Type.UpdateRequest)
    if coalesced:
        paint_once_per_turn(window)
    return window, plots, curves, label, passes


@pytest.mark.parametrize("coalesced", [False, True])
def test_three_views_changed_in_one_turn_paint_the_window_once(qtbot, coalesced):
    _shown, plots, curves, label, passes = _window(qtbot, coalesced)
    views = [PaintCounter(plot.viewport()) for plot in plots]
    label_paints = PaintCounter(label)
    passes.count = 0
    held = scene_paints().held
    for i, curve in enumerate(curves):  # one turn: three scenes' items change
        curve.setData([0, 1, 2], [i + 1, 0, i + 1])
    label.setText("after")
    qtbot.wait(300)
    assert all(view.count >= 1 for view in views), [view.count for view in views]  # each view painted anew
    assert label_paints.count >= 1
    if coalesced:
        assert passes.count == 1, f"{passes.count} paints of the window for one turn"
        assert scene_paints().held - held >= 1  # the first scene's request held, the window's own sent after
    else:  # Qt alone: a paint of the window inside each scene's call (what the filter is for)
        assert passes.count >= 3


def test_the_views_show_what_was_set_last(qtbot):
    """A held request is replaced, never lost: what the window shows on screen (its backing store,
    not a fresh rendering) is the turn's last data."""
    window, _plots, curves, _label, _passes = _window(qtbot, True)

    def on_screen():
        return window.screen().grabWindow(window.winId()).toImage()

    curves[0].setData([0, 1, 2], [0, 0, 0])
    qtbot.wait(200)
    flat = on_screen()
    held = scene_paints().held
    curves[0].setData([0, 1, 2], [0, 1, 0])
    qtbot.wait(200)
    assert scene_paints().held > held
    assert on_screen() != flat
    curves[0].setData([0, 1, 2], [0, 0, 0])
    qtbot.wait(200)
    assert on_screen() == flat


def test_a_scene_call_that_paints_nothing_leaves_the_next_paint_alone(qtbot):
    """Only a request sent inside a scene's call is held: a scene's call that sent none (its
    ``changed`` signal, a queued slot) ends with it, and the window's next paint comes as Qt
    posts it (the prototype's first version held the next request whatever sent it, so a plain
    widget's paints went through one more posted event each)."""
    _shown, plots, _curves, label, _passes = _window(qtbot, True)
    paints = scene_paints()
    plots[0].scene().update()  # a queued call of the scene that sends no request of its own
    qtbot.wait(100)
    held = paints.held
    label.setText("after")  # a plain widget's update: Qt's own request, later
    qtbot.wait(100)
    assert paints.held == held
    assert not paints._scene_call


def test_the_main_window_paints_a_layer_step_in_fewer_passes(qtbot, make_window, isolated_settings, tmp_path):
    """The app's window: a layer step redraws the head grid's twelve maps and the layer's plots
    (several scenes, several passes); every request that reaches the window is a paint of it."""
    from attention_lab.devtools.learner_driver import LearnerDriver
    from attention_lab.ui.panels.ids import PanelId

    isolated_settings.setValue("first_run/gpt2_offer_answered", True)
    isolated_settings.setValue("tour/offered", True)
    window = make_window(model_spec="demo")
    driver = LearnerDriver(window, {"start": "demo"}, tmp_path / "work")
    qtbot.waitUntil(lambda: window.built_panel(PanelId.HEAD_GRID).has_data(), timeout=TIMEOUT_MS)
    driver.settle()
    qtbot.wait(300)
    filter_ = window.scene_paints
    # our counter sees what gets through the window's filter: installed before it (Qt calls the
    # filter installed last first)
    window.removeEventFilter(filter_)
    passes = EventCounter(window, QEvent.Type.UpdateRequest)
    window.installEventFilter(filter_)
    spin = window.built_panel(PanelId.HEAD_GRID).layer

    def step(to: int) -> int:
        passes.count = 0
        spin.setValue(to)
        driver.settle()
        qtbot.wait(300)  # (settled: three quiet turns; and the paints after them)
        return passes.count

    step(1)  # warmed up: the first drawing of a layer lays its plots out once
    held = filter_.held
    with_filter = [step(layer) for layer in (2, 1, 2)]
    assert filter_.held - held >= len(with_filter), "a layer step had no request held"
    window.removeEventFilter(filter_)
    without = [step(layer) for layer in (1, 2, 1)]
    window.installEventFilter(filter_)
    # 8-9 against 10 per step on the 2-core machine: the requests left are the steps' own turns (the
    # redraw draws a panel per turn), each painted once
    assert sum(with_filter) < sum(without), f"window paints per step: {with_filter} held, {without} not"
