"""The causal mask (lab step 1) and the chapter's "why −∞ and not zero?".

Left: the mask for the current tokens, as a grid (what is added to the scores: 0 where a
query may look, −∞ on the future) and as the lab's ASCII print.  Right: the five ways of
hiding the future (:class:`~attention_lab.core.lens.MaskMode`) run on the current text,
with, for each, the row sums of the attention (do they still sum to 1?), the weight the
future still gets, and the leakage of the edited token into earlier positions.

The numbers come from :func:`attention_lab.core.analysis.mask_mode_report` plus one
batched forward per mode for the per-row / per-position detail, computed on the worker
(only while the panel is visible; a hidden panel asks when it is shown): the panel emits
:attr:`MaskPanel.modes_wanted`, the session measures, :meth:`MaskPanel.show_mask_modes` draws.
"""

from __future__ import annotations

import functools

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRect, Qt, Signal
from PySide6.QtGui import QBrush, QColor, QFontMetrics
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.jobs import MaskModes, ModeDetail

from attention_lab.core.job_protocol import MASK_MODES, edit_key
from attention_lab.core.lens import MaskMode, future_mask
from attention_lab.ui.i18n import tr
from attention_lab.ui.qt_compat import call_later
from attention_lab.ui.strings import mask as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import (
    ExplanationLabel,
    CellLabels,
    SteadyHeightLabel,
    TextPool,
    explanation_label,
    fmt_number,
    make_plot,
    monospace_font,
    set_box_title,
    set_header_labels,
    set_text,
    set_heatmap_axes,
    setup_token_heatmap,
)
from attention_lab.ui.panels.plot_setters import set_axis_label, set_title, set_view_range, show_grid

ASCII_LIMIT = 48  # the print gets unreadable beyond this many tokens; the grid shows them all
CELL_TEXT_LIMIT = 16  # "0" / "−∞" written in the grid's cells up to this many tokens
BAR_PLOT_MIN_WIDTH = 150  # side by side, each at make_plot's 220 px: wider than a laptop's dock
BAR_PLOT_MIN_HEIGHT = 180  # make_plot's
BAR_PLOTS_SPACING = 6


MODES = [m.value for m in MaskMode]


@functools.lru_cache(maxsize=2)
def _mask_picture(n: int) -> np.ndarray:
    """RGBA: allowed cells light, the future dark (the triangle the chapter draws); made
    once per length (27 ms at 1024 tokens with boolean indexing)."""
    light = np.array((222, 235, 247, 255), np.ubyte).view(np.uint32)
    dark = np.array((60, 60, 70, 255), np.ubyte).view(np.uint32)
    rgba = np.where(future_mask(n).numpy(), dark, light).view(np.ubyte).reshape(n, n, 4)  # a word per pixel: fast
    rgba.flags.writeable = False
    return rgba


class MaskPanel(Panel):
    panel_id = PanelId.MASK
    title_key = "mask.title"

    error_raised = Signal(str, str)
    modes_ready = Signal()  # the mode table holds numbers for the current state
    modes_wanted = Signal(object)  # AnalysisState: measure its five mask modes (Session.measure_mask_modes)
    #: the learner picked a mode (the list or the table), even the one already selected: the
    #: tour gives back the learner's last pick, and a pick that changes nothing is still one
    mode_picked = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result: MaskModes | None = None
        self._pending_key: tuple | None = None
        self._error: str | None = None

        self.explain = explanation_label(self)

        # ---- left: the grid and the print
        self.grid_box = QGroupBox(self)
        self.grid_plot = make_plot(self.grid_box)
        self.grid_image = setup_token_heatmap(self.grid_plot)
        self.cell_labels = CellLabels()  # one item for all the cells' "0" / "−∞"
        self.grid_plot.addItem(self.cell_labels)
        # the future's "−∞" said once under the grid when its cells are too small to hold it
        self.grid_legend = SteadyHeightLabel(self.grid_box)
        self.grid_legend.setObjectName("mask.grid_legend")
        self.grid_legend.hide()
        self.grid_plot.getPlotItem().getViewBox().sigResized.connect(self._show_grid_legend)
        grid_layout = QVBoxLayout(self.grid_box)
        grid_layout.addWidget(self.grid_plot)
        grid_layout.addWidget(self.grid_legend)

        self.ascii_box = QGroupBox(self)
        self.ascii_choice = QComboBox(self.ascii_box)
        self.ascii_choice.currentIndexChanged.connect(self._fill_ascii)
        self.ascii_label = QLabel(self.ascii_box)
        self.ascii_view = QPlainTextEdit(self.ascii_box)
        self.ascii_view.setReadOnly(True)
        self.ascii_view.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.ascii_view.setFont(monospace_font())
        row = QHBoxLayout()
        row.addWidget(self.ascii_label)
        row.addWidget(self.ascii_choice, 1)
        ascii_layout = QVBoxLayout(self.ascii_box)
        ascii_layout.addLayout(row)
        ascii_layout.addWidget(self.ascii_view)

        left = QSplitter(Qt.Orientation.Vertical, self)
        left.addWidget(self.grid_box)
        left.addWidget(self.ascii_box)

        # ---- right: why −∞ and not zero?
        self.why_box = QGroupBox(self)
        # the rest behind "More…"; a plain label's size policy, so a short dock still squeezes it
        self.why_explain = ExplanationLabel(self.why_box)
        self.why_explain.setWordWrap(True)
        self.why_explain.setTextFormat(Qt.TextFormat.RichText)
        self.mode_label = QLabel(self.why_box)
        self.mode_choice = QComboBox(self.why_box)
        for mode in MODES:
            self.mode_choice.addItem(mode, mode)
        self.mode_choice.currentIndexChanged.connect(self._on_mode_changed)
        self.mode_choice.activated.connect(lambda _i: self.mode_picked.emit(self.selected_mode()))
        self.table = QTableWidget(len(MODES), 5, self.why_box)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        self.table.cellClicked.connect(self._row_clicked)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 10)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setWordWrap(False)
        self.table.setHorizontalScrollMode(QAbstractItemView.ScrollMode.ScrollPerPixel)  # (show_mode_row scrolls by pixels)
        # every row in sight with the sideways scroll bar up too (a narrow dock: 1366×768 hid half of
        # the last row under it); the bar's strip is blank while it is hidden, so the height is one
        self.table.setFixedHeight(
            self.table.horizontalHeader().sizeHint().height() + len(MODES) * (self.fontMetrics().height() + 10)
            + 2 * self.table.frameWidth() + self.table.horizontalScrollBar().sizeHint().height()
        )
        self.status = QLabel(self.why_box)
        self.status.setWordWrap(True)
        # as tall as the tallest sentence it has shown at its width: switching back moves no plot
        self.selected_text = SteadyHeightLabel(self.why_box)
        self.selected_text.setTextFormat(Qt.TextFormat.RichText)

        # the two bar plots: built later, one per idle turn (build_later_part), or one on each of
        # the two turns after the panel's first paint if it came into sight before: each plot is ~12 ms of the GUI thread, the whole panel in one turn was the idle
        # build's longest step (66 ms of CPU).  Their box holds their room meanwhile,
        # so nothing moves (nor the window's minimum size) when they arrive.
        self.bar_plots = QWidget(self.why_box)
        self.bar_plots.setMinimumSize(2 * BAR_PLOT_MIN_WIDTH + BAR_PLOTS_SPACING, BAR_PLOT_MIN_HEIGHT)
        self.bar_plots_row = QHBoxLayout(self.bar_plots)
        self.bar_plots_row.setContentsMargins(0, 0, 0, 0)
        self.bar_plots_row.setSpacing(BAR_PLOTS_SPACING)
        self._bar_plots_built = 0  # how many of the two (sums, leak)
        self._bar_build_posted = False  # a paint already asked for the build on the next turn

        mode_row = QHBoxLayout()
        mode_row.addWidget(self.mode_label)
        mode_row.addWidget(self.mode_choice, 1)
        why_layout = QVBoxLayout(self.why_box)
        why_layout.addWidget(self.why_explain)
        why_layout.addWidget(self.table)
        why_layout.addWidget(self.status)
        why_layout.addLayout(mode_row)
        why_layout.addWidget(self.selected_text)
        why_layout.addWidget(self.bar_plots, 1)

        for choice in (self.ascii_choice, self.mode_choice):  # long mode names would set the panel's minimum
            choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            choice.setMinimumContentsLength(12)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        self.left_splitter = left  # (tests read it)
        splitter.addWidget(self.why_box)
        splitter.setStretchFactor(0, 2)
        splitter.setStretchFactor(1, 3)
        self.splitter = splitter  # (the tour gives the table's side the room it needs)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addWidget(splitter, 1)
        self.retranslate()

    # ------------------------------------------------------------------ built later
    def build_later_part(self) -> bool:
        """Build the next of the two bar plots if one is missing (one idle turn's work)."""
        if self._bar_plots_built == 2:
            return False
        self._build_bar_plot()
        return True

    def _build_bar_plot(self) -> None:
        """The row sums' plot, then the leak's; with the second, both are labelled and drawn."""
        if self._bar_plots_built == 0:
            self.sums_plot = make_plot(self.bar_plots)
            show_grid(self.sums_plot, y=True, alpha=0.25)
            self.sums_bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=(70, 130, 180))
            self.sums_plot.addItem(self.sums_bars)
            self.sums_spread = pg.ErrorBarItem(x=np.array([]), y=np.array([]), pen=pg.mkPen(30, 30, 30))
            self.sums_plot.addItem(self.sums_spread)
            self.sums_plot.addItem(
                pg.InfiniteLine(pos=1.0, angle=0, pen=pg.mkPen((200, 40, 40), width=1.5, style=Qt.PenStyle.DashLine)))
            plot = self.sums_plot
        else:
            self.leak_plot = make_plot(self.bar_plots)
            show_grid(self.leak_plot, y=True, alpha=0.25)
            self.leak_bars = pg.BarGraphItem(x=[], height=[], width=0.7, brush=(214, 39, 40))
            self.leak_plot.addItem(self.leak_bars)
            self.edit_line = pg.InfiniteLine(angle=90, pen=pg.mkPen((120, 120, 120), style=Qt.PenStyle.DotLine))
            self.edit_line.setPos(-10)
            self.leak_plot.addItem(self.edit_line)
            self._leak_texts = TextPool(self.leak_plot, anchor=(0.5, 1.0))
            plot = self.leak_plot
        plot.setMinimumWidth(BAR_PLOT_MIN_WIDTH)
        self.bar_plots_row.addWidget(plot)
        self._bar_plots_built += 1
        if self._bar_plots_built == 2:
            self._label_bar_plots()
            self._fill_selected(self.mode_details())

    def _build_bar_plots(self) -> None:
        """One bar plot on this turn, the other on the next: both in the turn after the first paint
        held it 40-95 ms of CPU (the soak's ``set_mask_mode`` and ``tour_open`` stalls in a window
        whose idle turns had not reached them yet)."""
        self._bar_build_posted = False
        if self._bar_plots_built < 2:
            self._build_bar_plot()
        if self._bar_plots_built < 2:
            self._bar_build_posted = True
            call_later(0, self, self._build_bar_plots)

    def paintEvent(self, event) -> None:  # noqa: N802 -- in sight before the idle turns built its plots
        # (a tab behind another is "visible" to Qt but never paints: painting is being in sight)
        super().paintEvent(event)
        if self._bar_plots_built < 2 and not self._bar_build_posted:  # one build on its way, not one per paint
            self._bar_build_posted = True
            call_later(0, self, self._build_bar_plots)  # not inside a paint: on the next turn

    # ------------------------------------------------------------------ wiring
    def session_ready(self) -> None:
        self._request_modes()

    def shutdown(self) -> None:
        self._pending_key = None  # a measurement still on its way is not drawn

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None and self.grid_image.image is not None

    def show_state(self, state) -> None:
        self.state = state
        self.explain.setText(tr("mask.explain"))
        self._fill_grid()
        self._fill_ascii_choices()
        self.ask_after_paint(self._request_modes)
        self._fill_why()

    def retranslate(self) -> None:
        """The panel's words in the current language, and nothing drawn again: a language changes no
        number of the grid, the print or the bars, only the words around them (the whole panel
        filled again, its grid image, bars and every axis redrawn, was the largest re-wording turn
        with the Mask in sight).  Each text is set only where it changes."""
        set_box_title(self.grid_box, tr("mask.grid"))
        set_box_title(self.ascii_box, tr("mask.ascii"))
        set_text(self.ascii_label, tr("mask.ascii.what"))
        set_box_title(self.why_box, tr("mask.why"))
        set_text(self.mode_label, tr("mask.mode"))
        for i, mode in enumerate(MODES):
            if self.mode_choice.itemText(i) != tr(f"mask.mode.{mode}"):
                self.mode_choice.setItemText(i, tr(f"mask.mode.{mode}"))
        set_header_labels(self.table, [tr(k) for k in ("mask.col.mode", "mask.col.row_sums", "mask.col.future", "mask.col.leak", "mask.col.verdict")])
        self.table.horizontalHeaderItem(1).setToolTip(tr("mask.col.row_sums.tip"))
        self._label_bar_plots()
        if self.state is None:
            set_text(self.explain, tr("mask.empty"))
        else:
            set_text(self.explain, tr("mask.explain"))
            pi = self.grid_plot.getPlotItem()
            set_axis_label(pi, "top", tr("mask.key"))
            set_axis_label(pi, "left", tr("mask.query"))
            self._fill_cells()  # each mode's word for the future, and the legend under the grid
            self._fill_ascii_choices()
        self._fill_why(words_only=True)

    def _label_bar_plots(self) -> None:
        if self._bar_plots_built < 2:
            return  # labelled when built
        for plot, y_key, x_key in (
            (self.sums_plot, "mask.rowsums.y", "mask.position"),
            (self.leak_plot, "mask.leak.y", "mask.leak.x"),
        ):
            # set only when it changes: pyqtgraph lays the plot out again for every label set
            set_axis_label(plot.getPlotItem(), "left", tr(y_key))
            set_axis_label(plot.getPlotItem(), "bottom", tr(x_key))

    def showEvent(self, event) -> None:  # noqa: N802 -- a hidden panel computes when it is shown
        super().showEvent(event)
        self.ask_after_paint(self._request_modes)

    # ------------------------------------------------------------------ the mask itself
    def selected_mode(self) -> str:
        return str(self.mode_choice.currentData())

    def _row_clicked(self, row: int, _column: int) -> None:
        self.mode_choice.setCurrentIndex(row)
        self.mode_picked.emit(self.selected_mode())

    def set_mode(self, mode: str) -> None:
        self.mode_choice.setCurrentIndex(MODES.index(MaskMode.parse(mode).value))

    def show_inputs(self, _old, new) -> None:
        """The learner's inputs changed: the mode list shows their way of hiding the future."""
        if new.mask_mode != self.selected_mode():
            self.set_mode(new.mask_mode)

    def _fill_grid(self) -> None:
        state = self.state
        if state is None:
            return
        n = state.n_tokens
        self.grid_image.setImage(_mask_picture(n), autoLevels=False)
        self.grid_image.setRect(0, 0, n, n)
        set_heatmap_axes(self.grid_plot, state.tokens, state.tokens, tr("mask.query"), tr("mask.key"))
        self._fill_cells()

    def _fill_cells(self) -> None:
        """The cells' "0" and the future's word for the selected mode ("−∞", "×0"…), and the legend."""
        state = self.state
        if state is None:
            return
        n = state.n_tokens
        cells = []
        if n <= CELL_TEXT_LIMIT:
            allowed = ~future_mask(n).numpy()
            future_text = tr(f"mask.cell.{self.selected_mode()}")
            cells = [("0" if allowed[i, j] else future_text, j + 0.5, i + 0.5,
                      (40, 40, 40) if allowed[i, j] else (255, 255, 255)) for i in range(n) for j in range(n)]
        self.cell_labels.show_labels(cells)
        self._show_grid_legend()

    def _show_grid_legend(self, *_args) -> None:
        """Under the grid, what its dark cells hold, when their cells are too small to write it in each
        (a long text, a small dock): the grid then showed dark cells and no "−∞" at all."""
        state = self.state
        if state is None or state.n_tokens < 2:
            self.grid_legend.hide()
            return
        units_x, units_y = self.grid_plot.getPlotItem().getViewBox().viewPixelSize()
        cell_px = (1.0 / units_x, 1.0 / units_y) if units_x > 0 and units_y > 0 else (0.0, 0.0)
        metrics = QFontMetrics(self.grid_plot.font())
        unwritten = [mode for mode in MODES if not (
            state.n_tokens <= CELL_TEXT_LIMIT and CellLabels.fits(tr(f"mask.cell.{mode}"), cell_px, metrics))]
        mode = self.selected_mode()
        # the legend's room is kept while any mode needs it (shown or not for this one): appearing
        # and going as the learner switched modes, it resized the grid's plot each time
        self.grid_legend.set_texts(tr("mask.grid.legend", value=tr(f"mask.cell.{mode}")),
                                   [tr("mask.grid.legend", value=tr(f"mask.cell.{m}")) for m in unwritten])
        policy = self.grid_legend.sizePolicy()
        if policy.retainSizeWhenHidden() != bool(unwritten):
            policy.setRetainSizeWhenHidden(bool(unwritten))
            self.grid_legend.setSizePolicy(policy)
        self.grid_legend.setVisible(mode in unwritten)

    def _fill_ascii_choices(self) -> None:
        state = self.state
        wanted = [(tr("mask.ascii.mask"), -1)]
        if state is not None:
            wanted += [(tr("mask.ascii.head", head=head, layer=state.layer), head) for head in range(int(state.attention_causal.shape[0]))]
        choice = self.ascii_choice
        if [choice.itemData(i) for i in range(choice.count())] == [head for _text, head in wanted]:
            # the same heads (a new language, an edit): their words in place, the print kept (a
            # cleared list made a new layout of its row and a new print, same words or not)
            for i, (text, _head) in enumerate(wanted):
                if choice.itemText(i) != text:
                    choice.setItemText(i, text)
            self._fill_ascii()
            return
        keep = choice.currentIndex()
        choice.blockSignals(True)
        choice.clear()
        for text, head in wanted:
            choice.addItem(text, head)
        choice.setCurrentIndex(keep if 0 <= keep < choice.count() else 0)
        choice.blockSignals(False)
        self._fill_ascii()

    def _fill_ascii(self, *_args) -> None:
        from attention_lab.core.analysis import ascii_mask

        state = self.state
        if state is None:
            self.ascii_view.setPlainText("")
            return
        shown = min(state.n_tokens, ASCII_LIMIT)
        head = self.ascii_choice.currentData()
        values = None
        if head is not None and head >= 0:
            values = state.attention_causal[int(head), :shown, :shown]
        text = ascii_mask(shown, list(state.tokens[:shown]), values, causal=True)
        if shown < state.n_tokens:
            text += "\n" + tr("mask.ascii.cut", shown=shown, n=state.n_tokens)
        if self.ascii_view.toPlainText() != text:  # (set again, the view lays its document out anew)
            self.ascii_view.setPlainText(text)

    def ascii_text(self) -> str:
        return self.ascii_view.toPlainText()

    # ------------------------------------------------------------------ the modes (worker)
    def _request_modes(self) -> None:
        state = self.state
        if state is None or not self.is_served("modes_wanted") or not self.isVisible():
            return
        key = edit_key(state)
        if (self._result is not None and self._result.key == key) or self._pending_key == key:
            return
        self._pending_key = key
        self._error = None
        self.modes_wanted.emit(state)
        # only the status can change here (a failure's message gives way to "measuring…"): the
        # table and bars already show this state without modes, and filling them again repainted
        # all three plots while the worker measured (their Python calls waiting on its GIL: the
        # first opening's longest stall)
        self._fill_status(self.mode_details())

    def show_mask_modes(self, result: MaskModes) -> None:
        """The session's measurement; dropped unless it is for the state asked about last."""
        if result.key != self._pending_key:
            return
        self._pending_key = None
        self._result = result
        self._fill_why()
        self.modes_ready.emit()

    def show_job_failure(self, kind: str, key: tuple, message: str, details: str) -> None:
        if kind != MASK_MODES or key != self._pending_key:
            return
        self._pending_key = None
        self._error = message
        self._fill_why()
        self.error_raised.emit(tr("mask.failed", message=message), details)

    def mode_details(self) -> dict[str, ModeDetail] | None:
        """The measured modes for the current state (None while computing or stale)."""
        if self._result is None or self.state is None or self._result.key != edit_key(self.state):
            return None
        return self._result.details

    def _on_mode_changed(self, *_args) -> None:
        # a mode changes the future cells' word, the table's selected row, and the sentence and
        # bars under it: the picture, the axes and the table's cells stay as they are (filled
        # again, they relaid the table's columns out and repainted the grid)
        self._fill_cells()
        self._select_row()
        self._fill_selected(self.mode_details())

    # ------------------------------------------------------------------ the comparison
    def _fill_why(self, words_only: bool = False) -> None:
        """The comparison's sentence, status, table and bars; ``words_only``: all but the bars (a
        new language: the same numbers in other words)."""
        state = self.state
        details = self.mode_details()
        if state is not None:
            tokens = state.tokens
            new = state.extras.get("replacement_text") if state.extras else None
            if new is None:
                try:
                    new = state.model.tokenizer.token_texts([state.replacement_id])[0]
                except Exception:  # noqa: BLE001 -- a label only
                    new = str(state.replacement_id)
            set_text(self.why_explain,
                      tr("mask.why.explain", layer=state.layer, pos=state.position, old=tokens[state.position], new=new))
        else:
            set_text(self.why_explain, "")
        self._fill_status(details)
        self._fill_table(details)
        self._fill_selected(details, words_only=words_only)

    def _fill_status(self, details: dict[str, ModeDetail] | None) -> None:
        if self._error is not None:
            text = tr("mask.failed", message=self._error)
        elif self.state is not None and details is None:
            text = tr("mask.computing")
        else:
            text = ""
        set_text(self.status, text)

    def _fill_table(self, details: dict[str, ModeDetail] | None) -> None:
        for r, mode in enumerate(MODES):
            cells = [tr(f"mask.mode.{mode}"), "", "", "", ""]
            bad = False
            if details is not None:
                d = details[mode]
                sums = d.row_sums
                leaks = d.row.max_leak_before > 0
                off = d.row.max_row_sum_error > 1e-5
                bad = leaks or off
                cells[1] = f"{fmt_number(float(sums.min()), 3)} … {fmt_number(float(sums.max()), 3)}"
                cells[2] = fmt_number(d.row.future_weight)
                cells[3] = fmt_number(d.row.max_leak_before)
                verdict = "mask.verdict.both" if leaks and off else "mask.verdict.leaks" if leaks else "mask.verdict.sums" if off else "mask.verdict.ok"
                cells[4] = tr(verdict)
            brush = QBrush(QColor(253, 219, 199) if bad else QColor(217, 240, 211)) if details is not None else QBrush()
            for c, text in enumerate(cells):
                # the cells are kept and changed where they differ: new items each time relaid the
                # columns (sized to their contents) out and repainted the whole table
                item = self.table.item(r, c)
                if item is None:
                    item = QTableWidgetItem()
                    if 0 < c < 4:
                        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                    self.table.setItem(r, c, item)
                if item.text() != text:
                    item.setText(text)
                if item.background() != brush:
                    item.setBackground(brush)
        self._select_row()

    def _select_row(self) -> None:
        row = MODES.index(self.selected_mode())
        if self.table.currentRow() == row and self.table.selectionModel().isRowSelected(row):
            return
        self.table.blockSignals(True)
        self.table.selectRow(row)
        self.table.blockSignals(False)

    def mode_row_rect(self) -> QRect:
        """The selected mode's row, its name and its row sums, in the table's viewport (the tour's
        "why −∞" step points at the "zero the score" row and compares its sums with −∞'s)."""
        row = MODES.index(self.selected_mode())
        model = self.table.model()
        return self.table.visualRect(model.index(row, 0)).united(self.table.visualRect(model.index(row, 1)))

    def show_mode_row(self) -> None:
        """The selected mode's row in sight, selected, with its name and row sums readable: the table
        scrolled to its start, and the comparison's side of the splitter widened when the two columns
        do not fit (at 1366×768 the row sums were cut off at the right)."""
        self._select_row()
        bar = self.table.horizontalScrollBar()
        bar.setValue(bar.minimum())
        header = self.table.horizontalHeader()
        need = header.sectionSize(0) + header.sectionSize(1) + 2 * self.table.frameWidth()
        short = need - self.table.viewport().width()
        if short > 0:
            left, right = self.splitter.sizes()
            give = min(short, max(0, left - self.left_splitter.minimumSizeHint().width()))
            if give > 0:
                self.splitter.setSizes([left - give, right + give])
                short -= give
        if short > 0:  # still too narrow: the row sums whole, the name's start scrolled off
            bar.setValue(min(bar.maximum(), short))

    def _fill_selected(self, details: dict[str, ModeDetail] | None, words_only: bool = False) -> None:
        """The selected mode's bars and its sentence; ``words_only``: the plots' titles and the
        sentence, the bars left as drawn."""
        if self._bar_plots_built < 2:
            return  # drawn when built
        mode = self.selected_mode()
        set_title(self.sums_plot.getPlotItem(), tr("mask.rowsums.title"))
        set_title(self.leak_plot.getPlotItem(), tr("mask.leak.title"))
        state = self.state
        if details is None or state is None:
            if not words_only:
                self.sums_bars.setOpts(x=[], height=[])
                self.sums_spread.setData(x=np.array([]), y=np.array([]), top=np.array([]), bottom=np.array([]))
                self.leak_bars.setOpts(x=[], height=[])
                self._leak_texts.clear()
            # the sentence's room is kept while the modes are measured: emptied, the label shrank,
            # the bar plots under it grew, and the measurement's sentence shrank them back, each a
            # new layout of the panel and its plots (and, in a dock just too short for the panel,
            # its scroll bar gone and back: every plot resized twice more): the label keeps
            # the room of the sentences it showed last
            self.selected_text.set_texts("", self.selected_text.alternatives)
            return
        position = self._result.position if self._result else state.position
        if not words_only:
            self._draw_bars(details[mode], position)
        self.selected_text.set_texts(self._sentence(mode, details, position), [])

    def _draw_bars(self, d: ModeDetail, position: int) -> None:
        """The selected mode's row sums and its change per position."""
        n = d.row_sums.shape[-1]
        x = np.arange(n, dtype=float)
        mean = d.row_sums.mean(0)
        self.sums_bars.setOpts(x=x, height=mean, width=0.7, pen=pg.mkPen(60, 60, 60) if n <= 40 else pg.mkPen(None))
        self.sums_spread.setData(x=x, y=mean, top=d.row_sums.max(0) - mean, bottom=mean - d.row_sums.min(0), beam=0.3)
        self.sums_plot.getPlotItem().setYRange(0, max(1.1, float(d.row_sums.max()) * 1.05))
        # before the edit (the past: must not move) in red; the edited token and after in grey
        brushes = [pg.mkBrush(214, 39, 40) if i < position else pg.mkBrush(190, 190, 190) for i in range(n)]
        # thin bars: an outline would hide the fill (and its colour) entirely
        pen = pg.mkPen(60, 60, 60) if n <= 40 else pg.mkPen(None)
        self.leak_bars.setOpts(x=x, height=d.leak, width=0.7, brushes=brushes, pen=pen)
        self.edit_line.setPos(position)
        zeros = []
        past = d.leak[:position]
        if position > 0 and float(past.max()) > 0:
            # the leak is what matters: scale to it (the edited token's own change may go off the top)
            leak_top = float(past.max()) * 1.25
        else:
            leak_top = max(float(d.leak.max()), 1e-9) * 1.1
            if n <= 40:
                zeros = [("0", float(i), 0.0, (180, 20, 20)) for i in range(position)]
        self._leak_texts.show(zeros)
        self.sums_plot.getPlotItem().setXRange(-0.6, n - 0.4, padding=0)
        set_view_range(self.leak_plot.getPlotItem(), (-0.6, n - 0.4), (0, leak_top))

    @staticmethod
    def _sentence(mode: str, details: dict[str, ModeDetail], position: int) -> str:
        """What ``mode`` does to this edit, in one sentence (the text under the table)."""
        d = details[mode]
        name = tr(f"mask.mode.{mode}")
        if d.row.max_leak_before > 0 and d.row.future_weight == 0:
            return tr(
                "mask.selected.denominator",
                mode=name,
                leak=fmt_number(d.row.max_leak_before),
                lo=fmt_number(float(d.row_sums.min()), 3),
                hi=fmt_number(float(d.row_sums.max()), 3),
            )
        if d.row.max_leak_before > 0:
            return tr("mask.selected.leaks", mode=name, future=fmt_number(d.row.future_weight), leak=fmt_number(d.row.max_leak_before))
        if d.row.max_row_sum_error > 1e-5:
            return tr(
                "mask.selected.sums",
                mode=name,
                future=fmt_number(d.row.future_weight),
                lo=fmt_number(float(d.row_sums.min()), 3),
                hi=fmt_number(float(d.row_sums.max()), 3),
            )
        if position == 0:
            return tr("mask.selected.first")
        return tr("mask.selected.ok", mode=name, err=fmt_number(d.row.max_row_sum_error), future=fmt_number(d.row.future_weight), k=position)

    # ------------------------------------------------------------------ export
    def table_for_export(self):
        details = self.mode_details()
        if details is None:
            return None
        header = ["mode", "row_sum_min", "row_sum_max", "max_row_sum_error", "future_weight", "max_leak_before"]
        rows = [
            [
                mode,
                float(d.row_sums.min()),
                float(d.row_sums.max()),
                d.row.max_row_sum_error,
                d.row.future_weight,
                d.row.max_leak_before,
            ]
            for mode, d in details.items()
        ]
        return header, rows

    def plot_for_export(self):
        return self.grid_plot.getPlotItem() if self.state is not None else None
