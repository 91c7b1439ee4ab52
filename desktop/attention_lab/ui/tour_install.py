"""Puts the Lab tour into the main window: its dock beside the token editor, Help › Lab tour (Ctrl+T),
the step it resumes at, and on the very first start a small offer in the status bar.

``ATTENTION_LAB_OPEN_TOUR=1`` opens the tour at start (screenshots), and ``ATTENTION_LAB_TOUR_STEP``
(a step number from 1 or a step key) picks the step."""

from __future__ import annotations

import logging
import os

from PySide6.QtCore import Qt, Slot
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QFrame, QHBoxLayout, QLabel, QMainWindow, QPushButton, QWidget

from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.qt_compat import call_later
from attention_lab.ui.strings import tour as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.tour import TourDock
from attention_lab.ui.tour_room import make_room
from attention_lab.ui.tour_saved import KEY_OFFERED, read_bool

log = logging.getLogger(__name__)

SHORTCUT = "Ctrl+T"  # F1 (HelpContents) is taken by Help › key ideas
OPEN_ENV = "ATTENTION_LAB_OPEN_TOUR"
STEP_ENV = "ATTENTION_LAB_TOUR_STEP"


class TourOffer(QFrame):
    """A small, non-modal "take the tour?" in the status bar, made once."""

    def __init__(self, dock: TourDock, parent: QWidget):
        super().__init__(parent)
        self.setObjectName("tour.offer")
        self.dock = dock
        self.label = QLabel(self)
        self.start = QPushButton(self)
        self.start.setObjectName("tour.offer.start")
        self.dismiss = QPushButton(self)
        self.dismiss.setObjectName("tour.offer.dismiss")
        self.dismiss.setFlat(True)
        self.start.clicked.connect(self._start)
        self.dismiss.clicked.connect(self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(4, 0, 4, 0)
        layout.addWidget(self.label)
        layout.addWidget(self.start)
        layout.addWidget(self.dismiss)
        translator.language_changed.connect(self._on_language)
        self.retranslate()

    @Slot(str)
    def _on_language(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        self.label.setText(tr("tour.offer.text"))
        self.start.setText(tr("tour.offer.start"))
        self.dismiss.setText(tr("tour.offer.dismiss"))

    def _start(self) -> None:
        self.hide()
        self.dock.open_tour()


def _step_from_env(value: str) -> int | str | None:
    value = value.strip()
    if not value:
        return None
    if value.isdigit():
        return int(value) - 1  # people count steps from 1
    return value


def install_tour(window: QMainWindow) -> TourDock:
    """Add the tour to ``window``: its dock, Help › Lab tour (Ctrl+T), resume and first-start offer."""
    dock = TourDock(window)
    # a layout saved with the tour in it (restoreState ran before the dock existed) puts it back;
    # else it goes beside the token editor: the columns below are already at their minimum widths
    if not window.restoreDockWidget(dock):
        tokens = window.findChild(QDockWidget, PanelId.TOKEN_EDITOR)
        if tokens is not None and not tokens.isFloating() and window.dockWidgetArea(tokens) == Qt.DockWidgetArea.TopDockWidgetArea:
            window.splitDockWidget(tokens, dock, Qt.Orientation.Horizontal)
        else:
            window.addDockWidget(Qt.DockWidgetArea.RightDockWidgetArea, dock)
        dock.hide()
    window.tour = dock  # type: ignore[attr-defined]

    action = QAction(tr("tour.menu"), window)
    action.setObjectName("action.tour")
    action.setShortcut(QKeySequence(SHORTCUT))
    action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
    action.triggered.connect(lambda _checked=False: _open(window, dock))
    help_menu = window.help_menu
    if help_menu is not None:
        first = help_menu.actions()[0] if help_menu.actions() else None
        help_menu.insertAction(first, action)
    else:
        window.addAction(action)
    dock.menu_action = action  # re-labelled by dock.retranslate()

    forced = os.environ.get(OPEN_ENV, "").strip().lower() in ("1", "true", "yes")
    offered = read_bool(window.settings.value(KEY_OFFERED), False)
    if forced:
        step = _step_from_env(os.environ.get(STEP_ENV, ""))
        if step is not None:
            try:
                dock.progress.goto(step)
            except ValueError:
                log.warning("%s=%r names no tour step", STEP_ENV, os.environ.get(STEP_ENV))
        # after the window's own first-show sizing (also a zero-delay timer, posted when it is shown)
        # (the dock as context: the timers die with it if the window goes first)
        call_later(0, dock, lambda: call_later(0, dock, lambda: _open(window, dock)))
    elif not offered:
        offer = TourOffer(dock, window.statusBar())
        window.statusBar().insertPermanentWidget(0, offer)
        dock.offer = offer
    if not offered:
        window.settings.setValue(KEY_OFFERED, True)
    if dock.isVisibleTo(window):  # restored open from the last session: set the step up again
        call_later(0, dock, dock._enter_step)
    return dock


def _open(window: QMainWindow, dock: TourDock) -> None:
    if dock.offer is not None:
        dock.offer.hide()
    was_open = dock.isVisible()
    dock.open_tour()
    if not was_open:
        make_room(window, dock)
