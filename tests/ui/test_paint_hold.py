"""A resize and Reset layout paint each dock once, laid out (the soak's resize and
Reset layout stalls).

Before the hold, the window painted every dock after each pass of a resize's relayout (the docks,
pyqtgraph's posted layouts, the head grid's height for its new width, the scroll areas): the head
grid's maps 3-4 times per resize.  Now no panel in sight is painted while the relayout runs (its
passes counted as layout requests under the window), and each is painted once it is over.  (After
that, the offscreen platform's expose of the resized window may paint everything once more.)"""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from attention_lab.ui.panels.ids import PanelId
from paint_counter import EventCounter, PaintCounter
from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtWidgets import QApplication, QWidget

TIMEOUT_MS = 60_000
SIZES = ((1000, 700), (1400, 900), (800, 600), (1900, 1150))


def _settle(qtbot, window) -> None:
    qtbot.waitUntil(lambda: not window.paint_hold.held, timeout=TIMEOUT_MS)
    qtbot.wait(150)  # the released paint


class HeldPaints(QObject):
    """Paint events of the panels in sight, and relayout passes (layout requests) under the window,
    counted apart while the hold is on and after it."""

    def __init__(self, window):
        super().__init__()
        self.window = window
        grid, leakage = window.built_panel(PanelId.HEAD_GRID), window.built_panel(PanelId.LEAKAGE)
        self.watched = {grid: "head grid panel", grid.grid_view.viewport(): "head grid maps", leakage: "leakage panel"}
        self.reset()
        QApplication.instance().installEventFilter(self)

    def reset(self) -> None:
        self.while_held = {name: 0 for name in self.watched.values()}
        self.after = dict(self.while_held)
        self.relayouts_held = 0

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        held = self.window.paint_hold.held
        if event.type() == QEvent.Type.Paint and watched in self.watched:
            (self.while_held if held else self.after)[self.watched[watched]] += 1
        elif event.type() == QEvent.Type.LayoutRequest and held and isinstance(watched, QWidget) \
                and self.window.isAncestorOf(watched):
            self.relayouts_held += 1
        return False

    def remove(self) -> None:
        QApplication.instance().removeEventFilter(self)


@pytest.fixture
def window(qtbot, make_window, isolated_settings):
    # no first-run offers: they come up on a timer of their own and repaint what they cover
    isolated_settings.setValue("first_run/gpt2_offer_answered", True)
    isolated_settings.setValue("tour/offered", True)
    window = make_window(model_spec="demo")
    grid = window.built_panel(PanelId.HEAD_GRID)
    qtbot.waitUntil(lambda: grid.has_data() and window.built_panel(PanelId.LEAKAGE).has_data(), timeout=TIMEOUT_MS)
    qtbot.wait(300)
    return window


def _check(paints: HeldPaints, what: str) -> None:
    # the relayout ran over several passes (3-4 paints of each panel without the hold), none painted
    assert paints.relayouts_held >= 2, f"{what}: the hold did not cover the relayout ({paints.relayouts_held} passes)"
    assert not any(paints.while_held.values()), f"{what}: painted while held: {paints.while_held}"
    # and every panel in sight is painted once it is over: the hold gives the docks their updates back
    assert all(paints.after.values()), f"{what}: not painted after the hold: {paints.after}"


def test_a_resize_is_painted_once_laid_out(qtbot, window):
    paints = HeldPaints(window)
    try:
        for width, height in SIZES:
            paints.reset()
            holds = window.paint_hold.holds
            window.resize(width, height)
            _settle(qtbot, window)
            assert window.paint_hold.holds == holds + 1
            _check(paints, f"{width}×{height}")
    finally:
        paints.remove()


def test_reset_layout_is_painted_once_laid_out(qtbot, window):
    window.resize(1000, 700)
    _settle(qtbot, window)
    # the learner dragged the splitter between the columns, moved the Mask tab to the left and
    # brought the KV tab to the front: Reset restores the default state (every dock area rebuilt)
    window.resizeDocks([window.docks[PanelId.HEAD_GRID]], [420], Qt.Orientation.Horizontal)
    window.docks[PanelId.KVBENCH].raise_()
    window.removeDockWidget(window.docks[PanelId.MASK])
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, window.docks[PanelId.MASK])
    window.docks[PanelId.MASK].show()
    _settle(qtbot, window)
    window.docks[PanelId.HEAD_GRID].raise_()
    _settle(qtbot, window)
    paints = HeldPaints(window)
    try:
        window.reset_layout()
        _settle(qtbot, window)
        _check(paints, "Reset layout")
    finally:
        paints.remove()


def test_the_docks_paint_again_after_a_hold(qtbot, window):
    """Held on the top-level window itself, ``setUpdatesEnabled(False)`` across several turns left
    it never painted again (Qt 6, offscreen); the hold is on the docks, and they paint after it."""
    window.resize(1000, 700)
    _settle(qtbot, window)
    grid = window.built_panel(PanelId.HEAD_GRID)
    counter = PaintCounter(grid)
    assert all(dock.updatesEnabled() for dock in window.docks.values())
    grid.update()
    qtbot.waitUntil(lambda: counter.count >= 1, timeout=5_000)


def test_no_hold_on_a_window_never_painted(qtbot, window):
    """The fuzzer's window is never painted (``setUpdatesEnabled(False)`` on it): no hold, no paint
    to spare, and nothing turned back on that the fuzzer had turned off."""
    window.setUpdatesEnabled(False)
    holds = window.paint_hold.holds
    window.resize(1000, 700)
    qtbot.wait(50)
    assert window.paint_hold.holds == holds and not window.paint_hold.held
    window.setUpdatesEnabled(True)


class _SizeChanges(QObject):
    """The sizes ``watched`` is given, in order."""

    def __init__(self, watched):
        super().__init__()
        self.sizes: list[tuple[int, int]] = []
        watched.installEventFilter(self)

    def eventFilter(self, _watched, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Resize:
            self.sizes.append(event.size().toTuple())
        return False


def test_the_head_grid_is_not_narrowed_by_the_scroll_bar_its_height_brings_up(qtbot, window):
    """The head grid asks for the height at which its maps fill its width; taller than the dock, the
    dock's scroll bar came up and took 14 px of that width, and the height for the narrower width
    was asked for in turn: one more relayout and paint of the maps per resize (598 → 645 → 634 px
    at 1400×900).  Its dock keeps the bar's room: one width per size of the window."""
    window.resize(1000, 700)
    _settle(qtbot, window)
    grid = window.built_panel(PanelId.HEAD_GRID)
    for width, height in ((1400, 900), (1000, 700), (1900, 1150), (1400, 900)):
        changes = _SizeChanges(grid)
        window.resize(width, height)
        _settle(qtbot, window)
        widths = sorted({w for w, _h in changes.sizes})
        assert len(widths) <= 1, f"at {width}×{height} the head grid was {changes.sizes}"


def test_a_reset_layout_with_nothing_to_reset_relays_out_and_paints_nothing(qtbot, window):
    """A Reset layout of a window still as the last one left it re-applied the same places and sizes,
    and its paint hold alone repainted every dock (~130 paint events for nothing); now it
    does nothing.  Anything changed since (a tab brought forward, a size) is reset as before."""
    window.resize(1000, 700)
    _settle(qtbot, window)
    window.reset_layout()
    _settle(qtbot, window)
    paints = HeldPaints(window)
    grid_dock = window.docks[PanelId.HEAD_GRID]
    dock_resizes = EventCounter(grid_dock, QEvent.Type.Resize)
    try:
        holds = window.paint_hold.holds
        window.reset_layout()
        _settle(qtbot, window)
        assert window.paint_hold.holds == holds, "a hold: every dock repainted when it ends"
        assert not any(paints.after.values()), f"painted with nothing to reset: {paints.after}"
        assert dock_resizes.count == 0
        # the KV tab brought to the front: Reset brings the head grid back
        window.docks[PanelId.KVBENCH].raise_()
        _settle(qtbot, window)
        assert window._out_of_sight(PanelId.HEAD_GRID)
        window.reset_layout()
        _settle(qtbot, window)
        assert not window._out_of_sight(PanelId.HEAD_GRID)
        # another window size: Reset sets the sizes for it (this test's screen is Qt's offscreen 800×800)
        window.resize(760, 640)
        _settle(qtbot, window)
        holds = window.paint_hold.holds
        window.reset_layout()
        assert window.paint_hold.holds == holds + 1
    finally:
        paints.remove()


def test_a_language_switch_paints_each_view_in_sight_once_laid_out(qtbot, window):
    """A switch re-labels the panels in sight one per turn (``RedrawScheduler.language_later``);
    painted in their own turns, each panel's words repainted the window once per pass of each
    graphics scene they changed (``QGraphicsScene`` sends the window's update request at once):
    5-8 whole-window paints in the leakage panel's turn, the soak's longest ``set_language``
    stalls (without the hold here: the bars 3-5 paints per switch, the head grid's maps 4).
    Held from the window's new words to the last panel's, each view is painted once laid out, and
    once more at most: an axis measures its numbers when it paints them, and a width that changed
    with the language's decimal comma lays its plot out again (pyqtgraph's ``_updateWidth``)."""
    text = "A small cat sat on the warm mat today"  # the learner's own: the switch asks for no new analysis
    window.panel(PanelId.TOKEN_EDITOR).editor.setPlainText(text)
    window.resize(1000, 700)
    qtbot.waitUntil(lambda: window.last_state.text == text and window.redraw.showing is window.last_state
                    and not window.session.pending and not window.worker.busy, timeout=TIMEOUT_MS)
    _settle(qtbot, window)
    leakage = window.built_panel(PanelId.LEAKAGE)
    views = {"leakage bars": leakage.bar_plot.viewport(), "leakage layer maps": leakage.layers_view.viewport(),
             "head grid maps": window.built_panel(PanelId.HEAD_GRID).grid_view.viewport()}
    for language in ("pt_BR", "en", "pt_BR"):
        paints = HeldPaints(window)
        counters = {name: PaintCounter(view) for name, view in views.items()}
        try:
            holds = window.paint_hold.holds
            window.set_language(language)
            # (a built panel out of sight keeps the old words until shown: only those in sight are waited for)
            qtbot.waitUntil(lambda: not window.redraw.relabelling and not window.paint_hold.held
                            and all(window._out_of_sight(p) for p in window.redraw.untranslated), timeout=TIMEOUT_MS)
            qtbot.wait(150)  # the released paint
            assert window.paint_hold.holds > holds, f"{language}: the switch was not held"
            _check(paints, f"switch to {language}")
            counts = {name: counter.count for name, counter in counters.items()}
            assert all(count <= 2 for count in counts.values()), f"{language}: paints per view {counts}"
        finally:
            paints.remove()
