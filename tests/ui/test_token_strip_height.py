"""The Tokens strip at a learner's laptop size: as tall as its panel needs at the
window's width, with no blank band under the model's guesses.

Before the fix the strip was sized from the panel's ``sizeHint()``, whose word-wrapped
explanation is laid out for a narrower width (more lines): at 1366×768 the strip kept
~40-60 px of blank under the guesses while the heat maps below were cramped."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QSettings

from attention_lab.ui.panels.ids import PanelId

STATE_TIMEOUT_MS = 60_000
#: how long the strip may take to reach its height once the first analysis is in: its refit runs in
#: a turn after the analysis is drawn and the window lays its docks out in a later one, and the GUI
#: thread is busy for ~200 ms right after the first analysis (most likely the docks' first paint)
SETTLE_TIMEOUT_MS = 5_000
#: the blank a learner may see under the guesses row: the layout's own margin and spacing
MAX_BLANK_PX = 12


@pytest.fixture
def laptop_window(qtbot, tmp_path):
    """A window opened as ``attention_lab --size WxH`` opens it: sized, then shown (the
    default dock sizes are applied at the first show, for the window's size)."""
    from attention_lab.ui.main_window import MainWindow
    from qt_windows import close_windows

    windows = []

    def make(language: str, size: tuple[int, int]):
        window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat),
                            model_spec="demo", language=language)
        windows.append(window)
        window.resize(*size)
        window.show()
        qtbot.waitUntil(lambda: window.last_state is not None, timeout=STATE_TIMEOUT_MS)
        # the strip fitted again for the analysis (the chips, the guesses): not a fixed wait, which
        # met the refit's layout on one run and missed it on another
        qtbot.waitUntil(lambda: not window.dock_layout._strip_refit_pending, timeout=SETTLE_TIMEOUT_MS)
        return window

    yield make
    close_windows(windows)


def blank_under_guesses(window) -> int:
    """Pixels of the Tokens dock's view below the row of guesses (its last row)."""
    panel = window.panel(PanelId.TOKEN_EDITOR)
    scroll = window.docks[PanelId.TOKEN_EDITOR].widget()
    guesses = panel.predictions
    bottom = guesses.mapTo(scroll.viewport(), guesses.rect().bottomLeft()).y() + 1
    return scroll.viewport().height() - bottom


@pytest.mark.parametrize("size", [(1366, 768), (1200, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_tokens_strip_has_no_blank_band_under_the_guesses(laptop_window, qtbot, language, size):
    window = laptop_window(language, size)
    assert (window.width(), window.height()) == size
    panel = window.panel(PanelId.TOKEN_EDITOR)
    assert panel.predictions.count() > 0, "the guesses row is shown"
    scroll = window.docks[PanelId.TOKEN_EDITOR].widget()

    def fitted() -> None:  # as the window settles: a layout that never gets there fails at the timeout
        assert not scroll.verticalScrollBar().isVisible(), "the strip is too short: its panel scrolls"
        blank = blank_under_guesses(window)
        assert 0 <= blank <= MAX_BLANK_PX, f"{language}: {blank} px of blank under the guesses"

    qtbot.waitUntil(fitted, timeout=SETTLE_TIMEOUT_MS)



def test_the_refit_after_the_first_analysis_leaves_the_tour_its_height(laptop_window, qtbot, monkeypatch):
    """The tour opened at start (``ATTENTION_LAB_OPEN_TOUR``, or resumed) gives the top row two
    fifths of the window for itself and the tokens beside it; the strip's refit after the first
    analysis sized the row for a strip spanning the window and cut both (2026-12-01 screenshots)."""
    from attention_lab.ui import tour_install, tour_room

    monkeypatch.setenv(tour_install.OPEN_ENV, "1")
    monkeypatch.setattr(tour_room, "DOCK_HEIGHT", 10_000)  # the row's share is the window's two fifths
    from attention_lab.ui.main_window import MainWindow

    made = {}
    original_init = MainWindow.__init__

    def init_with_tour(self, *args, **kwargs):  # the tour installed as the app installs it, before any analysis
        original_init(self, *args, **kwargs)
        made["tour"] = tour_install.install_tour(self)

    monkeypatch.setattr(MainWindow, "__init__", init_with_tour)
    window = laptop_window("pt_BR", (1366, 768))
    assert made["tour"].isVisible()
    qtbot.wait(300)
    tokens = window.docks[PanelId.TOKEN_EDITOR]
    assert tokens.height() >= 768 * 2 // 5 - 4, f"the top row shrank to {tokens.height()} px with the tour open"
