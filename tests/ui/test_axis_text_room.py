"""A map's bottom axis has the room of its tick text from the start, so its first paint lays nothing out again.

pyqtgraph measures an axis' tick text only when it paints it, and then grows (or, with no
ticks, shrinks) the axis: the head grid's bottom axis went 19.6 → 28.9 px at its first paint,
so its maps lost 9 px and the grid asked the dock for 9 px more, one more layout pass and
repaint of the dock after the first show and after a resize.  ``reserve_tick_text_height``
gives the axis that room when it is built, in whatever tick font it has."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtGui import QFont  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from attention_lab.ui.panels.heatmap_kit import configure_map_plot, reserve_tick_text_height  # noqa: E402
from attention_lab.ui.panels.plot_setters import set_axis_label, set_ticks  # noqa: E402


def _font(points: float | None = None, pixels: int | None = None) -> QFont:
    font = QFont(QApplication.font())
    if points is not None:
        font.setPointSizeF(points)
    if pixels is not None:
        font.setPixelSize(pixels)
    return font


TOKENS = [(i + 0.5, text) for i, text in enumerate(["The", " cat", " sát", " on", " the", " mat", "ção", "g"])]


def _map_plot(qtbot) -> tuple[pg.GraphicsLayoutWidget, pg.PlotItem]:
    """A shown view with one map plot, set up as the panels set theirs up."""
    widget = pg.GraphicsLayoutWidget()
    qtbot.addWidget(widget)
    widget.resize(500, 400)
    widget.show()
    plot = widget.addPlot()
    configure_map_plot(plot)
    return widget, plot


@pytest.mark.parametrize("font", [_font(7.5), _font(9.0), _font(14.0), _font(pixels=20)], ids=["7.5pt", "9pt", "14pt", "20px"])
@pytest.mark.parametrize("label", ["key", "chave · agrupadas ×4"])
def test_the_axis_keeps_its_height_through_its_first_paints_and_fits_its_text(qtbot, font, label):
    widget, plot = _map_plot(qtbot)
    axis = plot.getAxis("bottom")
    axis.setStyle(tickFont=font)
    reserve_tick_text_height(axis)
    set_axis_label(plot, "bottom", label)
    plot.setRange(xRange=(0, len(TOKENS)), yRange=(0, 4), padding=0)
    built = axis.minimumHeight()  # what pyqtgraph asks of the plot's layout (its min = max)
    heights = []
    for ticks in ([TOKENS, []], [[], []], [TOKENS, []]):  # labelled, labels taken off (a new mosaic), labelled again
        set_ticks(axis, ticks)
        widget.grab()  # paints every item: pyqtgraph measures the ticks' text here
        heights.append(axis.minimumHeight())
    assert heights == [built] * 3, f"the axis was {built} px when built, then {heights} after its paints"
    # the room kept is at least what pyqtgraph measured for the text (none of it cut or hidden)
    assert axis.textHeight <= axis.style["tickTextHeight"] < axis.textHeight + 1.5


@pytest.mark.parametrize("side", ["bottom", "top"])
def test_token_labels_across_a_map_keep_its_axis_height(qtbot, side):
    """The leakage, budget, KV, enlarged-head and panel_kit maps label their columns with
    ``fit_token_ticks``: their axis gets its room when first labelled, before any paint, and
    keeps it through an empty text and back."""
    from attention_lab.ui.panels.heatmap_kit import fit_token_ticks

    widget, plot = _map_plot(qtbot)
    plot.showAxis(side)
    axis = plot.getAxis(side)
    tokens = [text for _x, text in TOKENS]
    plot.setRange(xRange=(0, len(tokens)), yRange=(0, 4), padding=0)
    fit_token_ticks(plot, side, tokens)
    labelled = axis.minimumHeight()
    heights = []
    for text in (tokens, [], tokens):
        fit_token_ticks(plot, side, text)
        widget.grab()
        heights.append(axis.minimumHeight())
    assert heights == [labelled] * 3, f"the axis was {labelled} px when labelled, then {heights} after its paints"
