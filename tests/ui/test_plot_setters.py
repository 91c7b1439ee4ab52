"""plot_setters: a setter does its work when the value changes and nothing when it doesn't.

The "nothing" is what keeps an edit cheap (pyqtgraph relays out and repaints on every
call); the "does its work" is what keeps the views right."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402

from attention_lab.ui.panels.plot_setters import (  # noqa: E402
    set_axis_label,
    set_label_text,
    set_ticks,
    set_title,
    set_view_range,
    show_axis_values,
    show_grid,
)


@pytest.fixture
def plot(qtbot):
    widget = pg.PlotWidget()
    qtbot.addWidget(widget)
    widget.show()
    item = widget.getPlotItem()
    item._test_widget = widget  # qtbot holds the widget weakly: keep it alive for the test
    return item


def _count_calls(monkeypatch, obj, name: str) -> list:
    calls = []
    original = getattr(obj, name)

    def counting(*args, **kwargs):
        calls.append(args)
        return original(*args, **kwargs)

    monkeypatch.setattr(obj, name, counting)
    return calls


def test_title_label_and_text_set_once_per_value(plot, monkeypatch):
    calls = _count_calls(monkeypatch, plot.titleLabel, "setText")
    set_title(plot, "head 3", size="9pt")
    set_title(plot, "head 3", size="9pt")
    assert plot.titleLabel.text == "head 3" and len(calls) == 1
    set_title(plot, "head 3", size="10pt")  # a different style is a change
    set_title(plot, "head 4", size="10pt")
    assert plot.titleLabel.text == "head 4" and len(calls) == 3

    axis = plot.getAxis("left")
    set_axis_label(plot, "left", "query")
    set_axis_label(plot, "left", "query")
    assert axis.labelText == "query"
    set_axis_label(plot, "left", "consulta")
    assert axis.labelText == "consulta"

    label = pg.LabelItem()
    label_calls = _count_calls(monkeypatch, label, "setText")
    for _ in range(3):
        set_label_text(label, "key →")
    assert label.text == "key →" and len(label_calls) == 1


def test_ticks_replaced_only_when_different(plot, monkeypatch):
    axis = plot.getAxis("bottom")
    calls = _count_calls(monkeypatch, axis, "setTicks")
    ticks = [[(0.5, "The"), (1.5, " dog")], []]
    set_ticks(axis, ticks)
    set_ticks(axis, [[(0.5, "The"), (1.5, " dog")], []])  # equal, not the same object
    assert len(calls) == 1 and axis._tickLevels == ticks
    set_ticks(axis, [[(0.5, "The"), (1.5, " cat")], []])
    assert len(calls) == 2 and axis._tickLevels[0][1] == (1.5, " cat")

    show_axis_values(axis, False)
    assert axis.style["showValues"] is False
    show_axis_values(axis, True)
    assert axis.style["showValues"] is True


def test_view_range_set_when_it_differs_or_auto_range_is_on(plot):
    vb = plot.getViewBox()
    changes = []
    vb.sigRangeChanged.connect(lambda *_: changes.append(vb.viewRange()))
    assert any(a is not False for a in vb.state["autoRange"])
    set_view_range(plot, (0, 10), (0, 10))
    assert vb.viewRange() == [[0, 10], [0, 10]] and changes
    assert all(a is False for a in vb.state["autoRange"])
    seen = len(changes)
    set_view_range(plot, (0, 10), (0, 10))  # already shown: no range change, no repaint
    assert len(changes) == seen
    vb.setRange(xRange=(2, 5), padding=0)  # the user zoomed in
    set_view_range(vb, (0, 10), (0, 10))  # a ViewBox works as well as a PlotItem
    assert vb.viewRange() == [[0, 10], [0, 10]]
    vb.enableAutoRange()
    set_view_range(plot, (0, 10), (0, 10))  # same numbers, but auto-range would move them
    assert all(a is False for a in vb.state["autoRange"])


def test_grid_without_its_finest_level(plot):
    show_grid(plot, y=True)
    assert plot.getAxis("left").grid is not False
    assert plot.getAxis("left").style["maxTickLevel"] == 1
    assert plot.getAxis("bottom").grid is False
