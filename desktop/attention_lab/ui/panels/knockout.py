"""Head knockout: take heads out before W^O and watch the prediction change.

The learner clicks heads in a layers × heads map (or Shift+clicks one in the head grid);
the set and the mode (zero / mean) go to the session as :attr:`KnockoutPanel.knockout_chosen`,
and the analysis then runs with the heads knocked out, so the head grid shows the other
heads as they now are.  For the state that comes back the panel asks for the before/after
numbers (:attr:`KnockoutPanel.knockout_wanted` → :func:`attention_lab.core.ablation.knockout`
on the worker): the next-token top 5 after a chosen position with probabilities, and the
text's mean next-token loss.  "Rank the heads" knocks each head out alone on the worker
(:attr:`KnockoutPanel.ranking_wanted` → :func:`attention_lab.core.ablation.rank_heads`,
with progress and cancel) and colours the map by the change in loss, the top few named.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.ablation import TOP_K
from attention_lab.core.job_protocol import KNOCKOUT, RANK_HEADS, state_mask_key, text_key
from attention_lab.core.roles import head_name
from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.heatmap_kit import HeatImage
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import TextPool, explanation_label, fmt_number, make_plot
from attention_lab.ui.panels.plot_setters import set_axis_label, set_view_range
from attention_lab.ui.strings import knockout as _texts  # noqa: F401 -- registers the texts

MODES = ("zero", "mean")
NAMED = 5  # heads named under the ranked map
IDLE_RGBA = (225, 228, 235, 255)
KNOCKED_MARK = (20, 20, 20)  # the × on a knocked-out head
KNOCKED_RGBA = (50, 50, 60, 255)


def heads_text(heads) -> str:
    """"layer 0, head 1; layer 2, head 3": a head as every text writes it ("0.1" read as a decimal)."""
    return "; ".join(head_name(layer, head, translator.language) for layer, head in heads)


def harm_picture(harm: np.ndarray | None, shape: tuple[int, int]) -> np.ndarray:
    """RGBA ``[L, H]``: white → red as knocking the head out alone raised the loss more,
    white → blue where it lowered it (scaled to the largest change); grey before a ranking."""
    rgba = np.empty(shape + (4,), np.ubyte)
    rgba[...] = IDLE_RGBA
    if harm is None:
        return rgba
    scale = float(np.nanmax(np.abs(harm))) or 1.0
    t = np.clip(np.nan_to_num(harm / scale), -1, 1)[..., None]
    white, red, blue = np.array([255, 255, 255]), np.array([200, 40, 40]), np.array([50, 90, 200])
    colour = np.where(t >= 0, white + t * (red - white), white - t * (blue - white))
    rgba[..., :3] = colour.round().astype(np.ubyte)
    rgba[..., 3] = 255
    return rgba


class KnockoutPanel(Panel):
    panel_id = PanelId.KNOCKOUT
    title_key = "knockout.title"

    knockout_chosen = Signal(object, str)  # heads ((layer, head), …), mode: Session.set_knockout
    knockout_wanted = Signal(object, object, str, int)  # state, heads, mode, position: Session.run_knockout
    ranking_wanted = Signal(object, str)  # state, mode: Session.rank_heads
    ranking_cancel_wanted = Signal()
    head_selected = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._heads: tuple[tuple[int, int], ...] = ()  # the learner's choice (the analysis follows)
        self._result = None  # core.ablation.KnockoutResult
        self._pending_key: tuple | None = None
        self._ranking = None  # core.ablation.HeadRanking
        self._ranking_key: tuple | None = None
        self._ranking_running = False
        self._message: tuple = ()  # the before/after's note as (key, values): said again in a new language
        self._top_note: tuple = ()  # the ranking's caption when there is no ranking to describe, as (key, values)

        self.explain = explanation_label(self)
        self.mode_label = QLabel(self)
        self.mode_choice = QComboBox(self)
        for mode in MODES:
            self.mode_choice.addItem(mode, mode)
        self.mode_choice.currentIndexChanged.connect(self._mode_changed)
        self.clear_button = QPushButton(self)
        self.clear_button.clicked.connect(lambda: self.set_heads(()))
        self.position_label = QLabel(self)
        self.position_box = QSpinBox(self)
        self.position_box.setRange(0, 0)  # at its maximum: follows the last token as the text grows
        self.position_box.valueChanged.connect(lambda _v: self._request_knockout())
        controls = QHBoxLayout()
        for w in (self.mode_label, self.mode_choice, self.clear_button, self.position_label, self.position_box):
            controls.addWidget(w)
        controls.addStretch(1)
        self.knocked_label = QLabel(self)
        self.knocked_label.setWordWrap(True)

        self.map_box = QGroupBox(self)
        self.map_plot = make_plot(self.map_box)
        self.map_plot.setMinimumSize(200, 150)
        self.map_image = HeatImage("heads", on_click=self._map_click)
        self.map_plot.addItem(self.map_image)
        vb = self.map_plot.getPlotItem().getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=False, y=False)
        vb.setDefaultPadding(0.0)
        vb.disableAutoRange()
        self._marks = TextPool(self.map_plot)
        self.rank_button = QPushButton(self.map_box)
        self.rank_button.clicked.connect(self.rank)
        self.cancel_button = QPushButton(self.map_box)
        self.cancel_button.clicked.connect(self.ranking_cancel_wanted)
        self.cancel_button.setEnabled(False)
        self.progress = QProgressBar(self.map_box)
        self.progress.setVisible(False)
        self.top_label = QLabel(self.map_box)
        self.top_label.setWordWrap(True)
        rank_row = QHBoxLayout()
        rank_row.addWidget(self.rank_button)
        rank_row.addWidget(self.cancel_button)
        rank_row.addWidget(self.progress, 1)
        map_layout = QVBoxLayout(self.map_box)
        map_layout.addWidget(self.map_plot, 1)
        map_layout.addLayout(rank_row)
        map_layout.addWidget(self.top_label)

        self.table = QTableWidget(TOP_K, 4, self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().setVisible(False)
        # four columns that share the width (never a sideways scroll bar: a token is elided instead)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Stretch)
        self.table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.table.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.table.setMinimumWidth(220)
        row_height = self.fontMetrics().height() + 8
        self.table.verticalHeader().setDefaultSectionSize(row_height)
        self.table.setFixedHeight(self.table.horizontalHeader().sizeHint().height() + TOP_K * row_height + 4)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.loss_label = QLabel(self)
        self.loss_label.setWordWrap(True)

        # the map and the before/after side by side: both in sight at 1366 × 768
        readout = QVBoxLayout()
        readout.addWidget(self.table)
        readout.addWidget(self.loss_label)
        readout.addStretch(1)
        body = QHBoxLayout()
        body.addWidget(self.map_box, 3)
        body.addLayout(readout, 2)
        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addLayout(controls)
        layout.addWidget(self.knocked_label)
        layout.addLayout(body, 1)
        self.retranslate()

    # ------------------------------------------------------------------ the choice
    def mode(self) -> str:
        return str(self.mode_choice.currentData())

    def heads(self) -> tuple[tuple[int, int], ...]:
        return self._heads

    def set_heads(self, heads) -> None:
        """Knock ``heads`` ((layer, head), …) out; () restores them all."""
        self._heads = tuple(sorted({(int(a), int(b)) for a, b in heads}))
        self._result = None
        self.knockout_chosen.emit(self._heads, self.mode())
        self._fill()

    def toggle_head(self, layer: int, head: int) -> None:
        chosen = set(self._heads)
        chosen ^= {(int(layer), int(head))}
        self.set_heads(chosen)

    def set_mode(self, mode: str) -> None:
        self.mode_choice.setCurrentIndex(MODES.index(mode))

    def _mode_changed(self, _index: int) -> None:
        self._result = None
        self.knockout_chosen.emit(self._heads, self.mode())
        self._fill()

    def _map_click(self, _key, cell) -> None:
        if cell is not None and self.state is not None:
            self.toggle_head(*cell)

    def rank(self) -> None:
        """Knock every head out alone on the worker (progress, cancel)."""
        state = self.state
        if state is None or state.n_tokens < 2 or not self.is_served("ranking_wanted"):
            self._set_top_note(("knockout.one_token", {}) if state is not None and state.n_tokens < 2 else ())
            return
        self._ranking, self._ranking_running = None, True
        self._ranking_key = self._ranking_key_for(state, self.mode())
        self.progress.setRange(0, state.model.lens.config.n_layer * state.model.lens.config.n_head)
        self.progress.setValue(0)
        self.progress.setVisible(True)
        self.rank_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self._set_top_note(())
        self.ranking_wanted.emit(state, self.mode())
        self._fill_map()

    def rank_once(self) -> None:
        """:meth:`rank`, unless this text's ranking is shown or on its way (the tour's knockout step)."""
        if self.state is None or self._ranking_running:
            return
        if self._ranking is not None and self._ranking_key == self._ranking_key_for(self.state, self._ranking.mode):
            return
        self.rank()

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None and self.map_image.image is not None

    def show_state(self, state) -> None:
        self.state = state
        self.position_box.blockSignals(True)
        follow = self.position_box.value() >= self.position_box.maximum()
        self.position_box.setRange(0, max(0, state.n_tokens - 1))
        if follow:
            self.position_box.setValue(state.n_tokens - 1)
        self.position_box.blockSignals(False)
        if self._ranking is not None and self._ranking_key != self._ranking_key_for(state, self._ranking.mode):
            self._ranking = None  # ranked on another text or under another mask: not this text's map
        if not self._ranking_running and self._ranking is None:
            self._top_note = ()  # (a cancelled or failed ranking's note was about the text before)
        self._fill()
        self._request_knockout()

    def session_ready(self) -> None:
        self._request_knockout()

    def shutdown(self) -> None:
        self._pending_key = None
        self._ranking_key = None
        if self._ranking_running:
            self.ranking_cancel_wanted.emit()

    def retranslate(self) -> None:
        self.mode_label.setText(tr("knockout.mode"))
        for i, mode in enumerate(MODES):
            self.mode_choice.setItemText(i, tr(f"knockout.mode.{mode}"))
        self.clear_button.setText(tr("knockout.clear"))
        self.position_label.setText(tr("knockout.position"))
        self.rank_button.setText(tr("knockout.rank"))
        self.cancel_button.setText(tr("knockout.cancel"))
        self.table.setHorizontalHeaderLabels([tr("knockout.col.before"), tr("knockout.col.p"),
                                              tr("knockout.col.after"), tr("knockout.col.p")])
        item = self.map_plot.getPlotItem()
        set_axis_label(item, "left", tr("knockout.layer"))
        set_axis_label(item, "top", tr("knockout.head"))
        self._fill()

    def plot_for_export(self):
        return self.map_plot.getPlotItem()

    # ------------------------------------------------------------------ results
    def _request_knockout(self) -> None:
        state = self.state
        if state is None or not self._heads or not self.is_served("knockout_wanted"):
            self._fill_table()
            return
        if tuple(state.extras.get("knockout", ())) != self._heads:
            self._result, self._message = None, ("knockout.waiting", {})  # the analysis with these heads is on its way
            self._fill_table()
            return
        mode = str(state.extras.get("knockout_mode", self.mode()))
        position = min(self.position_box.value(), state.n_tokens - 1)
        key = text_key(state) + (self._heads, mode, position, state_mask_key(state))
        if key == self._pending_key:
            return
        self._pending_key, self._result, self._message = key, None, ("knockout.waiting", {})
        self.knockout_wanted.emit(state, self._heads, mode, position)
        self._fill_table()

    def show_knockout_choice(self, _mask, heads) -> None:
        """The session's knocked-out heads (also changed by a Shift+click in the head grid)."""
        heads = tuple(heads)
        if heads != self._heads:
            self._heads, self._result = heads, None
            self._fill()

    def show_knockout(self, key, result) -> None:
        if key != self._pending_key:
            return
        self._result, self._message = result, ()
        self._fill_table()

    @staticmethod
    def _ranking_key_for(state, mode: str) -> tuple:
        """The key Session.rank_heads gives a ranking of ``state``'s text."""
        return text_key(state) + (mode, state_mask_key(state))

    def show_ranking_progress(self, done: int, total: int) -> None:
        if self._ranking_running:
            self.progress.setRange(0, int(total))
            self.progress.setValue(int(done))
            self._set_top_note(("knockout.ranking", {"done": done, "total": total}))

    def show_ranking(self, key, ranking) -> None:
        if key != self._ranking_key:
            return
        if self.state is not None and key != self._ranking_key_for(self.state, ranking.mode):
            self._ranking_finished()  # ranked on the text before this one: not this text's map
            self._set_top_note(())
            return
        self._ranking = ranking
        self._ranking_finished()
        self._fill_map()

    def show_ranking_cancelled(self) -> None:
        if self._ranking_running:
            self._ranking_finished()
            self._set_top_note(("knockout.ranking_cancelled", {}))

    def _set_top_note(self, note: tuple) -> None:
        self._top_note = note
        self.top_label.setText(tr(note[0], **note[1]) if note else "")

    def _ranking_finished(self) -> None:
        self._ranking_running = False
        self.progress.setVisible(False)
        self.rank_button.setEnabled(True)
        self.cancel_button.setEnabled(False)

    def show_job_failure(self, kind: str, key, message: str, details: str) -> None:
        if kind == KNOCKOUT and key == self._pending_key:
            self._message, self._pending_key = ("knockout.failed", {"reason": message}), None
            self._fill_table()
        elif kind == RANK_HEADS and key == self._ranking_key:
            self._ranking_finished()
            self._set_top_note(("knockout.failed", {"reason": message}))

    def ranking(self):
        """The head ranking on display (core.ablation.HeadRanking), or None."""
        return self._ranking

    def result(self):
        """The knockout's before/after on display (core.ablation.KnockoutResult), or None."""
        return self._result

    # ------------------------------------------------------------------ drawing
    def _shape(self) -> tuple[int, int]:
        cfg = self.state.model.lens.config
        return cfg.n_layer, cfg.n_head

    def _fill(self) -> None:
        self.explain.setText(tr("knockout.explain") if self.state is not None else tr("knockout.empty"))
        self.knocked_label.setText(tr("knockout.knocked", heads=heads_text(self._heads)) if self._heads
                                   else tr("knockout.none"))
        self._fill_map()
        self._fill_table()

    def _fill_map(self) -> None:
        if self.state is None:
            return
        layers, heads = self._shape()
        ranking = self._ranking
        harm = None if ranking is None else ranking.harm.numpy()
        self.map_image.setImage(harm_picture(harm, (layers, heads)), autoLevels=False)
        self.map_image.setRect(0, 0, heads, layers)
        set_view_range(self.map_plot.getPlotItem(), (0, heads), (0, layers))
        item = self.map_plot.getPlotItem()
        item.getAxis("left").setTicks([[(i + 0.5, str(i)) for i in range(layers)]])
        item.getAxis("top").setTicks([[(i + 0.5, str(i)) for i in range(heads)]])
        item.showAxis("top")
        item.hideAxis("bottom")
        # dark on every cell colour (a white × on the pale grey before a ranking was hard to see)
        self._marks.show([("✕", h + 0.5, layer + 0.5, KNOCKED_MARK) for layer, h in self._heads])
        self.map_box.setTitle(tr("knockout.map.ranked" if ranking is not None else "knockout.map"))
        if ranking is None:
            self.top_label.setText(tr(self._top_note[0], **self._top_note[1]) if self._top_note else "")
        else:
            named = "; ".join(f"{head_name(layer, head, translator.language)} ({'+' if d >= 0 else ''}{fmt_number(d)})"
                              for layer, head, d in ranking.top[:NAMED])
            self.top_label.setText(tr("knockout.map.key") + " "
                                   + tr("knockout.top", baseline=fmt_number(ranking.baseline), heads=named))

    def _fill_table(self) -> None:
        result, tokens = self._result, None
        if self.state is not None:
            tokens = self.state.model.tokenizer
        self.table.clearContents()
        if result is None or tokens is None:
            self.loss_label.setText(tr(self._message[0], **self._message[1])
                                    if self._message and self._heads and self.state is not None else "")
            return
        for column, guesses in ((0, result.top_before), (2, result.top_after)):
            texts = tokens.token_texts([t for t, _p in guesses])
            for row, (text, (_t, p)) in enumerate(zip(texts, guesses)):
                self.table.setItem(row, column, QTableWidgetItem(text))
                self.table.setItem(row, column + 1, QTableWidgetItem(fmt_number(p)))
        delta = result.loss_after - result.loss_before
        self.loss_label.setText(tr("knockout.loss", before=fmt_number(result.loss_before),
                                   after=fmt_number(result.loss_after),
                                   delta=("+" if delta >= 0 else "") + fmt_number(delta)))
