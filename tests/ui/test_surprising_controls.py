"""Controls that surprised a learner: the KV chart zoomed under the mouse wheel into empty space,
with no way back."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attention_lab.ui.panels.kv_bench import KVBenchPanel  # noqa: E402

# the stale-result tests' tiny model and shown panel
from test_stale_results import model, shown  # noqa: E402,F401


def test_the_mouse_wheel_over_the_kv_chart_leaves_its_ranges(qtbot, model):
    """Seen by a learner: the wheel over the KV chart zoomed into empty space, with no way back."""
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtGui import QWheelEvent
    from PySide6.QtWidgets import QApplication
    from state_factory import build_state

    panel = shown(qtbot, KVBenchPanel())
    panel.show_state(build_state(model))
    qtbot.wait(20)
    vb = panel.plot.getPlotItem().getViewBox()
    before = vb.viewRange()
    viewport = panel.plot.viewport()
    centre = QPointF(viewport.rect().center())
    for _ in range(3):
        event = QWheelEvent(centre, QPointF(viewport.mapToGlobal(centre.toPoint())), QPoint(0, 0), QPoint(0, 240),
                            Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier, Qt.ScrollPhase.NoScrollPhase, False)
        QApplication.sendEvent(viewport, event)
    qtbot.wait(20)
    assert vb.viewRange() == before


def _luminance(rgb) -> float:
    r, g, b = (c / 255 for c in rgb[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def test_a_knocked_out_head_is_marked_in_a_colour_that_stands_out_before_any_ranking(qtbot, model):
    """Seen by a learner: a knocked-out head was marked by a faint white × on pale grey."""
    from attention_lab.ui.panels.knockout import IDLE_RGBA, KnockoutPanel
    from state_factory import build_state

    panel = shown(qtbot, KnockoutPanel())
    panel.show_state(build_state(model))
    panel.toggle_head(0, 1)
    (mark,) = panel._marks.shown
    colour = mark.textItem.defaultTextColor()
    assert abs(_luminance((colour.red(), colour.green(), colour.blue())) - _luminance(IDLE_RGBA)) > 0.6


def test_the_custom_grid_stays_put_between_two_clicks(qtbot, model):
    """Seen by a learner: the custom mask's grid moved 42 px after the first click, so the second
    click landed on another cell."""
    from attention_lab.ui.panels.mask_designer import MaskDesignerPanel
    from attention_lab.ui.session import Session
    from attention_lab.ui.wiring import connect_panel
    from attention_lab.ui.worker import InferenceWorker
    from state_factory import build_state

    worker = InferenceWorker(name="test-custom-grid")
    panel = shown(qtbot, MaskDesignerPanel(), 700, 700)
    session = Session(worker, parent=panel, debounce_ms=0)
    connect_panel(session, panel)
    session.set_model(model)
    panel.show_state(build_state(model, "The cat sat. The dog ran. A bird sang"))
    panel.set_choice("custom")
    qtbot.waitUntil(lambda: panel.shown_verdicts() is not None, timeout=60_000)
    qtbot.wait(50)
    where = panel.grid_plot.mapTo(panel, panel.grid_plot.rect().topLeft())
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QApplication

    panel.toggle_cell(5, 1)  # the first click: "Measuring…" now, the new verdicts later
    try:
        panel.show_report_progress(1, 12)  # the worker's first progress report, as it arrives
        for _ in range(3):
            QApplication.sendPostedEvents(None, QEvent.Type.LayoutRequest.value)  # laid out, before any result
        assert panel.grid_plot.mapTo(panel, panel.grid_plot.rect().topLeft()) == where
        for _ in range(40):  # its verdicts measured again meanwhile ("Measuring… 3 of 12"), then shown
            qtbot.wait(25)
            assert panel.grid_plot.mapTo(panel, panel.grid_plot.rect().topLeft()) == where
    finally:
        assert worker.shutdown(5.0)


def test_the_byte_chip_remark_is_a_fact_in_plain_colour_naming_the_loaded_model(qtbot, model):
    """Seen by a learner: the byte-chip note was red (an error colour for a normal fact) and named
    GPT-2 while the demo model was loaded."""
    from attention_lab.ui.model_label import model_label
    from attention_lab.ui.panels.token_editor import NOTICE_STYLE, TokenEditorPanel
    from state_factory import build_state

    panel = shown(qtbot, TokenEditorPanel())
    text = "🙂 attention"
    panel.set_text(text)
    panel.show_state(build_state(model, text))
    assert "<0x" in panel.message.text() and model_label(model) in panel.message.text()
    assert panel.message.styleSheet() != NOTICE_STYLE
    panel.show_notice("The text is cut at the model's context")  # a problem keeps the red
    assert panel.message.styleSheet() == NOTICE_STYLE
