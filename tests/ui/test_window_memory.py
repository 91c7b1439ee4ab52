"""A closed window is freed: the soak's "quit and start again" must not keep old windows.

The 30-minute soak of 2026-12-01 grew from 444 to 6,864 MB: every closed window stayed in
memory with its session, panels and plots (+22 MB each).  The cause was PySide6 6.12's
``QMetaMethod.fromSignal(panel.some_signal)``, which keeps a reference to the panel on each
call: a panel that had asked "does anyone serve this intent?" (the Mask, KV cache, portrait,
mask designer and knockout panels, once drawn and shown) was never freed, nor anything it
reaches.  ``Panel.is_served`` now finds the signal by name through the meta-object.
"""

from __future__ import annotations

import gc
import sys
import weakref

import pytest
import shiboken6
from PySide6.QtWidgets import QApplication


def test_is_served_keeps_no_reference_to_the_panel(qtbot):
    from attention_lab.ui.panels.mask import MaskPanel

    panel = MaskPanel()
    assert not panel.is_served("modes_wanted")  # a panel alone: nobody to ask
    panel.modes_wanted.connect(lambda _state: None)
    before = sys.getrefcount(panel)
    for _ in range(5):
        assert panel.is_served("modes_wanted")
    assert sys.getrefcount(panel) == before
    gone = weakref.ref(panel)
    shiboken6.delete(panel)  # as its window's deletion would (its own lambdas go with its children)
    del panel
    gc.collect()
    assert gone() is None


def test_is_served_names_a_signal_the_panel_has(qtbot):
    from attention_lab.ui.panels.mask import MaskPanel

    panel = MaskPanel()
    qtbot.addWidget(panel)
    with pytest.raises(ValueError, match="no signal 'modes_wantd'"):
        panel.is_served("modes_wantd")  # a typo fails loudly instead of "never served"


def test_closed_windows_are_freed(qtbot, isolated_settings, tiny_checkpoint, monkeypatch):
    """Three windows, each with every panel built, drawn and brought into sight (the paths
    that ask the session for work), closed in turn: all three are gone, while what the imports
    made stays frozen out of the collector's sight, as the app freezes it before its first
    window (``ui/gc_pause.py``: windows are never frozen, so their cycles can be freed)."""
    from attention_lab.ui import gc_pause
    from attention_lab.ui.idle_build import install_idle_build
    from attention_lab.ui.launch import teardown
    from attention_lab.ui.main_window import MainWindow

    app = QApplication.instance()
    closed = []
    monkeypatch.setattr(gc_pause, "_imports_frozen", False)  # as in a new process
    gc_pause.freeze_imports()
    try:
        for _ in range(3):
            window = MainWindow(settings=isolated_settings, model_spec=str(tiny_checkpoint))
            install_idle_build(window)
            window.resize(1400, 900)
            window.show()
            qtbot.waitUntil(lambda w=window: w.last_state is not None, timeout=30_000)
            window.build_all_panels()
            window.draw_hidden_panels()
            for dock in window.docks.values():  # each panel in sight once: its showEvent asks for work
                dock.show()
                dock.raise_()
                qtbot.wait(20)
            closed.append(weakref.ref(window))
            assert teardown(app, window)
            del window
            gc.collect()
        alive = [ref() is not None for ref in closed]
        assert alive == [False, False, False], f"closed windows still in memory: {alive}"
        assert gc.get_freeze_count() > 0  # the new windows and models collected without thawing the imports
    finally:
        gc.unfreeze()
        gc.collect()


def test_no_code_calls_qmetamethod_from_signal():
    """The leak must not come back through another panel or a new helper."""
    import ast
    from pathlib import Path

    import attention_lab

    package = Path(attention_lab.__file__).parent
    calls = [
        f"{path.relative_to(package)}:{node.lineno}"
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute) and node.attr == "fromSignal"
    ]
    assert calls == [], f"QMetaMethod.fromSignal keeps a reference to the signal's owner: {calls}"


def _window_with_every_panel_built(qtbot, settings, checkpoint):
    """A shown window at a desktop size on ``checkpoint``, its first analysis in, every panel built."""
    from attention_lab.ui.main_window import MainWindow

    window = MainWindow(settings=settings, model_spec=str(checkpoint))
    window.resize(1400, 900)
    window.show()
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=30_000)
    window.build_all_panels()
    return window


def test_panels_out_of_sight_let_go_of_the_models_switched_away_from(qtbot, isolated_settings, tiny_checkpoint, tmp_path):
    """Each panel left for later (a dock behind another tab) kept the state it last
    drew, and that state's model, after every model switch: the soak's live C heap grew ~90 MB
    with the 15 MB demo model (4 hidden panels held 4 old models); with GPT-2 small each one
    is 500 MB.  After four switches with every panel built and drawn, only the model in use
    is alive."""
    import shutil

    from attention_lab.ui.launch import teardown

    other = tmp_path / "other-model"
    shutil.copytree(tiny_checkpoint, other)  # another folder: another model object, same weights
    window = _window_with_every_panel_built(qtbot, isolated_settings, tiny_checkpoint)
    try:
        window.draw_hidden_panels()  # every panel holds the first model's state
        hidden = [pid for pid in window.panels if window._out_of_sight(pid)]
        assert hidden, "the default layout has docks behind others"
        loaded = [weakref.ref(window.session.model)]
        for spec in (other, tiny_checkpoint, other, tiny_checkpoint):
            window.open_model_folder(str(spec))
            qtbot.waitUntil(lambda s=str(spec): window.session.model is not None and window.session.model.spec == s
                            and window.last_state is not None and window.last_state.model is window.session.model
                            and window.redraw.showing is window.last_state, timeout=30_000)
            loaded.append(weakref.ref(window.session.model))
        qtbot.wait(50)
        gc.collect()
        held = [f"model {i}: {[pid for pid, p in window.panels.items() if p.state is not None and p.state.model is ref()]}"
                for i, ref in enumerate(loaded[:-1]) if ref() is not None]
        assert held == [], f"models switched away from are still alive (held by these panels): {held}"
    finally:
        assert teardown(QApplication.instance(), window)


def test_panels_out_of_sight_let_go_of_a_long_texts_state_once_the_text_moves_on(qtbot, isolated_settings, tiny_checkpoint):
    """Each panel behind a tab kept the state it last drew after the text in sight had
    moved on: a long text's attention maps (the demo at 256 tokens: 7 MB; GPT-2 small at 1,024:
    ~100 MB).  With every panel built and drawn on a long text, a short one in sight leaves no
    panel holding the long text's state, and a panel shown again draws the short one."""
    from attention_lab.ui.launch import teardown

    window = _window_with_every_panel_built(qtbot, isolated_settings, tiny_checkpoint)
    try:
        window.session.set_text("the cat sat on the mat " * 8)
        qtbot.waitUntil(lambda: window.last_state is not None and window.last_state.text.startswith("the cat")
                        and window.redraw.showing is window.last_state and not window.session.pending, timeout=30_000)
        window.draw_hidden_panels()  # every panel holds the long text's state
        long_state = weakref.ref(window.last_state)
        hidden = [pid for pid in window.panels if window._out_of_sight(pid)]
        assert hidden, "the default layout has docks behind others"
        window.session.set_text("Hi")
        qtbot.waitUntil(lambda: window.last_state is not None and window.last_state.text == "Hi"
                        and window.redraw.showing is window.last_state, timeout=30_000)
        qtbot.wait(50)
        gc.collect()
        holders = [pid for pid, p in window.panels.items() if p.state is not None and p.state is long_state()]
        assert long_state() is None, f"the long text's state is still alive (held by these panels: {holders})"
        assert all(window.panels[pid].state is None for pid in hidden)
        window.draw_hidden_panels()
        assert all(window.panels[pid].state is window.last_state for pid in hidden)
    finally:
        assert teardown(QApplication.instance(), window)


def test_a_closed_window_frees_the_one_head_plots_it_took_out_of_the_layout(qtbot, isolated_settings, tiny_checkpoint):
    """The 30-minute soak grew its live heap by ~135 MB: the head grid keeps the enlarged head's
    plots and moves them in and out of its layout; a plot taken out (two columns, then one) was taken
    out of the scene too, and PySide kept its wrapper alive for good (it had passed to Qt), and through
    its map's hover callback the panel, every other panel, their plots and analyses after the window
    closed.  A plot out of the layout now stays in the scene under a hidden item and goes with it."""
    from attention_lab.ui.launch import teardown
    from attention_lab.ui.main_window import MainWindow
    from attention_lab.ui.panels.head_grid import ONE_MODE, SIDE_BY_SIDE, VIEWS
    from attention_lab.ui.panels.ids import PanelId

    app = QApplication.instance()
    window = MainWindow(settings=isolated_settings, model_spec=str(tiny_checkpoint))
    window.resize(1400, 900)
    window.show()
    qtbot.waitUntil(lambda w=window: w.last_state is not None, timeout=30_000)
    grid = window.panel(PanelId.HEAD_GRID)
    grid.view_combo.setCurrentIndex(VIEWS.index(SIDE_BY_SIDE))
    grid.tabs.setCurrentIndex(1)  # the enlarged head, side by side: two plots in the layout
    qtbot.waitUntil(lambda g=grid: len(g._head_plots) == 2 and 1 not in g._stale, timeout=10_000)
    grid.view_combo.setCurrentIndex(VIEWS.index(ONE_MODE))  # one: the second plot leaves the layout
    qtbot.waitUntil(lambda g=grid: len(g._head_plots) == 1, timeout=10_000)
    out_of_layout = grid._head_plot_pool[1][0]
    assert out_of_layout.scene() is grid.head_view.scene() and not out_of_layout.isVisible()
    panel, plot = weakref.ref(grid), weakref.ref(out_of_layout)
    del grid, out_of_layout
    assert teardown(app, window)
    del window
    gc.collect()
    assert plot() is None, "the plot taken out of the layout outlived its window"
    assert panel() is None, "the head grid outlived its window"


def test_a_window_quit_with_a_call_on_its_way_is_freed(qtbot, isolated_settings, tiny_checkpoint):
    """The soak kept one closed window to the end of the run: quit while a resize's paint hold
    had its check posted for the next turn, the single-shot's callable (PySide keeps it for good when
    its context goes first) held the hold and the window.  Scheduled through ``qt_compat.call_later``,
    the call goes with the window."""
    from attention_lab.ui.launch import teardown
    from attention_lab.ui.main_window import MainWindow

    app = QApplication.instance()
    window = MainWindow(settings=isolated_settings, model_spec=str(tiny_checkpoint))
    window.resize(1200, 700)
    window.show()
    qtbot.waitUntil(lambda w=window: w.last_state is not None, timeout=30_000)
    qtbot.wait(50)
    window.paint_hold.hold()  # as a resize does: its check is posted for the next turn
    assert window.paint_hold.held
    gone = weakref.ref(window)
    assert teardown(app, window)
    del window
    gc.collect()
    assert gone() is None, "a window quit with its paint hold's check on its way stayed in memory"
