"""What every docked panel has in common.

A panel is a thin view: it receives a finished :class:`~attention_lab.ui.state.AnalysisState`
(plain tensors and dataclasses computed on the worker) in :meth:`show_state`, re-labels
itself in :meth:`retranslate`, and asks for work only through the signals it declares,
which the main window wires to the session.  Panels never call torch on the GUI thread
for anything heavier than indexing.
"""

from __future__ import annotations

from PySide6.QtCore import Slot
from PySide6.QtWidgets import QWidget

from attention_lab.ui.i18n import translator


class Panel(QWidget):
    #: stable objectName of the dock (saved layouts depend on it: never rename)
    panel_id: str = "panel"
    #: i18n key of the dock title
    title_key: str = ""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(self.panel_id + ".widget")
        # a bound slot, not a lambda: Qt drops the connection when the widget is destroyed
        # (a lambda would outlive it and call retranslate() on a deleted widget)
        translator.language_changed.connect(self._language_changed)

    @Slot(str)
    def _language_changed(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:  # each panel re-labels its own widgets
        raise NotImplementedError

    def show_state(self, state) -> None:  # state: AnalysisState
        raise NotImplementedError

    def has_data(self) -> bool:
        """True once the panel shows a real result (the smoke test checks every panel)."""
        raise NotImplementedError
