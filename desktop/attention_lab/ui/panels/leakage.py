"""Leakage diff (lab step 3): change one late token and measure how much every position moved.

With the causal mask, every position before the edit changes by exactly 0 -- the future
cannot reach the past, which is what makes next-token training honest and the KV cache
possible.  Without the mask (bidirectional: the same weights with the mask removed) the edit leaks into every
position.  The bars show the relative change ‖h′ − h‖ / ‖h‖ per position for both modes
side by side, exact zeros labelled as such; the heatmaps show it layer by layer.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, Signal
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attention_lab.ui.i18n import tr
from attention_lab.ui.mask_words import mask_in_words
from attention_lab.ui.number_format import percent, significant
from attention_lab.ui.strings import leakage as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.heatmap_kit import HeatImage, configure_map_plot, fit_token_ticks, hatch_overlay, overlay_item
from attention_lab.ui.panels.panel_kit import SteadySplitter, UpwardLabels, explanation_label
from attention_lab.ui.panels.plot_setters import (
    fill_legend,
    nice_ceiling,
    plain_axes,
    set_axis_label,
    set_ticks,
    set_title,
    set_view_range,
    settle_axis_widths,
    settle_transforms,
    show_grid,
)


CAUSAL_COLOUR = (31, 119, 180)
BIDI_COLOUR = (255, 127, 14)
#: the layer-by-layer view around its maps: title, the token axis, margins (px); each of the maps' rows
#: gets a line of text on top of this (5 rows were ~10 px each on a laptop: "emb/0/1/2/3" overlapped)
LAYER_MAPS_CHROME_PX = 80
ZERO_LABEL_LIMIT = 40  # label each exact zero up to this many positions; beyond, the summary says it
TOKEN_LABEL_CHARS = 6  # the edited token as the controls row shows it, at most (the rest in its tooltip)


def _row_ticks(rows: int) -> list:
    """The layer maps' rows: the embeddings, then each layer."""
    return [(0.5, tr("leakage.emb_short"))] + [(i + 1.5, str(i)) for i in range(rows - 1)]


def fmt_change(value: float) -> str:
    return tr("leakage.exact_zero") if value == 0 else significant(value, 3)


class LeakagePanel(Panel):
    panel_id = PanelId.LEAKAGE
    title_key = "leakage.title"

    position_requested = Signal(int)
    replacement_requested = Signal(int, int)  # position, token id
    status_message = Signal(str)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._resolver = None
        self._rendered = False
        self.shown_causal = np.zeros(0)
        self.shown_bidirectional = np.zeros(0)
        self._bar_top = 1.0  # the bars' plot's top, as last drawn (the "exactly 0" labels stand on it)
        self.hover_text = ""

        self.explain = explanation_label(self)
        self.position_label = QLabel(self)
        self.position = QSpinBox(self)
        self.position.setObjectName("leakage.position")
        self.position.valueChanged.connect(self.position_requested)
        self.token_label = QLabel(self)
        self.replacement = QComboBox(self)
        self.replacement.setObjectName("leakage.replacement")
        self.replacement.setEditable(True)
        self.replacement.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.replacement.setMinimumWidth(140)
        self.replacement.activated.connect(self._replacement_chosen)
        self.at_label = QLabel(self)
        self.at = QComboBox(self)
        self.at.setObjectName("leakage.at")
        # its longest item ("final state (after ln_f)") set the controls row past a laptop's dock
        self.at.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.at.setMinimumContentsLength(10)
        self.at.currentIndexChanged.connect(lambda _i: self._render_bars())

        controls = QHBoxLayout()
        controls.addWidget(self.position_label)
        controls.addWidget(self.position)
        controls.addWidget(self.token_label)
        controls.addWidget(self.replacement)
        controls.addSpacing(16)
        controls.addWidget(self.at_label)
        controls.addWidget(self.at)
        controls.addStretch(1)

        self.summary = QLabel(self)
        self.summary.setObjectName("leakage.summary")
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)

        self.bar_plot = pg.PlotWidget(self, background="w", enableMenu=False)
        self.zero_labels = UpwardLabels()
        self.bar_plot.getPlotItem().addItem(self.zero_labels)
        self.bar_plot.setMinimumHeight(130)
        bp = self.bar_plot.getPlotItem()
        bp.hideButtons()
        plain_axes(bp)
        bp.getViewBox().setMouseEnabled(x=False, y=False)
        bp.getViewBox().disableAutoRange()  # the range is set on every edit: measuring the items first is wasted
        show_grid(bp, y=True, alpha=0.25)
        self.legend = bp.addLegend(offset=(10, 5), colCount=2)
        self.edited_region = pg.LinearRegionItem(movable=False, brush=pg.mkBrush(255, 215, 0, 60), pen=pg.mkPen(None))
        self.edited_region.setZValue(-10)
        bp.addItem(self.edited_region)
        self.causal_bars = pg.BarGraphItem(x=[], height=[], width=0.38, brush=pg.mkBrush(*CAUSAL_COLOUR), name="")
        self.bidi_bars = pg.BarGraphItem(x=[], height=[], width=0.38, brush=pg.mkBrush(*BIDI_COLOUR), name="")
        bp.addItem(self.causal_bars)
        bp.addItem(self.bidi_bars)
        self.bar_plot.scene().sigMouseMoved.connect(self._bar_hover)

        self.layers_title = QLabel(self)
        self.layers_title.setWordWrap(True)  # one line of it is wider than a laptop's dock
        self.layers_view = pg.GraphicsLayoutWidget(self)
        self.layers_view.setBackground("w")
        self.layers_view.setMinimumHeight(110)  # raised to a line per row once the model's layers are known
        self._heat: dict[bool, tuple[pg.PlotItem, HeatImage, pg.ImageItem]] = {}
        self._hatched: dict[bool, np.ndarray] = {}  # the exact zeros each overlay hatches now
        self._layer_cells: tuple[int, int] | None = None  # (rows, positions) the maps' rects are set for
        for col, causal in enumerate((True, False)):
            plot = self.layers_view.addPlot(row=0, col=col, enableMenu=False)
            configure_map_plot(plot)
            image = HeatImage(causal, self._cell_hover, None)
            over = overlay_item()
            plot.addItem(image)
            plot.addItem(over)
            self._heat[causal] = (plot, image, over)
        self.heat_bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=pg.colormap.get("magma"), interactive=False, width=14)
        self.heat_bar.setImageItem([self._heat[True][1], self._heat[False][1]])
        self.layers_view.addItem(self.heat_bar, row=0, col=2)

        # bars above (the headline), layer-by-layer heatmaps below, in a 3 : 2 split
        lower = QWidget(self)
        lower_layout = QVBoxLayout(lower)
        lower_layout.setContentsMargins(0, 0, 0, 0)
        lower_layout.addWidget(self.layers_title)
        lower_layout.addWidget(self.layers_view, 1)
        splitter = SteadySplitter(Qt.Orientation.Vertical, self)  # (its handle did not shrink the bars per relayout)
        splitter.addWidget(self.bar_plot)
        splitter.addWidget(lower)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([300, 200])
        self.splitter = splitter

        self.hover = QLabel(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 4)
        layout.addWidget(self.explain)
        layout.addLayout(controls)
        layout.addWidget(self.summary)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.hover)
        self.retranslate()

    # ------------------------------------------------------------------ Panel API
    def set_word_resolver(self, resolver) -> None:
        """``resolver(word, position) -> (token id | None, message)`` (the session's)."""
        self._resolver = resolver

    def has_data(self) -> bool:
        return self._rendered and self.state is not None

    def retranslate(self) -> None:
        self.explain.setText(tr("leakage.explain"))
        self.position_label.setText(tr("leakage.position"))
        self.replacement.setToolTip(tr("leakage.replacement_tip"))
        self.at_label.setText(tr("leakage.at"))
        self.layers_title.setText(tr("leakage.layers_title"))
        bp = self.bar_plot.getPlotItem()
        # each text set only when it changes, the legend's words in place: a new axis label, title
        # or legend lays its plot out again and repaints it
        set_axis_label(bp, "left", tr("leakage.y"))
        set_axis_label(bp, "bottom", tr("leakage.x"))
        fill_legend(self.legend, [(self.causal_bars, tr("leakage.causal")), (self.bidi_bars, tr("leakage.bidirectional"))])
        for causal, (plot, _, _) in self._heat.items():
            set_title(plot, tr("leakage.causal" if causal else "leakage.bidirectional"), size="9pt")
            set_axis_label(plot, "left", tr("leakage.layer_axis"))
        self._show_hover("")  # its words were the last language's; the next pointer move words it again
        if self.state is not None:
            self._reword(self.state)
        else:
            self._fill_at(0)

    def _reword(self, state) -> None:
        """The words of what is drawn, in the current language: the bars and the maps stay (a
        language changes no number; their axes' numbers follow through ``Panel.follow_language``).
        Drawing them again on a switch was half of the panel's re-wording turn."""
        self._label_token(state.tokens[state.position])
        self._fill_replacements()  # each guess's probability, in the language's number format
        self._fill_at(state.model.lens.config.n_layer)
        if len(self.shown_causal):  # (bars drawn: a state shown)
            self._label_zeros(self.shown_causal, self._bar_top)
            self._render_summary(self.shown_causal, self.shown_bidirectional)
        rows = state.leakage.causal_layers.shape[0]
        for plot, _image, _over in self._heat.values():
            set_ticks(plot.getAxis("left"), [_row_ticks(rows), []])

    def _label_token(self, token: str) -> None:
        """The edited token beside the replacement box, cut to its first characters when long (the whole
        is in the tooltip and in the summary below): a whole-word token ("␣yesterday") made the controls
        row wider than a laptop's dock."""
        shown = token if len(token) <= TOKEN_LABEL_CHARS else token[: TOKEN_LABEL_CHARS - 1] + "…"
        self.token_label.setText(tr("leakage.replace", token=shown))
        self.token_label.setToolTip(token if shown != token else "")

    def show_state(self, state) -> None:
        self._show_edit(state)
        self._render_layers()

    def redraw_steps(self, state) -> list:
        """The bars (and the controls) in one turn, the layer-by-layer maps in the next: two
        views painted in the same turn were the longest stall of an edit."""
        return [lambda: self._show_edit(state), self._render_layers]

    def _show_edit(self, state) -> None:
        """Everything but the layer maps: the controls, the summary and the bars."""
        self.state = state
        n = state.n_tokens
        self.position.blockSignals(True)
        self.position.setRange(0, max(0, n - 1))
        self.position.setValue(state.position)
        self.position.blockSignals(False)
        self._label_token(state.tokens[state.position])
        self._fill_replacements()
        self._fill_at(state.model.lens.config.n_layer)
        self._render_bars()
        self._rendered = True

    # ------------------------------------------------------------------ export
    def plot_for_export(self):
        return self.bar_plot.getPlotItem()

    def table_for_export(self):
        state = self.state
        if state is None:
            return None
        leak = state.leakage
        causal_layers = leak.causal_layers.numpy()
        bidi_layers = leak.bidirectional_layers.numpy()
        names = ["embeddings"] + [f"layer{i}" for i in range(causal_layers.shape[0] - 1)]
        header = ["position", "token", "edited", "causal_final", "bidirectional_final"]
        header += [f"causal_{n}" for n in names] + [f"bidirectional_{n}" for n in names]
        rows = []
        for i in range(state.n_tokens):
            rows.append(
                [i, state.tokens[i], int(i == state.position), float(leak.causal[i]), float(leak.bidirectional[i])]
                + [float(v) for v in causal_layers[:, i]]
                + [float(v) for v in bidi_layers[:, i]]
            )
        return header, rows

    # ------------------------------------------------------------------ controls
    def _fill_at(self, n_layer: int) -> None:
        wanted = [tr("leakage.at.final"), tr("leakage.at.embeddings")] + [tr("leakage.at.layer", layer=i) for i in range(n_layer)]
        if [self.at.itemText(i) for i in range(self.at.count())] == wanted:
            return  # an edit keeps the model and the language: refilling cost a relayout per edit
        current = self.at.currentIndex()
        self.at.blockSignals(True)
        self.at.clear()
        self.at.addItems(wanted)
        self.at.setCurrentIndex(current if 0 <= current < self.at.count() else 0)
        self.at.blockSignals(False)

    def _fill_replacements(self) -> None:
        state = self.state
        p = state.position
        self.replacement.blockSignals(True)
        ids: list[int] = []
        probs: list[float] = []
        row = p - 1 if p > 0 else None
        if row is not None and int(state.top_ids[row, 0]) >= 0:
            ids = [int(i) for i in state.top_ids[row].tolist()]
            probs = state.top_probs[row].tolist()
        if state.replacement_id not in ids:
            ids.insert(0, state.replacement_id)
            probs.insert(0, float("nan"))
        texts = state.model.tokenizer.token_texts(ids)
        labels = [text if prob != prob else f"{text}  ({percent(prob, 1)})" for prob, text in zip(probs, texts)]  # NaN: not among the guesses
        shown = [(self.replacement.itemText(i), self.replacement.itemData(i)) for i in range(self.replacement.count())]
        if shown != list(zip(labels, ids)):  # a late edit keeps the guesses for its position: keep the list
            self.replacement.clear()
            for token_id, label in zip(ids, labels):
                self.replacement.addItem(label, token_id)
        index = ids.index(state.replacement_id)
        self.replacement.setCurrentIndex(index)
        if self.replacement.currentText() != labels[index]:  # a word typed into the box: the state's replacement now
            self.replacement.setEditText(labels[index])
        self.replacement.blockSignals(False)

    def _replacement_chosen(self, index: int) -> None:
        state = self.state
        if state is None:
            return
        token_id = self.replacement.itemData(index)
        typed = self.replacement.currentText()
        if token_id is None or typed != self.replacement.itemText(index):
            self._typed_word(typed)
            return
        self.replacement_requested.emit(state.position, int(token_id))

    def _typed_word(self, word: str) -> None:
        if self._resolver is None or self.state is None:
            return
        token_id, message = self._resolver(word, self.state.position)
        if token_id is None:
            self.status_message.emit(message)
            self.summary.setText(f"<span style='color:#b02020'>{message}</span>")
            return
        self.replacement_requested.emit(self.state.position, int(token_id))

    # ------------------------------------------------------------------ rendering
    def _chosen_values(self) -> tuple[np.ndarray, np.ndarray]:
        leak = self.state.leakage
        index = self.at.currentIndex()
        if index <= 0:
            return leak.causal.numpy(), leak.bidirectional.numpy()
        return leak.causal_layers[index - 1].numpy(), leak.bidirectional_layers[index - 1].numpy()

    def _render_bars(self) -> None:
        state = self.state
        if state is None:
            return
        bp = self.bar_plot.getPlotItem()
        causal, bidi = self._chosen_values()
        self.shown_causal, self.shown_bidirectional = causal.copy(), bidi.copy()
        n, p = len(causal), state.position
        x = np.arange(n, dtype=float)
        self.causal_bars.setOpts(x=x - 0.2, height=causal, width=0.38)
        self.bidi_bars.setOpts(x=x + 0.2, height=bidi, width=0.38)
        self.edited_region.setRegion((p - 0.5, p + 0.5))
        # the top in 1-2-5 steps, with headroom for the legend: an edit mostly keeps the range,
        # so the axis, the grid and the "exactly 0" labels stay as they are (a new range re-placed
        # every label after the first paint and painted the plot twice)
        top = nice_ceiling(1.3 * float(max(causal.max(initial=0.0), bidi.max(initial=0.0))), smallest=1e-6)
        self._bar_top = top
        self._label_zeros(causal, top)
        fit_token_ticks(bp, "bottom", state.tokens, index=True, centre=0.0)
        set_view_range(bp, (-0.6, n - 0.4), (0, top))
        settle_axis_widths(bp)
        settle_transforms(bp.getViewBox())
        self._render_summary(causal, bidi)

    def _label_zeros(self, causal: np.ndarray, top: float) -> None:
        """"exactly 0" over each causal bar that is (up to ZERO_LABEL_LIMIT positions)."""
        zeros = np.flatnonzero(causal == 0) if len(causal) <= ZERO_LABEL_LIMIT else []
        self.zero_labels.show_labels(((tr("leakage.exact_zero"), float(i) - 0.2, top * 0.015, CAUSAL_COLOUR) for i in zeros),
                                     height=top)

    def _render_summary(self, causal: np.ndarray, bidi: np.ndarray) -> None:
        state = self.state
        p = state.position
        edit = tr(
            "leakage.summary.edit",
            pos=p,
            old=state.tokens[p],
            new=state.extras.get("replacement_text", state.replacement_id),
        )
        if p == 0:
            self.summary.setText(f"{edit} {tr('leakage.summary.first')}")
            return
        before_c, before_b = causal[:p], bidi[:p]
        if np.all(before_c == 0):
            causal_text = tr("leakage.summary.causal_zero", k=p, pos=p)
        else:
            causal_text = tr("leakage.summary.causal_leak", pos=p, max=significant(float(before_c.max()), 3))
        bidi_text = tr("leakage.summary.bidirectional", max=fmt_change(float(before_b.max())), mean=fmt_change(float(before_b.mean())))
        spec = state.extras.get("mask_spec", "causal")
        designed = "" if spec == "causal" else " " + tr("leakage.summary.designed_words", mask=mask_in_words(spec))
        self.summary.setText(f"{edit} {causal_text} {bidi_text}{designed}")

    def _render_layers(self) -> None:
        state = self.state
        leak = state.leakage
        maps = {True: leak.causal_layers.numpy().astype(np.float32), False: leak.bidirectional_layers.numpy().astype(np.float32)}
        rows, n = maps[True].shape
        hi = float(max(maps[True].max(initial=0.0), maps[False].max(initial=0.0), 1e-6))
        row_ticks = _row_ticks(rows)
        self.heat_bar.setLevels((0.0, hi))
        for causal, (plot, image, over) in self._heat.items():
            data = maps[causal]
            image.setImage(np.ascontiguousarray(data), autoLevels=False, levels=(0.0, hi))
            zeros = data == 0
            if self._hatched.get(causal) is None or not np.array_equal(self._hatched[causal], zeros):
                # an edit mostly keeps the exact zeros (all of the past, causally): the hatching stays
                over.setImage(hatch_overlay(zeros), autoLevels=False)
                self._hatched[causal] = zeros
            if self._layer_cells != (rows, n):
                image.setRect(QRectF(0, 0, n, rows))
                over.setRect(QRectF(0, 0, n, rows))
            set_ticks(plot.getAxis("left"), [row_ticks, []])
            fit_token_ticks(plot, "bottom", state.tokens)
            set_view_range(plot, (0, n), (0, rows))
            settle_transforms(plot.getViewBox())
        if self._layer_cells is None or self._layer_cells[0] != rows:
            line = QFontMetrics(self._heat[True][0].getAxis("left").style.get("tickFont") or self.font()).height()
            self.layers_view.setMinimumHeight(rows * line + LAYER_MAPS_CHROME_PX)
        self._layer_cells = (rows, n)

    # ------------------------------------------------------------------ hover
    def _show_hover(self, text: str) -> None:
        self.hover_text = text
        self.hover.setText(text)

    def _bar_hover(self, scene_pos) -> None:
        state = self.state
        if state is None or not len(self.shown_causal):
            return
        vb = self.bar_plot.getPlotItem().getViewBox()
        if not vb.sceneBoundingRect().contains(scene_pos):
            return
        i = int(round(vb.mapSceneToView(scene_pos).x()))
        if 0 <= i < len(self.shown_causal):
            self._show_hover(
                tr(
                    "leakage.hover_bar",
                    pos=i,
                    token=state.tokens[i],
                    causal=fmt_change(float(self.shown_causal[i])),
                    bidirectional=fmt_change(float(self.shown_bidirectional[i])),
                )
            )

    def _cell_hover(self, causal, cell, _screen_pos) -> None:
        state = self.state
        if state is None or cell is None:
            return
        row, col = cell
        data = state.leakage.causal_layers if causal else state.leakage.bidirectional_layers
        layer = tr("leakage.at.embeddings") if row == 0 else tr("leakage.at.layer", layer=row - 1)
        self._show_hover(
            tr(
                "leakage.hover_cell",
                mode=tr("leakage.causal" if causal else "leakage.bidirectional"),
                layer=layer,
                pos=col,
                token=state.tokens[col],
                value=fmt_change(float(data[row, col])),
            )
        )
