"""Each panel alone (no window, no session, no model) shown a hand-made
:class:`AnalysisState` (``synthetic_state.py``): it draws exactly the state's numbers.

The maps, bars, chips and tables are read back from the widgets and compared with the
tensors the state was made of; a panel that computed anything on its own, or read another
field, would draw something else."""

from __future__ import annotations

import dataclasses
import importlib
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
import pytest
from attention_lab.core.lens import future_mask
from attention_lab.ui.docks import PANEL_MODULES
from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.head_grid import HeadGridPanel
from attention_lab.ui.panels.kv_bench import KVBenchPanel
from attention_lab.ui.panels.leakage import LeakagePanel
from attention_lab.ui.panels.mask import MODES, MaskPanel
from attention_lab.ui.panels.panel_kit import CellLabels
from attention_lab.ui.panels.portrait import COLUMNS, PortraitPanel
from attention_lab.ui.panels.shapes import ShapesPanel
from attention_lab.ui.panels.token_editor import TokenEditorPanel
from synthetic_state import (
    CONTEXT,
    N_HEAD,
    N_TOKENS,
    POSITION,
    synthetic_leakage,
    synthetic_model,
    synthetic_state,
    with_layer,
)

CLASSES = [getattr(importlib.import_module(module), name) for module, name, _slot in PANEL_MODULES]


@pytest.fixture
def shown(qtbot):
    """``shown(cls)``: a panel of ``cls`` alone, shown at a laptop-ish size."""

    def make(cls):
        panel = cls()
        qtbot.addWidget(panel)
        panel.resize(900, 600)
        panel.show()
        return panel

    return make


@pytest.mark.parametrize("cls", CLASSES, ids=lambda cls: cls.__name__)
def test_every_panel_takes_a_synthetic_state(shown, cls):
    panel = shown(cls)
    state = synthetic_state()
    panel.show_state(state)
    assert panel.has_data() and panel.state is state
    panel.show_state(with_layer(synthetic_state(model=synthetic_model("another")), 1))  # another model, layer 1
    assert panel.has_data() and panel.state.layer == 1


def _tiles(panel) -> list[np.ndarray]:
    """Each head's map as the grid's mosaic image holds it (one image, a tile per head)."""
    image, geometry = np.asarray(panel.mosaic.image), panel.mosaic.geometry
    side = geometry.pixels
    return [image[y : y + side, x : x + side] for x, y in map(geometry.origin, range(geometry.heads))]


def test_head_grid_draws_each_heads_map(shown):
    panel = shown(HeadGridPanel)
    state = synthetic_state()
    panel.show_state(state)
    drawn = _tiles(panel)
    assert len(drawn) == N_HEAD
    for head, image in enumerate(drawn):
        np.testing.assert_array_equal(image, state.attention_causal[head].numpy())
    panel.show_state(dataclasses.replace(state, causal=False))  # the same heads without the mask
    drawn = _tiles(panel)
    for head, image in enumerate(drawn):
        np.testing.assert_allclose(image, state.attention_bidirectional[head].numpy())


def test_leakage_bars_are_the_states_leakage(shown):
    panel = shown(LeakagePanel)
    state = synthetic_state()
    panel.show_state(state)
    np.testing.assert_array_equal(panel.causal_bars.opts["height"], state.leakage.causal.numpy())
    np.testing.assert_allclose(panel.bidi_bars.opts["height"], state.leakage.bidirectional.numpy())
    assert panel.position.value() == POSITION


def test_leakage_names_a_long_edited_token_by_its_start_and_the_whole_in_its_tooltip(shown):
    """A whole-word token ("␣yesterday") beside the replacement box made the controls row wider than a laptop's dock."""
    panel = shown(LeakagePanel)
    state = synthetic_state()
    tokens = list(state.tokens)
    tokens[POSITION] = "␣yesterday"
    panel.show_state(dataclasses.replace(state, tokens=tokens))
    assert panel.token_label.text() == tr("leakage.replace", token="␣yest…")
    assert panel.token_label.toolTip() == "␣yesterday"
    panel.show_state(state)  # a short token: whole, and no tooltip left from the long one
    assert panel.token_label.text() == tr("leakage.replace", token=state.tokens[POSITION])
    assert panel.token_label.toolTip() == ""


def test_leakage_maps_hatch_the_exact_zeros_of_the_newest_state(shown):
    panel = shown(LeakagePanel)

    def hatched(causal: bool) -> np.ndarray:
        image = np.asarray(panel._heat[causal][2].image)
        rows = panel.state.leakage.causal_layers.shape[0]
        factor = image.shape[0] // rows  # the overlay is upsampled: one block of pixels per cell
        return image[::factor, ::factor, 3] > 0

    for position in (POSITION, 1, 1, POSITION):  # other zeros, the same zeros again, back
        state = dataclasses.replace(synthetic_state(), leakage=synthetic_leakage(position=position))
        panel.show_state(state)
        np.testing.assert_array_equal(hatched(True), state.leakage.causal_layers.numpy() == 0)
        np.testing.assert_array_equal(hatched(False), state.leakage.bidirectional_layers.numpy() == 0)
        np.testing.assert_array_equal(panel.causal_bars.opts["height"], state.leakage.causal.numpy())


def test_token_editor_chips_are_the_states_tokens(shown):
    panel = shown(TokenEditorPanel)
    state = synthetic_state()
    panel.show_state(state)
    assert panel.chips.tokens == ["t0", "t1", "t2", "t3"]


def test_token_chip_strip_is_as_tall_as_its_rows(shown, qtbot):
    """A one-row text left a ~30 px blank band under the chips; a long text, scrolled, showed half
    rows.  The strip takes the chips' height up to three whole rows, and scrolls one row at a time."""
    panel = shown(TokenEditorPanel)
    panel.resize(900, 900)
    panel.show_state(synthetic_state())  # four tokens: one row
    qtbot.waitUntil(lambda: panel.chip_scroll.height() == panel.chips.minimumHeight())
    short = panel.chip_scroll.height()
    many = [f"tok{i}" for i in range(300)]
    panel.chips.set_tokens(many, list(range(300)), 0, 299)
    pitch = panel.chips._chips[0].rect.height() + panel.chips.GAP
    assert short == pitch + panel.chips.GAP
    # three whole rows and their gaps
    qtbot.waitUntil(lambda: panel.chip_scroll.height() == 3 * pitch + panel.chips.GAP)
    assert panel.chip_scroll.verticalScrollBar().singleStep() == pitch
    assert panel.chips.minimumHeight() > panel.chip_scroll.height()  # the rest scrolls


def test_portrait_rows_are_the_hand_made_heads(shown):
    """Head 0 looks one token back (mean distance 1, a third of the sink mass from row 1);
    head 1 looks only at token 0 (distances 1, 2, 3: mean 2; sink mass 1)."""
    panel = shown(PortraitPanel)
    panel.show_state(synthetic_state())
    cell = lambda row, name: panel.table.item(row, COLUMNS.index(name)).text()
    assert panel.table.rowCount() == N_HEAD
    rows = {cell(r, "head"): (cell(r, "mean_distance"), cell(r, "sink_mass")) for r in range(N_HEAD)}
    assert rows == {"0": ("1.000", "0.333"), "1": ("2.000", "1.000")}


def test_mask_grid_is_the_triangle_of_the_states_length(shown):
    panel = shown(MaskPanel)
    panel.show_state(synthetic_state())
    image = np.asarray(panel.grid_image.image)
    assert image.shape[:2] == (N_TOKENS, N_TOKENS)
    forbidden = future_mask(N_TOKENS).numpy()
    colours = {tuple(image[i, j]) for i in range(N_TOKENS) for j in range(N_TOKENS) if forbidden[i, j]}
    allowed = {tuple(image[i, j]) for i in range(N_TOKENS) for j in range(N_TOKENS) if not forbidden[i, j]}
    assert len(colours) == 1 and len(allowed) == 1 and colours != allowed  # one colour each side of the diagonal


def test_mask_grid_labels_each_cell_with_what_is_added(shown):
    panel = shown(MaskPanel)
    panel.show_state(synthetic_state())
    forbidden = future_mask(N_TOKENS).numpy()
    future_text = tr(f"mask.cell.{panel.selected_mode()}")
    written = {(int(y - 0.5), int(x - 0.5)): text for text, x, y in panel.cell_labels.texts()}
    assert written == {(i, j): future_text if forbidden[i, j] else "0" for i in range(N_TOKENS) for j in range(N_TOKENS)}
    panel.set_mode(MODES[-1])  # another way of hiding the future: another word on the future's cells
    assert {text for text, _x, _y in panel.cell_labels.texts()} == {"0", tr(f"mask.cell.{MODES[-1]}")}


@pytest.mark.parametrize("cell_px, painted", [(40, True), (3, False)])
def test_cell_labels_are_painted_only_where_they_fit(qapp, cell_px, painted):
    from PySide6.QtGui import QImage, QPainter, QTransform

    labels = CellLabels()
    labels.show_labels([("−∞", 0.5, 0.5, (255, 0, 0)), ("0", 1.5, 0.5, (255, 0, 0))])
    image = QImage(100, 100, QImage.Format.Format_ARGB32)
    image.fill(0)
    painter = QPainter(image)
    painter.setTransform(QTransform.fromScale(cell_px, cell_px))  # data units to pixels, as a view would
    labels.paint(painter)
    painter.end()
    pixels = np.frombuffer(image.constBits(), np.uint8).reshape(100, 100, 4)
    assert bool((pixels[..., 2] > 100).any()) is painted  # red text (BGRA) or nothing


def test_kv_panel_offers_the_room_left_in_the_context(shown):
    panel = shown(KVBenchPanel)
    panel.show_state(synthetic_state())
    assert panel.new_tokens.maximum() == CONTEXT - N_TOKENS
    assert not panel.run_button.isEnabled()  # alone, nobody serves its benchmark: it says so


def test_shapes_table_is_the_states_shapes(shown):
    panel = shown(ShapesPanel)
    state = synthetic_state()
    panel.show_state(state)
    assert [panel.table.item(r, 0).text() for r in range(panel.table.rowCount())] == [s.name for s in state.shapes]
    assert [panel.table.item(r, 1).text() for r in range(panel.table.rowCount())] == ["(4, 8)", "(2, 4, 4)", "(4, 12)"]



@pytest.mark.parametrize("width", [420, 900])
def test_model_guesses_show_whole_items_only(shown, qtbot, width, tiny_checkpoint):
    """In a narrow Tokens dock a sideways scroll bar took the guesses row's lower half, and the
    last guess was cut at the right edge.  Every guess in view is whole; the rest wrap out of sight."""
    panel = shown(TokenEditorPanel)
    panel.resize(width, 600)
    from state_factory import build_state, load

    panel.show_state(build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday."))  # ten guesses
    guesses = panel.predictions
    qtbot.waitUntil(lambda: guesses.count() > 0)
    qtbot.wait(100)
    view = guesses.viewport().rect()
    seen = [guesses.visualItemRect(guesses.item(i)) for i in range(guesses.count())]
    seen = [rect for rect in seen if rect.intersects(view)]
    assert seen and all(view.contains(rect) for rect in seen)
    assert not guesses.horizontalScrollBar().isVisible()


def test_upward_labels_paint_their_text_on_the_plot(qtbot):
    """The leakage bars' "0 (exact)" labels, one item for all: the text shows up in its
    colour where the labels are, and goes when they are cleared."""
    import pyqtgraph as pg

    from attention_lab.ui.panels.panel_kit import UpwardLabels

    plot = pg.PlotWidget(background="w")
    qtbot.addWidget(plot)
    plot.resize(400, 300)
    labels = UpwardLabels()
    plot.getPlotItem().addItem(labels)
    plot.getPlotItem().setRange(xRange=(-0.5, 9.5), yRange=(0, 1.0), padding=0)
    plot.show()

    def coloured_pixels() -> int:
        image = plot.grab().toImage()
        return sum(
            1
            for x in range(0, image.width(), 2)
            for y in range(0, image.height(), 2)
            if image.pixelColor(x, y).red() < 80 and image.pixelColor(x, y).blue() > 150
        )

    assert coloured_pixels() == 0
    labels.show_labels([("0 (exact)", float(i), 0.02, (31, 119, 180)) for i in range(3)], height=1.0)
    assert labels.texts() == [("0 (exact)", 0.0, 0.02), ("0 (exact)", 1.0, 0.02), ("0 (exact)", 2.0, 0.02)]
    assert coloured_pixels() > 10
    labels.clear()
    assert coloured_pixels() == 0
