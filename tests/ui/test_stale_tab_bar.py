"""Qt's leftover dock tab bar is hidden in every language.

In a window opened in Portuguese, the leftover of the right column's first two docks kept the
English titles it was made with ("Leakage diff | Mask"): matched by title against the live bar
("Vazamento | Máscara | …") it was never hidden, and showed over the head maps as soon as the
docks were laid out again (seen at 1366×768 after a model failed to load)."""

from __future__ import annotations

import pytest
from PySide6.QtWidgets import QTabBar

STATE_TIMEOUT_MS = 60_000


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_no_leftover_tab_bar_is_shown(qtbot, tmp_path, language):
    from PySide6.QtCore import QSettings

    from attention_lab.ui.main_window import MainWindow
    from qt_windows import close_windows

    settings = tmp_path / "settings.ini"  # a learner who has answered the first-run offers
    settings.write_text("[first_run]\ngpt2_offer_answered=true\n[tour]\noffered=true\n", encoding="utf-8")
    window = MainWindow(settings=QSettings(str(settings), QSettings.Format.IniFormat), model_spec="demo", language=language)
    try:
        window.resize(1366, 768)  # as ``attention_lab --size 1366x768`` opens it
        window.show()
        qtbot.waitUntil(lambda: window.last_state is not None, timeout=STATE_TIMEOUT_MS)
        qtbot.wait(50)  # the window hid the leftovers it recognised once shown
        _check_bars(window)
    finally:
        close_windows([window])


def _check_bars(window) -> None:
    shown = [bar for bar in window.findChildren(QTabBar) if bar.parent() is window and bar.isVisible()]
    titles = {dock.windowTitle() for dock in window.docks.values()}
    for bar in shown:
        texts = [bar.tabText(i) for i in range(bar.count())]
        assert set(texts) <= titles, f"a tab bar in sight says {texts}: not the docks' titles now"
    docks_in_bars = [bar.tabData(i) for bar in shown for i in range(bar.count())]
    assert len(docks_in_bars) == len(set(docks_in_bars)), "a dock has a tab in two bars in sight"


def test_a_leftover_with_the_titles_of_another_language_is_hidden(qtbot, make_window):
    """The leftover as Qt leaves it in a window opened in Portuguese (seen at 1366×768; how soon Qt
    makes it depends on the order of its layouts, so it is built here as Qt builds it): the first two
    tabs of the right column's bar, each holding its dock's address, under the titles of the start."""
    window = make_window(model_spec="demo", language="pt_BR")
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=STATE_TIMEOUT_MS)
    live = next(bar for bar in window.findChildren(QTabBar)
                if bar.parent() is window and bar.isVisible() and bar.count() >= 3 and bar.tabText(0) == "Vazamento")
    leftover = QTabBar(window)
    for i, english in enumerate(("Leakage diff", "Mask")):
        leftover.addTab(english)
        leftover.setTabData(i, live.tabData(i))
    leftover.show()
    window.dock_layout.hide_stale_tab_bars()
    assert not leftover.isVisible(), "an English 'Leakage diff | Mask' bar stays over the maps"
    assert live.isVisible()


# ---------------------------------------------------------------------------- Reset layout (the soak's stalls)
def _shown_groups(window) -> list[int]:
    """The tab count of each tab bar in sight, sorted: one bar per tab group of the default layout."""
    return sorted(bar.count() for bar in window.findChildren(QTabBar) if bar.parent() is window and bar.isVisible())


def _default_groups(window) -> list[int]:
    return sorted(len(ids) for ids in window.dock_layout.slots.values() if len(ids) > 1)


def test_reset_layout_of_docks_in_place_rebuilds_nothing(qtbot, make_window, monkeypatch):
    """Docks in their places (one closed): Reset shows and raises them and sets the sizes, without
    ``restoreState`` (which hid and showed every panel's widgets and left two tab bars each time:
    300-350 ms of Qt layout and painting in the soak, more each time)."""
    window = make_window(model_spec="demo")
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=STATE_TIMEOUT_MS)
    restored = []
    monkeypatch.setattr(window, "restoreState", lambda *args: restored.append(args) or True)
    bars = len(window.findChildren(QTabBar))
    window.docks["panel.mask"].close()  # the learner closed a dock: it keeps its place
    qtbot.wait(20)
    assert window.dock_layout.in_default_places()
    for _ in range(3):
        window.reset_layout()
        qtbot.wait(20)
    assert restored == [] and len(window.findChildren(QTabBar)) == bars
    assert not window.docks["panel.mask"].isHidden()
    assert _shown_groups(window) == _default_groups(window)
    first_right = window.docks[window.dock_layout.slots["right"][0]]
    assert not first_right.visibleRegion().isEmpty()  # each group's first tab raised


@pytest.mark.parametrize("moved", [True, False], ids=["a dock moved", "restoreState with docks in place"])
def test_reset_layout_of_a_moved_dock_restores_it_and_hides_the_bars_qt_replaced(qtbot, tmp_path, monkeypatch, moved):
    """``restoreState`` (a dock was moved) leaves the tab bars it replaced shown under the new ones: in
    a window opened as the soak opens it, two more bars in sight at each Reset before this fix."""
    from PySide6.QtCore import QSettings, Qt

    from attention_lab.ui.idle_build import install_idle_build
    from attention_lab.devtools.learner_driver import LearnerDriver
    from attention_lab.ui.main_window import MainWindow
    from qt_windows import close_windows

    window = MainWindow(settings=QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat), model_spec="demo")
    install_idle_build(window)
    window.resize(1400, 900)
    window.show()
    driver = LearnerDriver(window, {"start": "demo"}, tmp_path / "work")
    try:
        driver.settle()
        for _ in range(3):
            if moved:
                window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.docks["panel.shapes"])  # moved away
                driver.settle()
                assert not window.dock_layout.in_default_places()
            else:
                monkeypatch.setattr(window.dock_layout, "in_default_places", lambda: False)
            window.reset_layout()
            monkeypatch.undo()
            driver.settle()
            assert window.dock_layout.in_default_places()
            # one bar in sight per tab group: Qt's replaced bars (same tabs, stacked under the new) hidden
            assert _shown_groups(window) == _default_groups(window)
        window.resize(1300, 850)  # Qt lays the docks out again: a replaced bar stays hidden
        driver.settle()
        assert _shown_groups(window) == _default_groups(window)
        _check_bars(window)
    finally:
        close_windows([window])
