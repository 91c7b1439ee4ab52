"""KV cache (lab step 5): what the cache buys, and why the causal mask makes it valid.

Benchmark tab: greedy generation of N new tokens twice -- with the cache (only the new
token is computed, its K and V appended) and without it (the whole sequence again for
every token) -- timed per token on the worker, drawn live.  Without the cache the time per
token grows with the position; with it, it stays flat.  Over each curve a fitted line, and
its slope (ms per extra position) in words (:func:`core.kvbench.growth_sentence`).  It runs
only when the learner presses Run (or the longer run), and Cancel stops it between two
tokens.  The model timed is the loaded one, or GPT-2 small's shapes with random weights
(built on the worker): the demo model is too small for attention to dominate a step.  A
speedup below :data:`core.kvbench.CLEAR_SPEEDUP` is never worded "× faster".

"Why the cache works" tab (the chapter's last claim made visible): append a token,
recompute everything, and measure per layer and position how much the keys and values of
the earlier positions changed: exactly 0 under the mask, non-zero without it from layer 1
on (layer 0's K and V see only the token and its position).
"""

from __future__ import annotations

import dataclasses
import html
from dataclasses import dataclass

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QComboBox,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTabWidget,
    QTextEdit,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core import inputs, kvbench
from attention_lab.core.job_protocol import KV_BENCH, KV_STABILITY, text_key
from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.model_label import model_label
from attention_lab.ui.number_format import fixed, integer, significant, trimmed
from attention_lab.ui.strings import kv_bench as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import (
    CellLabels,
    TextPool,
    explanation_label,
    fmt_bytes,
    fmt_number,
    make_plot,
)
from attention_lab.ui.panels.heatmap_kit import configure_map_plot, fit_token_ticks
from attention_lab.ui.panels.plot_setters import fill_legend, set_axis_label, set_ticks, set_title, set_view_range, show_grid
from attention_lab.ui.panels.plot_setters import nice_ceiling as time_ceiling  # the live plot's top (ms)

def _ms(value: float) -> str:
    """A fitted slope for the legend, signed, in the interface's number format (+0.04 / +0,04), to
    at most four decimals: a flat curve's slope read "+9.4e-05" to a learner."""
    text = trimmed(value, 4) if abs(value) < 0.01 else significant(value, 3)
    if text.lstrip("-") == "0":
        return "0"
    return text if text.startswith("-") else "+" + text


LIVE_REDRAW_MS = 100
FIT_AFTER_MS = 30  # a finished run's axis fitted this long after its curves are drawn
LIVE_PEN_WIDTH = 1  # the live curves' lines (pixels): see _build_bench_tab
LEGEND_ALPHA = 200  # of 255: the legend's background, opaque enough to read its words over a curve


DEFAULT_NEW_TOKENS = inputs.DEFAULT_NEW_TOKENS  # (the learner's inputs start with it)
CELL_TEXT_LIMIT = 160  # value written in each K/V cell up to this many cells per map

# lines of text kept for the words that come and go with a run, so that they change no layout:
# the message beside the curves, the results' longer sentences (the speedup's explanation when
# the gain is small, the growth per position) and the line saying what the run ran on
MESSAGE_LINES = 2
RESULT_LINES = {"speedup": 3, "growth": 2}
RAN_ON_LINES = 2


def _reserve_lines(label: QLabel, lines: int) -> None:
    """``label`` at least ``lines`` lines tall, empty or not."""
    margins = label.contentsMargins()
    label.setMinimumHeight(lines * label.fontMetrics().lineSpacing() + margins.top() + margins.bottom())
    label.setAlignment(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop)


WITH_COLOUR = (44, 160, 44)
WITHOUT_COLOUR = (214, 39, 40)


# ---------------------------------------------------------------------------- the panel
@dataclass(frozen=True)
class BenchPrompt:
    name: str
    ids: list[int]
    # None while another model's run (its own tokenizer) is on its way, and once a run's text is
    # written out (the panel decodes nothing more until the next run)
    tokenizer: object | None
    config: object  # core.lens.GPT2Config
    random_weights: bool = False

    @classmethod
    def from_state(cls, state) -> "BenchPrompt":
        return cls(model_label(state.model), list(state.ids), state.model.tokenizer, state.model.lens.config)


class KVBenchPanel(Panel):
    panel_id = PanelId.KVBENCH
    title_key = "kvbench.title"

    error_raised = Signal(str, str)
    status_message = Signal(str)
    benchmark_finished = Signal(object)  # KVResult
    benchmark_cancelled = Signal()
    benchmark_step = Signal(object)  # KVStep, after the panel drew it
    stability_ready = Signal(object)  # KVStability
    # intents (Session.run_kv_benchmark, cancel_kv_benchmark, measure_kv_stability)
    benchmark_wanted = Signal(object, int, int, str)  # AnalysisState, new tokens, repetitions, model choice
    benchmark_cancel_wanted = Signal()
    new_tokens_chosen = Signal(int)  # the learner's new-token count: Session.set_kv_new_tokens
    stability_wanted = Signal(object)  # AnalysisState

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._result = None  # KVResult of the last finished run
        self._result_info: dict | None = None  # model name / prompt of that run
        # what the last run was started from (not the whole state: it would keep an old model alive)
        self._bench: BenchPrompt | None = None
        self._live: dict[str, list[float]] = {"with-cache": [], "without-cache": []}
        self._live_rep = 0
        self._live_top_ms = 0.0  # the slowest token of the running benchmark so far (ms): the time axis's top
        self._live_text_ids: list[int] = []
        self._last_step = None  # the latest progress step, shown at the next redraw
        self._generated_shown: list[int] | None = None  # the generated ids the text box shows
        self._running = False
        # the live curve is redrawn at most ~10 times a second: one repaint per generated
        # token (10 ms each) kept the window from answering for 40-60 ms at a time
        self._live_timer = QTimer(self)
        self._live_timer.setSingleShot(True)
        self._live_timer.setInterval(LIVE_REDRAW_MS)
        self._live_timer.timeout.connect(self._draw_live)
        # a finished run's time axis and dots, a frame or two after its curves and words (with 0 ms
        # it came before the window's next paint and other events, in the same wait)
        self._fit_timer = QTimer(self)
        self._fit_timer.setSingleShot(True)
        self._fit_timer.setInterval(FIT_AFTER_MS)
        self._fit_timer.timeout.connect(self._fit_time_axis)
        # then its dots, in a turn of their own: with the new axis in the same turn (the curves' 2 × N
        # dots made, the whole plot repainted) it was the longest turn of a run
        self._dots_timer = QTimer(self)
        self._dots_timer.setSingleShot(True)
        self._dots_timer.setInterval(FIT_AFTER_MS)
        self._dots_timer.timeout.connect(self._show_finished_dots)
        self._message_key: str | None = "kvbench.idle"
        self._message_args: dict = {}
        self._stability = None
        self._stability_key: tuple | None = None
        self._stability_pending: tuple | None = None
        self._stability_error: str | None = None

        self.explain = explanation_label(self)
        self.tabs = QTabWidget(self)
        self.tabs.currentChanged.connect(self._tab_changed)
        self.bench_tab = QWidget(self.tabs)
        # the stability tab's contents (two maps, a colour bar: ~80-150 ms, the costliest part of this
        # panel) are built a part per turn: in idle turns of their own (build_later_part), or from
        # the tab's first look (_start_stability_tab); never in the rest of the panel's turn
        self.stability_tab = QWidget(self.tabs)
        self.stability_tab.showEvent = self._stability_tab_shown  # type: ignore[method-assign]
        self._stability_built = False  # all of it (_stability_parts: how many of its parts are)
        self._stability_parts = 0
        # opened before the idle build finished it: its first part at once, the others one per
        # event-loop turn right after (all of them in the click's turn: ~80-150 ms of GUI-thread CPU)
        self._stability_turn = QTimer(self)
        self._stability_turn.setSingleShot(True)
        self._stability_turn.setInterval(0)
        self._stability_turn.timeout.connect(self._build_stability_turn)
        self.tabs.addTab(self.bench_tab, "")
        self.tabs.addTab(self.stability_tab, "")
        self._build_bench_tab()

        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addWidget(self.tabs, 1)
        self.retranslate()
        self._update_controls()

    # ------------------------------------------------------------------ building
    def _build_bench_tab(self) -> None:
        tab = self.bench_tab
        self.new_tokens_label = QLabel(tab)
        self.new_tokens = QSpinBox(tab)
        self.new_tokens.setRange(1, 1000)
        self.new_tokens.setValue(DEFAULT_NEW_TOKENS)
        self.new_tokens.valueChanged.connect(self._new_tokens_changed)
        # what the learner asked for: a text that fills the context clamps the box to 1, and
        # a shorter text gets the learner's number back (not the clamped one)
        self._asked_new_tokens = DEFAULT_NEW_TOKENS
        self._fitting = False
        self.repetitions_label = QLabel(tab)
        self.repetitions = QSpinBox(tab)
        self.repetitions.setRange(1, 20)
        self.repetitions.setValue(kvbench.DEFAULT_REPETITIONS)
        self.model_label = QLabel(tab)
        self.model_choice = QComboBox(tab)
        self.model_choice.setObjectName("kvbench.model")
        for choice in ("loaded", *[c for c in kvbench.KV_MODELS if c != "loaded"]):
            self.model_choice.addItem("", choice)
        self.model_choice.currentIndexChanged.connect(lambda _i: self._fill_cache_size())  # that model's formula
        self.long_button = QPushButton(tab)
        self.long_button.setObjectName("kvbench.long_run")
        self.long_button.clicked.connect(self.run_long_benchmark)
        self.run_button = QPushButton(tab)
        self.run_button.clicked.connect(self.run_benchmark)
        self.cancel_button = QPushButton(tab)
        self.cancel_button.clicked.connect(self.cancel_benchmark)
        self.progress = QProgressBar(tab)
        self.progress.setRange(0, 1)
        self.progress.setValue(0)
        self.progress.setTextVisible(True)
        self.message = QLabel(tab)
        self.message.setWordWrap(True)
        # its lines reserved: "Press Run to measure." cleared at a run's start re-laid the panel out
        _reserve_lines(self.message, MESSAGE_LINES)
        # the controls in a column beside the curves, not in rows above them: on a 1366x768 laptop
        # the rows pushed the curves below the dock's fold
        controls = QFormLayout()
        controls.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        controls.addRow(self.new_tokens_label, self.new_tokens)
        controls.addRow(self.repetitions_label, self.repetitions)
        controls.addRow(self.model_label, self.model_choice)
        # its longest item ("GPT-2 small's shape, random weights") would make the column as wide as the curves
        self.model_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.model_choice.setMinimumContentsLength(12)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.cancel_button)
        column = QVBoxLayout()
        column.setSpacing(4)
        column.addLayout(controls)
        column.addLayout(buttons)
        column.addWidget(self.long_button)
        column.addWidget(self.progress)
        column.addWidget(self.message)
        column.addStretch(1)

        self.plot = make_plot(tab)
        show_grid(self.plot, x=True, y=True, alpha=0.25)
        # the ranges follow the run (the positions it fills, the time axis from 0): the mouse wheel zoomed
        # into empty space with no way back, so neither the wheel, a drag nor the menu moves them
        self.plot.getPlotItem().getViewBox().setMouseEnabled(x=False, y=False)
        self.plot.getPlotItem().setMenuEnabled(False)
        # on a see-through patch of the plot's own background: at 1366x768 the legend's words sit over
        # the curves, and a noisy curve crossed them; the curves still show through it
        legend_background = QColor(self.plot.backgroundBrush().color())
        legend_background.setAlpha(LEGEND_ALPHA)
        self.plot_legend = self.plot.getPlotItem().addLegend(offset=(10, 10), labelTextColor="k",
                                                             brush=pg.mkBrush(legend_background))
        # one-pixel lines: Qt's raster engine strokes a wider antialiased line through its slow
        # general path; at width 2 the two live curves were half of each live repaint (30 ms
        # against 16 ms at width 1, measured on 2 busy cores).  Dots mark the tokens of a
        # finished run (_show_token_dots).
        self.curve_with = self.plot.plot([], [], pen=pg.mkPen(WITH_COLOUR, width=LIVE_PEN_WIDTH), symbol="o",
                                         symbolSize=4, symbolBrush=WITH_COLOUR, symbolPen=None)
        self.curve_without = self.plot.plot([], [], pen=pg.mkPen(WITHOUT_COLOUR, width=LIVE_PEN_WIDTH), symbol="o",
                                            symbolSize=4, symbolBrush=WITHOUT_COLOUR, symbolPen=None)
        # the fitted lines (core.kvbench.fitted_line_ms) over the finished run's curves
        self.fit_with = self.plot.plot([], [], pen=pg.mkPen(WITH_COLOUR, width=2, style=Qt.PenStyle.DashLine))
        self.fit_without = self.plot.plot([], [], pen=pg.mkPen(WITHOUT_COLOUR, width=2, style=Qt.PenStyle.DashLine))
        # the ranges are set by the panel (the run's tokens; a time ceiling that only grows in
        # 1-2-5 steps): auto-range re-measured both curves and relaid both axes on each
        # live redraw, the bulk of the window's stall while a benchmark ran
        self.plot.getPlotItem().getViewBox().disableAutoRange()
        # the time axis keeps the width it has (pyqtgraph's first 30 px hold "1000" and "0.05"): each
        # new ceiling of a run's curves has labels of another width ("5" after "0.5", "20" after "8"),
        # and an axis that narrowed to them re-laid the plot out and painted it whole again
        self.plot.getPlotItem().getAxis("left").setStyle(autoReduceTextSpace=False)

        self.results_box = QGroupBox(tab)
        form = QFormLayout(self.results_box)
        self._result_labels: dict[str, QLabel] = {}
        self._result_names: dict[str, QLabel] = {}
        for key in ("total", "rate", "speedup", "growth", "identical", "cache_size"):
            name, value = QLabel(self.results_box), QLabel(self.results_box)
            value.setWordWrap(True)
            value.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            form.addRow(name, value)
            # a result's sentences have their room before the first run: lines that appeared with
            # it shrank the generated text's box, a relayout in the result's turn
            _reserve_lines(value, RESULT_LINES.get(key, 1))
            self._result_labels[key] = value
            self._result_names[key] = name
        self.ran_on = QLabel(self.results_box)
        self.ran_on.setWordWrap(True)
        _reserve_lines(self.ran_on, RAN_ON_LINES)
        form.addRow(self.ran_on)
        self.generated_label = QLabel(self.results_box)
        self.generated = QTextEdit(self.results_box)
        self.generated.setReadOnly(True)
        self.generated.setMinimumHeight(60)
        form.addRow(self.generated_label)
        form.addRow(self.generated)

        top = QHBoxLayout()
        top.addWidget(self.plot, 1)  # the curves and their fitted lines need the width more than the words
        top.addLayout(column)
        layout = QVBoxLayout(tab)
        layout.addLayout(top)
        layout.addWidget(self.results_box, 1)

    def build_later_part(self) -> bool:
        """Build the next part of the stability tab if it is not complete (one idle turn's work)."""
        if self._stability_built:
            return False
        self._build_stability_part()
        return True

    def _build_stability_tab(self) -> None:
        """All of the stability tab now (a caller that needs it whole: an export, a test)."""
        while not self._stability_built:
            self._build_stability_part()

    def _start_stability_tab(self) -> None:
        """The learner opened the tab: its words and empty view now, its plots in the next turns."""
        if self._stability_built:
            return
        if self._stability_parts == 0:
            self._build_stability_part()
        self._stability_turn.start()

    def _build_stability_turn(self) -> None:
        if self.build_later_part() and not self._stability_built:
            self._stability_turn.start()

    def _build_stability_part(self) -> None:
        """One of the stability tab's parts, ~10-25 ms each (2 busy cores): its words and view,
        the causal map, the bidirectional map, the colour bar, then the cells' labels and notes
        with the numbers (the tab is complete)."""
        part, self._stability_parts = self._stability_parts, self._stability_parts + 1
        if part == 0:
            tab = self.stability_tab
            self.stab_explain = explanation_label(tab)
            self.stab_show_label = QLabel(tab)
            self.stab_what = QComboBox(tab)
            self.stab_what.addItem("", "keys")
            self.stab_what.addItem("", "values")
            self.stab_what.currentIndexChanged.connect(lambda _i: self._fill_stability())
            row = QHBoxLayout()
            row.addWidget(self.stab_show_label)
            row.addWidget(self.stab_what)
            row.addStretch(1)
            self.stab_view = pg.GraphicsLayoutWidget(tab)
            self.stab_view.setBackground("w")
            self.stab_view.setMinimumSize(300, 180)
            self.stab_plots = {}
            self.stab_images = {}
            self.stab_summary = QLabel(tab)
            self.stab_summary.setWordWrap(True)
            self.stab_summary.setTextFormat(Qt.TextFormat.RichText)
            layout = QVBoxLayout(tab)
            layout.addWidget(self.stab_explain)
            layout.addLayout(row)
            layout.addWidget(self.stab_view, 1)
            layout.addWidget(self.stab_summary)
            self._retranslate_stability()
            return
        if part in (1, 2):
            mode = ("causal", "bidirectional")[part - 1]
            plot = self.stab_view.addPlot(row=0, col=part - 1, enableMenu=False)
            configure_map_plot(plot)
            image = pg.ImageItem(axisOrder="row-major")
            plot.addItem(image)
            self.stab_plots[mode] = plot
            self.stab_images[mode] = image
            return
        if part == 3:
            self.stab_cmap = pg.ColorMap([0.0, 0.35, 1.0], [(255, 255, 255), (253, 141, 60), (127, 0, 0)])
            self.stab_colorbar = pg.ColorBarItem(values=(0, 1), colorMap=self.stab_cmap, interactive=False, width=14)
            self.stab_colorbar.setImageItem(list(self.stab_images.values()))
            self.stab_view.addItem(self.stab_colorbar, row=0, col=2)
            return
        # per map: the cells' values (one item paints them all: a TextItem per cell cost 0.4 s on
        # the tab's first look), and one "all zero" message when the cells are too many
        self._stab_cells = {mode: CellLabels() for mode in self.stab_plots}
        for mode, plot in self.stab_plots.items():
            plot.addItem(self._stab_cells[mode])
        self._stab_notes = {mode: TextPool(plot, fill=(255, 255, 255, 220)) for mode, plot in self.stab_plots.items()}
        self._stability_built = True
        self._fill_stability()

    # ------------------------------------------------------------------ wiring
    def session_ready(self) -> None:
        self._update_controls()
        self._request_stability()

    def shutdown(self) -> None:
        if self._running:
            self.benchmark_cancel_wanted.emit()
        self._running = False
        self._stability_pending = None

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None

    def show_state(self, state) -> None:
        self.state = state
        cfg = state.model.lens.config
        room = cfg.n_positions - state.n_tokens
        self._fitting = True  # the box follows the text: not the learner's choice
        self.new_tokens.setMaximum(max(1, room))
        self.new_tokens.setValue(min(self._asked_new_tokens, max(1, room)))
        self._fitting = False
        if room <= 0 and not self._running:
            self._set_message("kvbench.no_room", ctx=cfg.n_positions)
        elif self._message_key == "kvbench.no_room":
            self._set_message("kvbench.idle")  # the text was shortened: there is room again
        self._fill_texts()
        self._fill_cache_size()
        self._update_controls()
        self._frame_next_run()
        self._request_stability()
        self._fill_stability()

    def retranslate(self) -> None:
        self.tabs.setTabText(0, tr("kvbench.tab.bench"))
        self.tabs.setTabText(1, tr("kvbench.tab.stability"))
        self.new_tokens_label.setText(tr("kvbench.new_tokens"))
        self.repetitions_label.setText(tr("kvbench.repetitions"))
        self.repetitions.setToolTip(tr("kvbench.repetitions.tip"))
        self.model_label.setText(tr("kvbench.model"))
        self.model_choice.setItemText(0, tr("kvbench.model.loaded"))
        for index in range(1, self.model_choice.count()):
            self.model_choice.setItemText(index, tr(f"kvbench.model.{self.model_choice.itemData(index)}"))
        self.model_choice.setToolTip(kvbench.kv_text("kv.random_weights", translator.language))
        self.long_button.setText(tr("kvbench.long_run", n=kvbench.LONG_RUN_TOKENS))
        self.long_button.setToolTip(tr("kvbench.long_run.tip"))
        self.run_button.setText(tr("kvbench.run"))
        self.cancel_button.setText(tr("kvbench.cancel"))
        pi = self.plot.getPlotItem()
        pi.setLabel("bottom", tr("kvbench.plot.x"))
        pi.setLabel("left", tr("kvbench.plot.y"))
        pi.setTitle(tr("kvbench.plot.title"))
        self._fill_legend()
        self.results_box.setTitle(tr("kvbench.results"))
        for key, label in self._result_names.items():
            label.setText(tr(f"kvbench.{key}"))
        self.generated_label.setText(tr("kvbench.generated"))
        self._retranslate_stability()
        self._fill_texts()
        self._fill_results()
        self._fill_cache_size()
        self._fill_stability()

    def _fill_legend(self) -> None:
        """The legend's two entries, one per curve; once a run has finished each also gives its
        dashed fitted line's slope.  Four entries (the fits apart) filled most of the plot's
        height at 1366x768, their words over the curves.  The same entries always: only the words
        change, in place (``plot_setters.fill_legend``)."""
        r = self._result
        entries = []
        for curve, name, slope in ((self.curve_with, "kvbench.with", r and r.slope_ms_with),
                                   (self.curve_without, "kvbench.without", r and r.slope_ms_without)):
            text = tr(name) if r is None else tr("kvbench.with_fit", curve=tr(name), slope=_ms(slope))
            entries.append((curve, text))
        fill_legend(self.plot_legend, entries)

    def _retranslate_stability(self) -> None:
        if self._stability_parts == 0:  # its words are made by the first part
            return
        self.stab_explain.setText(tr("kvstab.explain"))
        self.stab_show_label.setText(tr("kvstab.show"))
        self.stab_what.setItemText(0, tr("kvstab.keys"))
        self.stab_what.setItemText(1, tr("kvstab.values"))

    # ------------------------------------------------------------------ benchmark
    @property
    def running(self) -> bool:
        return self._running

    def result(self):
        """The last finished KVResult (None before a run completes)."""
        return self._result

    def run_benchmark(self) -> bool:
        """Start the benchmark on the current text (only ever on request). False if it can't start."""
        state = self.state
        if state is None or self._running:
            return False
        if not self.is_served("benchmark_wanted"):
            self._set_message("kvbench.no_worker")
            return False
        cfg = state.model.lens.config
        if state.n_tokens >= cfg.n_positions:
            self._set_message("kvbench.no_room", ctx=cfg.n_positions)
            return False
        new_tokens = min(self.new_tokens.value(), cfg.n_positions - state.n_tokens)
        reps = self.repetitions.value()
        choice = self.benchmark_model()
        self._bench = BenchPrompt.from_state(state)
        if choice != "loaded":  # another model, its own tokenizer: the text is shown when it is done
            self._bench = dataclasses.replace(self._bench, tokenizer=None, random_weights=True)
        self._live = {"with-cache": [], "without-cache": []}
        self._live_rep = 0
        self._live_top_ms = 0.0
        self._live_text_ids = []
        self._last_step = None
        self._generated_shown = None  # a new prompt: the text box is filled again
        self._running = True
        # the last run's result goes: its fitted lines, slopes and speedup beside a new (or a
        # cancelled) run's curves read as if they were the new run's
        self._result, self._result_info = None, None
        self._fill_legend()
        self._fill_results()
        self.progress.setRange(0, 2 * new_tokens * reps)
        self.progress.setValue(0)
        self._draw_live()
        self._show_token_dots(False)  # (once the curves are empty: with the last run's on, 4-5 ms of CPU)
        self.benchmark_wanted.emit(state, new_tokens, reps, choice)
        self._set_message(None)
        self._update_controls()
        return True

    def benchmark_model(self) -> str:
        """The model the next run times: ``"loaded"`` or one of :data:`core.kvbench.KV_MODELS`."""
        return self.model_choice.currentData()

    def set_benchmark_model(self, choice: str) -> None:
        self.model_choice.setCurrentIndex(self.model_choice.findData(choice))

    def run_long_benchmark(self) -> bool:
        """The longer run (:data:`core.kvbench.LONG_RUN_TOKENS` new tokens, as many as fit)."""
        if self._running:
            return False
        self.new_tokens.setValue(kvbench.LONG_RUN_TOKENS)  # the box clamps it to the room left
        return self.run_benchmark()

    def cancel_benchmark(self) -> None:
        if self._running:
            self.benchmark_cancel_wanted.emit()

    def show_benchmark(self) -> None:
        """Bring the benchmark's tab forward (the tour's step 5)."""
        self.tabs.setCurrentWidget(self.bench_tab)

    def show_inputs(self, _old, new) -> None:
        """The learner's inputs changed: the box shows their new-token count (clamped to the room the text leaves)."""
        if new.kv_new_tokens == self._asked_new_tokens:
            return
        self._asked_new_tokens = new.kv_new_tokens
        self._fitting = True  # (the session's value, not a new choice to announce)
        self.new_tokens.setValue(min(new.kv_new_tokens, self.new_tokens.maximum()))
        self._fitting = False

    def new_token_count(self) -> int:
        """How many tokens a run will generate (the spin box's value)."""
        return self.new_tokens.value()

    def show_benchmark_step(self, step) -> None:
        if not self._running:
            return
        if step.repetition != self._live_rep:
            self._live_rep = step.repetition
            self._live = {"with-cache": [], "without-cache": []}
        series = self._live[step.mode]
        del series[step.index :]  # a new run of this mode restarts its curve
        series.append(step.seconds)
        if step.mode == "with-cache" and step.repetition == 0:
            del self._live_text_ids[step.index :]
            self._live_text_ids.append(step.token_id)
        self._last_step = step
        if not self._live_timer.isActive():
            self._live_timer.start()
        self.benchmark_step.emit(step)

    def _show_progress(self, step) -> None:
        total = step.total or self.new_tokens.value()
        done = step.repetition * 2 * total + (0 if step.mode == "with-cache" else total) + step.index + 1
        mode = tr("kvbench.with") if step.mode == "with-cache" else tr("kvbench.without")
        self._set_progress(done, tr("kvbench.progress", mode=mode, i=step.index + 1, total=total,
                                    rep=step.repetition + 1, reps=self.repetitions.value()))

    def _set_progress(self, value: int, text_format: str) -> None:
        """The bar's value and words, painted with the rest of the window's next frame.

        ``QProgressBar.setValue`` repaints at once (synchronously), the bar and the part of every
        parent behind it: 2-3 ms of the GUI thread per live redraw, in a turn of its own before the
        plot's.  With updates off while both are set, the bar is only marked dirty."""
        bar = self.progress
        bar.setUpdatesEnabled(False)
        try:
            bar.setValue(value)
            bar.setFormat(text_format)
        finally:
            bar.setUpdatesEnabled(True)  # (schedules the bar's repaint)

    def _draw_live(self, fit_time_axis: bool = True) -> None:
        """The curves as they are now.  ``fit_time_axis`` False: the time axis keeps a top it has
        grown to (a finished run's curves, fitted in a turn of their own: :meth:`_fit_time_axis`)."""
        self._live_timer.stop()
        if self._running and self._last_step is not None:
            self._show_progress(self._last_step)
        start = len(self._bench.ids) if self._bench is not None else 0
        for mode, curve in (("with-cache", self.curve_with), ("without-cache", self.curve_without)):
            ys = np.asarray(self._live[mode], dtype=float) * 1000.0
            curve.setData(start + np.arange(len(ys), dtype=float), ys)
        self._draw_fits(start)
        top = max([max(v) for v in self._live.values() if v] or [0.0]) * 1000.0
        if self._running or not fit_time_axis:
            # while it runs the time axis only grows: each repetition starts its curves again from
            # nothing, and a ceiling that followed them fell and rose 2-3 times a repetition, each
            # time new ticks and a repaint of the whole plot (10-20 ms of the GUI thread)
            top = self._live_top_ms = max(self._live_top_ms, top)
        tokens = self.progress.maximum() // (2 * self.repetitions.value()) if self._running else max(map(len, self._live.values()))
        # the time axis starts at 0: a flat line must not look like a slope because of the zoom.  A run
        # that has timed nothing yet leaves it as it is: set to its empty curves' 0.001 ms, it had new
        # ticks (and wider labels) and the whole plot repainted in the run's first turn, then again at
        # its first token's time
        times = (0, time_ceiling(top * 1.08)) if top > 0 or not self._running else None
        set_view_range(self.plot, (start - 0.5, start + max(1, tokens) - 0.5), times)
        if self._live_text_ids != self._generated_shown:  # the text box re-lays its HTML out on each set
            self._fill_generated(self._live_text_ids)

    def _fit_time_axis(self) -> None:
        """A finished run's time axis, to the top of its curves (the fastest of each position's
        repetitions: often a 1-2-5 step below what the live curves grew it to)."""
        if self._running:
            return  # a new run started in the meantime: its own axis
        self._live_top_ms = 0.0
        self._draw_live()
        self._dots_timer.start()

    def _show_finished_dots(self) -> None:
        if not self._running:
            self._show_token_dots(True)

    def _show_token_dots(self, shown: bool) -> None:
        """A dot on each token of the curves: on a finished run's, not on the live ones.  Each
        live redraw rebuilt every dot of both curves (pyqtgraph's scatter re-renders all its
        points on setData) and painted them: more than half of a redraw's 8-10 ms."""
        symbol = "o" if shown else None
        for curve in (self.curve_with, self.curve_without):
            if curve.opts["symbol"] != symbol:
                curve.setSymbol(symbol)

    def _draw_fits(self, start: int) -> None:
        """Each side's fitted line over steps 1 … N−1 of the finished run (none while running)."""
        r = None if self._running else self._result
        for curve, seconds in ((self.fit_with, r.per_token_with if r else []), (self.fit_without, r.per_token_without if r else [])):
            if len(seconds) < 3:
                curve.setData([], [])
                continue
            intercept, slope = kvbench.fitted_line_ms(seconds)
            xs = np.array([1.0, len(seconds) - 1.0])
            curve.setData(start + xs, intercept + slope * xs)

    def fitted_lines(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """The drawn fit lines' (x, y) by mode (empty arrays before a finished run)."""
        return {"with-cache": self.fit_with.getData(), "without-cache": self.fit_without.getData()}

    def show_benchmark_result(self, run) -> None:
        """``run``: the session's KVRun (the result, the text it ran on and the model it timed)."""
        if not self._running:
            return
        result = run.result
        self._running = False
        self._result = result
        if run.tokenizer is not None:  # the timed model's own prompt, tokenizer and config
            self._bench = BenchPrompt(run.model_name, list(run.ids), run.tokenizer, run.config, run.random_weights)
        self._result_info = dict(model=self._bench.name, n=len(self._bench.ids), reps=result.repetitions)
        self._live = {"with-cache": list(result.per_token_with), "without-cache": list(result.per_token_without)}
        self._live_text_ids = list(result.generated_ids)
        self._set_progress(self.progress.maximum(), "%p%")
        # the curves at once, on the axis they grew; the axis fitted to them in the next turn: a new
        # range (ticks, grid, the whole plot repainted) on top of the results' texts and their layout
        # made this the longest turn of a run
        self._draw_live(fit_time_axis=False)
        self._let_go_of_tokenizer()  # (the text was written out by the run's last steps, or just now)
        self._fit_timer.start()
        # what a result changes (the legend's fitted slopes, the results), not every text of the
        # panel: a whole retranslate re-set ~30 labels and rebuilt the legend in the turn the run ended
        self._fill_legend()
        self._fill_results()
        self._fill_cache_size()
        self._set_message(None)
        self._update_controls()
        identical = tr("kvbench.yes", k=result.new_tokens) if result.identical else tr("kvbench.no")
        self.status_message.emit(
            tr("kvbench.status", x=fixed(result.speedup, 2), identical=identical) if result.clear
            else tr("kvbench.status.unclear", x=fixed(result.speedup, 2), identical=identical)
        )
        self.benchmark_finished.emit(result)

    def show_job_failure(self, kind: str, key: tuple, message: str, details: str) -> None:
        if kind == KV_STABILITY:
            self._show_stability_failure(key, message, details)
        if kind != KV_BENCH or not self._running:
            return
        self._running = False
        self._set_message("kvbench.failed", message=message)
        self._update_controls()
        self.error_raised.emit(tr("kvbench.failed", message=message), details)

    def show_benchmark_cancelled(self) -> None:
        if not self._running:
            return
        self._running = False
        self.progress.setValue(0)
        self.progress.setFormat("%p%")
        self._set_message("kvbench.cancelled")
        self._update_controls()
        self._let_go_of_tokenizer()
        self.benchmark_cancelled.emit()

    def _new_tokens_changed(self, value: int) -> None:
        if not self._fitting:
            self._asked_new_tokens = value
            self.new_tokens_chosen.emit(int(value))
        self._fill_cache_size()
        self._frame_next_run()

    def _frame_next_run(self) -> None:
        """Before any run, the plot's token axis spans the positions the next run will fill, so
        starting it changes no range: the first run's start had new ticks on both axes and the whole
        plot repainted, its longest turn.  A finished run's curves keep their own axis."""
        if self._running or self._result is not None or self.state is None:
            return
        start, tokens = self.state.n_tokens, min(self.new_tokens.value(), self.new_tokens.maximum())
        set_view_range(self.plot, (start - 0.5, start + max(1, tokens) - 0.5))

    def _update_controls(self) -> None:
        can_run = self.state is not None and not self._running and self.is_served("benchmark_wanted")
        self.run_button.setEnabled(can_run)
        self.cancel_button.setEnabled(self._running)
        self.new_tokens.setEnabled(not self._running)
        self.repetitions.setEnabled(not self._running)
        self.model_choice.setEnabled(not self._running)
        self.long_button.setEnabled(can_run)

    def _set_message(self, key: str | None, **args) -> None:
        self._message_key, self._message_args = key, args
        self.message.setText(tr(key, **args) if key else "")

    # ------------------------------------------------------------------ texts
    def _fill_texts(self) -> None:
        state = self.state
        if state is None:
            self.explain.setText(tr("kvbench.empty"))
        else:
            self.explain.setText(tr("kvbench.explain", new=self.new_tokens.value(), n=state.n_tokens))
        if self._message_key:
            self.message.setText(tr(self._message_key, **self._message_args))

    def _fill_results(self) -> None:
        r = self._result
        labels = self._result_labels
        if r is None:
            for label in labels.values():
                label.setText("—")
            self.ran_on.setText("")
            return
        labels["total"].setText(
            tr("kvbench.total.value", with_s=fixed(r.seconds_with_cache, 3), without_s=fixed(r.seconds_without_cache, 3))
        )
        labels["rate"].setText(
            tr("kvbench.rate.value", with_r=fixed(r.tokens_per_second_with, 1), without_r=fixed(r.tokens_per_second_without, 1))
        )
        lang = translator.language
        labels["speedup"].setText(kvbench.speedup_sentence(r, lang))  # below ~1.2×: what it means, not "× faster"
        labels["growth"].setText(kvbench.growth_sentence(r, lang))
        labels["identical"].setText(tr("kvbench.yes", k=r.new_tokens) if r.identical else tr("kvbench.no"))
        labels["identical"].setStyleSheet("color: #1a7f1a; font-weight: bold" if r.identical else "color: #b00020; font-weight: bold")
        info = self._result_info or {}
        random_note = kvbench.kv_text("kv.random_weights", lang) + " " if self._bench is not None and self._bench.random_weights else ""
        self.ran_on.setText(random_note + tr("kvbench.ran_on", **info) + " " + tr("kvbench.first_note") if info else "")

    def _fill_cache_size(self) -> None:
        """The cache's size with its formula: for the finished run, or the one Run would start."""
        state = self.state
        if self._result is None and state is None:
            self._result_labels["cache_size"].setText("—")
            return
        if self._result is not None:
            cfg = self._bench.config
            positions, size = self._result.cache_positions, self._result.cache_bytes
            per_value = size // max(1, 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * positions)
        elif self.benchmark_model() != "loaded":
            # another model (GPT-2 small's shapes): its config, per position -- the text's length in
            # that model's tokens is counted on the worker when the run starts
            cfg = kvbench.benchmark_config(self.benchmark_model())
            per_value = 4
            per_position = 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * per_value
            self._result_labels["cache_size"].setText(tr(
                "kvbench.cache.per_position", model=tr(f"kvbench.model.{self.benchmark_model()}"),
                layers=cfg.n_layer, heads=cfg.n_head, dk=cfg.head_dim, bpv=per_value,
                size=f"{integer(per_position)} B ({fmt_bytes(per_position)})"))
            self.explain.setText(tr("kvbench.explain", new=self.new_tokens.value(), n=state.n_tokens))
            return
        else:
            from attention_lab.core.kvbench import cache_size_bytes

            cfg = state.model.lens.config
            new = min(self.new_tokens.value(), max(0, cfg.n_positions - state.n_tokens))
            positions = state.n_tokens + max(0, new - 1)  # what the cache holds when the last token is produced
            per_value = 4  # the lens computes in float32
            size = cache_size_bytes(state.model.lens, positions, per_value)
        self._result_labels["cache_size"].setText(
            tr(
                "kvbench.cache.formula",
                layers=cfg.n_layer,
                heads=cfg.n_head,
                dk=cfg.head_dim,
                positions=positions,
                bpv=per_value,
                size=f"{integer(size)} B ({fmt_bytes(size)})",
            )
        )
        if self.state is not None:
            self.explain.setText(tr("kvbench.explain", new=self.new_tokens.value(), n=self.state.n_tokens))

    def _fill_generated(self, new_ids: list[int]) -> None:
        source = self._bench or (BenchPrompt.from_state(self.state) if self.state is not None else None)
        if source is None or source.tokenizer is None:
            # nothing written (another model's run, its tokenizer still on the worker): its end writes it
            self._generated_shown = None
            self.generated.clear()
            return
        self._generated_shown = list(new_ids)
        tok = source.tokenizer
        prompt = html.escape(tok.decode(list(source.ids)))
        added = html.escape(tok.decode(list(new_ids))) if new_ids else ""
        pieces = " ".join(f"[{html.escape(t)}]" for t in tok.token_texts(list(new_ids))) if new_ids else ""
        # pre-wrap: generated spaces and newlines are part of the output, keep them visible
        self.generated.setHtml(
            f'<div style="white-space: pre-wrap"><span style="color:#666">{prompt}</span>'
            f'<b style="color:#1f5fa8">{added}</b></div>'
            f'<div style="color:#888; font-size: small">{pieces}</div>'
        )
        self._let_go_of_tokenizer()

    def _let_go_of_tokenizer(self) -> None:
        """A run that is over and whose text is written out needs its model's tokenizer no more.

        Kept, it kept the tokenizer of the model the last run timed after a switch to another
        (the soak's memory drift); the text box keeps what it shows, and the next run brings its own."""
        bench = self._bench
        if (not self._running and bench is not None and bench.tokenizer is not None
                and self._live_text_ids == self._generated_shown):
            self._bench = dataclasses.replace(bench, tokenizer=None)

    # ------------------------------------------------------------------ K/V stability
    def _stability_tab_shown(self, event) -> None:
        self._start_stability_tab()
        QWidget.showEvent(self.stability_tab, event)
        self._request_stability()

    def _tab_changed(self, _index: int) -> None:
        if self.tabs.currentWidget() is self.stability_tab:
            self._start_stability_tab()  # its first look (the panel itself may be out of sight)
        self._request_stability()

    def show_stability_tab(self) -> None:
        self._build_stability_tab()
        self.tabs.setCurrentWidget(self.stability_tab)

    def stability(self):
        """The KVStability for the current state (None while computing or stale)."""
        if self.state is None or self._stability_key != text_key(self.state):
            return None
        return self._stability

    def _request_stability(self) -> None:
        """Compute K/V stability for the current text when its tab is on screen (cheap: 4 passes)."""
        state = self.state
        # asked once the tab has its words (the worker measures while its plots are built)
        if (state is None or self._stability_parts == 0 or not self.is_served("stability_wanted")
                or not self.stability_tab.isVisible()):
            return
        key = text_key(state)
        if self._stability_key == key or self._stability_pending == key:
            return
        if state.n_tokens >= state.model.lens.config.n_positions:
            self._stability_error = None
            self.stab_summary.setText(tr("kvstab.no_room"))
            return
        self._stability_pending = key
        self._stability_error = None
        self.stability_wanted.emit(state)
        self._fill_stability()

    def show_kv_stability(self, key: tuple, result) -> None:
        if key != self._stability_pending:
            return
        self._stability_pending = None
        self._stability_key = key
        self._stability = result
        self._fill_stability()
        self.stability_ready.emit(result)

    def _show_stability_failure(self, key: tuple, message: str, details: str) -> None:
        if key != self._stability_pending:
            return
        self._stability_pending = None
        self._stability_error = message
        self._fill_stability()
        self.error_raised.emit(tr("kvstab.failed", message=message), details)

    def _fill_stability(self) -> None:
        if not self._stability_built:
            return  # drawn when built
        for pool in (*self._stab_cells.values(), *self._stab_notes.values()):
            pool.clear()
        what = self.stab_what.currentData() or "keys"
        what_text = tr("kvstab.keys") if what == "keys" else tr("kvstab.values")
        set_title(self.stab_plots["causal"], tr("kvstab.causal", what=what_text))
        set_title(self.stab_plots["bidirectional"], tr("kvstab.bidirectional", what=what_text))
        result, state = self.stability(), self.state
        if result is None or state is None:
            for image in self.stab_images.values():
                image.clear()
            if self._stability_error is not None:
                self.stab_summary.setText(tr("kvstab.failed", message=self._stability_error))
            elif self._stability_pending is not None:
                self.stab_summary.setText(tr("kvstab.computing"))
            elif state is None:  # empty maps need a word: there is nothing to measure on yet
                self.stab_summary.setText(tr("kvstab.empty"))
            elif not self.is_served("stability_wanted"):
                self.stab_summary.setText(tr("kvbench.no_worker"))
            return
        maps = {
            "causal": getattr(result, f"causal_{what}").double().numpy(),
            "bidirectional": getattr(result, f"bidirectional_{what}").double().numpy(),
        }
        top = max(float(maps["bidirectional"].max()), float(maps["causal"].max()), 1e-12)
        n_layers, n = maps["causal"].shape
        tokens = list(state.tokens[:n])
        for mode, values in maps.items():
            image = self.stab_images[mode]
            image.setImage(values.astype(np.float32), levels=(0.0, top))
            image.setRect(0, 0, n, n_layers)
            plot = self.stab_plots[mode]
            set_ticks(plot.getAxis("left"), [[(i + 0.5, str(i)) for i in range(n_layers)], []])
            fit_token_ticks(plot, "bottom", tokens)
            set_axis_label(plot, "left", tr("kvstab.layer"))
            set_axis_label(plot, "bottom", tr("kvstab.position"))
            set_view_range(plot, (0, n), (0, n_layers))
            if n * n_layers > CELL_TEXT_LIMIT and not values.any():
                # too many cells to write "0" in each: say it once, over the map
                self._stab_notes[mode].show([(tr("kvstab.all_zero"), n / 2, n_layers / 2, (30, 30, 30))])
            if n * n_layers <= CELL_TEXT_LIMIT:
                self._stab_cells[mode].show_labels(
                    ("0" if v == 0 else significant(v, 2), pos + 0.5, layer + 0.5,
                     (255, 255, 255) if v > 0.55 * top else (30, 30, 30))
                    for layer in range(n_layers) for pos in range(n) for v in [float(values[layer, pos])])
        self.stab_colorbar.setLevels((0.0, top))
        self.stab_summary.setText(self._stability_summary(result, state))

    def _stability_summary(self, result, state) -> str:
        tok = state.model.tokenizer
        appended, reference = tok.token_texts([result.appended_id, result.reference_id])
        parts = [tr("kvstab.appended", appended=appended, reference=reference, n=result.n)]
        causal = max(result.max_per_layer("causal"))
        if causal == 0:
            n_layers = len(result.max_per_layer("causal"))
            parts.append(tr("kvstab.causal_zero", cells=2 * n_layers * result.n, layers=n_layers, n=result.n))
        else:
            parts.append(tr("kvstab.causal_nonzero", max=fmt_number(causal)))
        bidir = result.max_per_layer("bidirectional")
        layer0 = tr("kvstab.zero") if bidir[0] == 0 else fmt_number(bidir[0])
        if len(bidir) > 1:
            parts.append(tr("kvstab.bidir", layer0=layer0, last=len(bidir) - 1, max=fmt_number(max(bidir[1:]))))
        else:
            parts.append(tr("kvstab.bidir_one_layer", layer0=layer0))
        return "<br>".join(parts)

    # ------------------------------------------------------------------ export
    def table_for_export(self):
        r = self._result
        if r is None:
            return None
        header = ["token_index", "position", "seconds_with_cache", "seconds_without_cache", "token_id"]
        start = r.prompt_length
        rows = [
            [i, start + i, r.per_token_with[i], r.per_token_without[i], r.generated_ids[i]]
            for i in range(r.new_tokens)
        ]
        return header, rows

    def plot_for_export(self):
        if self._stability_built and self.tabs.currentWidget() is self.stability_tab and self.stability() is not None:
            return self.stab_view.ci  # the whole layout (both maps and the colour bar), not the part in view
        return self.plot.getPlotItem() if self._result is not None or self._running else None
