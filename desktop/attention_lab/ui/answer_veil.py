"""A cover over the panel whose measurement answers the tour's open question.

The tour asks its question before it measures anything, but the panel that shows the measurement
can be in sight already (the Leakage panel is part of the first view: "the 9 positions before #9
changed by exactly 0" right under "will the positions before it change?").  While the question
waits, that panel lies under this veil; answering (or "Just show me"), moving on or closing the
tour lifts it.  The panel underneath keeps working: only what it shows is covered.
"""

from __future__ import annotations

import shiboken6
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from attention_lab.ui.i18n import tr


class AnswerVeil(QWidget):
    """An opaque cover of ``host`` (kept on it as it moves and resizes) with one sentence on it; a
    child of ``host``'s parent (a dock), so it covers the scroll bars ``host`` draws too."""

    # (painted by hand: a plain QWidget draws no background of its own over its siblings)

    def __init__(self, host: QWidget):
        super().__init__(host.parentWidget())
        self.host = host
        self.setObjectName("tour.answer_veil")
        self.setAttribute(Qt.WidgetAttribute.WA_NoMousePropagation)  # the panel under it is not clicked through
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.label.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(24, 24, 24, 24)
        layout.addWidget(self.label)
        self.retranslate()
        host.installEventFilter(self)
        self.hide()

    def retranslate(self) -> None:
        self.label.setText(tr("predict.veil"))

    def cover(self) -> None:
        self.setGeometry(self.host.geometry())
        self.show()
        self.raise_()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if watched is self.host and event.type() in (QEvent.Type.Resize, QEvent.Type.Move) and not self.isHidden():
            self.setGeometry(self.host.geometry())
        return False

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        painter = QPainter(self)
        painter.fillRect(self.rect(), self.palette().window())  # opaque: a faint answer is still an answer
        painter.end()


class Veils:
    """The veils one tour has made, one per panel; at most one of them shown."""

    def __init__(self) -> None:
        self._by_host: dict[int, AnswerVeil] = {}

    def cover_only(self, host: QWidget | None) -> None:
        """Cover ``host`` (None: nothing) and lift every other veil."""
        for key, veil in list(self._by_host.items()):
            if host is None or key != id(host):
                veil.hide()
        if host is None:
            return
        veil = self._by_host.get(id(host))
        if veil is None:
            veil = self._by_host[id(host)] = AnswerVeil(host)
            # a panel closed for good takes its veil along (its id may be a new widget's later)
            host.destroyed.connect(lambda _=None, key=id(host): self._forget(key))
        veil.retranslate()
        veil.cover()

    def _forget(self, key: int) -> None:
        veil = self._by_host.pop(key, None)
        if veil is not None and shiboken6.isValid(veil):  # (gone already when its dock went first)
            veil.deleteLater()

    def shown(self) -> list[AnswerVeil]:
        return [veil for veil in self._by_host.values() if veil.isVisible()]
