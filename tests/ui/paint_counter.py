"""Counts the paints a widget gets (issue 19: a view painted twice for one redraw)."""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject


class PaintCounter(QObject):
    """``count``: the paint events ``widget`` got since the last reset (``count = 0``)."""

    def __init__(self, widget):
        super().__init__()
        self.count = 0
        widget.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 -- Qt's name
        self.count += event.type() == QEvent.Type.Paint
        return False
