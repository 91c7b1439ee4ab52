"""Head grid: the H attention maps of one layer, one head enlarged, and every head of every layer.

Rows are queries ("destination": the token that looks), columns are keys ("source": the
token looked at).  One colour scale drives every map (a single ``ColorBarItem``); under
the causal mask the forbidden future (above the diagonal) is hatched, so a learner can
tell "not allowed" from "allowed but ignored".  Clicking a map enlarges that head; the
enlarged view can show the same head with and without the mask side by side (lab step 2).
The overview colours all layers × heads by a head metric from the portraits.
"""

from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer, Signal
from PySide6.QtGui import QFont, QFontMetrics
from PySide6.QtWidgets import (
    QApplication,
    QButtonGroup,
    QComboBox,
    QGraphicsRectItem,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QRadioButton,
    QSpinBox,
    QTabWidget,
    QToolTip,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core import roles as chapter_roles
from attention_lab.core.pooling import pool_factor, pooled_for
from attention_lab.ui.export import ColumnRows
from attention_lab.ui.i18n import tr
from attention_lab.ui.number_format import fixed
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.budget_view import BudgetView
from attention_lab.ui.panels.heatmap_kit import (
    HeatImage,
    TopLabelAxis,
    colormap,
    configure_map_plot,
    fit_token_ticks,
    overlay_item,
    reserve_tick_text_height,
)
from attention_lab.ui.panels.ids import PanelId
from attention_lab.core.inputs import mask_words
from attention_lab.ui.mask_words import mask_in_words
from attention_lab.ui.panels.mask_overlay import masked_overlay
from attention_lab.ui.panels.mosaic import (
    MosaicGeometry,
    MosaicImage,
    compose,
    mosaic_aspect,
    mosaic_overlay,
    square_view_range,
    tile_side_px,
    tile_ticks,
    title_items,
)
from attention_lab.ui.panels.panel_kit import (
    CellLabels,
    SteadyLayoutWidget,
    explanation_label,
    roles_text,
)
from attention_lab.ui.panels.plot_setters import (
    set_axis_label,
    set_ticks,
    set_title,
    set_view_range,
    settle_transforms,
)
from attention_lab.ui.qt_compat import call_after_posted_work
from attention_lab.ui.strings import head_grid as _texts  # noqa: F401 -- registers the texts

METRICS = ("mean_distance", "entropy", "sink_mass", "previous_token", "current_token")
CELL_TEXT_LIMIT = 12  # the enlarged head prints each weight for up to this many tokens
ONE_MODE, SIDE_BY_SIDE, BUDGET = "mode", "side_by_side", "budget"
VIEWS = (ONE_MODE, SIDE_BY_SIDE, BUDGET)  # the enlarged head's views, in the combo box's order
HEAD_COLUMNS_MAX = 2  # the enlarged head's plots side by side at most: causal and bidirectional



WHITE, BLACK = (255, 255, 255), (0, 0, 0)  # a cell value's colour on a dark or a light cell


def _fix_token_axis_width(plot: pg.PlotItem) -> None:
    """Token labels are at most 9 characters + "…" (heatmap_kit.fit_token_ticks): a fixed
    width keeps a new text's labels from resizing the axis, which relaid the grid out and
    painted it once more after an analysis."""
    axis = plot.getAxis("left")
    axis.setWidth(QFontMetrics(axis.style.get("tickFont") or QFont()).horizontalAdvance("M" * 8) + 12)


def _mosaic_tick_font() -> QFont:
    """The grid's token labels: 1.5 pt under the interface's font (7.5 pt of 9), so a row's
    label needs ~9 px, not 13: a 10-token text on a laptop gets every token named."""
    font = QFont(QApplication.font())
    if font.pointSizeF() > 0:  # a font given in pixels keeps its size
        font.setPointSizeF(max(6.0, font.pointSizeF() - 1.5))
    return font


def _fmt_weight(value: float) -> str:
    return tr("head_grid.exact_zero") if value == 0 else fixed(value, 3)


class HeadGridPanel(Panel):
    panel_id = PanelId.HEAD_GRID
    title_key = "head_grid.title"
    # its height is the one at which its maps fill its width: a scroll bar coming and going took
    # 14 px of that width and changed the height in turn (598 → 645 → 634 px at 1400×900)
    keeps_scroll_bar_room = True

    layer_requested = Signal(int)
    causal_requested = Signal(bool)
    head_selected = Signal(int, int)  # layer, head (from the overview)
    head_clicked = Signal(int, int)  # layer, head: a head of the grid clicked (it is enlarged)
    knockout_toggled = Signal(int, int)  # layer, head: Shift+click on a map (panels/knockout.py shows the set)
    grid_pixels_changed = Signal(int)  # screen pixels across one head's map (the worker pools to it)
    status_message = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.head = 0
        self._pending_head: tuple[int, int] | None = None
        self._stale: set[int] = set()  # tabs (0 grid, 1 one head, 2 overview) not drawn for the state yet
        self._pool = 1  # cells per pixel of the grid's maps
        self._told_pixels = 0  # the map width last told with grid_pixels_changed
        self._resize_timer = QTimer(self)  # re-pools once the resizing stops
        self._resize_timer.setSingleShot(True)
        self._resize_timer.setInterval(150)
        self._resize_timer.timeout.connect(self._grid_resized)
        self._rendered = False
        self._labels_later = False  # the grid's token labels left for the next redraw step
        self._labelled = None  # the mosaic geometry the grid's token labels were placed for
        self.hover_text = ""
        self._inputs = None  # the learner's inputs (core.inputs.LearnerInputs) once the session says them
        self._head_values: dict[int, list] = {}  # each enlarged map's cell values, shown when they fit

        self.explain = explanation_label(self)
        self.layer_label = QLabel(self)
        self.layer = QSpinBox(self)
        self.layer.setObjectName("head_grid.layer")
        self.layer.setRange(0, 0)
        self.layer.valueChanged.connect(self.layer_requested)
        self.layer_of = QLabel(self)
        self.causal = QRadioButton(self)
        self.bidirectional = QRadioButton(self)
        self.causal.setChecked(True)
        self.mode_group = QButtonGroup(self)
        self.mode_group.addButton(self.causal)
        self.mode_group.addButton(self.bidirectional)
        self.causal.toggled.connect(lambda on: self.causal_requested.emit(bool(on)))

        controls = QHBoxLayout()
        controls.addWidget(self.layer_label)
        controls.addWidget(self.layer)
        controls.addWidget(self.layer_of)
        controls.addSpacing(16)
        controls.addWidget(self.causal)
        controls.addWidget(self.bidirectional)
        controls.addStretch(1)

        self.tabs = QTabWidget(self)
        self.tabs.setObjectName("head_grid.tabs")
        self.tabs.setDocumentMode(True)

        # --- grid page
        self.grid_view = SteadyLayoutWidget(self, self._grid_height_for_width)
        self.grid_view.setBackground("w")
        self.grid_view.setMinimumSize(360, 280)
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(), interactive=True, width=14, rounding=0.01)
        self._build_grid()
        self.tabs.addTab(self.grid_view, "")

        # --- one head page
        head_page = QWidget(self)
        self.head_label = QLabel(head_page)
        self.head_spin = QSpinBox(head_page)
        self.head_spin.setObjectName("head_grid.head")
        self.head_spin.valueChanged.connect(self._head_changed)
        self.view_label = QLabel(head_page)
        self.view_combo = QComboBox(head_page)
        self.view_combo.setObjectName("head_grid.view")
        self.view_combo.addItems(["" for _view in VIEWS])
        self.view_combo.setCurrentIndex(VIEWS.index(SIDE_BY_SIDE))  # what lab step 2 shows
        self.view_combo.currentIndexChanged.connect(lambda _i: self._render_head())
        self.back = QPushButton(head_page)
        self.back.clicked.connect(lambda: self.tabs.setCurrentIndex(0))
        self.head_view = SteadyLayoutWidget(head_page)  # as tall as the grid page makes the tabs
        self.head_view.setBackground("w")
        self._head_plot_pool: list = []  # (plot, image, overlay, cell texts) per column, made once (_build_head)
        self._head_plots: list = []  # those the view shows now
        self._head_bar = None
        self._head_bar_images = 0  # the pool's first images the colour bar sets the levels of
        self._head_part_posted = False  # the next part of the enlarged head is to be made on the next turn
        self._head_park = QGraphicsRectItem()  # hidden: holds the kept plots out of the layout (_build_head)
        self._head_park.setVisible(False)
        self.head_view.scene().addItem(self._head_park)
        row = QHBoxLayout()
        row.addWidget(self.head_label)
        row.addWidget(self.head_spin)
        row.addSpacing(12)
        row.addWidget(self.view_label)
        row.addWidget(self.view_combo)
        row.addStretch(1)
        row.addWidget(self.back)
        head_layout = QVBoxLayout(head_page)
        head_layout.setContentsMargins(0, 4, 0, 0)
        head_layout.addLayout(row)
        head_layout.addWidget(self.head_view, 1)
        self.budget = BudgetView(head_page)  # the chapter's fixed budget (ui/panels/budget_view.py)
        self.budget.hide()
        head_layout.addWidget(self.budget, 1)
        self.tabs.addTab(head_page, "")

        # --- overview page
        overview_page = QWidget(self)
        self.metric_label = QLabel(overview_page)
        self.metric_combo = QComboBox(overview_page)
        self.metric_combo.setObjectName("head_grid.metric")
        self.metric_combo.addItems([""] * len(METRICS))
        self.metric_combo.currentIndexChanged.connect(lambda _i: self._render_overview())
        self.overview_explain = QLabel(overview_page)
        self.overview_explain.setWordWrap(True)
        self.overview_view = SteadyLayoutWidget(overview_page)
        self.overview_view.setBackground("w")
        self.overview_plot = self.overview_view.addPlot(row=0, col=0, enableMenu=False)
        configure_map_plot(self.overview_plot)
        self.overview_image = HeatImage("overview", self._overview_hover, self._overview_click)
        self.overview_plot.addItem(self.overview_image)
        self.overview_marker = pg.QtWidgets.QGraphicsRectItem()
        self.overview_marker.setPen(pg.mkPen((230, 80, 20), width=2, cosmetic=True))
        self.overview_marker.setZValue(10)
        self.overview_plot.addItem(self.overview_marker)
        self.overview_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get("plasma"), interactive=False, width=14)
        self.overview_bar.setImageItem(self.overview_image)
        self.overview_view.addItem(self.overview_bar, row=0, col=1)
        mrow = QHBoxLayout()
        mrow.addWidget(self.metric_label)
        mrow.addWidget(self.metric_combo)
        mrow.addStretch(1)
        ov_layout = QVBoxLayout(overview_page)
        ov_layout.setContentsMargins(0, 4, 0, 0)
        ov_layout.addLayout(mrow)
        ov_layout.addWidget(self.overview_explain)
        ov_layout.addWidget(self.overview_view, 1)
        self.tabs.addTab(overview_page, "")
        self.tabs.currentChanged.connect(self._render_tab)  # a tab opened for the first time since the state

        self.hover = QLabel(self)
        self.hover.setObjectName("head_grid.hover")
        self.hover.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)

        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.explain)
        layout.addLayout(controls)
        layout.addWidget(self.tabs, 1)
        layout.addWidget(self.hover)
        self.retranslate()

    # ------------------------------------------------------------------ Panel API
    def has_data(self) -> bool:
        return self._rendered and self.state is not None and not {self.tabs.currentIndex()} & self._stale

    def retranslate(self) -> None:
        self.layer_label.setText(tr("head_grid.layer"))
        self._label_mask_button()
        self.bidirectional.setText(tr("head_grid.bidirectional"))
        self.head_label.setText(tr("head_grid.head_label"))
        self.view_label.setText(tr("head_grid.view"))
        self.view_combo.setItemText(0, tr("head_grid.view.mode"))
        self.view_combo.setItemText(1, tr("head_grid.view.side"))
        self.view_combo.setItemText(2, tr("budget.view"))
        self.budget.retranslate()
        self.back.setText(tr("head_grid.back"))
        self.metric_label.setText(tr("head_grid.metric"))
        for i, key in enumerate(METRICS):
            self.metric_combo.setItemText(i, tr(f"head_grid.metric.{key}"))
        self.overview_explain.setText(tr("head_grid.overview_explain"))
        self.hover.setText(self.hover_text or tr("head_grid.hover_hint"))
        self._retitle()
        if self.state is not None and not self._reword_grid():
            self._render_all()

    def _reword_grid(self) -> bool:
        """A language switch with the grid in sight: its heads' titles and its axes' names take the new
        words, its maps and token labels stay (no word of the interface); the other tabs are drawn, in the
        new words, when opened.  False (nothing done) when another tab is in sight or the grid is not drawn.
        Drawing the grid again was most of the panel's re-wording turn (~25 of ~40 ms of the GUI
        thread at 1900×1150, measured on a loaded machine)."""
        geometry = self.mosaic.geometry
        if self.tabs.currentIndex() != 0 or 0 in self._stale or geometry is None:
            return False
        for h, title in enumerate(self._titles[: geometry.heads]):
            text = tr("head_grid.head", head=h)
            if title.toPlainText() != text:
                title.setText(text)
        if self._labelled is not None:
            self._label_grid()  # (its token labels are set already: only the axes' names change)
        self._stale |= {1, 2}
        return True

    def _retitle(self) -> None:
        state = self.state
        layer = state.layer if state is not None else 0
        self.tabs.setTabText(0, tr("head_grid.tab.grid", layer=layer))
        self.tabs.setTabText(1, tr("head_grid.tab.head"))
        self.tabs.setTabText(2, tr("head_grid.tab.overview"))
        if state is not None:
            cfg = state.model.lens.config
            self.explain.setText(tr("head_grid.explain", layer=layer, d=cfg.n_embd, heads=cfg.n_head, dk=cfg.head_dim))
            self.layer_of.setText(tr("head_grid.of_layers", last=cfg.n_layer - 1))
        else:
            self.explain.setText(tr("head_grid.explain", layer=0, d="d", heads="H", dk="d/H"))
            self.layer_of.setText("")

    def show_state(self, state) -> None:
        self.state = state
        cfg = state.model.lens.config
        for widget, value in ((self.layer, state.layer),):
            widget.blockSignals(True)
            widget.setRange(0, cfg.n_layer - 1)
            widget.setValue(value)
            widget.blockSignals(False)
        self.head_spin.blockSignals(True)
        self.head_spin.setRange(0, cfg.n_head - 1)
        if self._pending_head is not None and self._pending_head[0] == state.layer:
            self.head = self._pending_head[1]
            self._pending_head = None
        self.head = min(self.head, cfg.n_head - 1)
        self.head_spin.setValue(self.head)
        self.head_spin.blockSignals(False)
        self._check_mode(state.causal)
        self._label_mask_button()
        self._retitle()
        self._render_all()

    def redraw_steps(self, state) -> list:
        """The grid's maps in one turn of the event loop, their token labels in the next.

        A new text's labels (the axes' text laid out again: ~80 labels for 250 tokens, half the
        grid's repaint) and its maps (the mosaic composed, coloured and drawn) painted in one turn
        were the long text's longest stall.  Labels placed for another shape of mosaic
        are taken off in the first turn, none left on the wrong cell; an edit's stay where they are
        (the edited token's label follows one turn later)."""
        if self.tabs.currentIndex() != 0:
            return [lambda: self.show_state(state)]
        return [lambda: self._show_maps(state), self._label_grid]

    def _show_maps(self, state) -> None:
        self._labels_later = True
        try:
            self.show_state(state)
        finally:
            self._labels_later = False

    def show_inputs(self, _old, new) -> None:
        """The learner's inputs changed: the mode buttons show the mask every control shows."""
        self._inputs = new
        self._check_mode(new.causal)
        self._label_mask_button()

    def _check_mode(self, causal: bool) -> None:
        if self._inputs is not None:  # "bidirectional" chosen in the designer is no mask too
            causal = self._inputs.shown_mask.kind != "bidirectional"
        for button, on in ((self.causal, causal), (self.bidirectional, not causal)):
            button.blockSignals(True)
            button.setChecked(on)
            button.blockSignals(False)

    def _label_mask_button(self) -> None:
        """"With the mask" names, in words, the mask it gives: the designer's when it is not GPT-2's."""
        if self._inputs is not None:
            spec = self._inputs.mask_when_on
        else:
            spec = self.state.extras.get("mask_spec", "causal") if self.state is not None else "causal"
        kind = mask_words(spec)[0]
        plain = kind in ("mask.causal", "mask.bidirectional")  # (bidirectional is no mask: "with" it means GPT-2's)
        self.causal.setText(tr("head_grid.causal") if plain else tr("head_grid.with_mask", mask=mask_in_words(spec)))

    def set_view(self, view: str) -> None:
        """The enlarged head's view: :data:`ONE_MODE`, :data:`SIDE_BY_SIDE` (the tour's step 2) or
        :data:`BUDGET` (one query's row in every head, the chapter's fixed budget)."""
        self.view_combo.setCurrentIndex(VIEWS.index(view))

    def open_view(self, view: str) -> None:
        """The "one head" tab in ``view`` (the tour's fixed-budget step opens :data:`BUDGET`)."""
        self.set_view(view)
        self.tabs.setCurrentIndex(1)

    def show_head(self, layer: int, head: int) -> None:
        """Open ``head`` of ``layer`` enlarged (the layer may still be computing)."""
        self.tabs.setCurrentIndex(1)
        if self.state is not None and self.state.layer == layer:
            self.head = head
            self.head_spin.setValue(head)
            self._render_head()
        else:
            self._pending_head = (layer, head)

    # ------------------------------------------------------------------ export
    def plot_for_export(self):
        index = self.tabs.currentIndex()
        if index == 1 and VIEWS[self.view_combo.currentIndex()] == BUDGET:
            return self.budget.view.ci
        return (self.grid_view.ci, self.head_view.ci, self.overview_view.ci)[index]

    def table_for_export(self):
        state = self.state
        if state is None:
            return None
        if self.tabs.currentIndex() == 2:
            header = ["layer", "head", *METRICS, "role"]
            rows = [[s.layer, s.head, *[float(getattr(s, m)) for m in METRICS], " ".join(self._chapter_roles(s))]
                    for s in state.overview]
            return header, rows
        heads = np.array([self.head] if self.tabs.currentIndex() == 1 else range(state.attention_causal.shape[0]))
        header = ["layer", "head", "query", "query_token", "key", "key_token", "weight_causal", "weight_bidirectional"]
        # one row per (head, query, key), keys fastest: built as columns (heads x n x n rows; see ColumnRows)
        n = state.n_tokens
        per_head = n * n
        query = np.tile(np.repeat(np.arange(n), n), len(heads))
        key = np.tile(np.arange(n), len(heads) * n)
        tokens = np.array(state.tokens, dtype=object)
        columns = [np.full(len(heads) * per_head, state.layer), np.repeat(heads, per_head), query, tokens[query], key,
                   tokens[key], state.attention_causal.numpy()[heads].reshape(-1),
                   state.attention_bidirectional.numpy()[heads].reshape(-1)]
        return header, ColumnRows(columns)

    # ------------------------------------------------------------------ rendering
    def _current_attention(self) -> np.ndarray:
        state = self.state
        att = state.attention_causal if state.causal else state.attention_bidirectional
        return att.numpy().astype(np.float32, copy=False)

    def _render_all(self) -> None:
        """Draw the tab on show; the other two wait until they are opened (the enlarged
        head's plot and cell labels cost more than the grid itself: 280 ms at start-up)."""
        self._stale = {0, 1, 2}
        self._render_tab(self.tabs.currentIndex())
        self._rendered = True

    def _render_tab(self, index: int) -> None:
        if self.state is not None and index in self._stale:
            (self._render_grid, self._render_head, self._render_overview)[index]()

    def _build_grid(self) -> None:
        """The grid page's one plot: the mosaic of the layer's heads, its hatching, the
        heads' titles and one colour bar (made once; an analysis only swaps images)."""
        plot = self.grid_view.addPlot(row=0, col=0, enableMenu=False, axisItems={"left": TopLabelAxis("left")})
        configure_map_plot(plot)
        for side in ("left", "bottom"):  # a 10-token map ~110 px tall: a smaller font labels every row
            plot.getAxis(side).setStyle(tickFont=_mosaic_tick_font())
        _fix_token_axis_width(plot)
        reserve_tick_text_height(plot.getAxis("bottom"))
        self.grid_plot = plot
        self.mosaic = MosaicImage(self._grid_hover, self._grid_click)
        self.mosaic_overlay = overlay_item()
        plot.addItem(self.mosaic)
        plot.addItem(self.mosaic_overlay)
        self._titles: list = []
        self.bar.setImageItem(self.mosaic)
        self.grid_view.addItem(self.bar, row=0, col=1)
        plot.getViewBox().sigResized.connect(self._grid_view_resized)

    def _render_grid(self) -> None:
        self._stale.discard(0)
        state = self.state
        att = self._current_attention()
        heads, n = att.shape[0], att.shape[-1]
        # no more pixels than the screen shows: a long text's maps are max-pooled to the size
        # of a grid cell (the enlarged head keeps every cell)
        preview = state.grid_previews.get(state.causal)
        pool, maps = pooled_for(att, preview, pool_factor(n, self._grid_pixels()))
        self._pool = pool
        maps = maps.numpy()
        geometry = MosaicGeometry(heads, n, maps.shape[-1], pool)
        self.mosaic.show_mosaic(compose(maps, geometry), geometry, self.bar.levels())
        width, height = geometry.extent()
        if state.causal:
            # the causal triangle, or the designer's mask's own forbidden cells
            hatching = mosaic_overlay(geometry, masked_overlay(state, geometry.pixels, pool))
            if self.mosaic_overlay.image is not hatching:
                self.mosaic_overlay.setImage(hatching, autoLevels=False)
                self.mosaic_overlay.setRect(QRectF(0, 0, width, height))
            self.mosaic_overlay.show()
        else:
            self.mosaic_overlay.hide()
        for h, title in enumerate(title_items(self.grid_plot.getViewBox(), heads, self._titles)[:heads]):
            text = tr("head_grid.head", head=h)
            if title.toPlainText() != text:
                title.setText(text)
            x, y = geometry.origin(h)
            if (title.pos().x(), title.pos().y()) != (x * pool, y * pool):
                title.setPos(x * pool, y * pool)
        self._fit_grid_view(labels=not self._labels_later)
        self.grid_view.refresh_hint()  # another number of heads, another shape of mosaic
        self._tell_pixels()

    def _fit_grid_view(self, labels: bool = True) -> None:
        """The mosaic's view range, square cells in whatever box the grid has, and (``labels``)
        its token labels; without them, labels placed for another shape of mosaic are taken off
        (they would sit on the wrong cells) until :meth:`_label_grid` runs."""
        geometry = self.mosaic.geometry
        if self.state is None or geometry is None:
            return
        size = self.grid_plot.getViewBox().size()
        view_range, _pixels_per_cell = square_view_range(geometry, size.width(), size.height())
        set_view_range(self.grid_plot, *view_range)
        settle_transforms(self.grid_plot.getViewBox(), self._titles)
        if labels:
            self._label_grid()
        elif self._labelled != geometry:
            for side in ("left", "bottom"):
                set_ticks(self.grid_plot.getAxis(side), [[], []])
            self._labelled = None

    def _label_grid(self) -> None:
        """The token labels along the mosaic's left (each row of tiles) and bottom (each column),
        as many as the box leaves room for, and the axes' names (the pooling in the keys')."""
        geometry = self.mosaic.geometry
        if self.state is None or geometry is None:
            return
        size = self.grid_plot.getViewBox().size()
        pixels_per_cell = square_view_range(geometry, size.width(), size.height())[1]
        rows, cols = geometry.shape
        tokens = self.state.tokens
        metrics = QFontMetrics(_mosaic_tick_font())
        pixels_per_cell = pixels_per_cell or 200.0 / geometry.extent()[0]  # not laid out yet
        set_ticks(self.grid_plot.getAxis("left"), tile_ticks(tokens, geometry, rows, pixels_per_cell, True,
                                                            row_px=metrics.ascent(), char_px=metrics.averageCharWidth()))
        set_ticks(self.grid_plot.getAxis("bottom"), tile_ticks(tokens, geometry, cols, pixels_per_cell, False,
                                                              row_px=metrics.ascent(), char_px=metrics.averageCharWidth()))
        self._labelled = geometry
        set_axis_label(self.grid_plot, "left", tr("head_grid.query_axis"))
        key_text = tr("head_grid.key_axis")
        if geometry.pool > 1:
            key_text += " · " + tr("head_grid.pooled", pool=geometry.pool)
        set_axis_label(self.grid_plot, "bottom", key_text)

    def _grid_height_for_width(self, width: int) -> int | None:
        """The grid view's height at which its maps, square, fill ``width`` (the view's width):
        what it asks of the dock.  The axes, titles and colour bar around the maps take what they
        take now (their sizes do not follow the view's height).  None before the first mosaic.
        It depends on the number of heads, not of tokens (:func:`mosaic_aspect`): a new text
        changes no layout."""
        geometry = self.mosaic.geometry
        box = self.grid_plot.getViewBox().size()
        if geometry is None or box.width() <= 0 or box.height() <= 0:
            return None
        around_w = self.grid_view.width() - box.width()
        around_h = self.grid_view.height() - box.height()
        return math.ceil(around_h + (width - around_w) * mosaic_aspect(geometry.heads))

    def _grid_view_resized(self, *_args) -> None:
        self._fit_grid_view()
        # the maps' box has its size now: the height they ask for follows it at once, not at the
        # next analysis (the first edit after start-up relaid the grid out and painted it twice)
        self.grid_view.refresh_hint()
        self._resize_timer.start()

    def head_map(self, head: int) -> np.ndarray:
        """What the grid shows for ``head``: its tile of the mosaic (pooled for a long text)."""
        geometry = self.mosaic.geometry
        x, y = geometry.origin(head)
        return self.mosaic.image[y : y + geometry.pixels, x : x + geometry.pixels]

    def _grid_pixels(self) -> float:
        """Screen pixels across one head's tile (256 until the grid is laid out)."""
        geometry = self.mosaic.geometry
        if geometry is None:
            return 256.0
        size = self.grid_plot.getViewBox().size()
        side = tile_side_px(geometry.heads, size.width(), size.height())  # the same for any number of tokens
        return side if side >= 48 else 256.0

    def _tell_pixels(self) -> None:
        pixels = int(self._grid_pixels())
        if self.mosaic.geometry is not None and pixels != self._told_pixels:
            self._told_pixels = pixels
            self.grid_pixels_changed.emit(pixels)

    def _grid_resized(self) -> None:
        """A bigger (or smaller) grid cell may want another pooling: draw the maps again, and
        the next analyses are pooled to the new size on the worker."""
        self._tell_pixels()
        state = self.state
        if state is not None and self.mosaic.geometry is not None and pool_factor(state.n_tokens, self._grid_pixels()) != self._pool:
            self._render_grid()

    def build_later_part(self) -> bool:
        """The enlarged head's plots and colour bar, one per idle turn, before the "one head" tab
        is first opened: made on that click they held it 45-150 ms of CPU (two PlotItems and a
        ColorBarItem, whose own view box builds a menu; the soak's ``set_head`` stalls)."""
        return self._build_head_part(HEAD_COLUMNS_MAX)

    def _build_head_part(self, columns: int) -> bool:
        """Make the next missing part of an enlarged head of ``columns`` plots (a plot, then the
        colour bar); False when none is missing."""
        if len(self._head_plot_pool) < columns:
            self._make_head_column()
            return True
        if self._head_bar is None:
            self._head_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(), interactive=True, width=14, rounding=0.01)
            return True
        return False

    def _head_parts_missing(self, columns: int) -> bool:
        return len(self._head_plot_pool) < columns or self._head_bar is None

    def _build_head_later(self, columns: int) -> None:
        """The "one head" tab opened before idle time made its parts (a learner in a new window):
        one part on this turn, the next on the following one, drawn once all are made.  All in the
        click's turn held the GUI thread 100-180 ms of CPU (the soak's ``set_head``)."""
        self._build_head_part(columns)
        if not self._head_part_posted:
            self._head_part_posted = True
            # behind what this turn posted (the tab's paint) and the timers already due (input, the
            # perf probe's heartbeat): a 0 ms timer alone ran first (as ui/redraw.py's steps do)
            call_after_posted_work(self, self._next_head_part)

    def _next_head_part(self) -> None:
        self._head_part_posted = False
        if 1 in self._stale and self.tabs.currentIndex() == 1:
            self._render_head()  # the next part, or the drawing once none is missing

    def _make_head_column(self) -> None:
        """One column of the enlarged head (its plot, map, masked overlay and cell values), kept in the pool."""
        plot = pg.PlotItem(enableMenu=False)
        configure_map_plot(plot)
        _fix_token_axis_width(plot)
        image = HeatImage(("head", True), self._head_hover, None)
        plot.addItem(image)
        over = overlay_item()
        plot.addItem(over)
        # the cells' values painted by one item (a TextItem per cell: ~2 ms each to make, and
        # re-placed on every paint; the first switch to one map made 100 of them, 54 ms)
        values = CellLabels()
        plot.addItem(values)
        self._head_plot_pool.append((plot, image, over, values))
        plot.getViewBox().sigResized.connect(self._show_head_values)

    def _build_head(self, count: int) -> None:
        """The enlarged head's plots (one, or causal and bidirectional side by side) and their
        colour bar in the layout.  Each column's plot is made once (in idle time, or a part a turn
        when the tab is opened first: :meth:`_build_head_later`) and kept: switching the view only
        moves them in and out of the layout.  Made again on every switch they held the GUI thread 70-120 ms of CPU each time."""
        layout = self.head_view.ci
        for item in list(layout.items):
            layout.removeItem(item)
        linked = self._head_bar_images
        if linked != len(self._head_plot_pool):
            # the bar sets the levels of every kept map (a map out of the layout too: the
            # same levels when it comes back); each image connected to it once
            for _plot, image, _over, _texts in self._head_plot_pool[:linked]:
                if hasattr(image, "sigLevelsChanged"):  # as setImageItem connects it (an ImageItem has none)
                    image.sigLevelsChanged.disconnect(self._head_bar._levelsChangedHandler)
            self._head_bar.setImageItem([image for _, image, _, _ in self._head_plot_pool])
            self._head_bar_images = len(self._head_plot_pool)
        self._head_plots = self._head_plot_pool[:count]
        for col, (plot, *_rest) in enumerate(self._head_plots):
            layout.addItem(plot, row=0, col=col)
        for plot, *_rest in self._head_plot_pool[count:]:
            # a plot out of the layout stays in the scene, under a hidden item: taken out of the scene,
            # PySide kept its wrapper alive for good (it had passed to Qt), and through its map's hover
            # callback the panel and the whole window with it after the window closed (the 30-minute soak:
            # 40-70 MB of plots and analyses per closed window, ~135 MB in 30 minutes)
            plot.setParentItem(self._head_park)
        layout.addItem(self._head_bar, row=0, col=count)

    def _render_head(self) -> None:
        state = self.state
        if state is None:
            return
        h = min(self.head, state.attention_causal.shape[0] - 1)
        n = state.n_tokens
        budget = VIEWS[self.view_combo.currentIndex()] == BUDGET
        self.head_view.setVisible(not budget)
        self.budget.setVisible(budget)
        if budget:
            self._stale.discard(1)
            self.budget.show_state(state, h)
            return
        if VIEWS[self.view_combo.currentIndex()] == SIDE_BY_SIDE:
            panels = [(True, state.attention_causal[h]), (False, state.attention_bidirectional[h])]
        else:
            panels = [(state.causal, (state.attention_causal if state.causal else state.attention_bidirectional)[h])]
        if len(self._head_plots) != len(panels):
            if self._head_parts_missing(len(panels)):
                self._stale.add(1)  # not drawn for this state and view until its parts are made
                self._build_head_later(len(panels))
                return
            self._build_head(len(panels))
        self._stale.discard(1)
        self._head_images = {}
        rect = QRectF(0, 0, n, n)
        for (causal, att), (plot, image, over, texts) in zip(panels, self._head_plots):
            arr = att.numpy().astype(np.float32, copy=False)
            mode = tr("head_grid.mode.causal" if causal else "head_grid.mode.bidirectional")
            set_title(plot, f"{tr('head_grid.head', head=h)} · {mode}", size="10pt")
            image.key = ("head", causal)
            image.setImage(np.ascontiguousarray(arr), autoLevels=False, levels=(0.0, 1.0))
            image.setRect(rect)
            self._head_images[causal] = arr
            if causal:
                over.setImage(masked_overlay(state, n), autoLevels=False)
                over.setRect(rect)
                over.show()
            else:
                over.hide()
            fit_token_ticks(plot, "left", state.tokens)
            fit_token_ticks(plot, "bottom", state.tokens)
            set_axis_label(plot, "left", tr("head_grid.query_axis"))
            set_axis_label(plot, "bottom", tr("head_grid.key_axis"))
            cells = []
            if n <= CELL_TEXT_LIMIT:
                cells = [(q, k) for q in range(n) for k in range(n) if not (causal and k > q)]
            self._head_values[id(texts)] = [
                (fixed(arr[q, k], 2), k + 0.5, q + 0.5, WHITE if arr[q, k] < 0.55 else BLACK) for q, k in cells
            ]
            set_view_range(plot, (0, n), (0, n))
        self._show_head_values()

    def _show_head_values(self, *_args) -> None:
        """Each weight written in its cell only while the cells are wide and tall enough for it: in a small
        dock, "0.00" side by side ran together ("0.000.000.00"); the hover still tells each value."""
        n = self.state.n_tokens if self.state is not None else 0
        metrics = QFontMetrics(QApplication.font())
        need_w, need_h = metrics.horizontalAdvance(fixed(0.88, 2)) + 6, metrics.height()
        for plot, _image, _over, texts in self._head_plots:
            box = plot.getViewBox().size()
            fits = n > 0 and box.width() / n >= need_w and box.height() / n >= need_h
            texts.show_labels(self._head_values.get(id(texts), []) if fits else [])

    def _render_overview(self) -> None:
        state = self.state
        if state is None or not state.overview:
            return
        self._stale.discard(2)
        cfg = state.model.lens.config
        metric = METRICS[max(0, self.metric_combo.currentIndex())]
        values = np.full((cfg.n_layer, cfg.n_head), np.nan, dtype=np.float32)
        for s in state.overview:
            values[s.layer, s.head] = float(getattr(s, metric))
        self._overview_values = values
        finite = values[np.isfinite(values)]
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        if hi <= lo:
            hi = lo + 1e-6
        self.overview_image.setImage(np.nan_to_num(values, nan=lo), autoLevels=False, levels=(lo, hi))
        self.overview_image.setRect(QRectF(0, 0, cfg.n_head, cfg.n_layer))
        self.overview_bar.setLevels((lo, hi))
        self.overview_marker.setRect(QRectF(0, state.layer, cfg.n_head, 1))
        set_ticks(self.overview_plot.getAxis("left"), [[(i + 0.5, str(i)) for i in range(cfg.n_layer)], []])
        set_ticks(self.overview_plot.getAxis("bottom"), [[(i + 0.5, str(i)) for i in range(cfg.n_head)], []])
        set_axis_label(self.overview_plot, "left", tr("head_grid.layer_axis"))
        set_axis_label(self.overview_plot, "bottom", tr("head_grid.head_axis"))
        set_title(self.overview_plot, tr(f"head_grid.metric.{metric}"), size="10pt")
        set_view_range(self.overview_plot, (0, cfg.n_head), (0, cfg.n_layer))

    # ------------------------------------------------------------------ hover / click
    def cell_text(self, head: int, row: int, col: int, causal: bool | None = None) -> str:
        """The hover text of one cell: "head 3: “dog” (query 2) → “The” (key 0): 0.412"."""
        state = self.state
        causal = state.causal if causal is None else causal
        att = state.attention_causal if causal else state.attention_bidirectional
        if causal and col > row:
            weight = tr("head_grid.masked")
        else:
            weight = _fmt_weight(float(att[head, row, col]))
        return tr(
            "head_grid.hover",
            head=tr("head_grid.head", head=head),
            q=state.tokens[row],
            qi=row,
            k=state.tokens[col],
            ki=col,
            w=weight,
        )

    def _show_hover(self, text: str, screen_pos) -> None:
        self.hover_text = text
        self.hover.setText(text or tr("head_grid.hover_hint"))
        if text and screen_pos is not None:
            QToolTip.showText(screen_pos.toPoint(), text, self)
        else:  # the mouse left the map (or a gap): a tooltip left behind would name a cell no longer pointed at
            QToolTip.hideText()

    def _grid_hover(self, _key, cell, screen_pos) -> None:
        if self.state is None or cell is None:
            self._show_hover("", None)
            return
        self._show_hover(self.cell_text(*cell), screen_pos)

    def _head_hover(self, key, cell, screen_pos) -> None:
        if self.state is None or cell is None:
            self._show_hover("", None)
            return
        self._show_hover(self.cell_text(self.head, *cell, causal=key[1]), screen_pos)

    def _grid_click(self, _key, cell) -> None:
        if cell is None or self.state is None:  # a gap between the tiles
            return
        head = cell[0]
        if QApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.knockout_toggled.emit(self.state.layer, head)  # Shift+click: knock it out, stay on the grid
            return
        self.head_clicked.emit(self.state.layer, head)
        self.head = head
        self.head_spin.blockSignals(True)
        self.head_spin.setValue(head)
        self.head_spin.blockSignals(False)
        self._render_head()
        self.tabs.setCurrentIndex(1)

    def _head_changed(self, head: int) -> None:
        self.head = head
        self._render_head()

    def _overview_hover(self, _key, cell, screen_pos) -> None:
        state = self.state
        if state is None or cell is None:
            self._show_hover("", None)
            return
        layer, head = cell
        metric = METRICS[max(0, self.metric_combo.currentIndex())]
        stats = next((s for s in state.overview if s.layer == layer and s.head == head), None)
        if stats is None:
            return
        text = tr(
            "head_grid.overview_hover",
            layer=layer,
            head=head,
            metric=tr(f"head_grid.metric.{metric}"),
            value=fixed(float(getattr(stats, metric)), 3),
            role=roles_text(self._chapter_roles(stats)),
        )
        self._show_hover(text, screen_pos)

    def _chapter_roles(self, stats) -> tuple[str, ...]:
        """``stats``' head's roles as the chapter (and the portrait, at its default thresholds) names them;
        induction is not among them here: it needs the portrait's measurement on repeated tokens."""
        n = self.state.n_tokens
        return chapter_roles.head_roles(stats, n).roles if n >= 2 else ()

    def _overview_click(self, _key, cell) -> None:
        if cell is None or self.state is None:
            return
        layer, head = cell
        self.head_selected.emit(layer, head)
        self.show_head(layer, head)
