"""Counts the paints a widget gets (to catch a view painted twice for one redraw), or any other
kind of event (its resizes: a view laid out again)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class EventCounter(QObject):
    """``count``: the events of type ``kind`` ``widget`` got since the last reset (``count = 0``)."""

    def __init__(self, widget, kind: QEvent.Type):
        super().__init__()
        self.count = 0
        self.kind = kind
        widget.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 -- Qt's name
        self.count += event.type() == self.kind
        return False


class PaintCounter(EventCounter):
    """``count``: the paint events ``widget`` got since the last reset (``count = 0``); with
    ``min_fraction``, only those repainting at least that fraction of its area (a label's line
    repainted over a corner of a plot is not a repaint of the plot); ``rects``: each paint's rect.
    ``by_region``: the fraction is the painted region's (a view's axes repainted on two sides of a
    plot make one rect around the whole plot, but Qt paints only the two strips)."""

    def __init__(self, widget, min_fraction: float = 0.0, by_region: bool = False):
        super().__init__(widget, QEvent.Type.Paint)
        self.min_fraction = min_fraction
        self.by_region = by_region
        self.rects = []

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Paint:
            rect = event.rect()
            self.rects.append((rect.width(), rect.height(), watched.width(), watched.height()))
            area = max(1, watched.width() * watched.height())
            painted = sum(r.width() * r.height() for r in event.region()) if self.by_region else rect.width() * rect.height()
            self.count += painted >= self.min_fraction * area
        return False
