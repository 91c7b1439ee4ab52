"""Heatmap pieces shared by the head grid and the leakage panel.

* :class:`HeatImage`: an ``ImageItem`` that reports the cell under the mouse and clicks;
* :func:`hatch_overlay`: an RGBA image that hatches the cells of a boolean mask (the
  forbidden future under the causal mask, or exact zeros), drawn above the heatmap;
* :func:`grid_shape`: rows × columns for H small multiples (3 × 4 for 12 heads);
* :func:`configure_map_plot`: the set-up of every plot that holds a token or layer map
  (the head grid's, the leakage and KV-stability maps, the mask's grid).
"""

from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QApplication

from attention_lab.core.lens import future_mask
from attention_lab.ui.panels.plot_setters import plain_axes, set_ticks, tick_text_painter

CMAP = "viridis"


class TopLabelAxis(pg.AxisItem):
    """A left axis whose name starts at the plot's top instead of its middle: the head grid's
    mosaic is taller than its dock on a laptop, and a name centred on it was cut by the dock's
    scroll ("onsulta (destino) ↓" at 1366×768); at the top it is read with the first row of maps."""

    TOP_PX = 4

    def resizeEvent(self, ev=None) -> None:  # noqa: N802 -- Qt's name (pyqtgraph places the name here)
        super().resizeEvent(ev)
        if self.label is None or self.orientation != "left":
            return
        length = self.label.boundingRect().width()  # along the axis: the name is turned
        centred = self.label.pos().y()
        self.label.setPos(QPointF(self.label.pos().x(), min(centred, length + self.TOP_PX)))


def configure_map_plot(plot: pg.PlotItem) -> None:
    """A plot for a map with rows top to bottom (queries, layers), fixed by its panel: no
    buttons, no SI prefixes, no mouse panning, no padding and no auto-range.

    The panels always set the range themselves (0 … n, with ``set_view_range``): with
    auto-range on, every item added and every range set first measured all the plot's
    items (140 ms for the enlarged head; ``tests/ui/test_panel_protocol.py`` checks every
    panel's map plots)."""
    plot.hideButtons()
    plain_axes(plot)
    vb = plot.getViewBox()
    vb.invertY(True)
    vb.setMouseEnabled(x=False, y=False)
    vb.setDefaultPadding(0.0)
    vb.disableAutoRange()


class HeatImage(pg.ImageItem):
    """Row-major heatmap whose cell (row, col) under the mouse is reported to ``on_hover``."""

    def __init__(self, key, on_hover: Callable | None = None, on_click: Callable | None = None):
        super().__init__(axisOrder="row-major")
        self.key = key
        self._on_hover = on_hover
        self._on_click = on_click
        self.setAcceptHoverEvents(True)
        # a pooled image (see set_pooled) has one pixel per `pool` × `pool` cells of a map of
        # `cells` × `cells`; otherwise pixel = cell
        self.pool = 1
        self.cells: tuple[int, int] | None = None

    def set_pooled(self, data: np.ndarray, pool: int, cells: int, **options) -> None:
        """Show ``data`` (made by :func:`attention_lab.core.pooling.max_pool`) for a ``cells`` ×
        ``cells`` map whose cells are one unit wide: each pixel covers ``pool`` × ``pool`` of them."""
        self.pool, self.cells = pool, (cells, cells)
        self.setImage(data, **options)
        self.setRect(QRectF(0, 0, data.shape[1] * pool, data.shape[0] * pool))

    def cell_at(self, pos) -> tuple[int, int] | None:
        img = self.image
        if img is None:
            return None
        # item coordinates are pixel coordinates (setRect only adds a transform); a pixel of
        # a pooled image covers `pool` cells each way
        col, row = int(math.floor(pos.x() * self.pool)), int(math.floor(pos.y() * self.pool))
        rows, cols = self.cells or img.shape[:2]
        if 0 <= row < rows and 0 <= col < cols:
            return row, col
        return None

    def hoverEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph naming)
        if self._on_hover is None:
            return
        if ev.isExit():
            self._on_hover(self.key, None, None)
            return
        cell = self.cell_at(ev.pos())
        self._on_hover(self.key, cell, ev.screenPos() if cell is not None else None)

    def mouseClickEvent(self, ev) -> None:  # noqa: N802
        if self._on_click is not None and ev.button() == Qt.MouseButton.LeftButton:
            ev.accept()
            self._on_click(self.key, self.cell_at(ev.pos()))
        else:
            super().mouseClickEvent(ev)


def overlay_item() -> pg.ImageItem:
    """An RGBA overlay that ignores the mouse (hover and clicks reach the heatmap below)."""
    item = pg.ImageItem(axisOrder="row-major")
    item.setAcceptHoverEvents(False)
    item.setAcceptedMouseButtons(Qt.MouseButton.NoButton)
    item.hoverEvent = lambda ev: None  # pyqtgraph's scene calls hoverEvent directly
    item.setZValue(5)
    return item


def hatch_overlay(mask: np.ndarray, colour=(235, 235, 235), line=(140, 140, 140)) -> np.ndarray:
    """RGBA (row-major) image covering the ``True`` cells of ``mask`` with diagonal hatching.

    Small maps are upsampled so each cell gets visible stripes; big ones (> 256 cells a
    side) get a flat grey, which is all the pixels can show anyway.
    """
    mask = np.asarray(mask, dtype=bool)
    rows, cols = mask.shape
    factor = max(1, min(12, 256 // max(1, rows, cols)))
    big = np.kron(mask, np.ones((factor, factor), dtype=bool)) if factor > 1 else mask
    # one 32-bit word per pixel, chosen with np.where: 16 ms → ~3 ms at 1024 × 1024 compared
    # with assigning RGBA tuples through a boolean index
    fill = np.array((*colour, 215), np.ubyte).view(np.uint32)
    out = np.where(big, fill, np.uint32(0)).view(np.ubyte).reshape(big.shape + (4,))
    if factor >= 4:
        yy, xx = np.indices(big.shape)
        stripes = big & (((xx + yy) % max(3, factor // 2)) == 0)
        out[stripes] = (*line, 235)
    return out


@functools.lru_cache(maxsize=4)
def future_overlay(n: int) -> np.ndarray:
    """The hatching of an n-token causal map's future, made once per length (it depends on
    nothing else; at 1024 tokens making it took 12 ms, and the grid and the enlarged head
    both need it for every analysis).  Read-only: it is shared."""
    overlay = hatch_overlay(future_mask(n).numpy())
    overlay.flags.writeable = False
    return overlay


def grid_shape(n: int) -> tuple[int, int]:
    """(rows, cols) for ``n`` small multiples: 12 -> 3 × 4, 16 -> 4 × 4, 25 -> 5 × 5."""
    cols = max(1, math.ceil(math.sqrt(n)))
    rows = max(1, math.ceil(n / cols))
    return rows, cols


def colormap() -> pg.ColorMap:
    return pg.colormap.get(CMAP)


def fit_token_ticks(plot: pg.PlotItem, side: str, tokens, *, index: bool = False, centre: float = 0.5) -> None:
    """Label ``side`` ("left"/"bottom"/"top") of ``plot`` with tokens, as many as fit.

    Cells are one unit wide at 0, 1, … n-1 (labels at the cell centres).  Recomputed when
    the plot is resized, so a narrow grid cell gets every k-th token and a wide one gets
    them all; nothing is drawn over its neighbour.
    """
    axis = plot.getAxis(side)
    axis._fit_tokens = (list(tokens), index, centre)  # read by the resize hook below
    vb = plot.getViewBox()
    if not getattr(axis, "_fit_hooked", False):
        vb.sigResized.connect(lambda _vb, a=axis, p=plot, s=side: _apply_fit(p, s, a))
        axis._fit_hooked = True
        if side in ("bottom", "top"):  # its height fixed before its text is first painted
            reserve_tick_text_height(axis)
    _apply_fit(plot, side, axis)


def _apply_fit(plot: pg.PlotItem, side: str, axis: pg.AxisItem) -> None:
    tokens, index, centre = getattr(axis, "_fit_tokens", ([], False, 0.5))
    n = len(tokens)
    if not n:
        set_ticks(axis, [[], []])
        return
    rect = plot.getViewBox().boundingRect()
    vertical = side in ("left", "right")
    pixels = (rect.height() if vertical else rect.width()) or 200.0
    per_cell = pixels / n

    def label(i: int, chars: int) -> str:
        text = tokens[i] if len(tokens[i]) <= chars else tokens[i][: max(1, chars - 1)] + "…"
        return f"{i} {text}" if index else text

    if vertical:
        step = max(1, math.ceil(13.0 / per_cell))
        set_ticks(axis, [[(i + centre, label(i, 9)) for i in range(0, n, step)], []])
        return
    if axis.style["hideOverlappingLabels"] is not LABEL_OVERHANG_PX:  # a first label half past the edge stays
        axis.setStyle(hideOverlappingLabels=LABEL_OVERHANG_PX)
    set_ticks(axis, [across_ticks([label(i, 10) for i in range(n)], per_cell, centre, _tick_metrics(axis)), []])


def _tick_metrics(axis: pg.AxisItem) -> QFontMetrics:
    return QFontMetrics(axis.style.get("tickFont") or QApplication.font())


def reserve_tick_text_height(axis: pg.AxisItem) -> None:
    """A bottom or top axis given the room of one line of its tick text when it is built.

    pyqtgraph measures an axis' tick text only when it first paints it, and then grows the
    axis to fit: the head grid's bottom axis went 19.6 → 28.9 px at its first paint, so the
    grid's maps lost 9 px, the grid asked its dock for 9 px more, and the dock was laid out
    and painted once more after the first show and after a resize.  The line is
    measured as pyqtgraph measures it (a QPicture painter's text rectangle, × 0.8), in the
    axis' own tick font, so the text gets the room it would have got; the axis' label is
    added on top by pyqtgraph when shown, as before."""
    with tick_text_painter(axis) as painter:
        line = painter.boundingRect(QRectF(0, 0, 100, 100), Qt.AlignmentFlag.AlignCenter, "0").height()
    axis.setStyle(autoExpandTextSpace=False, tickTextHeight=math.ceil(line * 0.8))


#: pixels kept free between two labels side by side
LABEL_GAP_PX = 6
#: how far a label under the first or last cell may reach past the axis' ends (pyqtgraph hides it beyond)
LABEL_OVERHANG_PX = 12


def across_ticks(labels: list[str], per_cell: float, centre: float, metrics) -> list[tuple[float, str]]:
    """Ticks at ``i + centre`` for labels written side by side under cells ``per_cell`` pixels wide: each
    label whole, left out where it would run into the one before it (cut to a few letters, "␣b…" told
    nothing)."""
    ticks, right = [], -LABEL_OVERHANG_PX - LABEL_GAP_PX
    end = len(labels) * per_cell + LABEL_OVERHANG_PX
    for i, text in enumerate(labels):
        middle = (i + 0.5) * per_cell  # from the first cell's left edge (``centre`` - 0.5)
        if middle < right + LABEL_GAP_PX:
            continue  # no room whatever its width: a long text's labels are not all measured (15 ms at 1024)
        width = metrics.horizontalAdvance(text)
        if middle - width / 2 >= right + LABEL_GAP_PX and middle + width / 2 <= end:
            ticks.append((i + centre, text))
            right = middle + width / 2
    return ticks
