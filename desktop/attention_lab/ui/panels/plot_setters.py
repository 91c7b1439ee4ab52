"""pyqtgraph setters that do nothing when the value is already shown.

pyqtgraph redoes its layout on every ``setTitle``/``setLabel``/``setStyle`` and throws
away an axis' cached drawing on every ``setTicks`` or range change, whether or not
anything changed.  A panel that redraws the same twelve plots for each edit paid for all
of it each time: the head grid's ``show_state`` and the repaint that follows it were
most of the GUI thread's stall after an edit (measured with the perf probe).  Panels call
these instead, so only what an analysis really changes costs GUI time.
"""

from __future__ import annotations

import contextlib
import math

import pyqtgraph as pg
from PySide6.QtGui import QPainter, QPicture


def _changed(obj, key: str, value) -> bool:
    """Remember ``value`` on ``obj`` under ``key``; True when it differs from the last one."""
    attr = f"_shown_{key}"
    if getattr(obj, attr, None) == value:
        return False
    setattr(obj, attr, value)
    return True


def set_title(plot: pg.PlotItem, text: str, **style) -> None:
    if _changed(plot, "title", (text, tuple(sorted(style.items())))):
        plot.setTitle(text, **style)


def set_label_text(label: pg.LabelItem, text: str, **style) -> None:
    if _changed(label, "text", (text, tuple(sorted(style.items())))):
        label.setText(text, **style)


def set_axis_label(plot: pg.PlotItem, side: str, text: str) -> None:
    axis = plot.getAxis(side)
    if _changed(axis, "label", text):
        if not _reword_axis_label(axis, text):
            axis.setLabel(text)


def _reword_axis_label(axis: pg.AxisItem, text: str) -> bool:
    """A shown axis name given new words, its ticks kept: pyqtgraph's ``setLabel`` throws the axis'
    drawing away and draws every tick text again (``generateDrawSpecs``, in Python: 3-4 ms an axis),
    and an axis with grid lines repaints its whole plot; a language switch renamed ~10 axes in sight.
    Only when nothing but the words change: a name shown, no units, and the new one as
    tall (its room across the axis is the name's height: pyqtgraph sizes the axis by it).  False:
    not done, ``setLabel`` it."""
    label = axis.label
    if label is None or not text or not label.isVisible() or axis.labelUnits:
        return False
    height = label.boundingRect().height()
    axis.labelText = text
    label.setHtml(axis.labelString())
    if label.boundingRect().height() != height:
        axis._updateLabel()  # another room: pyqtgraph lays the axis out again
        return True
    picture = axis.picture
    axis.resizeEvent(None)  # the name centred again along the axis (pyqtgraph's placing, which drops the drawing)
    axis.picture = picture
    return True


def fill_legend(legend: pg.LegendItem, entries: list) -> None:
    """``legend``'s entries, ``(plot item, words)`` each: the same items as shown get their new words
    in place (a language switch, a run's fitted slopes); other items rebuild it.  A cleared and rebuilt
    legend (new labels, its layout redone, the plot repainted around it) was a third of the GUI thread's
    work when a KV run's result arrived, and of the Leakage panel's re-wording."""
    shown = legend.items
    if [sample.item for sample, _label in shown] == [item for item, _text in entries]:
        for (_sample, label), (_item, text) in zip(shown, entries):
            if label.text != text:
                label.setText(text)
        # its new size now, not in a posted layout request: one handled as the window is deleted
        # moved the legend's anchor on a ViewBox already gone ("Internal C++ object (ViewBox)
        # already deleted", the fuzzer's quit_and_start_again after a language switch)
        legend.layout.activate()
        return
    legend.clear()
    for item, text in entries:
        legend.addItem(item, text)


def set_ticks(axis: pg.AxisItem, ticks: list) -> None:
    if _changed(axis, "ticks", ticks):
        axis.setTicks(ticks)


def show_axis_values(axis: pg.AxisItem, shown: bool) -> None:
    if axis.style.get("showValues") != shown:
        axis.setStyle(showValues=shown)


def plain_axes(plot: pg.PlotItem) -> None:
    """No automatic SI prefix on any axis ("×0.001" confuses; tokens and weights need none).
    It also spares every change of the view re-typesetting each axis' label (HTML): 3-4 ms
    of the head grid's update for a long text, measured."""
    for side in ("left", "bottom", "top", "right"):
        plot.getAxis(side).enableAutoSIPrefix(False)


def show_axis(plot: pg.PlotItem, side: str, shown: bool) -> None:
    """Show or hide one of a plot's axes (its values with it), only when that changes."""
    if plot.getAxis(side).isVisible() != shown:
        plot.showAxis(side, shown)
    show_axis_values(plot.getAxis(side), shown)


def set_view_range(target, x_range=None, y_range=None) -> None:
    """``setRange(xRange, yRange, padding=0)`` on a PlotItem or ViewBox, unless the view
    already shows exactly that (and auto-range is off, so it would stay so)."""
    vb = target if isinstance(target, pg.ViewBox) else target.getViewBox()
    current = vb.viewRange()
    wanted = [(0, x_range), (1, y_range)]
    same = all(a is False for a in vb.state["autoRange"]) and all(
        r is None or (math.isclose(current[i][0], r[0], abs_tol=1e-9) and math.isclose(current[i][1], r[1], abs_tol=1e-9))
        for i, r in wanted
    )
    if not same:
        vb.setRange(xRange=x_range, yRange=y_range, padding=0)


def nice_ceiling(value: float, smallest: float = 1e-3) -> float:
    """The first 1, 2 or 5 × 10^k at or above ``value`` (at least ``smallest``): a plot's top
    that keeps its ticks (and everything placed by them) while the data's maximum moves a
    little, instead of a new range, new ticks and a repaint of every label on each update."""
    value = max(value, smallest)
    power = 10.0 ** math.floor(math.log10(value))
    return next(step * power for step in (1.0, 2.0, 5.0, 10.0) if step * power >= value * (1 - 1e-12))


def show_grid(plot, *, x: bool = False, y: bool = False, alpha: float = 0.25) -> None:
    """``plot.showGrid`` with the grid's finest level left out.

    That level's lines are nearly transparent (pyqtgraph fades them by spacing) and, drawn
    across a wide plot, cost ~18 ms per repaint on the raster engine (measured: 21 ms vs
    6 ms for a 1183 × 287 plot); they were the slowest thing the leakage panel painted."""
    plot.showGrid(x=x, y=y, alpha=alpha)
    for side, on in (("bottom", x), ("left", y)):
        if on:
            plot.getAxis(side).setStyle(maxTickLevel=1)


def settle_transforms(view: pg.ViewBox, texts=()) -> None:
    """Apply a new view range to the view's items now rather than when it is painted.

    pyqtgraph updates a view box's transform, and each ``TextItem``'s (which keeps its size on
    screen), in the scene's ``sigPrepareForPaint``, i.e. inside the paint: changing transforms
    there makes the scene dirty again, and the view was painted a second time in a later turn
    (the head grid's titles after a new text).  Called after the range changed, the
    paint finds every transform as it is and paints once."""
    view.updateMatrix()
    for text in texts:
        if text.isVisible():
            text.updateTransform()


@contextlib.contextmanager
def tick_text_painter(axis: pg.AxisItem):
    """A painter on a throwaway picture with ``axis``'s tick font, as pyqtgraph's own paint sets it:
    text measured with it gets the room pyqtgraph gives it when it paints the axis."""
    picture = QPicture()  # (held while the painter is on it)
    painter = QPainter(picture)
    try:
        if axis.style["tickFont"]:
            painter.setFont(axis.style["tickFont"])
        yield painter
    finally:
        painter.end()


def settle_axis_widths(plot, names=("left",)) -> None:
    """Measure the ``names`` axes' tick labels for the current range now rather than in the paint.

    pyqtgraph measures an axis's tick labels while painting it; wider labels for a new range
    (0.05 → 0.15) widen the axis there, which lays the plot out again and paints it a second and
    a third time in later turns (the Leakage bars after a model switch).  Measured when
    the range is set, the axis has its width, and the plot its layout, before the first paint (call
    :func:`settle_transforms` after it: the view box may have moved)."""
    widths = [plot.getAxis(name).minimumSize() for name in names]  # (what the layout gives it next)
    for name in names:
        axis = plot.getAxis(name)
        if not axis.isVisible():
            continue
        with tick_text_painter(axis) as painter:
            axis.generateDrawSpecs(painter)  # (sets the axis's width for the labels it will draw)
    if widths != [plot.getAxis(name).minimumSize() for name in names]:
        plot.layout.activate()  # the new widths laid out now, not in a posted request after the paint
