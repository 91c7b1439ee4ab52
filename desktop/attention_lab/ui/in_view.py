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

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QScrollArea, QTabWidget, QWidget

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
        if isinstance(holder, QScrollArea) and holder.widget() is current:
            _scroll_to(holder, rect)
        if parent is not None:
            rect = rect.translated(current.pos())
        current = parent


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
