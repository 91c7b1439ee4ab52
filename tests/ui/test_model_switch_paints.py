"""A model switch paints each panel in sight once (load_model: 39 of 263 over 100 ms in
the 30-minute soak; with no resize, each panel in sight was painted 2-3 times per switch).

Counted: the whole paints (half its area or more) of each panel's explanation and of each of its
views (a graphics view's viewport, the token chips).  The explanation labels were painted once per
turn of the switch's redraw: a selectable rich-text QLabel lays its text out again, and repaints,
for every height-for-width question the window's layout asks (``panel_kit.ExplanationLabel``).
The Leakage bars were painted 3 times: pyqtgraph measured the new range's wider tick labels in
the first paint, and the axis's new width laid the plot out and painted it again
(``plot_setters.settle_axis_widths``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtWidgets import QGraphicsView  # noqa: E402

from paint_counter import PaintCounter  # noqa: E402

from attention_lab.ui.docks import FIRST_VIEW_PANELS  # noqa: E402
from attention_lab.ui.panels.ids import PanelId  # noqa: E402

TIMEOUT_MS = 60_000
WHOLE = 0.5  # a paint of half a widget or more: a repaint of it (not a corner beside a label's change)


@pytest.fixture
def window(qtbot, make_window, isolated_settings):
    # no first-run offers: they come up on a timer of their own and repaint what they cover
    isolated_settings.setValue("first_run/gpt2_offer_answered", True)
    isolated_settings.setValue("tour/offered", True)
    window = make_window(model_spec="demo")
    qtbot.waitUntil(lambda: window.session.model is not None, timeout=TIMEOUT_MS)
    _settle(qtbot, window, window.session.model)
    return window


def _settle(qtbot, window, model) -> None:
    qtbot.waitUntil(lambda: window.last_state is not None and window.last_state.model is model
                    and not window.session.worker.busy and not window.redraw.cleaning
                    and not window.panels_waiting.intersection(FIRST_VIEW_PANELS), timeout=TIMEOUT_MS)
    qtbot.wait(400)  # the last step's paint, the later parts' turns


def _counted(window) -> dict:
    """name → widget: each panel in sight's explanation and views."""
    widgets = {}
    for pid in FIRST_VIEW_PANELS:
        panel = window.built_panel(pid)
        widgets[f"{pid} explanation"] = panel.explain
        for view in panel.findChildren(QGraphicsView):
            if view.isVisible():
                widgets[f"{pid} {type(view).__name__} {view.width()}x{view.height()}"] = view.viewport()
    widgets["token chips"] = window.built_panel(PanelId.TOKEN_EDITOR).chips
    return widgets


def test_a_model_switch_paints_each_panel_in_sight_once(qtbot, window, tiny_model):
    demo = window.session.model
    for model in (tiny_model, demo, tiny_model):
        counters = {name: PaintCounter(widget, WHOLE) for name, widget in _counted(window).items()}
        assert len(counters) >= 6, list(counters)  # the three explanations, the chips, the head grid, a leakage map
        window.session.set_model(model)
        _settle(qtbot, window, model)
        # the leakage panel's explanation says nothing of the model: unchanged, it is not painted
        expected = {name: 0 if name == f"{PanelId.LEAKAGE} explanation" else 1 for name in counters}
        paints = {name: counter.count for name, counter in counters.items()}
        assert paints == expected, f"{model.spec}: {paints} {[(name, c.rects) for name, c in counters.items()]}"
