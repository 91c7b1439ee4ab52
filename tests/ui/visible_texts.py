"""Every text a learner can see in a window: the widget, where it sits, and the text.

Shared by the language test (no English in the Portuguese interface) and the clipping test.  "Seen"
means a visible label, button, check box, tab, table header or cell, combo box item, group box title,
plot title or axis label, tooltip, the status bar's message, the window's and docks' titles, the menus.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pyqtgraph as pg
from PySide6.QtWidgets import (
    QAbstractButton,
    QAbstractSpinBox,
    QComboBox,
    QDockWidget,
    QGroupBox,
    QLabel,
    QMainWindow,
    QMenu,
    QScrollArea,
    QStatusBar,
    QTabBar,
    QTableWidget,
    QWidget,
)

_TAG = re.compile(r"<[^<>]*>")
_ENTITY = {"&nbsp;": " ", "&lt;": "<", "&gt;": ">", "&amp;": "&", "&#8734;": "∞"}


@dataclass(frozen=True)
class SeenText:
    where: str  # a path a developer can find: object names and classes from the window down, and the role
    text: str
    widget: QWidget | None = None


def plain(text: str) -> str:
    """Rich text as the learner reads it: tags gone, entities decoded, menu accelerators dropped."""
    text = _TAG.sub(" ", text)
    for entity, char in _ENTITY.items():
        text = text.replace(entity, char)
    return re.sub(r"&(?=\w)", "", text)


def _path(widget: QWidget) -> str:
    parts = []
    while widget is not None and not isinstance(widget, QMainWindow):
        name = widget.objectName()
        if name or not parts:
            parts.append(name or type(widget).__name__)
        widget = widget.parentWidget()
    return "/".join(reversed(parts))


def _plot_texts(plot: pg.PlotItem, where: str) -> list[SeenText]:
    seen = []
    if plot.titleLabel.isVisible() and plot.titleLabel.text:
        seen.append(SeenText(f"{where} plot title", plain(plot.titleLabel.text)))
    for side in ("left", "bottom", "top", "right"):
        axis = plot.getAxis(side)
        if axis.isVisible() and axis.label.isVisible() and axis.labelText:
            seen.append(SeenText(f"{where} {side} axis", plain(axis.labelText)))
        if axis.isVisible() and axis.style.get("showValues", True):
            ticks = " ".join(_tick_strings(axis))
            if ticks:
                seen.append(SeenText(f"{where} {side} axis ticks", ticks))
    return seen


def _tick_strings(axis: pg.AxisItem) -> list[str]:
    """The numbers (or token texts) written along ``axis``, as its paint would write them."""
    if axis._tickLevels is not None:  # set_ticks: the panel chose the labels itself
        return [text for level in axis._tickLevels for _value, text in level]
    low, high = sorted(axis.range)
    length = axis.geometry().width() if axis.orientation in ("top", "bottom") else axis.geometry().height()
    if length <= 0 or high <= low:
        return []
    return [text for spacing, values in axis.tickValues(low, high, length)
            for text in axis.tickStrings(values, axis.scale, spacing)]


def visible_texts(window: QMainWindow) -> list[SeenText]:
    seen = [SeenText("window title", window.windowTitle())]
    for widget in window.findChildren(QWidget):
        if not widget.isVisible():
            continue
        where = _path(widget)
        if widget.toolTip():
            seen.append(SeenText(f"{where} tooltip", plain(widget.toolTip()), widget))
        if isinstance(widget, QLabel):
            seen.append(SeenText(where, plain(widget.text()), widget))
        elif isinstance(widget, QAbstractButton):
            seen.append(SeenText(where, plain(widget.text()), widget))
        elif isinstance(widget, QGroupBox):
            seen.append(SeenText(where, plain(widget.title()), widget))
        elif isinstance(widget, QTabBar):
            for i in range(widget.count()):
                seen.append(SeenText(f"{where} tab {i}", plain(widget.tabText(i)), widget))
                if widget.tabToolTip(i):
                    seen.append(SeenText(f"{where} tab {i} tooltip", plain(widget.tabToolTip(i)), widget))
        elif isinstance(widget, QAbstractSpinBox):
            seen.append(SeenText(f"{where} value", widget.text(), widget))
        elif isinstance(widget, QComboBox):
            for i in range(widget.count()):
                seen.append(SeenText(f"{where} item {i}", widget.itemText(i), widget))
        elif isinstance(widget, QDockWidget):
            seen.append(SeenText(f"{where} title", widget.windowTitle(), widget))
        elif isinstance(widget, QTableWidget):
            for header, count, item_of in (
                ("column", widget.columnCount(), widget.horizontalHeaderItem),
                ("row", widget.rowCount(), widget.verticalHeaderItem),
            ):
                for i in range(count):
                    item = item_of(i)
                    if item is not None and item.text():
                        seen.append(SeenText(f"{where} {header} header {i}", plain(item.text()), widget))
            for row in range(widget.rowCount()):
                for column in range(widget.columnCount()):
                    item = widget.item(row, column)
                    if item is not None and item.text():
                        seen.append(SeenText(f"{where} cell {row},{column}", item.text(), widget))
                    if item is not None and item.toolTip():
                        seen.append(SeenText(f"{where} cell {row},{column} tooltip", plain(item.toolTip()), widget))
        elif isinstance(widget, pg.GraphicsLayoutWidget | pg.PlotWidget):
            for item in widget.scene().items():
                if isinstance(item, pg.PlotItem) and item.isVisible():
                    seen.extend(_plot_texts(item, where))
                elif isinstance(item, pg.TextItem) and item.isVisible() and item.toPlainText():
                    seen.append(SeenText(f"{where} text item", item.toPlainText(), widget))
    if window.statusBar().currentMessage():
        seen.append(SeenText("status bar message", plain(window.statusBar().currentMessage())))
    for menu in window.menuBar().findChildren(QMenu):
        seen.append(SeenText(f"menu {menu.objectName()}", plain(menu.title())))
        for action in menu.actions():
            if action.text():
                seen.append(SeenText(f"menu {plain(menu.title())} › action", plain(action.text())))
    return [s for s in seen if s.text.strip()]


def open_everything(qtbot, window, timeout_ms: int = 60_000) -> None:
    """Every dock shown and raised once, every tab of every panel opened once, then the lab tour opened."""
    from PySide6.QtWidgets import QTabWidget

    qtbot.waitUntil(lambda: window.last_state is not None, timeout=timeout_ms)
    for dock in window.docks.values():
        dock.show()
        dock.raise_()
        qtbot.wait(50)
        for tabs in dock.findChildren(QTabWidget):
            for i in reversed(range(tabs.count())):  # ends on the first tab, the one a learner sees first
                tabs.setCurrentIndex(i)
                qtbot.wait(50)
    window.findChild(type(window.menus.help_menu.actions()[0]), "action.tour").trigger()
    qtbot.waitUntil(lambda: window.tour.isVisible(), timeout=timeout_ms)
    qtbot.wait(200)


# ---------------------------------------------------------------------------- clipping
def _text_width(widget: QWidget, text: str, rich: bool) -> float:
    from PySide6.QtGui import QTextDocument

    if rich:
        document = QTextDocument()
        document.setDefaultFont(widget.font())
        document.setHtml(text)
        document.setDocumentMargin(0)
        return document.idealWidth()
    return max((widget.fontMetrics().horizontalAdvance(line) for line in text.split("\n")), default=0)


def _label_is_rich(label: QLabel) -> bool:
    from PySide6.QtCore import Qt
    from PySide6.QtGui import Qt as QtGui  # QtGui's namespace holds mightBeRichText

    fmt = label.textFormat()
    return fmt == Qt.TextFormat.RichText or (fmt == Qt.TextFormat.AutoText and QtGui.mightBeRichText(label.text()))


def clipped_texts(window: QMainWindow, slack_px: int = 2) -> list[str]:
    """Texts a learner cannot read whole: a one-line label wider than its box (unless it shows a tooltip,
    as an elided label does), a wrapping label taller than its box (outside a scroll area), a table header
    narrower than its title, a plot title wider than its plot.  One line each: where, the text, the shortfall."""
    from PySide6.QtWidgets import QAbstractScrollArea, QHeaderView

    found = []
    for widget in window.findChildren(QWidget):
        if not widget.isVisible() or widget.width() <= 0:
            continue
        where = _path(widget)
        if (
            isinstance(widget, QScrollArea)
            and widget.horizontalScrollBarPolicy().name == "ScrollBarAlwaysOff"
            and widget.widget() is not None
            and widget.widget().width() > widget.viewport().width() + slack_px
        ):  # a panel that scrolls only up and down, wider than its dock: its right edge is cut
            inner = widget.widget().width()
            found.append(f"{where}: the panel needs {inner} px of width, its dock shows {widget.viewport().width()}")
            continue
        if isinstance(widget, QLabel) and widget.text() and widget.pixmap().isNull():
            box = widget.contentsRect()
            margin = widget.margin() * 2 + widget.indent() if widget.indent() > 0 else widget.margin() * 2
            room = box.width() - margin
            if widget.wordWrap():
                need = widget.heightForWidth(widget.width())
                inside_scroll = any(isinstance(p, QAbstractScrollArea) for p in _ancestors(widget))
                if not inside_scroll and need > widget.height() + slack_px:
                    found.append(f"{where}: “{plain(widget.text())[:60]}” needs {need} px of height, has {widget.height()}")
                continue
            need = _text_width(widget, widget.text(), _label_is_rich(widget))
            if need > room + slack_px and not widget.toolTip():
                found.append(f"{where}: “{plain(widget.text())[:60]}” needs {need:.0f} px, has {room}")
        elif isinstance(widget, QHeaderView) and widget.orientation().name == "Horizontal":
            table = widget.parentWidget()
            model = widget.model()
            if model is None:
                continue
            from PySide6.QtCore import Qt

            for section in range(model.columnCount()):
                if widget.isSectionHidden(section):
                    continue
                text = str(model.headerData(section, Qt.Orientation.Horizontal) or "")
                if not text:
                    continue
                need = widget.fontMetrics().horizontalAdvance(text) + 12  # the header's own padding
                have = widget.sectionSize(section)
                if need > have + slack_px:
                    found.append(f"{_path(table)} column {section}: “{text}” needs {need} px, has {have}")
        elif isinstance(widget, QTableWidget) and widget.horizontalScrollBarPolicy().name == "ScrollBarAlwaysOff":
            for row in range(widget.rowCount()):  # a table that cannot scroll sideways must fit its cells
                for column in range(widget.columnCount()):
                    item = widget.item(row, column)
                    if item is None or not item.text() or widget.isColumnHidden(column):
                        continue
                    need = widget.fontMetrics().horizontalAdvance(item.text()) + 8
                    have = widget.columnWidth(column)
                    if need > have + slack_px and not item.toolTip():
                        found.append(f"{where} cell {row},{column}: “{item.text()[:60]}” needs {need} px, has {have}")
        elif isinstance(widget, pg.GraphicsLayoutWidget | pg.PlotWidget):
            for item in widget.scene().items():
                if isinstance(item, pg.PlotItem) and item.isVisible() and item.titleLabel.text:
                    title = item.titleLabel
                    need = title.item.boundingRect().width()
                    have = item.boundingRect().width()
                    if need > have + slack_px:
                        found.append(f"{where} plot title: “{plain(title.text)[:60]}” needs {need:.0f} px, has {have:.0f}")
                if isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible() and item.labelText:
                    need = item.label.boundingRect().width()  # along the axis (a side axis's label is turned)
                    have = item.geometry().height() if item.orientation in ("left", "right") else item.geometry().width()
                    if need > have + slack_px:
                        found.append(f"{where} {item.orientation} axis: “{plain(item.labelText)[:60]}” needs {need:.0f} px, has {have:.0f}")
                if isinstance(item, pg.LegendItem) and item.isVisible():  # a legend's entries end inside the view
                    right = widget.mapFromScene(item.sceneBoundingRect().topRight()).x()
                    if right > widget.viewport().width() + slack_px:
                        entries = " ".join(plain(label.text) for _sample, label in item.items)
                        found.append(f"{where} legend: “{entries[:60]}” needs {right:.0f} px, has {widget.viewport().width()}")
    bar = window.statusBar()
    message = QStatusBar.currentMessage(bar)  # the text Qt paints (a shortened one ends in "…")
    if message and bar.isVisible():  # the passing message is painted left of the permanent labels
        permanent = [w for w in bar.children() if isinstance(w, QWidget) and w.isVisible() and w.width() > 0]
        lefts = [w.x() for w in permanent]
        room = (min(lefts) if lefts else bar.width()) - 8
        need = bar.fontMetrics().horizontalAdvance(message)
        if need > room + slack_px:
            found.append(f"status bar message: “{message[:60]}” needs {need} px, has {room}")
    return found


def _ancestors(widget: QWidget):
    parent = widget.parentWidget()
    while parent is not None:
        yield parent
        parent = parent.parentWidget()
