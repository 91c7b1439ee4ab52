"""The tour's "predict, then reveal" box: one yes/no question asked before a step's measurement.

The box asks (Yes / No / Not sure, or "Just show me" to skip) and, once the step's fact is
measured, says whether the learner's prediction held.  It only shows and reports choices;
the tour decides when to ask, keeps the answers (:mod:`attention_lab.core.predictions` reads
the measured answer from the fact) and sets the step up after the choice.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from attention_lab.core.predictions import CHOICES, NO, UNSURE, YES
from attention_lab.ui.i18n import tr
from attention_lab.ui.strings import predictions as _texts  # noqa: F401 -- registers the texts

SKIP = "skip"  # "Just show me": no prediction, the measurement at once

_STYLE = "#tour\\.predict { background: #fff8e6; border: 1px solid #e6cf8f; border-radius: 4px; }"


def choice_words(choice: str) -> str:
    """Yes / No / Not sure, in the interface's language."""
    return tr(f"predict.{choice}")


def verdict(said: str | None, measured: str | None) -> str:
    """The sentence under a revealed fact: whether the prediction held ("" when there is nothing to say)."""
    if said not in CHOICES or measured not in (YES, NO):
        return ""
    if said == UNSURE:
        return tr("predict.was_unsure", measured=choice_words(measured))
    if said == measured:
        return tr("predict.as_predicted", said=choice_words(said))
    return tr("predict.not_as_predicted", said=choice_words(said), measured=choice_words(measured))


class PredictionBox(QFrame):
    """The question with its answer buttons; ``chosen`` carries YES, NO, UNSURE or SKIP."""

    chosen = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("tour.predict")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setStyleSheet(_STYLE)
        self.caption = QLabel(self)
        self.caption.setObjectName("tour.predict.caption")
        self.caption.setStyleSheet("color: #7a5a00; font-weight: bold")
        self.question = QLabel(self)
        self.question.setObjectName("tour.predict.question")
        self.question.setWordWrap(True)
        self.question.setTextFormat(Qt.TextFormat.PlainText)
        self.hint = QLabel(self)
        self.hint.setObjectName("tour.predict.hint")
        self.hint.setWordWrap(True)
        self.hint.setStyleSheet("color: #666")
        self.buttons: dict[str, QPushButton] = {}
        row = QHBoxLayout()
        row.setSpacing(6)
        for choice in (YES, NO, UNSURE, SKIP):
            button = QPushButton(self)
            button.setObjectName(f"tour.predict.{choice}")
            button.setAutoDefault(False)  # Enter stays the tour's Next
            if choice == SKIP:
                button.setFlat(True)
                row.addStretch(1)
            button.clicked.connect(lambda _checked=False, c=choice: self.chosen.emit(c))
            self.buttons[choice] = button
            row.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 6, 8, 8)
        layout.setSpacing(4)
        layout.addWidget(self.caption)
        layout.addWidget(self.question)
        layout.addLayout(row)
        layout.addWidget(self.hint)
        self._question_key = ""
        self._question_args: dict = {}

    def ask(self, key: str, **args) -> None:
        """Show the question ``key`` (a registered text, filled with ``args``)."""
        self._question_key, self._question_args = key, dict(args)
        self.retranslate()

    def retranslate(self) -> None:
        self.caption.setText(tr("predict.title"))
        if self._question_key:
            self.question.setText(tr(self._question_key, **self._question_args))
        for choice, button in self.buttons.items():
            button.setText(tr("predict.skip") if choice == SKIP else choice_words(choice))
        self.hint.setText(tr("predict.hint"))


def verdict_html(said: str | None, measured: str | None, summary: str = "") -> str:
    """The verdict and (on the tour's last step) the summary, as the fact frame shows them."""
    parts = [html.escape(text) for text in (verdict(said, measured), summary) if text]
    return "<br>".join(parts)
