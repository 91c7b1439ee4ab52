"""The room the tour's dock takes in the window's top strip while it is open, given back when it closes.
The dock keeps the strip's height from before in ``dock.top_height_before``."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QDockWidget, QMainWindow

from attention_lab.ui.panels.ids import PanelId

DOCK_WIDTH = 680  # beside the token editor, which keeps the rest of the top strip
DOCK_HEIGHT = 370  # the top strip's height while the tour is open, at most 2/5 of the window's


def make_room(window: QMainWindow, dock: QDockWidget) -> None:
    """Give the tour room beside the tokens: a share of the top strip, and the strip some height."""
    if dock.isFloating() or window.dockWidgetArea(dock) != Qt.DockWidgetArea.TopDockWidgetArea:
        return
    tokens = window.findChild(QDockWidget, PanelId.TOKEN_EDITOR)
    if tokens is None or not tokens.isVisible() or window.dockWidgetArea(tokens) != Qt.DockWidgetArea.TopDockWidgetArea:
        return
    width = min(DOCK_WIDTH, max(dock.minimumSizeHint().width(), window.width() * 45 // 100))
    window.resizeDocks([tokens, dock], [max(1, window.width() - width), width], Qt.Orientation.Horizontal)
    # two fifths of a laptop's window at most: the maps below keep the rest (1366×768: 307 px)
    height = min(DOCK_HEIGHT, window.height() * 2 // 5)
    if tokens.height() < height:
        dock.top_height_before = tokens.height()
        window.resizeDocks([dock], [height], Qt.Orientation.Vertical)


def give_room_back(window: QMainWindow, dock: QDockWidget) -> None:
    """Closing the tour gives the top strip its height back."""
    before, dock.top_height_before = dock.top_height_before, None
    tokens = window.findChild(QDockWidget, PanelId.TOKEN_EDITOR)
    if before is not None and tokens is not None and tokens.isVisible():
        window.resizeDocks([tokens], [before], Qt.Orientation.Vertical)
