"""The panels behind tabs are built and drawn while the window is idle (issue 19)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from attention_lab.ui.docks import FIRST_VIEW_PANELS
from attention_lab.ui.idle_build import install_idle_build

TIMEOUT_MS = 60000


def test_idle_build_leaves_every_panel_built_drawn_and_working(qtbot, make_window):
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10, turn_ms=5)
    hidden = [pid for pid in window.docks if pid not in FIRST_VIEW_PANELS]
    assert hidden and all(window.built_panel(pid) is None for pid in hidden)  # not with the window
    qtbot.waitUntil(lambda: builder.done, timeout=TIMEOUT_MS)
    state = window.last_state
    for pid in hidden:
        panel = window.built_panel(pid)
        assert panel is not None, pid
        assert pid not in window.panels_waiting, pid  # the newest analysis drawn, out of sight
    # opening a tab shows what exists: the panel built in idle time, already drawn
    mask = window.built_panel("panel.mask")
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: mask.has_data(), timeout=TIMEOUT_MS)
    assert window.panel("panel.mask") is mask
    # and it keeps working: an edit reaches it like any panel in sight
    window.session.set_layer(1)
    qtbot.waitUntil(lambda: window.last_state is not None and window.last_state.layer == 1, timeout=TIMEOUT_MS)
    assert window.last_state is not state
    qtbot.waitUntil(lambda: mask.has_data() and "panel.mask" not in window.panels_waiting, timeout=TIMEOUT_MS)


def test_idle_build_waits_for_an_analysis_being_drawn(qtbot, make_window):
    window = make_window()
    builder = install_idle_build(window, start_delay_ms=10_000, turn_ms=5)
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=TIMEOUT_MS)
    redraw = window.redraw
    redraw.showing = object()  # a newer state's round under way
    try:
        builder.step()
        assert all(window.built_panel(pid) is None for pid in window.docks if pid not in FIRST_VIEW_PANELS)
    finally:
        redraw.showing = redraw.last_state
    builder.step()  # now it builds one panel ...
    built = [pid for pid in window.docks if pid not in FIRST_VIEW_PANELS and window.built_panel(pid) is not None]
    assert len(built) == 1
    builder.step()  # ... and draws it on the next turn
    assert built[0] not in window.panels_waiting
