"""The head grid keeps its height once laid out, so it is not repainted pass after pass.

Its views hinted their own current size (QGraphicsView's scene rectangle, which pyqtgraph keeps
equal to the view), and the dock's scroll area gave the panel the height its layout preferred:
a few pixels more on every layout pass.  At 1366×768 the panel grew 4 px a turn, 551 → 755 px in
53 resizes, each repainting the 12 maps while the window built its other panels in idle time."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from attention_lab.ui.idle_build import install_idle_build
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.plot_setters import set_ticks
from PySide6.QtCore import QEvent, QObject

LAPTOP = (1366, 768 - 60)  # less a title bar and a taskbar, as tests/ui/test_laptop_panels.py
TIMEOUT_MS = 60_000


class _ResizeCounter(QObject):
    def __init__(self, watched):
        super().__init__()
        self.sizes: list[tuple[int, int]] = []  # (width, height) after each change of height
        watched.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() == QEvent.Type.Resize and event.size().height() != event.oldSize().height():
            self.sizes.append(event.size().toTuple())
        return False


def test_the_head_grid_keeps_its_height_through_the_idle_build_and_its_maps_fill_its_width(qtbot, make_window):
    window = make_window(model_spec="demo")
    window.resize(*LAPTOP)
    builder = install_idle_build(window, start_delay_ms=300, turn_ms=5)  # starts once the first analysis is drawn
    panel = window.built_panel(PanelId.HEAD_GRID)
    qtbot.waitUntil(lambda: panel.has_data(), timeout=TIMEOUT_MS)
    resizes = _ResizeCounter(panel)
    qtbot.waitUntil(lambda: builder.done, timeout=TIMEOUT_MS)
    qtbot.wait(500)  # any layout pass still queued
    # the first analysis' hint takes a pass or two to reach the dock, and a new width (the idle build
    # widens the other column for a panel built wider than it) rightly brings a new height, the maps
    # staying square; the loop made 53 changes at one width
    for width in {w for w, _h in resizes.sizes}:
        heights = [h for w, h in resizes.sizes if w == width]
        assert len(heights) <= 2, f"at {width} px wide the head grid changed height {len(heights)} times: {resizes.sizes}"
    # and the height it keeps shows the maps as large as the grid's width allows: square, every
    # tile's width used (the view range spans the mosaic's width, no spare room at the right)
    view = panel.grid_plot.getViewBox()
    units_x, units_y = view.viewPixelSize()
    assert units_x == pytest.approx(units_y, rel=0.01)
    (x0, x1), _y = view.viewRange()
    mosaic_width = panel.mosaic.geometry.extent()[0]
    assert x1 - x0 == pytest.approx(mosaic_width, rel=0.02), "the maps are bounded by the grid's height, not its width"
    tile_px = panel.mosaic.geometry.cells / units_x
    assert tile_px >= 110, f"the maps are {tile_px:.0f} px"  # 125 px at this size; ~98 in main's start-up screenshot


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_painting_the_grids_token_labels_relays_nothing_out(qtbot, make_window, language):
    """The grid's bottom axis grew 19.6 → 28.9 px when pyqtgraph first painted its token
    labels, so the grid asked for 9 px more (668 → 677) and its dock was laid out and painted once
    more after the first show, a new length of text or a re-pooling after a resize.  The axis has
    that room from the start now."""
    from paint_counter import EventCounter

    window = make_window(model_spec="demo", language=language)
    window.resize(*LAPTOP)
    panel = window.built_panel(PanelId.HEAD_GRID)
    axis = panel.grid_plot.getAxis("bottom")
    qtbot.waitUntil(lambda: bool(panel.has_data() and axis.labelText), timeout=TIMEOUT_MS)
    qtbot.wait(300)  # the first analysis' layout passes
    wanted, room = panel.grid_view.sizeHint().height(), axis.minimumHeight()
    requests = EventCounter(panel, QEvent.Type.LayoutRequest)
    resizes = EventCounter(panel.grid_view, QEvent.Type.Resize)
    # on a screen a new analysis' maps are painted in one turn, their token labels taken off when
    # placed for another shape of mosaic (the first analysis, another length, a re-pooling), and the
    # labels in the next turn (HeadGridPanel.redraw_steps): pyqtgraph measures no text at the first
    # paint and the labels' text at the second.  Offscreen a viewport's paint event draws no item,
    # so grab() paints them (every item, the axis' text with them)
    set_ticks(axis, [[], []])
    panel.grid_view.grab()
    qtbot.wait(100)
    panel._label_grid()
    panel.grid_view.grab()
    qtbot.wait(300)
    assert axis.textHeight > 0, "the axis' token labels were not painted"
    assert (axis.minimumHeight(), panel.grid_view.sizeHint().height()) == (room, wanted)
    assert (requests.count, resizes.count) == (0, 0), "the grid was laid out again by its token labels' paints"
