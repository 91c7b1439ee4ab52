"""Generate: one token at a time, watching the mask make the K/V cache possible.

The panel asks for "the learner's text brought to N steps" (:attr:`GeneratePanel.generation_wanted`
→ ``Session.generate`` → :func:`attention_lab.core.jobs.generation_job` on the worker) and draws the
:class:`~attention_lab.core.generation.GenerationView` that comes back: the picked head's map growing
by one row, how much the rows above changed, the K/V cache strip with its bytes, the work of the step
with and without the cache, the top 5, and one head's arithmetic with the real numbers.  Next, Back
and Reset only change N; Play asks for N + 1 each time a step has been drawn.  Every number comes
from the worker; the panel only draws.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QAbstractItemView, QCheckBox, QDoubleSpinBox, QGroupBox, QHBoxLayout, QHeaderView, QLabel, QPushButton, QSpinBox,
    QTableWidget, QVBoxLayout, QWidget,
)

from attention_lab.core.generation import GenerationSettings
from attention_lab.core.job_protocol import GENERATION, generation_key, text_key
from attention_lab.ui import number_format
from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.heatmap_kit import future_overlay, overlay_item
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import (
    explanation_label, fmt_bytes, fmt_number, lut, make_plot, set_cell_text, set_header_labels, set_heatmap_axes,
    set_text, setup_token_heatmap,
)
from attention_lab.ui.panels.plot_setters import set_axis_label, set_view_range
from attention_lab.ui.strings import generate as _texts  # noqa: F401 -- registers the texts

TOP_ROWS = 5
PACE_MS = (100, 5000, 600)  # Play's pace: least, most, default (ms per token)
CACHE_COLOURS = np.array([(170, 200, 235, 255), (40, 110, 200, 255), (240, 150, 30, 255)], np.ubyte)  # text, generated, newest
SHOWN_VALUES = 16  # numbers written in a row of "inside this head" (all of them on hover and in the CSV)


def default_head(state) -> tuple[int, int]:
    """A head with a clear pattern in the layer the learner is looking at: its strongest previous-token
    head (the portrait's numbers), so the text's own map can be drawn before the first step."""
    heads = [h for h in state.overview if h.layer == state.layer and h.previous_token == h.previous_token]  # NaN-free
    if not heads:
        return state.layer, 0
    best = max(heads, key=lambda h: h.previous_token)
    return best.layer, best.head


def values_text(values, shown: int = SHOWN_VALUES) -> str:
    text = "  ".join(fmt_number(float(v)) for v in values[:shown])
    return text + ("  …" if len(values) > shown else "")


def full_text(values) -> str:
    return "  ".join(number_format.significant(float(v), 8) for v in values)


def _count(n: int) -> str:
    return number_format.integer(int(n))


class GeneratePanel(Panel):
    panel_id = PanelId.GENERATE
    title_key = "generate.title"

    generation_wanted = Signal(object, object, int, int, int)  # state, settings, steps, layer, head: Session.generate
    generation_shown = Signal()  # a step's view was drawn (tests and the learner driver wait for it)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._view = None  # core.generation.GenerationView on display
        self._count = 0  # steps asked for
        self._pending_key: tuple | None = None
        self._follows: tuple | None = None  # text_key of the text the generation continues
        self._message = ""
        self._playing = False
        self._play_timer = QTimer(self)
        self._play_timer.setSingleShot(True)
        self._play_timer.timeout.connect(self._play_step)

        self.explain = explanation_label(self)
        self.next_button, self.play_button = QPushButton(self), QPushButton(self)
        self.back_button, self.reset_button = QPushButton(self), QPushButton(self)
        self.next_button.clicked.connect(self.next_token)
        self.play_button.clicked.connect(self.toggle_play)
        self.back_button.clicked.connect(self.back)
        self.reset_button.clicked.connect(self.reset)
        self.pace_label, self.pace = QLabel(self), QSpinBox(self)
        self.pace.setRange(PACE_MS[0], PACE_MS[1])
        self.pace.setSingleStep(100)
        self.pace.setValue(PACE_MS[2])
        self.status = QLabel(self)
        self.status.setWordWrap(True)
        self.layer_label, self.layer_box = QLabel(self), QSpinBox(self)
        self.head_label, self.head_box = QLabel(self), QSpinBox(self)
        for box in (self.layer_box, self.head_box):
            box.valueChanged.connect(lambda _v: self._request())
        self.sample = QCheckBox(self)
        self.temperature_label, self.temperature = QLabel(self), QDoubleSpinBox(self)
        self.temperature.setRange(0.1, 5.0)
        self.temperature.setSingleStep(0.1)
        self.temperature.setValue(1.0)
        self.seed_label, self.seed = QLabel(self), QSpinBox(self)
        self.seed.setRange(0, 999_999)
        self.stale = QCheckBox(self)
        for signal in (self.sample.toggled, self.temperature.valueChanged, self.seed.valueChanged, self.stale.toggled):
            signal.connect(lambda _v: self._settings_changed())
        # short rows: the panel shares the left column (a tab beside the KV benchmark) on a 1366-px screen
        rows = [(self.next_button, self.play_button), (self.back_button, self.reset_button), (self.pace_label, self.pace),
                (self.layer_label, self.layer_box, self.head_label, self.head_box),
                (self.sample, self.temperature_label, self.temperature), (self.seed_label, self.seed)]
        controls = []
        for widgets in rows:
            row = QHBoxLayout()
            for w in widgets:
                row.addWidget(w)
            row.addStretch(1)
            controls.append(row)

        self.map_box = QGroupBox(self)
        self.map_plot = make_plot(self.map_box)
        self.map_plot.setMinimumSize(200, 200)
        self.map_plot.setMaximumHeight(240)
        self.map_image = setup_token_heatmap(self.map_plot)
        self.map_future = overlay_item()
        self.map_plot.addItem(self.map_future)
        self.new_row = pg.PlotCurveItem(pen=pg.mkPen((240, 150, 30), width=3))
        self.new_row.setZValue(10)
        self.map_plot.addItem(self.new_row)
        self.rows_label = QLabel(self.map_box)
        self.rows_label.setWordWrap(True)
        map_layout = QVBoxLayout(self.map_box)
        map_layout.addWidget(self.map_plot, 1)
        map_layout.addWidget(self.rows_label)

        self.text_label = QLabel(self)
        self.text_label.setWordWrap(True)
        self.text_label.setTextFormat(Qt.TextFormat.RichText)
        self.top_box = QGroupBox(self)
        self.top_table = self._table(TOP_ROWS, 2, self.top_box)
        self.chosen_label = QLabel(self.top_box)
        QVBoxLayout(self.top_box).addWidget(self.top_table)
        self.top_box.layout().addWidget(self.chosen_label)
        self.cache_box = QGroupBox(self)
        self.cache_plot = make_plot(self.cache_box)
        self.cache_plot.setMinimumSize(150, 90)
        self.cache_plot.setMaximumHeight(140)
        self.cache_image = setup_token_heatmap(self.cache_plot)
        self.cache_label = QLabel(self.cache_box)
        self.cache_label.setWordWrap(True)
        cache_layout = QVBoxLayout(self.cache_box)
        cache_layout.addWidget(self.cache_plot)
        cache_layout.addWidget(self.cache_label)
        self.work_box = QGroupBox(self)
        self.work_table = self._table(2, 4, self.work_box)
        self.work_table.verticalHeader().setVisible(True)  # "with the cache" / "recomputed"
        self.work_note = QLabel(self.work_box)
        self.work_note.setWordWrap(True)
        self.diff_label = QLabel(self.work_box)
        self.diff_label.setWordWrap(True)
        self.stale_label = QLabel(self.work_box)
        self.stale_label.setWordWrap(True)
        work_layout = QVBoxLayout(self.work_box)
        for w in (self.work_table, self.work_note, self.diff_label, self.stale_label):
            work_layout.addWidget(w)
        # the map beside the buttons that grow it, both in sight in a laptop's dock (under 400 px tall)
        side = QVBoxLayout()
        for row in controls:
            side.addLayout(row)
        side.addWidget(self.stale)
        side.addWidget(self.status)
        side.addWidget(self.text_label)
        side.addStretch(1)
        body = QHBoxLayout()
        body.addWidget(self.map_box, 3)
        body.addLayout(side, 2)
        readouts = QHBoxLayout()
        readouts.addWidget(self.top_box, 2)
        readouts.addWidget(self.cache_box, 3)

        self.inside_box = QGroupBox(self)
        self.inside_intro = QLabel(self.inside_box)
        self.inside_intro.setWordWrap(True)
        self.inside_table = self._table(0, 2, self.inside_box, stretch_last=True)
        self.inside_table.setFixedHeight(260)
        self.inside_table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.inside_check = QLabel(self.inside_box)
        self.inside_check.setWordWrap(True)
        inside_layout = QVBoxLayout(self.inside_box)
        for w in (self.inside_intro, self.inside_table, self.inside_check):
            inside_layout.addWidget(w)

        self.explain_more = explanation_label(self)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addLayout(body)
        layout.addLayout(readouts)
        layout.addWidget(self.work_box)
        layout.addWidget(self.inside_box)
        layout.addWidget(self.explain_more)
        layout.addStretch(1)
        self.retranslate()

    def _table(self, rows: int, columns: int, parent, stretch_last: bool = False) -> QTableWidget:
        table = QTableWidget(rows, columns, parent)
        table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        table.verticalHeader().setVisible(False)
        header = table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        if stretch_last:  # the quantity's name as wide as it needs, the values the rest
            header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        table.setTextElideMode(Qt.TextElideMode.ElideRight)
        row_height = self.fontMetrics().height() + 8
        table.verticalHeader().setDefaultSectionSize(row_height)
        if rows:
            table.setFixedHeight(header.sizeHint().height() + rows * row_height + 4)
            table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        return table

    # ------------------------------------------------------------------ the learner's controls
    def settings(self) -> GenerationSettings:
        temperature = round(self.temperature.value(), 3) if self.sample.isChecked() else 0.0
        return GenerationSettings(causal=not self.stale.isChecked(), temperature=temperature, seed=self.seed.value())

    def steps(self) -> int:
        """The number of steps asked for (the one on display once its view is in)."""
        return self._count

    def view(self):
        """The :class:`~attention_lab.core.generation.GenerationView` on display, or None."""
        return self._view

    def _max_steps(self) -> int | None:
        view = self._view
        return None if view is None else len(view.steps) + view.room

    def next_token(self) -> bool:
        """Ask for one step more; False when the context is full or there is no text."""
        limit = self._max_steps()
        if self.state is None or (limit is not None and self._count >= limit):
            self._stop_play()
            if limit is not None:
                set_text(self.status, tr("generate.full"))
            return False
        self._count += 1
        self._request()
        return True

    def step_to(self, count: int) -> None:
        """Generate ``count`` tokens from the text (the tour's step 5 shows three before the benchmark)."""
        self._stop_play()
        self._count = max(0, int(count))
        self._request()

    def back(self) -> None:
        self._stop_play()
        if self._count > 0:
            self._count -= 1
            self._request()

    def reset(self) -> None:
        self._stop_play()
        self._count = 0
        self._request()

    def toggle_play(self) -> None:
        if self._playing:
            self._stop_play()
            return
        self._playing = True
        self.play_button.setText(tr("generate.pause"))
        if self._pending_key is None:
            self._play_step()

    def _play_step(self) -> None:
        if self._playing and not self.next_token():
            self._stop_play()

    def _stop_play(self) -> None:
        self._playing = False
        self._play_timer.stop()
        self.play_button.setText(tr("generate.play"))

    def _settings_changed(self) -> None:
        self.temperature.setEnabled(self.sample.isChecked())
        self.seed.setEnabled(self.sample.isChecked())
        self._stop_play()
        self._count = 0  # other tokens from the first step on: start again from the text
        self._request()

    def _request(self) -> None:
        state = self.state
        if state is None:
            return
        if not self.is_served("generation_wanted"):
            set_text(self.status, tr("generate.unserved"))
            return
        settings, layer, head = self.settings(), self.layer_box.value(), self.head_box.value()
        key = generation_key(state, settings, self._count, layer, head)
        if self._view is not None and key == self._shown_key:
            self._pending_key, self._message = None, ""  # back where the view is (Back, then Next at once)
            self._fill_status()
            return
        if key == self._pending_key:
            return
        # the first view says it is on its way; later ones keep the status as it is until they come (a
        # status of another height laid the panel out again, repainting its plots while the worker ran)
        self._pending_key, self._message = key, tr("generate.waiting") if self._view is None else ""
        self.generation_wanted.emit(state, settings, self._count, layer, head)
        self._fill_status()

    _shown_key: tuple | None = None

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None and self.map_image.image is not None

    def show_state(self, state) -> None:
        first = self.state is None or self.state.model is not state.model
        self.state = state
        if text_key(state) != self._follows:  # another model, text or BOS: start again from the text
            self._follows = text_key(state)
            self._stop_play()
            self._count, self._view, self._shown_key = 0, None, None
            cfg = state.model.lens.config
            for box, top in ((self.layer_box, cfg.n_layer), (self.head_box, cfg.n_head)):
                box.blockSignals(True)
                box.setRange(0, top - 1)
                box.blockSignals(False)
            if first:
                layer, head = default_head(state)
                for box, value in ((self.layer_box, layer), (self.head_box, head)):
                    box.blockSignals(True)
                    box.setValue(value)
                    box.blockSignals(False)
            self._draw_text_map(state)
        self._request()

    def session_ready(self) -> None:
        self._request()

    def shutdown(self) -> None:
        self._stop_play()
        self._pending_key = None

    def retranslate(self) -> None:
        for widget, key in ((self.next_button, "generate.next"), (self.back_button, "generate.back"),
                            (self.reset_button, "generate.reset"), (self.pace_label, "generate.pace"),
                            (self.layer_label, "generate.layer"), (self.head_label, "generate.head"),
                            (self.sample, "generate.sample"), (self.temperature_label, "generate.temperature"),
                            (self.seed_label, "generate.seed"), (self.stale, "generate.stale")):
            widget.setText(tr(key))
        self.play_button.setText(tr("generate.pause" if self._playing else "generate.play"))
        self.pace.setSuffix(tr("generate.pace.suffix"))
        self.sample.setToolTip(tr("generate.greedy_tip"))
        self.stale.setToolTip(tr("generate.stale_tip"))
        self.temperature.setEnabled(self.sample.isChecked())
        self.seed.setEnabled(self.sample.isChecked())
        self.cache_box.setTitle(tr("generate.cache"))
        self.work_box.setTitle(tr("generate.work"))
        self.inside_box.setTitle(tr("generate.inside"))
        set_header_labels(self.top_table, [tr("generate.col.token"), tr("generate.col.p")])
        set_header_labels(self.work_table, [tr("generate.work.col.attention"), tr("generate.work.col.total"),
                                            tr("generate.work.col.ms"), tr("generate.work.col.totals")])
        set_header_labels(self.work_table, [tr("generate.work.row.cached"), tr("generate.work.row.recompute")],
                          Qt.Orientation.Vertical)
        set_header_labels(self.inside_table, [tr("generate.inside.col.what"), tr("generate.inside.col.values")])
        set_axis_label(self.cache_plot.getPlotItem(), "top", tr("generate.cache.axis"))
        set_axis_label(self.cache_plot.getPlotItem(), "left", tr("generate.cache.layer"))
        self._fill()

    def plot_for_export(self):
        return self.map_plot.getPlotItem()

    def table_for_export(self):
        """Inside this head, every number in full precision: (quantity, row, column, value)."""
        inside = None if self._view is None else self._view.inside
        if inside is None:
            return None
        rows = []
        for name in ("q", "keys", "scores", "scaled", "weights", "values", "head_output", "concat", "projected"):
            t = getattr(inside, name)
            for index, value in np.ndenumerate(t.double().numpy()):
                rows.append([name, index[0] if t.dim() == 2 else 0, index[-1], float(value)])
        return ["quantity", "row", "column", "value"], rows

    # ------------------------------------------------------------------ results
    def show_generation(self, key, view) -> None:
        if key != self._pending_key:
            return
        self._pending_key, self._shown_key, self._view, self._message = None, key, view, ""
        self._fill()
        self.generation_shown.emit()
        if self._playing:
            if view.room > 0:
                self._play_timer.start(self.pace.value())
            else:
                self._stop_play()

    def show_job_failure(self, kind: str, key, message: str, details: str) -> None:
        if kind == GENERATION and key == self._pending_key:
            self._pending_key, self._message = None, tr("generate.failed", reason=message)
            self._stop_play()
            self._fill_status()

    # ------------------------------------------------------------------ drawing
    def _fill(self) -> None:
        self.explain.setText(tr("generate.explain") if self.state is not None else tr("generate.empty"))
        self.explain_more.setText(tr("generate.explain_more") if self.state is not None else "")
        self._fill_status()
        view = self._view
        if view is None:
            return
        self._draw_map(view.attention[view.head].numpy(), list(view.tokens[: view.attention.shape[-1]]),
                       view.settings.causal, new_row=bool(view.steps))
        self._fill_rows(view)
        self._fill_text(view)
        self._fill_top(view)
        self._fill_cache(view)
        self._fill_work(view)
        self._fill_inside(view)

    def _fill_status(self) -> None:
        view = self._view
        if self._message:
            text = self._message
        elif view is not None:
            text = tr("generate.status", steps=len(view.steps), tokens=len(view.ids), room=view.room)
        else:
            text = ""
        set_text(self.status, text)
        self.back_button.setEnabled(self._count > 0)

    def _draw_text_map(self, state) -> None:
        """Before the first view: the text's rows from the analysis, when it shows the picked layer."""
        if state.layer != self.layer_box.value():
            return
        n = state.n_tokens - 1  # the last token is the first step's query
        maps = state.attention_causal if not self.stale.isChecked() else state.attention_bidirectional
        self._draw_map(maps[self.head_box.value(), :n, :n].numpy(), state.tokens[:n], not self.stale.isChecked(),
                       new_row=False)
        set_text(self.rows_label, tr("generate.rows.before"))

    def _draw_map(self, grid: np.ndarray, tokens: list[str], causal: bool, new_row: bool) -> None:
        m = grid.shape[0]
        self.map_image.setImage(grid if m else np.zeros((1, 1)), levels=(0.0, 1.0), lut=lut(), autoLevels=False)
        self.map_image.setRect(0, 0, max(1, m), max(1, m))
        if causal and m > 1:
            self.map_future.setImage(future_overlay(m), autoLevels=False)
            self.map_future.setRect(0, 0, m, m)
            self.map_future.show()
        else:
            self.map_future.hide()
        if new_row and m:
            self.new_row.setData([0, m, m, 0, 0], [m - 1, m - 1, m, m, m - 1])
        else:
            self.new_row.setData([], [])
        set_heatmap_axes(self.map_plot, tokens, tokens, tr("generate.query"), tr("generate.key"))
        self.map_box.setTitle(tr("generate.map", layer=self.layer_box.value(), head=self.head_box.value()))

    def _fill_rows(self, view) -> None:
        last = view.last
        if last is None:
            set_text(self.rows_label, tr("generate.rows.before"))
        elif last.query_position == 0:
            set_text(self.rows_label, tr("generate.rows.first", query=last.query_position))
        elif last.earlier_rows_max_change == 0:
            set_text(self.rows_label, tr("generate.rows.zero", query=last.query_position, rows=last.query_position))
        else:
            layer = int(np.argmax(last.earlier_rows_change))
            set_text(self.rows_label, tr("generate.rows.changed", query=last.query_position, rows=last.query_position,
                                         change=fmt_number(last.earlier_rows_max_change), layer=layer))

    def _fill_text(self, view) -> None:
        def esc(text: str) -> str:
            return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")

        prompt = "".join(esc(t) for t in view.tokens[: view.prompt_length])
        made = "".join(f"<b style='color:#2868c8'>{esc(t)}</b>" for t in view.tokens[view.prompt_length:])
        set_text(self.text_label, f"<b>{tr('generate.text')}</b><br>{prompt}{made}")

    def _fill_top(self, view) -> None:
        last = view.last
        self.top_table.clearContents()
        if last is None:
            self.top_box.setTitle(tr("generate.top", position=len(view.ids)))
            set_text(self.chosen_label, "")
            return
        self.top_box.setTitle(tr("generate.top", position=last.query_position))
        for row, guess in enumerate(last.top):
            set_cell_text(self.top_table, row, 0, guess.token)
            set_cell_text(self.top_table, row, 1, fmt_number(guess.p))
        set_text(self.chosen_label, tr("generate.chosen", token=last.token, p=fmt_number(last.p)))

    def _fill_cache(self, view) -> None:
        cfg, last = view.config, view.last
        positions = last.cache_positions if last is not None else max(0, view.prompt_length - 1)
        colours = np.zeros((cfg.n_layer, max(1, positions), 4), np.ubyte)
        kind = np.array([0 if p < view.prompt_length else 1 for p in range(positions)], int)
        if positions:
            kind[-1] = 2 if last is not None else kind[-1]
            colours[:, :positions] = CACHE_COLOURS[kind][None]
        self.cache_image.setImage(colours, autoLevels=False)
        self.cache_image.setRect(0, 0, max(1, positions), cfg.n_layer)
        item = self.cache_plot.getPlotItem()
        set_view_range(item, (0, max(1, positions)), (0, cfg.n_layer))
        item.getAxis("left").setTicks([[(i + 0.5, str(i)) for i in range(cfg.n_layer)]])
        size = 2 * cfg.n_layer * cfg.n_head * cfg.head_dim * positions * 4
        set_text(self.cache_label, tr("generate.cache.bytes", positions=positions, layers=cfg.n_layer,
                                      heads=cfg.n_head, dk=cfg.head_dim, bytes=fmt_bytes(size)))

    def _fill_work(self, view) -> None:
        last, totals = view.last, view.totals
        self.work_table.clearContents()
        if last is None:
            for label in (self.work_note, self.diff_label, self.stale_label):
                set_text(label, "")
            return
        w = last.work
        for row, (attention, total, seconds, all_total, all_seconds) in enumerate((
            (w.attention_cached, w.total_cached, last.seconds_cached, totals["total_cached"], totals["seconds_cached"]),
            (w.attention_recompute, w.total_recompute, last.seconds_recompute, totals["total_recompute"],
             totals["seconds_recompute"]),
        )):
            set_cell_text(self.work_table, row, 0, _count(attention))
            set_cell_text(self.work_table, row, 1, _count(total))
            set_cell_text(self.work_table, row, 2, number_format.fixed(1e3 * seconds, 2))
            set_cell_text(self.work_table, row, 3, f"{_count(all_total)} / {number_format.fixed(1e3 * all_seconds, 1)}")
        n = last.cache_positions
        pairs = n * (n + 1) // 2 if view.settings.causal else n * n
        causal = view.settings.causal
        set_text(self.work_note, tr("generate.work.note" if causal else "generate.work.note.stale", n=n,
                                    pairs=_count(pairs)))
        set_text(self.diff_label, tr("generate.diff" if causal else "generate.diff.stale",
                                     logits=fmt_number(last.logits_max_diff), probs=fmt_number(last.prob_max_diff)))
        if causal:
            set_text(self.stale_label, tr("generate.stale.off", drift=fmt_number(max(last.kv_drift))))
        else:
            drift = ", ".join(f"L{i} {fmt_number(x)}" for i, x in enumerate(last.kv_drift))
            agree = sum(s.top1_agrees for s in view.steps)
            probs = max(s.prob_max_diff for s in view.steps)
            set_text(self.stale_label, "<b>" + tr("generate.stale.title") + "</b><br>"
                     + tr("generate.stale.drift", layers=drift) + " "
                     + tr("generate.stale.agree", agree=agree, steps=len(view.steps), probs=fmt_number(probs)))

    def _fill_inside(self, view) -> None:
        inside, table = view.inside, self.inside_table
        if inside is None:
            table.setRowCount(0)
            set_text(self.inside_intro, tr("generate.inside.none"))
            set_text(self.inside_check, "")
            return
        set_text(self.inside_intro, tr("generate.inside.intro", step=inside.step + 1, position=inside.position,
                                       head=inside.head, layer=inside.layer, dk=inside.d_k))
        tokens = view.tokens
        rows = [(tr("generate.inside.q"), inside.q)]
        rows += [(tr("generate.inside.k", j=j, token=tokens[j]), k) for j, k in enumerate(inside.keys)]
        rows += [(tr("generate.inside.scores"), inside.scores),
                 (tr("generate.inside.scaled", scale=fmt_number(inside.scale)), inside.scaled),
                 (tr("generate.inside.mask"), None),
                 (tr("generate.inside.weights", total=fmt_number(float(inside.weights.sum()), 6)), inside.weights)]
        rows += [(tr("generate.inside.v", j=j, token=tokens[j]), v) for j, v in enumerate(inside.values)]
        rows += [(tr("generate.inside.output"), inside.head_output),
                 (tr("generate.inside.concat", d=inside.concat.numel()), inside.concat),
                 (tr("generate.inside.projected"), inside.projected)]
        table.setRowCount(len(rows))
        for row, (name, values) in enumerate(rows):
            set_cell_text(table, row, 0, name)
            cell = set_cell_text(table, row, 1, tr("generate.inside.mask.none") if values is None
                                 else values_text(values.tolist()))
            cell.setToolTip(tr("generate.inside.mask.none") if values is None else full_text(values.tolist()))
        set_text(self.inside_check, tr("generate.inside.check", error=fmt_number(inside.max_error_vs_layer)))
