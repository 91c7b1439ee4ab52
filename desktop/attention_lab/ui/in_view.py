"""Whether a part of a widget is in sight in its window, and bringing it there.

The docks scroll (ui/docks.py), and so do some panels' own pages and tables: a widget can be
"visible" to Qt while the part the learner is told to look at sits below a scroll area's edge.
:func:`visible_part` intersects a rectangle with every ancestor's rectangle up to the window
(a scroll area's viewport is one of them), :func:`in_sight` says whether as much of it is shown
as the window's room allows, and :func:`bring_into_view` scrolls each scroll area around it so
that it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import shiboken6
from PySide6.QtCore import QEvent, QObject, QPoint, QRect
from PySide6.QtWidgets import QScrollArea, QTabWidget, QWidget

from attention_lab.ui.qt_compat import call_after_posted_work

#: pixels a part may miss of what could be shown (a frame's line, rounding)
SLACK_PX = 2


@dataclass
class Target:
    """A part of a widget the learner is pointed at: ``rect`` in ``widget``'s coordinates; ``reveal``
    does what scrolling alone cannot (select a table row, give a splitter's side the room)."""

    widget: QWidget
    rect: QRect
    reveal: Callable[[], None] | None = None
    name: str = ""  # said in a failed check


def visible_part(widget: QWidget, rect: QRect | None = None) -> QRect:
    """The part of ``rect`` (``widget``'s coordinates; its whole rect by default) that its window
    shows: clipped by every ancestor (a scroll area's viewport, a dock, the window); empty when the
    widget or one of its ancestors is hidden (a dock behind another's tab)."""
    rect = QRect(widget.rect() if rect is None else rect)
    if not widget.isVisible():
        return QRect()
    offset = QPoint(0, 0)  # from ``widget`` to the ancestor at hand
    current = widget
    shown = rect.intersected(widget.rect())
    while not current.isWindow():
        offset += current.pos()
        current = current.parentWidget()
        if current is None:
            break
        shown = shown.intersected(current.rect().translated(-offset))
        if shown.isEmpty():
            return QRect()
    return shown


def room_for(widget: QWidget) -> tuple[int, int]:
    """The most width and height ``widget`` and its ancestors leave to show (the smallest viewport, dock or window)."""
    width, height = 1 << 30, 1 << 30
    current = widget
    while current is not None:
        width, height = min(width, current.width()), min(height, current.height())
        if current.isWindow():
            break
        current = current.parentWidget()
    return width, height


def in_sight(widget: QWidget, rect: QRect | None = None) -> bool:
    """Whether the window shows as much of ``rect`` as its room allows: all of it, or, where it is
    wider or taller than the smallest viewport around it, a viewport's worth in that direction."""
    rect = QRect(widget.rect() if rect is None else rect)
    shown = visible_part(widget, rect)
    if shown.isEmpty():
        return False
    room_w, room_h = room_for(widget)
    return (shown.width() >= min(rect.width(), room_w) - SLACK_PX
            and shown.height() >= min(rect.height(), room_h) - SLACK_PX)


def fully_in_sight(widget: QWidget) -> bool:
    """The whole widget is shown (the tour's own words and buttons: never partly)."""
    return visible_part(widget) == widget.rect()


def bring_into_view(widget: QWidget, rect: QRect | None = None) -> None:
    """Open the tabs ``widget`` sits in and scroll every scroll area around it so ``rect`` shows (its
    top first where it is taller than the viewport)."""
    rect = QRect(widget.rect() if rect is None else rect)  # in ``current``'s coordinates below
    current = widget
    while current is not None and not current.isWindow():
        parent = current.parentWidget()
        holder = parent.parentWidget() if parent is not None else None
        if isinstance(holder, QTabWidget) and holder.indexOf(current) >= 0 and holder.currentWidget() is not current:
            holder.setCurrentWidget(current)  # (a tab's page sits in the tab widget's stack)
        area = _scrolled_by(current)
        if area is not None:
            _scroll_to(area, rect)
        if parent is not None:
            rect = rect.translated(current.pos())
        current = parent


def _scrolled_by(widget: QWidget) -> QScrollArea | None:
    """The scroll area whose page ``widget`` is (its moves are scrolling, not layout), if any."""
    viewport = widget.parentWidget()
    area = viewport.parentWidget() if viewport is not None else None
    return area if isinstance(area, QScrollArea) and area.widget() is widget else None


def _scroll_to(area: QScrollArea, rect: QRect) -> None:
    """Scroll ``area`` so ``rect`` (its widget's coordinates) is in its viewport: the least move, and
    its top (left) edge first when it does not fit."""
    view = area.viewport()
    for bar, start, size, room in ((area.verticalScrollBar(), rect.top(), rect.height(), view.height()),
                                   (area.horizontalScrollBar(), rect.left(), rect.width(), view.width())):
        value = bar.value()
        if size >= room or start < value:
            value = start
        elif start + size > value + room:
            value = start + size - room
        bar.setValue(max(bar.minimum(), min(bar.maximum(), value)))


class KeepInSight(QObject):
    """Brings a target back into sight when a layout moves it after it was shown: a caption above it
    wrapping to a second line, a map given its height for a width it learnt a turn later.  Only its
    own and its ancestors' moves and resizes inside the scroll area's page are watched (and the
    page's resizes), so the learner's scrolling, and a tab or dock the learner opens over it, are
    left alone: a hidden target is not brought back."""

    def __init__(self, parent: QObject, find: Callable[[], Target | None]):
        super().__init__(parent)
        self._find = find  # the target as laid out now (a table row's rectangle moves with its table)
        self._watched: list[tuple[QWidget, bool]] = []  # (widget, whether its moves count)
        self._queued = False

    def watch(self, target: Target | None) -> None:
        self.stop()
        current = target.widget if target is not None else None
        while current is not None and not current.isWindow():
            content = _scrolled_by(current) is not None
            current.installEventFilter(self)
            self._watched.append((current, not content))
            if content:
                break
            current = current.parentWidget()

    def stop(self) -> None:
        for widget, _moves in self._watched:
            if shiboken6.isValid(widget):
                widget.removeEventFilter(self)
        self._watched = []

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 -- Qt's name
        kind = event.type()
        if kind == QEvent.Type.Resize or (kind == QEvent.Type.Move and self._moves_count(watched)):
            if not self._queued:
                self._queued = True
                call_after_posted_work(self, self._bring_back)  # once the layout pass has placed everything
        return False

    def _moves_count(self, watched: QObject) -> bool:
        return any(widget is watched and moves for widget, moves in self._watched)

    def _bring_back(self) -> None:
        self._queued = False
        if not self._watched:
            return
        target = self._find()
        if target is None or not target.widget.isVisible() or in_sight(target.widget, target.rect):
            return
        bring_into_view(target.widget, target.rect)
