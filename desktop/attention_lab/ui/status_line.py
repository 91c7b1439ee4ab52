"""The status bar's permanent labels: model, tokens, mode and layer, time, busy, settings."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QProgressBar, QStatusBar

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


class ElidedLabel(QLabel):
    """A one-line label that gives up width: past ``max_width`` its text ends in "…" and the whole text is
    its tooltip.  The status bar's passing messages get only what its permanent labels leave, and a model's
    name can be long (a folder path, the demo's description)."""

    def __init__(self, max_width: int, parent=None):
        super().__init__(parent)
        self._full = ""
        self._max_width = max_width

    def setText(self, text: str) -> None:  # noqa: N802 (Qt naming)
        self._full = text
        self.setToolTip(text)
        super().setText(self.fontMetrics().elidedText(text, Qt.TextElideMode.ElideMiddle, self._max_width))

    def full_text(self) -> str:
        return self._full


class StatusLine:
    MODEL_MAX_WIDTH = 320  # px: at 1366 px, messages still get about half the bar

    def __init__(self, bar: QStatusBar):
        parent = bar.parentWidget()
        self.model = ElidedLabel(self.MODEL_MAX_WIDTH, parent)
        self.tokens = QLabel(parent)
        self.mode = QLabel(parent)
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
