"""The first-run offer of real GPT-2: a bar above the panels, never a modal dialog.

When the window starts on the bundled demo model because no GPT-2 is in the Hugging Face
cache, it says so once, in a bar that blocks nothing, and offers "Download GPT-2 small
(≈ 550 MB)".  Only that button downloads (through the window's download dialog, which
shows progress and can cancel); "Not now" is remembered in the settings and the bar never
comes back.  Ignored, it comes back at the next start until the learner answers.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Slot
from PySide6.QtWidgets import QHBoxLayout, QLabel, QMainWindow, QPushButton, QSizePolicy, QToolBar, QWidget

from attention_lab.ui.i18n import register, tr, translator

KEY_ANSWERED = "first_run/gpt2_offer_answered"
REPO = "gpt2"

register(
    {
        "first_run.text": {
            "en": "You are looking at the small demo model ({layers} layers, its own vocabulary), not GPT-2. "
            "Real GPT-2 small is one download away.",
            "pt_BR": "Você está vendo o pequeno modelo de demonstração ({layers} camadas, vocabulário próprio), "
            "não o GPT-2. O GPT-2 small de verdade está a um download de distância.",
        },
        "first_run.download": {"en": "Download GPT-2 small (≈ {size} MB)", "pt_BR": "Baixar o GPT-2 small (≈ {size} MB)"},
        "first_run.not_now": {"en": "Not now", "pt_BR": "Agora não"},
    }
)


class Gpt2Offer(QToolBar):
    """The bar: what is shown, the download button, "Not now"."""

    def __init__(self, window: QMainWindow):
        super().__init__(window)
        self.setObjectName("first_run.gpt2_offer")
        self.setMovable(False)
        self.setFloatable(False)
        self.toggleViewAction().setVisible(False)  # not a toolbar to switch on and off
        self.window_ = window
        self.layers = 0
        box = QWidget(self)
        self.label = QLabel(box)
        self.label.setObjectName("first_run.text")
        # never widens the window: the text gets what the buttons leave (full text as tooltip)
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.download = QPushButton(box)
        self.download.setObjectName("first_run.download")
        self.download.setDefault(True)
        self.not_now = QPushButton(box)
        self.not_now.setObjectName("first_run.not_now")
        self.not_now.setFlat(True)
        layout = QHBoxLayout(box)
        layout.setContentsMargins(6, 2, 6, 2)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.download)
        layout.addWidget(self.not_now)
        self.addWidget(box)
        self.download.clicked.connect(self._download)
        self.not_now.clicked.connect(self._not_now)
        translator.language_changed.connect(self._on_language)

    @Slot(str)
    def _on_language(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        from attention_lab.core.hub_download import gpt2_small_download_mb

        text = tr("first_run.text", layers=self.layers)
        self.label.setText(text)
        self.label.setToolTip(text)
        self.download.setText(tr("first_run.download", size=gpt2_small_download_mb()))
        self.not_now.setText(tr("first_run.not_now"))

    def _download(self) -> None:
        self._answered()
        self.window_.download_model(REPO)  # the download dialog: progress, Cancel

    def _not_now(self) -> None:
        self._answered()

    def _answered(self) -> None:
        self.window_.settings.setValue(KEY_ANSWERED, True)
        self.hide()


def _answered(window) -> bool:
    value = window.settings.value(KEY_ANSWERED, False)
    return value is True or str(value).strip().lower() in ("true", "1")


def install_first_run_offer(window: QMainWindow) -> None:
    """Show the offer when the first model the window loads is the demo and no GPT-2 is cached."""
    if _answered(window):
        return

    def on_model(model) -> None:
        window.session.model_changed.disconnect(on_model)  # the start-up model only
        from attention_lab.core.models import default_model_spec

        if not model.is_demo or default_model_spec() != "demo":
            return  # a GPT-2 is there (or another model was chosen): nothing to offer
        offer = Gpt2Offer(window)
        offer.layers = model.config.n_layer
        offer.retranslate()
        window.addToolBar(Qt.ToolBarArea.TopToolBarArea, offer)
        window.gpt2_offer = offer  # type: ignore[attr-defined]

    window.session.model_changed.connect(on_model)
