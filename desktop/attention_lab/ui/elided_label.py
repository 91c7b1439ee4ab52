"""A one-line label that gives up width, shortening its text in the middle with "…"."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QStyle


class ElidedLabel(QLabel):
    """A one-line label that gives up width: at most ``max_width``, and down to a few letters when its
    row is short of room (the status bar beside the first-start tour offer or a long message, the token
    editor's row in a narrow dock), its text then shortened in the middle with "…" and the whole text as
    its tooltip.  A model's name can be long (a folder path, the demo's description), and so can a token.

    ``text()`` stays whole and the shortening happens only when painting: setting a shortened text on
    every resize would ask the layout for another pass, and the panel around it would be painted twice."""

    MIN_WIDTH = 60  # px: a few letters and "…", enough to show which label it is

    def __init__(self, max_width: int, parent=None):
        super().__init__(parent)
        self.setTextFormat(Qt.TextFormat.PlainText)  # a token such as "<b>" is text, not a tag
        self._max_width = max_width
        self.squeeze = 0  # px it gives up while the status bar's message needs them

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming)
        if text == self.text():
            return  # the same words: no layout pass, no repaint
        super().setText(text)
        self._update_tooltip()

    def shown_text(self) -> str:
        """The text as painted: whole, or shortened in the middle to the label's width."""
        room = min(self.contentsRect().width(), self._max_width)
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, room)

    def natural_width(self) -> int:
        """The width the whole text wants, up to ``max_width``."""
        return min(self.fontMetrics().horizontalAdvance(self.text()) + 2, self._max_width)

    def sizeHint(self) -> QSize:  # noqa: N802
        width = max(self.natural_width() - self.squeeze, self.minimumSizeHint().width())
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(min(self.MIN_WIDTH, self.natural_width()), super().minimumSizeHint().height())

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._update_tooltip()

    def _update_tooltip(self) -> None:
        self.setToolTip(self.text() if self.shown_text() != self.text() else "")

    def paintEvent(self, event) -> None:  # noqa: N802
        shown = self.shown_text()
        if shown == self.text():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        self.drawFrame(painter)
        align = QStyle.visualAlignment(self.layoutDirection(), self.alignment())
        self.style().drawItemText(painter, self.contentsRect(), int(align), self.palette(), self.isEnabled(), shown,
                                  self.foregroundRole())
