"""The status bar's permanent labels: model, tokens, mode and layer, time, busy, settings."""

from __future__ import annotations

import time

from PySide6.QtCore import QEvent, Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar, QWidget

from attention_lab.ui.elided_label import ElidedLabel
from attention_lab.ui.i18n import tr
from attention_lab.ui.mask_words import mask_in_words
from attention_lab.ui.model_label import model_label
from attention_lab.ui.number_format import fixed


def human_count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{fixed(n / size, 1)}{unit}"
    return str(n)


def human_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{fixed(n / size, 1)} {unit}"
    return f"{n} B"


class FittingStatusBar(QStatusBar):
    """A status bar whose passing message is never cut by the labels beside it: while a message shows,
    the labels that can give up width (``ElidedLabel``) shrink so the message fits, and a message that
    still does not fit is shortened with "…", its whole text in the bar's tooltip.  (QStatusBar paints the
    message only left of its permanent labels and cuts it there: "connecti" beside the model's name.)"""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._full = ""
        self._until: float | None = None  # when the message's timeout ends (monotonic seconds)
        self.messageChanged.connect(self._on_message_changed)

    def showMessage(self, message: str, timeout: int = 0) -> None:  # noqa: N802
        self._full = message
        self._until = time.monotonic() + timeout / 1000 if timeout > 0 else None
        self._make_room()
        super().showMessage(self._fitted(message), timeout)

    def currentMessage(self) -> str:  # noqa: N802
        return self._full if super().currentMessage() else ""

    def _shrinkable(self) -> list[ElidedLabel]:
        return [w for w in self.findChildren(ElidedLabel) if w.isVisible()]

    def _message_room(self) -> int:
        """Where QStatusBar paints the message: from 6 px to 2 px left of the first permanent widget."""
        permanent = [w for w in self.children() if isinstance(w, QWidget) and w.isVisible() and w.width() > 0]
        right = min((w.x() for w in permanent), default=self.width()) - 2
        return max(0, min(right, self.width() - 12) - 6)

    def _make_room(self) -> None:
        labels = self._shrinkable()
        for label in labels:
            label.squeeze = 0
            label.updateGeometry()
        if not self._full or not labels:
            return
        self.layout().activate()
        short = self.fontMetrics().horizontalAdvance(self._full) + 4 - self._message_room()
        for label in sorted(labels, key=lambda w: -w.natural_width()):  # the widest gives first
            if short <= 0:
                break
            label.squeeze = max(0, min(short, label.natural_width() - label.minimumSizeHint().width()))
            short -= label.squeeze
            label.updateGeometry()
        self.layout().activate()

    def _fitted(self, message: str) -> str:
        room = self._message_room()
        shown = self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, room)
        self.setToolTip(message if shown != message else "")
        return shown

    def _on_message_changed(self, message: str) -> None:
        if not message:  # timed out or cleared: the labels take their width back
            self._full = ""
            self.setToolTip("")
            self._make_room()

    def event(self, event) -> bool:
        handled = super().event(event)
        if event.type() == QEvent.Type.LayoutRequest and self._full and super().currentMessage():
            shown = self._fitted(self._full)  # a label beside it changed its width
            if shown != super().currentMessage():
                self._show_again(shown)
        return handled

    def _show_again(self, shown: str) -> None:
        """Show the fitted message, its timeout running on (QStatusBar keeps no timeout to pass again)."""
        left = 0 if self._until is None else round((self._until - time.monotonic()) * 1000)
        if self._until is None or left > 0:
            super().showMessage(shown, left)

    def resizeEvent(self, event) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._full and super().currentMessage():  # fitted again, its timeout running on
            self._make_room()
            self._show_again(self._fitted(self._full))


class StatusLine:
    MODEL_MAX_WIDTH = 320  # px: at 1366 px, messages still get about half the bar
    MODE_MAX_WIDTH = 420  # px: a designed mask in words, heads knocked out and the layer

    def __init__(self, bar: QStatusBar):
        parent = bar.parentWidget()
        self.model = ElidedLabel(self.MODEL_MAX_WIDTH, parent)
        self.tokens = QLabel(parent)
        self.mode = ElidedLabel(self.MODE_MAX_WIDTH, parent)
        self.time = QLabel(parent)
        self.busy_label = QLabel(parent)
        self.busy_bar = QProgressBar(parent)
        self.busy_bar.setRange(0, 0)  # indeterminate: "working", not a fake percentage
        self.busy_bar.setFixedWidth(90)
        self.busy_bar.setMaximumHeight(14)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.busy_label.hide()
        for widget in (self.model, self.tokens, self.mode, self.time, self.busy_label, self.busy_bar):
            bar.addPermanentWidget(widget)
        # stays in view (a passing message would be replaced by the next "model loaded")
        self.settings_warning = QLabel(parent)
        self.settings_warning.setObjectName("status_settings_warning")
        self.settings_warning.hide()
        bar.addPermanentWidget(self.settings_warning)

    def set_busy(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy)
        self.busy_label.setVisible(busy)

    def warn_settings(self, explanation: str) -> None:
        self.settings_warning.setText("⚠ " + tr("status.settings_not_saved"))
        self.settings_warning.setToolTip(explanation)
        self.settings_warning.show()

    def update(self, model, state) -> None:
        """Re-label for ``model`` (or none) and the state on display (or none yet)."""
        if model is None:
            self.model.setText(tr("status.no_model"))
        else:
            self.model.setText(
                tr("status.model", name=model_label(model), params=human_count(model.n_params), size=human_bytes(model.n_bytes))
            )
        if state is not None:
            if state.truncated:
                self.tokens.setText(tr("status.tokens_cut", n=state.n_tokens, total=state.original_length))
            else:
                self.tokens.setText(tr("status.tokens", n=state.n_tokens))
            mode = tr("status.mode_causal" if state.causal else "status.mode_bidirectional")
            spec = state.extras.get("mask_spec", "causal")
            if state.causal and spec != "causal":  # the mask designer's
                mode = tr("status.mode_mask", mask=mask_in_words(spec))
            knocked = len(state.extras.get("knockout", ()))
            if knocked:
                mode += " · " + tr("status.knocked_out", count=knocked)
            self.mode.setText(f"{mode} · {tr('status.layer', layer=state.layer)}")
            self.time.setText(tr("status.time", ms=fixed(state.seconds * 1000, 0)))
        else:  # no analysis of the text in the field (none yet, or the text is empty): no stale count
            for label in (self.tokens, self.mode, self.time):
                label.setText("")
        self.busy_label.setText(tr("status.busy"))
