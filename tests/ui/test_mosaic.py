"""The head grid's mosaic geometry: which head, query and key lie under a point (no Qt needed)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyqtgraph")

from attention_lab.ui.panels.mosaic import (
    MosaicGeometry,
    compose,
    mosaic_aspect,
    mosaic_overlay,
    square_view_range,
    tile_overlay,
    tile_side_px,
    tile_ticks,
)


def test_locate_names_the_head_query_and_key_of_every_cell():
    geometry = MosaicGeometry(heads=12, cells=10, pixels=10, pool=1)
    assert geometry.shape == (3, 4)
    for head in range(12):
        x, y = geometry.origin(head)
        for q, k in ((0, 0), (3, 7), (9, 9)):
            assert geometry.locate(x + k + 0.5, y + q + 0.5) == (head, q, k)
    x, y = geometry.origin(1)
    assert geometry.locate(x - 0.5, y + 1) is None  # the gap between heads 0 and 1
    x, y = geometry.origin(4)
    assert geometry.locate(x + 1, y - 0.5) is None  # the gap above the second row
    assert geometry.locate(-0.1, 0) is None


def test_locate_in_a_pooled_tile_and_past_the_last_head():
    geometry = MosaicGeometry(heads=6, cells=250, pixels=84, pool=3)  # 3 × 84 = 252 > 250 cells
    x, y = geometry.origin(5)
    assert geometry.locate(x + 10.5, y + 20.2) == (5, 60, 31)
    assert geometry.locate(x + 83.9, y + 1) is None  # the last pixel's cells 249 (kept) … 251: past 250
    assert geometry.locate(x + 83.2, y + 1) == (5, 3, 249)
    rows, cols = geometry.shape
    assert (rows, cols) == (2, 3)
    assert geometry.locate(geometry.size[1] + 5, 0) is None


def test_compose_places_each_map_and_blanks_the_gaps():
    rng = np.random.default_rng(0)
    maps = rng.random((5, 4, 4), dtype=np.float32)
    geometry = MosaicGeometry(heads=5, cells=4, pixels=4, pool=1)
    mosaic = compose(maps, geometry)
    assert mosaic.shape == geometry.size
    for h in range(5):
        x, y = geometry.origin(h)
        np.testing.assert_array_equal(mosaic[y : y + 4, x : x + 4], maps[h])
    assert np.isnan(mosaic).sum() == mosaic.size - maps.size  # gaps and the empty 6th tile


def test_overlay_hatches_the_future_of_each_tile_only():
    geometry = MosaicGeometry(heads=4, cells=8, pixels=8, pool=1)
    overlay = mosaic_overlay(geometry)
    factor = overlay.shape[0] // geometry.size[0]
    for h in range(4):
        x, y = geometry.origin(h)
        assert overlay[(y + 6) * factor, (x + 1) * factor, 3] == 0  # the past: clear
        assert overlay[(y + 1) * factor + 1, (x + 6) * factor + 1, 3] > 0  # the future: hatched
    gap_x = geometry.origin(1)[0] - 1
    assert overlay[:, gap_x * factor, 3].max() == 0
    # any other per-map overlay is laid out the same way (one tile's image, every head)
    tile = np.zeros((16, 16, 4), np.ubyte)
    tile[3, 5] = (1, 2, 3, 4)
    laid = tile_overlay(tile, geometry)
    assert laid.shape == (geometry.size[0] * 2, geometry.size[1] * 2, 4)
    for h in range(4):
        x, y = geometry.origin(h)
        assert tuple(laid[y * 2 + 3, x * 2 + 5]) == (1, 2, 3, 4)
    assert laid[..., 3].sum() == 4 * 4


def test_tile_ticks_label_every_row_of_tiles_at_its_cells():
    geometry = MosaicGeometry(heads=12, cells=3, pixels=3, pool=1)
    ticks = tile_ticks(["The", "big", "dog"], geometry, 3, pixels_per_cell=40.0, vertical=True)[0]
    stride = geometry.stride[1]
    assert ticks[:3] == [(0.5, "The"), (1.5, "big"), (2.5, "dog")]
    assert ticks[3] == (stride + 0.5, "The") and len(ticks) == 9
    # too little room: every other label, cut short
    sparse = tile_ticks(["a-long-token"] * 10, MosaicGeometry(4, 10, 10, 1), 2, pixels_per_cell=8.0, vertical=False)[0]
    assert len(sparse) == 2 * 2 and sparse[0][1] == "a-l…"
    # no room for a text, room for a number: each column gets its position
    numbered = tile_ticks(["a-long-token"] * 10, MosaicGeometry(4, 10, 10, 1), 2, pixels_per_cell=11.0, vertical=False,
                          char_px=6.0)[0]
    assert [text for _x, text in numbered] == [str(i) for i in range(10)] * 2
    # a smaller font's rows: every token of a 10-token text on a 100-px map
    assert len(tile_ticks(["t"] * 10, MosaicGeometry(4, 10, 10, 1), 1, pixels_per_cell=10.0, vertical=True, row_px=9)[0]) == 10


def test_the_view_keeps_cells_square_against_the_left_and_bottom_axes():
    geometry = MosaicGeometry(heads=12, cells=10, pixels=10, pool=1)
    full_x, (full_y0, full_y1) = geometry.view_range()
    # a wide box: the height decides, the spare width is on the right
    (x0, x1), (y0, y1) = square_view_range(geometry, 900.0, 300.0)[0]
    scale = square_view_range(geometry, 900.0, 300.0)[1]
    assert (y0, y1) == pytest.approx((full_y0, full_y1)) and x0 == full_x[0] and x1 > full_x[1]
    assert 900.0 / (x1 - x0) == pytest.approx(300.0 / (y1 - y0)) == pytest.approx(scale)
    # a tall box: the width decides, the spare height is above the first row (the bottom axis stays under the maps)
    (x0, x1), (y0, y1) = square_view_range(geometry, 300.0, 900.0)[0]
    assert (x0, x1) == pytest.approx(full_x) and y1 == pytest.approx(full_y1) and y0 < full_y0


def test_the_tile_size_told_to_the_worker_does_not_depend_on_the_number_of_tokens():
    """The tile's screen size counts the gaps as fractions of a tile, so a 7-token
    mosaic (gaps rounded to whole pixels) and a 1000-token one tell the worker the same size
    for the same box, and that size is the one the square view really gives a tile."""
    for box in ((900.0, 300.0), (300.0, 900.0), (640.0, 480.0)):
        side = tile_side_px(12, *box)
        big = MosaicGeometry(heads=12, cells=1000, pixels=1000, pool=1)  # rounding negligible
        assert side == pytest.approx(big.pixels * square_view_range(big, *box)[1], rel=1e-3)
        small = MosaicGeometry(heads=12, cells=7, pixels=7, pool=1)  # gaps of 1 pixel: 14 %, not 10 and 20
        assert small.pixels * square_view_range(small, *box)[1] != pytest.approx(side, rel=1e-3)  # what was told before
        default = MosaicGeometry(heads=12, cells=10, pixels=10, pool=1)  # the default text: its gaps are the fractions
        assert default.pixels * square_view_range(default, *box)[1] == pytest.approx(side, rel=1e-3)
    assert tile_side_px(4, 600.0, 600.0) > tile_side_px(12, 600.0, 600.0)  # fewer heads, bigger tiles
    assert tile_side_px(12, 0.0, 600.0) == 0.0


def test_the_mosaics_aspect_is_its_view_ranges_for_any_number_of_heads():
    """The height the grid asks for follows the whole mosaic (titles' room included), counted
    without one text's rounding: a 1000-token mosaic's view range has that aspect."""
    for heads in (1, 4, 12, 16, 25):
        big = MosaicGeometry(heads=heads, cells=1000, pixels=1000, pool=1)
        (x0, x1), (y0, y1) = big.view_range()
        assert mosaic_aspect(heads) == pytest.approx((y1 - y0) / (x1 - x0), rel=2e-3)
    assert mosaic_aspect(12) != mosaic_aspect(16)


def _shown_grid(qtbot, model):
    """A head grid of 640 × 560 showing the seed sentence, laid out."""
    from attention_lab.ui.panels import head_grid
    from state_factory import build_state

    panel = head_grid.HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(640, 560)
    panel.show()
    panel.show_state(build_state(model, "The big dog bit the mailman yesterday."))
    qtbot.wait(200)  # laid out: the hint follows the maps' box when it gets its size, not at the next text
    return panel


def test_a_longer_text_asks_the_dock_for_no_new_height(qtbot, tiny_checkpoint):
    """The grid's size hint depends on its width and number of heads only.  It followed
    one text's rounded gaps, so a long text after a short one moved it ~4 %: the dock laid the
    panel out again and the maps were painted twice, once in the turn of the next panel.  And
    the hint is told when the maps' box is laid out (the first edit after start-up told it)."""
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    panel = _shown_grid(qtbot, model)
    short_hint = panel.grid_view.sizeHint()
    hinted = []
    original = panel.grid_view.updateGeometry
    panel.grid_view.updateGeometry = lambda: (hinted.append(True), original())
    long_state = build_state(model, "the dog bit the man and the man bit the dog " * 6)
    assert long_state.n_tokens > 40
    panel.show_state(long_state)
    qtbot.wait(200)
    assert panel.grid_view.sizeHint() == short_hint
    assert hinted == []


def test_a_new_text_paints_the_grid_once(qtbot, tiny_checkpoint):
    """The view's and the titles' transforms followed a new view range inside the paint
    (pyqtgraph's ``sigPrepareForPaint``), which made the scene dirty again: every new text painted
    the grid twice, the second time in the turn that drew the next panel."""
    from paint_counter import PaintCounter
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    panel = _shown_grid(qtbot, model)
    qtbot.wait(100)
    paints = PaintCounter(panel.grid_view.viewport())
    for text in ("the dog bit the man and the man bit the dog " * 6, "a cat sat " * 3):
        paints.count = 0
        panel.show_state(build_state(model, text))
        qtbot.wait(300)
        assert paints.count == 1, f"{paints.count} paints for one new text"


def test_the_grid_draws_its_maps_and_their_token_labels_in_two_steps(qtbot, tiny_checkpoint):
    """The maps in one turn, the axes' token labels (half the grid's repaint for a long
    text) in the next.  Between the two, labels placed for another shape of mosaic are off (none
    on the wrong cell); a same-length text keeps its labels' places.  After both steps the grid
    shows what one ``show_state`` shows."""
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    panel = _shown_grid(qtbot, model)
    axes = [panel.grid_plot.getAxis(side) for side in ("left", "bottom")]

    def ticks() -> list:
        return [axis._tickLevels for axis in axes]

    short_ticks = ticks()
    assert all(levels and levels[0] for levels in short_ticks)
    long_state = build_state(model, "a cat sat on the mat " * 5)
    first, second = panel.redraw_steps(long_state)
    first()
    assert panel.mosaic.geometry.cells == long_state.n_tokens  # the new maps are drawn
    assert all(not levels[0] for levels in ticks())  # the short text's labels are off
    second()
    two_steps = ticks()
    panel.show_state(long_state)
    assert two_steps == ticks() and two_steps != short_ticks
    same_length = build_state(model, "a dog ran in the rug " * 5)
    assert same_length.n_tokens == long_state.n_tokens
    first, second = panel.redraw_steps(same_length)
    first()
    assert ticks() == two_steps  # in place until the next turn
    second()
    after_edit = ticks()
    panel.show_state(same_length)
    assert after_edit == ticks() != two_steps
    panel.tabs.setCurrentIndex(2)  # another tab in front: one step, as before
    assert len(panel.redraw_steps(same_length)) == 1


def test_a_longer_text_tells_the_same_tile_size_and_uses_the_workers_pooling(qtbot, tiny_checkpoint, monkeypatch):
    """The head grid tells the same pixels for a short and a long text in the same box, so the long
    text's preview (pooled on the worker to the told size) is what the grid draws: no pooling of the
    whole maps on the GUI thread."""
    import attention_lab.ui.panels.head_grid as head_grid
    from attention_lab.core.pooling import previews
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    panel = head_grid.HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(520, 420)
    panel.grid_view.setFixedSize(420, 330)  # tiles of ~50-60 px: the tiny model's 64 tokens are pooled
    panel.show()
    panel.show_state(build_state(model, "The big dog bit the mailman yesterday."))
    qtbot.wait(300)  # laid out (a resize re-tells)
    short_told = panel._told_pixels
    assert short_told >= 48
    long_state = build_state(model, "the dog bit the man and the man bit the dog " * 6)
    n = long_state.n_tokens
    assert n > short_told  # pooled in this box
    long_state.grid_previews.clear()
    long_state.grid_previews.update(previews(long_state.attention_causal, long_state.attention_bidirectional, short_told))
    full_pools = []
    original = head_grid.pooled_for
    monkeypatch.setattr(head_grid, "pooled_for", lambda maps, preview, pool: (
        full_pools.append(preview is None or pool < preview[0]) or original(maps, preview, pool)))
    panel.show_state(long_state)
    qtbot.wait(100)
    assert panel._told_pixels == short_told
    assert full_pools and not any(full_pools)
    assert panel._pool == long_state.grid_previews[True][0]


def test_the_mouse_over_a_tile_names_its_head_query_key_and_weight(qtbot, tiny_checkpoint):
    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from PySide6.QtCore import QPoint, QPointF, Qt
    from PySide6.QtTest import QTest
    from PySide6.QtWidgets import QToolTip
    from state_factory import build_state, load

    state = build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday.")
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    panel.show_state(state)
    qtbot.waitUntil(lambda: panel.grid_view.isVisible())
    qtbot.wait(200)  # laid out: the view's transform is final
    image, view = panel.mosaic, panel.grid_view
    x, y = image.geometry.origin(7)
    q, k = 4, 2

    def view_point(head_x, head_y, col, row):
        return view.mapFromScene(image.mapToScene(QPointF(head_x + col + 0.5, head_y + row + 0.5)))

    def hovered(point, text) -> bool:
        """Move the mouse to ``point`` (by way of a neighbour: a move to where the cursor
        already is may send nothing) and say whether the panel shows ``text``; repeated by
        waitUntil, as a loaded offscreen run can drop a synthetic move."""
        QToolTip.hideText()
        QTest.mouseMove(view.viewport(), point + QPoint(2, 1))
        QTest.mouseMove(view.viewport(), point)
        return panel.hover_text == text

    qtbot.waitUntil(lambda: hovered(view_point(x, y, k, q), panel.cell_text(7, q, k)), timeout=15000)
    assert f"{float(state.attention_causal[7, q, k]):.3f}" in panel.hover_text
    # above the diagonal: the future, masked
    qtbot.waitUntil(lambda: hovered(view_point(x, y, q + 1, 1), panel.cell_text(7, 1, q + 1)), timeout=15000)
    assert "masked" in panel.hover_text
    # a click on head 10 enlarges head 10
    x10, y10 = image.geometry.origin(10)
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=view_point(x10, y10, 0, 3))
    qtbot.waitUntil(lambda: panel.tabs.currentIndex() == 1, timeout=15000)
    assert panel.head == 10


def _one_head_panel(qtbot, tiny_checkpoint, width, height):
    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from state_factory import build_state, load

    state = build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday.")
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(width, height)
    panel.show()
    panel.show_state(state)
    panel.tabs.setCurrentIndex(1)  # "One head"
    qtbot.waitUntil(lambda: panel.head_view.isVisible() and panel.has_data())  # its parts made, a turn each
    qtbot.wait(200)  # laid out
    return panel, state


def _shown_values(panel):
    """(text, scene rectangle) of every cell value painted: those its cell on screen holds, centred on it."""
    from attention_lab.ui.panels.panel_kit import CellLabels
    from PySide6.QtCore import QPointF, QRectF
    from PySide6.QtGui import QFontMetrics
    from PySide6.QtWidgets import QApplication

    metrics = QFontMetrics(QApplication.font())
    shown = []
    for plot, _image, _over, values in panel._head_plots:
        view = plot.getViewBox()
        corner, far = view.mapViewToScene(QPointF(0, 0)), view.mapViewToScene(QPointF(1, 1))
        cell = (abs(far.x() - corner.x()), abs(far.y() - corner.y()))
        for text, x, y in values.texts():
            if CellLabels.fits(text, cell, metrics):
                centre = view.mapViewToScene(QPointF(x, y))
                w, h = metrics.horizontalAdvance(text), metrics.height()
                shown.append((text, QRectF(centre.x() - w / 2, centre.y() - h / 2, w, h)))
    return shown


@pytest.mark.parametrize("size", [(520, 520), (1300, 1000)], ids=["small dock", "large dock"])
def test_one_head_cell_values_never_run_together(qtbot, tiny_checkpoint, size):
    """In a laptop's dock the weights printed in the cells ran together ("0.000.000.00"): each
    value is written only where its cell holds it, and then no two overlap."""
    panel, state = _one_head_panel(qtbot, tiny_checkpoint, *size)
    shown = _shown_values(panel)
    rects = [rect for _text, rect in shown]
    overlapping = [(shown[i][0], shown[j][0])
                   for i in range(len(shown)) for j in range(i + 1, len(shown)) if rects[i].intersects(rects[j])]
    assert not overlapping
    if size[0] > 1000:  # room enough: at least every weight on or below the causal map's diagonal is written
        assert len(shown) >= state.n_tokens * (state.n_tokens + 1) // 2


def test_the_hover_tooltip_goes_when_the_mouse_leaves_the_map(qtbot, tiny_checkpoint):
    from PySide6.QtWidgets import QToolTip

    panel, _state = _one_head_panel(qtbot, tiny_checkpoint, 900, 700)
    panel._head_hover(("head", True), (1, 0), panel.mapToGlobal(panel.rect().center()).toPointF())
    qtbot.waitUntil(QToolTip.isVisible)
    panel._head_hover(("head", True), None, None)  # what the map reports when the mouse leaves it
    qtbot.waitUntil(lambda: not QToolTip.isVisible())
    assert panel.hover_text == ""


def test_switching_the_one_head_view_keeps_its_plots_and_colour_bar(qtbot, tiny_checkpoint):
    """Switching between one map and causal | bidirectional side by side moves the same plots
    in and out of the layout instead of building new PlotItems and a new ColorBarItem each time
    (the soak's ``_build_head`` stalls), and what is shown follows."""
    from attention_lab.ui.panels.head_grid import SIDE_BY_SIDE, VIEWS

    panel, state = _one_head_panel(qtbot, tiny_checkpoint, 900, 600)
    side_by_side = VIEWS.index(SIDE_BY_SIDE)
    single = next(i for i, view in enumerate(VIEWS) if i != side_by_side and view != VIEWS[-1])
    assert panel.view_combo.currentIndex() == side_by_side
    plots, bar = [plot for plot, *_rest in panel._head_plots], panel._head_bar
    assert len(plots) == 2

    def in_layout():
        return [item for item in panel.head_view.ci.items]

    for index, count in ((single, 1), (side_by_side, 2), (single, 1), (side_by_side, 2)):
        panel.view_combo.setCurrentIndex(index)
        shown = [plot for plot, *_rest in panel._head_plots]
        assert shown == plots[:count]  # the very same objects
        assert panel._head_bar is bar
        assert in_layout() == [*plots[:count], bar]
        assert all(plot.scene() is panel.head_view.scene() for plot in shown)
        # out of the layout, the second plot stays in the scene, hidden (parked: freed with the window)
        assert plots[1].scene() is panel.head_view.scene() and plots[1].isVisible() == (count == 2)
        qtbot.wait(20)
    # the bar still sets the levels of both maps (each connected once)
    bar.setLevels((0.2, 0.6))
    assert all(tuple(image.levels) == pytest.approx((0.2, 0.6)) for _plot, image, _over, _texts in panel._head_plot_pool)
    # the maps show the state's head, the second one bidirectional
    h = panel.head
    np.testing.assert_allclose(panel._head_plots[1][1].image, state.attention_bidirectional[h].numpy(), atol=1e-6)


def test_the_one_head_plots_are_built_in_idle_parts_and_used_when_the_tab_opens(qtbot, tiny_checkpoint):
    """The soak's ``set_head`` stalled when the "one head" tab's first opening made two
    PlotItems and a ColorBarItem (45-150 ms of CPU): each is one :meth:`build_later_part`, and
    the tab opened afterwards shows those very objects, the bar setting both maps' levels."""
    import pyqtgraph as pg
    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from state_factory import build_state, load

    state = build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday.")
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    panel.show_state(state)  # the grid tab: the one-head plots not made with it
    assert panel._head_plot_pool == [] and panel._head_bar is None
    assert panel.build_later_part() and len(panel._head_plot_pool) == 1  # one part per call
    assert panel.build_later_part() and len(panel._head_plot_pool) == 2
    assert panel.build_later_part() and isinstance(panel._head_bar, pg.ColorBarItem)
    assert not panel.build_later_part()
    made = [plot for plot, *_rest in panel._head_plot_pool] + [panel._head_bar]
    panel.tabs.setCurrentIndex(1)  # "One head", side by side
    qtbot.waitUntil(lambda: panel.head_view.isVisible())
    assert list(panel.head_view.ci.items) == made  # the parts made in idle time, none made again
    np.testing.assert_allclose(panel._head_plots[0][1].image, state.attention_causal[panel.head].numpy(), atol=1e-6)
    panel._head_bar.setLevels((0.2, 0.6))
    assert all(tuple(image.levels) == pytest.approx((0.2, 0.6)) for _plot, image, _over, _texts in panel._head_plot_pool)


def test_the_one_head_tab_opened_before_its_parts_makes_one_part_a_turn(qtbot, tiny_checkpoint):
    """In the soak's ``set_head`` in a new window, opened before idle time made its two plots and
    colour bar, the "one head" tab made all three in the click's turn (100-180 ms of CPU).  Now
    each turn makes one part, and the tab is drawn once they are all made (not drawn for an older
    state meanwhile: stale until then); a later view needing one more plot makes it the same way."""
    from attention_lab.ui.panels.head_grid import HeadGridPanel, SIDE_BY_SIDE, VIEWS, ONE_MODE
    from state_factory import build_state, load

    state = build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday.")
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 600)
    panel.show()
    panel.set_view(ONE_MODE)  # one plot and the bar
    panel.show_state(state)
    assert panel._head_plot_pool == [] and panel._head_bar is None

    def parts() -> int:
        return len(panel._head_plot_pool) + (panel._head_bar is not None)

    made_per_call = []
    render = panel._render_head

    def counted() -> None:  # each call is one turn of the event loop (the click, then the posted turns)
        before = parts()
        render()
        made_per_call.append(parts() - before)

    panel._render_head = counted
    panel.tabs.setCurrentIndex(1)
    assert parts() == 1 and not panel.has_data()  # the click's turn: one part, nothing drawn yet
    qtbot.waitUntil(panel.has_data)
    assert max(made_per_call) == 1 and parts() == 2
    assert [item for item in panel.head_view.ci.items] == [panel._head_plot_pool[0][0], panel._head_bar]
    np.testing.assert_allclose(panel._head_plots[0][1].image, state.attention_causal[panel.head].numpy(), atol=1e-6)

    made_per_call.clear()
    panel.set_view(SIDE_BY_SIDE)  # one more plot: made on its own turn too
    qtbot.waitUntil(lambda: len(panel._head_plots) == 2 and panel.has_data())
    assert made_per_call[0] == 1 and max(made_per_call) == 1 and parts() == 3
    assert VIEWS[panel.view_combo.currentIndex()] == SIDE_BY_SIDE
    np.testing.assert_allclose(panel._head_plots[1][1].image, state.attention_bidirectional[panel.head].numpy(), atol=1e-6)
