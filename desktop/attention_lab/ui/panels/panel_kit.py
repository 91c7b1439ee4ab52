"""Small pieces the mask, portrait, KV-cache and shapes panels share.

* heatmap helpers: a pyqtgraph plot with token-labelled axes, rows = query
  ("destination", the token that looks), columns = key ("source", the token looked at).
* :func:`explanation_label`: the chapter-style paragraph every panel opens with.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QPointF, QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QTableWidget, QTableWidgetItem

from attention_lab.ui import number_format
from attention_lab.ui.i18n import tr
from attention_lab.ui.strings import portrait as _role_texts  # noqa: F401 -- registers the role names
from attention_lab.ui.strings import window as _window_texts  # noqa: F401 -- registers "More…" and "Less"
from attention_lab.ui.panels.heatmap_kit import configure_map_plot, fit_token_ticks  # the head grid's: as many labels as fit
from attention_lab.ui.panels.plot_setters import plain_axes, set_axis_label, set_view_range

# ---------------------------------------------------------------------------- labels


#: where a text's first paragraph ends and the rest, shown behind "More…", begins (see
#: :class:`ExplanationLabel`; the string tables' word budgets count the part before it)
MORE = "<!--more-->"


class ExplanationLabel(QLabel):
    """A selectable, word-wrapped rich-text label whose height for a width is measured once per text.

    A text with :data:`MORE` in it shows what comes before it and a "More…" link; the link
    shows the rest (and "Less" hides it again).  The choice stays for the label's next texts: a
    learner who opened the details keeps them when the numbers change.

    QLabel lays its selectable text out again for every ``heightForWidth`` question (it sets the
    text control's width), and that relayout repaints the label: each turn of a model switch's
    redraw asked the window's layout again, and the explanation of every panel in sight was
    painted once per turn, 3 times per switch (the soak's load_model stalls)."""

    #: texts whose heights are kept: a language switch and back measured both texts again at every
    #: width the layout asked about (~1 ms of rich-text layout each, ~15 per switch)
    KEPT_TEXTS = 4

    def __init__(self, parent=None):
        super().__init__(parent)
        #: (text, font, margins) -> {width: height}, the newest last
        self._heights: dict[tuple, dict[int, int]] = {}
        self._source = ""  # the text as given, MORE and all
        self.expanded = False
        self.linkActivated.connect(self._on_link)

    def setText(self, text: str) -> None:  # noqa: N802 -- Qt's name
        self._source = text
        shown = self._shown()
        if shown != self.text():
            super().setText(shown)

    def source_text(self) -> str:
        """The text as given (both parts); :meth:`text` is what is shown."""
        return self._source

    def has_more(self) -> bool:
        return MORE in self._source

    def set_expanded(self, expanded: bool) -> None:
        self.expanded = expanded
        super().setText(self._shown())

    def _on_link(self, href: str) -> None:
        if href in ("#more", "#less"):
            self.set_expanded(href == "#more")

    def _shown(self) -> str:
        first, marker, rest = self._source.partition(MORE)
        if not marker:
            return first
        links = Qt.TextInteractionFlag.LinksAccessibleByMouse
        if not self.textInteractionFlags() & links:  # once: setting flags again re-makes the text control
            self.setTextInteractionFlags(self.textInteractionFlags() | links)
        if self.expanded:
            return f'{first}{rest} <a href="#less">{tr("more.less")}</a>'
        return f'{first} <a href="#more">{tr("more.more")}</a>'

    def heightForWidth(self, width: int) -> int:  # noqa: N802 -- Qt's name
        key = (self.text(), self.font().key(), self.contentsMargins().top(), self.contentsMargins().bottom(),
               self.contentsMargins().left(), self.contentsMargins().right())
        heights = self._heights.pop(key, None)
        if heights is None:
            heights = {}
            while len(self._heights) >= self.KEPT_TEXTS:
                del self._heights[next(iter(self._heights))]  # the text shown longest ago
        self._heights[key] = heights
        if width not in heights:
            if len(heights) >= 64:  # a window resized through many widths: keep the memory small
                heights.clear()
            heights[width] = self._measured(super().heightForWidth, width)
        return heights[width]

    def sizeHint(self):  # noqa: N802 -- Qt's name
        return self._measured(super().sizeHint)

    def minimumSizeHint(self):  # noqa: N802 -- Qt's name
        return self._measured(super().minimumSizeHint)

    def _measured(self, measure, *args):
        """``measure(*args)`` without the repaint: measuring lays the text control out at another
        width, and its update request repaints a label whose text and size may not have changed
        (a label whose text changed is repainted by ``setText`` itself)."""
        controls = [c for c in self.children() if c.metaObject().className() == "QWidgetTextControl"]
        for control in controls:
            control.blockSignals(True)
        try:
            return measure(*args)
        finally:
            for control in controls:
                control.blockSignals(False)


def set_header_labels(table: QTableWidget, labels: Sequence[str], orientation=Qt.Orientation.Horizontal) -> None:
    """``table``'s column (or row) names, changed in place where they differ: new header items
    (``setHorizontalHeaderLabels``) sized every column to its contents again and repainted the whole
    table on each language switch, same words or not."""
    horizontal = orientation == Qt.Orientation.Horizontal
    for index, text in enumerate(labels):
        item = table.horizontalHeaderItem(index) if horizontal else table.verticalHeaderItem(index)
        if item is None:
            (table.setHorizontalHeaderItem if horizontal else table.setVerticalHeaderItem)(index, QTableWidgetItem(text))
        elif item.text() != text:
            item.setText(text)


def set_text(label, text: str) -> None:
    """``label``'s text, set only when it differs: a label given its own text again is laid out
    and repainted all the same (a language switch re-words whole panels)."""
    if label.text() != text:
        label.setText(text)


def set_box_title(box, text: str) -> None:
    """``box``'s title, set only when it differs (as :func:`set_text`)."""
    if box.title() != text:
        box.setTitle(text)


def set_cell_text(table: QTableWidget, row: int, column: int, text: str) -> QTableWidgetItem:
    """The item at ``row``, ``column`` showing ``text``: the one there, its text changed only if it
    differs, or a new one.  A new item per cell on each fill laid the whole table out again and
    repainted it (a language switch changed a few words of it)."""
    item = table.item(row, column)
    if item is None:
        item = QTableWidgetItem(text)
        table.setItem(row, column, item)
    elif item.text() != text:
        item.setText(text)
    return item


def explanation_label(parent=None) -> QLabel:
    label = ExplanationLabel(parent)
    label.setWordWrap(True)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    label.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Minimum)
    label.setContentsMargins(4, 2, 4, 6)
    return label


class SteadyHeightLabel(QLabel):
    """A word-wrapped label that keeps the room of the tallest text it has shown (or may show next).

    A label whose sentence follows a choice (the Mask panel's selected mode) grew and shrank by a
    line as the learner switched: each time the layout moved the plots under it and pyqtgraph laid
    them out again (the soak's ``set_mask_mode`` stalls).  :meth:`set_texts` shows one
    text and keeps, at the label's width, the room of the tallest text shown there so far and of
    ``alternatives``: going back to a shorter one lays nothing out.  A new width starts afresh.

    (Reserving the five modes' sentences up front grew the Mask panel when an edit's numbers made
    one of them longer: in a dock just too short for the panel, every plot laid out again.  The
    legend's few short alternatives are reserved up front.)"""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setWordWrap(True)
        self._alternatives: list[str] = []
        self._probe: QLabel | None = None  # measures a text without showing it (made on first use)

    def set_texts(self, shown: str, alternatives: Sequence[str]) -> None:
        """Show ``shown``; keep the room of the tallest of ``alternatives`` (``shown`` among them)."""
        self._alternatives = [shown, *alternatives]
        self._reserve()
        if self.text() != shown:
            self.setText(shown)

    @property
    def alternatives(self) -> list[str]:
        """The texts whose room is kept (the one shown among them)."""
        return list(self._alternatives)

    def tallest_height(self, width: int) -> int:
        """The height the tallest alternative needs at ``width`` (0 with none)."""
        if not self._alternatives or width <= 0:
            return 0
        probe = self._probe
        if probe is None:
            probe = self._probe = QLabel()
            probe.setWordWrap(True)
        probe.setTextFormat(self.textFormat())
        probe.setFont(self.font())
        probe.setMargin(self.margin())
        probe.setIndent(self.indent())
        probe.setContentsMargins(self.contentsMargins())
        tallest = 0
        for text in self._alternatives:
            probe.setText(text)
            tallest = max(tallest, probe.heightForWidth(width))
        return tallest

    def _reserve(self, width_changed: bool = False) -> None:
        """Keep the tallest alternative's room; at the same width the room only grows (the next
        texts' numbers wrap a line earlier or later: shrinking and growing back laid the box out
        twice).  Nothing is measured while hidden (its width is not the one it will be shown at)."""
        if not self.testAttribute(Qt.WidgetAttribute.WA_WState_Visible):
            return
        height = self.tallest_height(self.width())
        if not width_changed:
            height = max(height, self.minimumHeight())
        if height != self.minimumHeight():
            self.setMinimumHeight(height)

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt's name
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self._reserve(width_changed=True)  # another width, other line breaks

    def showEvent(self, event) -> None:  # noqa: N802 -- Qt's name
        super().showEvent(event)
        self._reserve()  # laid out now: its width is the real one


def monospace_font() -> QFont:
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    font.setStyleHint(QFont.StyleHint.Monospace)
    return font


def fmt_number(value: float, digits: int = 3) -> str:
    """Exact zeros print as "0" (the point of the causal mask), the rest with ``digits`` significant digits."""
    if value == 0:
        return "0"
    if not np.isfinite(value):
        return str(value)
    if abs(value) < 10 ** -(digits + 1) or abs(value) >= 1e6:
        return number_format.scientific(value, digits - 1)
    return number_format.significant(value, digits) if abs(value) < 1 else number_format.trimmed(value, digits)


def fmt_bytes(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{number_format.fixed(size, 0 if unit == 'B' else 1)} {unit}"
        size /= 1024
    return f"{n} B"


# ---------------------------------------------------------------------------- plots

ROLE_COLOURS = {
    "previous-token": (31, 119, 180),
    "sink": (214, 39, 40),
    "current-token": (44, 160, 44),
    "self": (44, 160, 44),
    "positional": (148, 103, 189),
    "induction": (255, 127, 14),
    "broad": (127, 127, 127),
    "mixed": (140, 86, 75),
}
_EXTRA_COLOURS = [(23, 190, 207), (188, 189, 34), (227, 119, 194), (100, 100, 100)]


def roles_text(held: tuple[str, ...]) -> str:
    """The chapter's roles a head holds (``core.roles``), in the interface's language: the portrait's table
    and the head grid's hover name a head's roles alike."""
    return ", ".join(tr(f"roles.{role}.name") for role in held) if held else tr("portrait.role.none")


def role_colour(role: str) -> tuple[int, int, int]:
    if role in ROLE_COLOURS:
        return ROLE_COLOURS[role]
    return _EXTRA_COLOURS[sum(map(ord, role)) % len(_EXTRA_COLOURS)]


class SteadyLayoutWidget(pg.GraphicsLayoutWidget):
    """A ``pg.GraphicsLayoutWidget`` whose size hint does not follow its own current size.

    ``QGraphicsView`` hints its scene's rectangle, which pyqtgraph keeps equal to the view's
    size; the dock's scroll area lays its panel out at the height the panel's layout prefers for
    its width (its items' hints), so the panel came out a few pixels taller on every layout
    pass: the head grid grew 4 px a turn for seconds after start-up (551 → 755 px at 1366×768,
    53 resizes, each a repaint of its maps while the window built the other panels).
    Here the hint is the minimum size, or taller: ``height_for_width(width)``, the height the
    view's contents want at the view's width (the head grid: square maps filling the width),
    which depends on the width only, so no pass feeds the next."""

    def __init__(self, parent=None, height_for_width: Callable[[int], int | None] | None = None):
        super().__init__(parent)
        self.height_for_width = height_for_width
        self._hinted: QSize | None = None  # the hint the layout was last told about

    def sizeHint(self) -> QSize:  # noqa: N802 -- Qt's name
        minimum = self.minimumSize()
        wanted = self.height_for_width(self.width()) if self.height_for_width is not None else None
        return QSize(minimum.width(), max(minimum.height(), wanted or 0))

    def refresh_hint(self) -> None:
        """Tell the layout when the hint changed (new contents, a new width); a no-op otherwise, so
        a redraw at the same size costs no layout pass."""
        hint = self.sizeHint()
        if hint != self._hinted:
            self._hinted = hint
            self.updateGeometry()

    def resizeEvent(self, event) -> None:  # noqa: N802 -- Qt's name
        super().resizeEvent(event)
        # (pyqtgraph calls this with None while it is being made, before our attributes exist)
        if event is not None and event.size().width() != event.oldSize().width():
            self.refresh_hint()


class SteadySplitter(QSplitter):
    """A ``QSplitter`` whose size hint is the same whatever happened before: its views' minimums
    (or the sizes the learner dragged the handle to), its handles counted.

    Qt's hint is the sum of its widgets' hints, and a graphics view hints its current size (its
    scene's rectangle); a panel in a dock's scroll area is laid out at the height its layout
    prefers for its width, so every relayout fed the splitter's current sizes back as the sizes
    it wanted.  Whatever one relayout gave or took was then kept: without the handles counted the
    leakage bars lost 4 px per language switch (down to their minimum over a soak), and with them
    counted a switch whose labels were re-laid out one turn apart gave the bars a line's height
    that the next switch added to again (210 → 224 → 238 px).  A hint that does not depend on
    the current sizes has nothing to ratchet: the scroll area stretches the panel to its dock and
    the splitter shares the room by its stretch factors."""

    def __init__(self, *args) -> None:
        super().__init__(*args)
        self._dragged: list[int] | None = None  # the sizes the learner chose by dragging the handle
        self.splitterMoved.connect(self._on_moved)

    def _on_moved(self, _pos: int, _index: int) -> None:
        self._dragged = self.sizes()
        self.updateGeometry()

    def _length(self, size: QSize) -> int:
        return size.height() if self.orientation() == Qt.Orientation.Vertical else size.width()

    def sizeHint(self) -> QSize:  # noqa: N802 -- Qt's name
        hint = super().sizeHint()
        shown = [i for i in range(self.count()) if not self.widget(i).isHidden()]
        handles = sum(self.handleWidth() for i in shown[1:])
        if self._dragged is not None:
            length = sum(size for i, size in enumerate(self._dragged) if i in shown)
        else:
            length = sum(self._length(self.widget(i).minimumSizeHint().expandedTo(self.widget(i).minimumSize()))
                         for i in shown)
        if self.orientation() == Qt.Orientation.Vertical:
            return QSize(hint.width(), length + handles)
        return QSize(length + handles, hint.height())


class TextPool:
    """Labels on a plot, reused from one redraw to the next.

    Making a ``pg.TextItem`` and adding it to a plot costs ~2 ms of GUI time (and removing
    it as much): a 10-token map's 100 cell values took 0.3-0.5 s per edit.  The pool keeps
    its items, changes their text, colour and place, and hides the ones not needed."""

    def __init__(self, plot, ignore_bounds: bool = False, **options):
        self.plot = plot
        self.ignore_bounds = ignore_bounds  # True: the labels never widen an auto-ranged view
        self.options = {"anchor": (0.5, 0.5), **options}
        self.items: list[pg.TextItem] = []
        self.used = 0

    def show(self, labels) -> None:
        """``labels``: ``(text, x, y, colour)`` tuples; every other label is hidden."""
        labels = list(labels)
        while len(self.items) < len(labels):
            item = pg.TextItem("", **self.options)
            item.setZValue(20)
            self.plot.addItem(item, ignoreBounds=self.ignore_bounds)
            self.items.append(item)
        for item, (text, x, y, colour) in zip(self.items, labels):
            if getattr(item, "_pool_text", None) != (text, colour):  # setText re-lays the item out
                item.setText(text, color=colour)
                item._pool_text = (text, colour)
            if item.pos().x() != x or item.pos().y() != y:
                item.setPos(x, y)
            item.show()
        for item in self.items[len(labels) : self.used]:
            item.hide()
        self.used = len(labels)

    def clear(self) -> None:
        self.show([])

    @property
    def shown(self) -> list[pg.TextItem]:
        return self.items[: self.used]


class CellLabels(pg.GraphicsObject):
    """A map's cell values ("0", "−∞", "0.42"), all drawn by one item.

    A :class:`TextPool` makes one ``pg.TextItem`` per label, ~2 ms each on first use: the
    mask grid's 16 × 16 cells made its first drawing a 250 ms stall (the idle build's
    longest step).  This item keeps the labels as data and paints them in one
    pass, centred on their data point at the screen's font size (unscaled by the view);
    a label wider or taller than its cell on screen is left out, so a map drawn small shows
    colours instead of overlapping text."""

    def __init__(self, cell: tuple[float, float] = (1.0, 1.0)):
        super().__init__()
        self.cell = cell  # a cell's width and height in data units
        self._labels: list[tuple[str, float, float, QColor]] = []
        self._bounds = QRectF()
        self.setZValue(20)

    def show_labels(self, labels) -> None:
        """``labels``: ``(text, x, y, colour)`` tuples, as :meth:`TextPool.show` takes them."""
        labels = [(str(text), float(x), float(y), QColor(*colour)) for text, x, y, colour in labels]
        if [(t, x, y, c.rgba()) for t, x, y, c in labels] == [(t, x, y, c.rgba()) for t, x, y, c in self._labels]:
            return  # an edit that changes no label repaints nothing
        self.prepareGeometryChange()
        self._labels = labels
        if labels:
            xs, ys = [x for _t, x, _y, _c in labels], [y for _t, _x, y, _c in labels]
            w, h = self.cell
            self._bounds = QRectF(min(xs) - w / 2, min(ys) - h / 2, max(xs) - min(xs) + w, max(ys) - min(ys) + h)
        else:
            self._bounds = QRectF()
        self.update()

    def clear(self) -> None:
        self.show_labels([])

    def texts(self) -> list[tuple[str, float, float]]:
        """What is written where (the tests' view of the labels)."""
        return [(text, x, y) for text, x, y, _c in self._labels]

    def boundingRect(self) -> QRectF:  # noqa: N802 -- Qt's name
        return self._bounds

    @staticmethod
    def fits(text: str, cell_px: tuple[float, float], metrics) -> bool:
        """Whether ``text`` is written in a cell of ``cell_px`` (width, height) screen pixels: what the
        paint leaves out, a panel can say another way (the mask grid's legend line)."""
        return metrics.height() <= cell_px[1] and metrics.horizontalAdvance(text) <= cell_px[0]

    def paint(self, painter, *_args) -> None:
        if not self._labels:
            return
        to_screen = painter.transform()
        corner, far = to_screen.map(QPointF(0.0, 0.0)), to_screen.map(QPointF(*self.cell))
        cell_w, cell_h = abs(far.x() - corner.x()), abs(far.y() - corner.y())
        painter.resetTransform()  # text at the font's size, whatever the view's zoom
        metrics = painter.fontMetrics()
        for text, x, y, colour in self._labels:
            if not self.fits(text, (cell_w, cell_h), metrics):
                continue
            centre = to_screen.map(QPointF(x, y))
            painter.setPen(colour)
            painter.drawText(QRectF(centre.x() - cell_w / 2, centre.y() - cell_h / 2, cell_w, cell_h), Qt.AlignmentFlag.AlignCenter, text)


class UpwardLabels(CellLabels):
    """Labels written upwards from a data point (the leakage bars' "0 (exact)"), all painted
    by one item at the screen's font size.

    A :class:`TextPool` of rotated ``pg.TextItem`` s cost ~2 ms per new label, and each label
    shown is re-placed on every paint of its plot (pyqtgraph's ``TextItem`` follows the
    scene's ``sigPrepareForPaint``).  ``height`` (data units) is how far up the labels may
    reach: the item's bounds, so Qt repaints all of them."""

    def show_labels(self, labels, height: float = 0.0) -> None:
        """``labels``: ``(text, x, y, colour)`` tuples, as :meth:`TextPool.show` takes them."""
        self.prepareGeometryChange()
        self._labels = [(str(text), float(x), float(y), QColor(*colour)) for text, x, y, colour in labels]
        self._bounds = QRectF()
        if self._labels:
            xs = [x for _t, x, _y, _c in self._labels]
            low = min(y for _t, _x, y, _c in self._labels)
            self._bounds = QRectF(min(xs) - 0.5, low, max(xs) - min(xs) + 1.0, max(height - low, 0.0))
        self.update()

    def paint(self, painter, *_args) -> None:
        to_screen = painter.transform()
        painter.resetTransform()  # text at the font's size, whatever the view's zoom
        half = painter.fontMetrics().ascent() / 2 - painter.fontMetrics().descent() / 2
        for text, x, y, colour in self._labels:
            painter.save()
            painter.translate(to_screen.map(QPointF(x, y)))
            painter.rotate(-90)  # reads bottom to top, like the TextItems' angle=90 did
            painter.setPen(colour)
            painter.drawText(QPointF(0.0, half), text)
            painter.restore()


def clear_layout(view: pg.GraphicsLayoutWidget) -> None:
    """``view.clear()`` plus deleting what it held (plots, colour bars, labels).

    ``clear()`` alone leaves the C++ items alive, and with them the views' signal
    connections to their methods: every rebuild leaked (measured: 4 MB per analysis
    before this).  ``deleteLater`` drops both."""
    items = list(view.ci.items)
    view.clear()
    for item in items:
        item.deleteLater()


def make_plot(parent=None, *, background: str = "w") -> pg.PlotWidget:
    plot = pg.PlotWidget(parent=parent, background=background, enableMenu=False)  # no ViewBox menu built (3 ms a plot)
    plot.getPlotItem().hideButtons()
    plot.setMinimumSize(220, 180)
    plain_axes(plot.getPlotItem())  # "entropy (×0.001)" confuses
    return plot


def setup_token_heatmap(plot: pg.PlotWidget) -> pg.ImageItem:
    """An ImageItem whose rows are queries (top to bottom) and columns keys (left to right)."""
    configure_map_plot(plot.getPlotItem())
    item = pg.ImageItem(axisOrder="row-major")
    plot.addItem(item)
    plot.getPlotItem().getViewBox().setAspectLocked(False)
    plot.getPlotItem().showAxis("top")
    plot.getPlotItem().hideAxis("bottom")
    return item


def set_heatmap_axes(plot: pg.PlotWidget, rows: Sequence[str], cols: Sequence[str], row_title: str, col_title: str) -> None:
    pi = plot.getPlotItem()
    fit_token_ticks(pi, "left", list(rows), index=len(rows) > 24)
    fit_token_ticks(pi, "top", list(cols))
    set_axis_label(pi, "top", col_title)
    set_axis_label(pi, "left", row_title)
    set_view_range(pi, (0, max(1, len(cols))), (0, max(1, len(rows))))


def lut(colormap: str = "viridis") -> np.ndarray:
    return pg.colormap.get(colormap).getLookupTable(0.0, 1.0, 256)


def grouped_point_labels(points, pixel_size: tuple[float, float], char_px: float, line_px: float,
                         gap: float = 0.15, margin_px: float = 0.0, x_range: tuple[float, float] | None = None,
                         text_px=None) -> list:
    """Labels beside scatter points, the ones that would overlap on screen written once: ``points`` are
    ``(text, x, y)`` in data units, ``pixel_size`` the view's data units per screen pixel (x, y).  Each
    label's box starts ``gap`` of its own width right of its point (the pool's anchor) and is ``line_px``
    high, ``char_px`` a character (or ``text_px(text)`` when given: the font's own width of it, the wider of
    the two counting), plus ``margin_px`` on every side (a text item's document margin); two labels whose boxes cross become one ("h4, h8" at the first
    point), and the merging is repeated until no two boxes cross -- a merged label is wider and may
    reach one it missed before.  A label that would run past the right of ``x_range`` (the view's, in data
    units) goes on the left of its point instead, and one that fits on neither side is kept inside the
    view (over its points, but whole), on several lines when it is wider than the view; ``x`` is where the
    pool's anchor then draws it.  Returns ``(text, x, y)``."""
    px, py = (abs(v) or 1.0 for v in pixel_size)
    groups: list[list] = [[[text], x, y] for text, x, y in points]

    def text_width(text: str) -> float:
        return max(char_px * len(text), text_px(text) if text_px is not None else 0.0)

    view_px = None if x_range is None else (x_range[1] - x_range[0]) / px - 2 * margin_px

    def lines_of(group: list) -> list[str]:
        """The label's lines: as many of its heads as fit the view's width on each."""
        lines = [group[0][0]]
        for text in group[0][1:]:
            if view_px is not None and text_width(lines[-1] + ", " + text) > view_px:
                lines[-1] += ","
                lines.append(text)
            else:
                lines[-1] += ", " + text
        return lines

    def placed(group: list) -> tuple[list[str], float, float]:
        """The label's lines, its width and where its box starts, in pixels: right of its point, else
        left of it, else inside the view (each measured once per pass)."""
        lines = lines_of(group)
        width = max(text_width(line) for line in lines) + 2 * margin_px
        point = group[1] / px
        left = point + gap * width
        if x_range is not None:
            low, high = x_range[0] / px, x_range[1] / px
            if left + width > high:
                left = point - (1 + gap) * width
                if left < low:
                    left = max(low, high - width)
        return lines, width, left

    def box(group: list) -> tuple[float, float, float, float]:
        lines, width, left = placed(group)
        middle, half = group[2] / py, line_px * len(lines) / 2 + margin_px
        return left, left + width, middle - half, middle + half

    def crossing() -> tuple[int, int] | None:
        boxes = [box(g) for g in groups]
        for i, (l1, r1, b1, t1) in enumerate(boxes):
            for j in range(i + 1, len(boxes)):
                l2, r2, b2, t2 = boxes[j]
                if l1 < r2 and l2 < r1 and b1 < t2 and b2 < t1:
                    return i, j
        return None

    order = {text: k for k, (text, _x, _y) in enumerate(points)}  # a shared label lists its points in their order
    while (pair := crossing()) is not None:
        i, j = pair
        groups[i][0] = sorted(groups[i][0] + groups.pop(j)[0], key=order.__getitem__)
    labels = []
    for group in groups:
        lines, width, left = placed(group)
        # the pool's anchor starts a box gap of its width right of where the label is put
        labels.append(("\n".join(lines), (left - gap * width) * px, group[2]))
    return labels
