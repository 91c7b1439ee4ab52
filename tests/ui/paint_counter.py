"""Counts the paints a widget gets (issue 19: a view painted twice for one redraw)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class PaintCounter(QObject):
    """``count``: the paint events ``widget`` got since the last reset (``count = 0``); with
    ``min_fraction``, only those that repaint at least that fraction of its area (a label's line
    repainted under a map is not a repaint of the map)."""

    def __init__(self, widget, min_fraction: float = 0.0):
        super().__init__()
        self.count = 0
        self.min_fraction = min_fraction
        widget.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Paint:
            if self.min_fraction <= 0:
                self.count += 1
            else:
                area = max(1, watched.width() * watched.height())
                rect = event.rect()
                self.count += rect.width() * rect.height() >= self.min_fraction * area
        return False
