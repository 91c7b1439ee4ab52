"""A layer's heads drawn as one mosaic: one image, one overlay, one set of axes.

The head grid used to give each head its own ``PlotItem`` (view box, two axes, title,
layout cell): twelve of them to lay out and paint on every analysis were most of the GUI
thread's stall after an edit (pyqtgraph's ``GraphicsView.paintEvent``, then Qt layout).
Here the H maps are tiles of one array drawn by one ``ImageItem`` in one view
box, with gaps between the tiles; the hatching of the causal mask is one RGBA image laid
out the same way.  Nothing is laid out again when only the weights change: the tiles
keep their places while the number of heads, tokens and the pooling stay the same.

Coordinates: the view's units are the map's cells (a tile is ``n`` wide, as the maps
were); the image item's own coordinates are its pixels, each ``pool`` cells a side.
:meth:`MosaicGeometry.locate` turns an item position into (head, query, key).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF

from attention_lab.ui.panels.heatmap_kit import HeatImage, future_overlay, grid_shape

# The gaps as fractions of a tile: the default text's 10-pixel tiles get them exactly (1 and 2
# pixels), so the height the grid asks for (:func:`mosaic_aspect`, the same for every text)
# leaves no spare band above its maps (0.06 / 0.22 rounded to 0.1 / 0.2 there: ~20 px of white
# at 1366 × 768)
GAP_X = 0.1  # the gap between two tiles side by side
GAP_Y = 0.2  # between two rows of tiles: room for the heads' titles


@dataclasses.dataclass(frozen=True)
class MosaicGeometry:
    """Where each of ``heads`` tiles of ``pixels`` × ``pixels`` (pooled by ``pool`` from
    ``cells`` × ``cells``) lies in the mosaic's pixels, ``gap_x``/``gap_y`` pixels apart."""

    heads: int
    cells: int
    pixels: int
    pool: int

    @property
    def shape(self) -> tuple[int, int]:
        """(rows, cols) of tiles."""
        return grid_shape(self.heads)

    @property
    def gap_x(self) -> int:
        return max(1, round(self.pixels * GAP_X))

    @property
    def gap_y(self) -> int:
        return max(1, round(self.pixels * GAP_Y))

    @property
    def stride(self) -> tuple[int, int]:
        """(x, y) pixels from one tile's corner to the next one's."""
        return self.pixels + self.gap_x, self.pixels + self.gap_y

    @property
    def size(self) -> tuple[int, int]:
        """(height, width) of the mosaic in pixels."""
        rows, cols = self.shape
        sx, sy = self.stride
        return rows * sy - self.gap_y, cols * sx - self.gap_x

    def origin(self, head: int) -> tuple[int, int]:
        """(x, y) pixel of ``head``'s top-left corner."""
        row, col = divmod(head, self.shape[1])
        sx, sy = self.stride
        return col * sx, row * sy

    def extent(self) -> tuple[float, float]:
        """(width, height) of the mosaic in cells (the view's units)."""
        height, width = self.size
        return width * self.pool, height * self.pool

    def view_range(self) -> tuple[tuple[float, float], tuple[float, float]]:
        """(x range, y range) in cells that show the whole mosaic, with a gap's room above
        the first row for its titles."""
        width, height = self.extent()
        return (0.0, width), (-self.gap_y * self.pool, height)

    def locate(self, x: float, y: float) -> tuple[int, int, int] | None:
        """(head, query, key) under the item position (x, y) in pixels; None over a gap,
        past the last head or past the map's last cell (a pooled tile's padding)."""
        if x < 0 or y < 0:
            return None
        sx, sy = self.stride
        col, row = int(x // sx), int(y // sy)
        rows, cols = self.shape
        if col >= cols or row >= rows:
            return None
        head = row * cols + col
        in_x, in_y = x - col * sx, y - row * sy
        if head >= self.heads or in_x >= self.pixels or in_y >= self.pixels:
            return None
        key, query = math.floor(in_x * self.pool), math.floor(in_y * self.pool)
        if query >= self.cells or key >= self.cells:
            return None
        return head, query, key


def compose(maps: np.ndarray, geometry: MosaicGeometry) -> np.ndarray:
    """``maps`` [heads, m, m] laid out as one float32 mosaic; the gaps are NaN (drawn
    transparent: the view's white background shows between the tiles)."""
    out = np.full(geometry.size, np.nan, dtype=np.float32)
    m = geometry.pixels
    for h in range(geometry.heads):
        x, y = geometry.origin(h)
        out[y : y + m, x : x + m] = maps[h]
    return out


def tile_overlay(tile: np.ndarray, geometry: MosaicGeometry) -> np.ndarray:
    """One RGBA overlay ``tile`` (a map's hatching, ``factor`` image pixels per map pixel)
    repeated over every head's tile of the mosaic, transparent between the tiles."""
    factor = tile.shape[0] // geometry.pixels
    height, width = geometry.size
    out = np.zeros((height * factor, width * factor, 4), dtype=np.ubyte)
    side = tile.shape[0]
    for h in range(geometry.heads):
        x, y = geometry.origin(h)
        out[y * factor : y * factor + side, x * factor : x * factor + side] = tile
    return out


_overlays: dict = {}  # (geometry, id of the tile) -> (tile, mosaic): the last few, oldest first


def mosaic_overlay(geometry: MosaicGeometry, tile: np.ndarray | None = None) -> np.ndarray:
    """One map's hatching ``tile`` (default: the causal mask's future; the mask designer's
    walls) laid over every tile like :func:`compose`, at the hatching's own
    resolution.  The last few are kept by the tile's identity (``future_overlay`` and
    ``masked_overlay`` hand out the same array for the same mask), so redrawing the same
    analysis re-uses the same array; read-only."""
    tile = future_overlay(geometry.pixels) if tile is None else tile
    key = (geometry, id(tile))
    if key not in _overlays:
        if len(_overlays) >= 4:
            del _overlays[next(iter(_overlays))]
        out = tile_overlay(tile, geometry)
        out.flags.writeable = False
        _overlays[key] = (tile, out)  # the tile is kept: its id stays its own
    return _overlays[key][1]


class MosaicImage(HeatImage):
    """The mosaic's image: hover and clicks report ``(head, query, key)`` as the cell."""

    def __init__(self, on_hover=None, on_click=None):
        super().__init__("mosaic", on_hover, on_click)
        self.geometry: MosaicGeometry | None = None

    def show_mosaic(self, mosaic: np.ndarray, geometry: MosaicGeometry, levels) -> None:
        changed = geometry != self.geometry
        self.geometry = geometry
        self.setImage(mosaic, autoLevels=False, levels=levels)
        if changed:
            self.setRect(QRectF(0, 0, *geometry.extent()))

    def cell_at(self, pos) -> tuple[int, int, int] | None:
        if self.geometry is None or self.image is None:
            return None
        return self.geometry.locate(pos.x(), pos.y())


def square_view_range(geometry: MosaicGeometry, width_px: float, height_px: float):
    """``((x0, x1), (y0, y1)), pixels_per_cell``: the view range (in cells) that shows the whole
    mosaic in a view box of ``width_px`` × ``height_px`` with square cells, so every map is as
    tall as it is wide (stretched to the box, the maps were ~135 × 65 px on a laptop).  The
    mosaic sits against the left and bottom axes, whose token labels it lines up with; the
    spare room is on the right or above the first row."""
    (x0, x1), (y0, y1) = geometry.view_range()
    if width_px <= 0 or height_px <= 0:
        return ((x0, x1), (y0, y1)), 0.0
    scale = min(width_px / (x1 - x0), height_px / (y1 - y0))
    return ((x0, x0 + width_px / scale), (y1 - height_px / scale, y1)), scale


def tile_side_px(heads: int, width_px: float, height_px: float) -> float:
    """Screen pixels across one head's tile when the mosaic of ``heads`` tiles is shown with square
    cells in a view box of ``width_px`` × ``height_px`` (:func:`square_view_range`), counting the gaps
    as the fractions :data:`GAP_X` and :data:`GAP_Y` of a tile rather than one geometry's rounded
    pixels: the same box gives the same size whatever the number of tokens.  The worker pools a long
    text's preview to the size told before that text was drawn; told from a 10-token mosaic (gaps of
    1-2 pixels: 10-20 % of a tile) it was a few per cent off, the preview's pooling too coarse, and
    the grid pooled the whole maps again on the GUI thread (20-28 ms for 1024 tokens)."""
    if width_px <= 0 or height_px <= 0:
        return 0.0
    rows, cols = grid_shape(heads)
    return min(width_px / (cols + (cols - 1) * GAP_X), height_px / (rows * (1 + GAP_Y)))


def mosaic_aspect(heads: int) -> float:
    """Height over width (in cells) of the mosaic of ``heads`` tiles with its titles' room above
    (:meth:`MosaicGeometry.view_range`), counting the gaps as the fractions :data:`GAP_X` and
    :data:`GAP_Y` of a tile as :func:`tile_side_px` does: the same for every number of tokens.
    The head grid asks the dock for the height this gives its width; from one geometry's rounded
    gaps (1-2 pixels of a 10-token tile: 10-20 %) the hint moved by ~4 % when a long text came,
    and the dock laid the panel out again and the grid was painted a second time in the turn
    that drew the next panel (the long text's longest stall)."""
    rows, cols = grid_shape(heads)
    return rows * (1 + GAP_Y) / (cols + (cols - 1) * GAP_X)


def tile_ticks(tokens, geometry: MosaicGeometry, count: int, pixels_per_cell: float, vertical: bool,
               row_px: float = 13.0, char_px: float = 7.0) -> list:
    """Token ticks for ``count`` rows (``vertical``) or columns of tiles: each tile's cells
    labelled, as many as fit at ``pixels_per_cell`` screen pixels a cell.  Along a row a label
    needs ``row_px`` (the tick font's ascent: every token of a 10-token text is labelled on a
    110-px map); along a column a token's text needs ``char_px`` a character (at most 10, cut
    with "…"), and where not even three characters fit, each column gets its position (the
    token strip's number) if that fits, else every ``step``-th column a short text."""
    n = len(tokens)
    if not n or pixels_per_cell <= 0:
        return [[], []]
    if vertical:
        step, chars = max(1, math.ceil(row_px / pixels_per_cell)), 9
    else:
        chars, step = int(pixels_per_cell / char_px) - 1, 1
        if chars < 3:
            if len(str(n - 1)) * char_px + 3 <= pixels_per_cell:
                stride = geometry.stride[0] * geometry.pool
                return [[(k * stride + i + 0.5, str(i)) for k in range(count) for i in range(n)], []]
            chars, step = 4, max(1, math.ceil(5 * char_px / pixels_per_cell))
    chars = min(chars, 10)
    labels = [(i, t if len(t) <= chars else t[: max(1, chars - 1)] + "…") for i, t in enumerate(tokens) if i % step == 0]
    stride = geometry.stride[1 if vertical else 0] * geometry.pool
    return [[(k * stride + i + 0.5, text) for k in range(count) for i, text in labels], []]


def title_items(view: pg.ViewBox, count: int, items: list) -> list:
    """``count`` title labels in ``view`` (kept in ``items``, made once and reused)."""
    while len(items) < count:
        item = pg.TextItem("", color="#222", anchor=(0, 1))
        item.setZValue(20)
        view.addItem(item)
        items.append(item)
    for i, item in enumerate(items):
        item.setVisible(i < count)
    return items
