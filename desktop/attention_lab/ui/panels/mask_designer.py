"""The mask designer: choose the mask the model runs under, and see what it implies.

The choice (causal, bidirectional, prefix-LM k, sliding window w, documents split at a
token, or a custom grid whose cells the learner clicks) goes to the session as
:attr:`MaskDesignerPanel.mask_chosen` (a :class:`~attention_lab.core.masks.MaskSpec`):
the analysis then runs under it, so the heatmaps, the leakage diff and the portrait follow.
The verdicts are asked for with :attr:`MaskDesignerPanel.report_wanted` and computed on the
worker by :func:`attention_lab.core.masks.mask_report` -- the reach grid after L layers,
the influence measured by editing every token, the K/V stability measured by appending one
-- and drawn by :meth:`MaskDesignerPanel.show_mask_report`; nothing here infers a verdict
from the preset's name.
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import torch
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.inputs import same_mask
from attention_lab.core.job_protocol import MASK_REPORT, mask_report_key
from attention_lab.core.masks import (
    LOSS_CHOICES,
    MASK_KINDS,
    MaskSpec,
    allowed_for_text,
    custom_mask,
    fit_custom,
    measured_cells,
)
from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.heatmap_kit import HeatImage
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import (
    SteadyHeightLabel, explanation_label, fmt_number, make_plot, set_heatmap_axes,
)
from attention_lab.ui.strings import mask_designer as _texts  # noqa: F401 -- registers the texts

ALLOWED_RGBA = (222, 235, 247, 255)
FORBIDDEN_RGBA = (60, 60, 70, 255)
REACHED_RGBA = (214, 96, 77, 255)


def _picture(cells: np.ndarray, on) -> np.ndarray:
    """RGBA of a boolean grid: ``on`` where True, the forbidden colour elsewhere."""
    rgba = np.empty(cells.shape + (4,), np.ubyte)
    rgba[...] = FORBIDDEN_RGBA
    rgba[cells] = on
    return rgba


def _grid_plot(parent, on_click=None):
    plot = make_plot(parent)
    plot.setMinimumSize(180, 180)
    image = HeatImage("grid", on_click=on_click)
    plot.addItem(image)
    item = plot.getPlotItem()
    vb = item.getViewBox()
    vb.invertY(True)
    vb.setMouseEnabled(x=False, y=False)
    vb.setDefaultPadding(0.0)
    vb.disableAutoRange()  # the range is set with the tokens (as the head grid's maps)
    item.showAxis("top")
    item.hideAxis("bottom")
    return plot, image


class MaskDesignerPanel(Panel):
    panel_id = PanelId.MASK_DESIGNER
    title_key = "designer.title"

    mask_chosen = Signal(object)  # core.masks.MaskSpec (None: causal): Session.set_mask
    report_wanted = Signal(object, object)  # AnalysisState, MaskSpec: Session.measure_mask_report
    error_raised = Signal(str, str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = None
        self._custom: torch.Tensor | None = None  # the custom grid as drawn (bool [n, n])
        self._report = None
        self._pending_key: tuple | None = None
        self._progress: tuple[int, int] | None = None
        self._error: str | None = None
        self._inputs = None  # the learner's inputs (core.inputs.LearnerInputs) once the session says them

        self.explain = explanation_label(self)
        self.kind_label = QLabel(self)
        self.kind_choice = QComboBox(self)
        for kind in MASK_KINDS:
            self.kind_choice.addItem(kind, kind)
        # not as wide as its longest item: the row must fit a laptop's right-hand column
        self.kind_choice.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.kind_choice.setMinimumContentsLength(22)
        self.size_label = QLabel(self)
        self.size_box = QSpinBox(self)
        self.size_box.setRange(1, 1024)
        self.size_box.setValue(4)
        self.separator_label = QLabel(self)
        self.separator_edit = QLineEdit(".", self)
        self.separator_edit.setMaximumWidth(60)
        self.to_custom = QPushButton(self)
        self.to_custom.clicked.connect(self.edit_as_custom)
        choice = QHBoxLayout()
        for w in (self.kind_label, self.kind_choice, self.size_label, self.size_box, self.separator_label,
                  self.separator_edit, self.to_custom):
            choice.addWidget(w)
        choice.addStretch(1)

        self.grid_box = QGroupBox(self)
        self.grid_plot, self.grid_image = _grid_plot(self.grid_box, self._grid_click)
        QVBoxLayout(self.grid_box).addWidget(self.grid_plot)
        self.reach_box = QGroupBox(self)
        self.reach_plot, self.reach_image = _grid_plot(self.reach_box)
        # over the reach grid, what the model measured: a dot where editing the column's token
        # moved the row's position, a cross where measurement and grid disagree
        self.measured_marks = pg.ScatterPlotItem(size=6, symbol="o", pen=pg.mkPen(40, 40, 40), brush=pg.mkBrush(255, 255, 255))
        self.differ_marks = pg.ScatterPlotItem(size=12, symbol="x", pen=None, brush=pg.mkBrush(255, 220, 0))
        for marks in (self.measured_marks, self.differ_marks):
            self.reach_plot.addItem(marks)
        self.reach_note = QLabel(self.reach_box)
        self.reach_note.setWordWrap(True)
        reach_layout = QVBoxLayout(self.reach_box)
        reach_layout.addWidget(self.reach_plot, 1)
        reach_layout.addWidget(self.reach_note)
        grids = QHBoxLayout()
        grids.addWidget(self.grid_box, 1)
        grids.addWidget(self.reach_box, 1)

        self.verdict_box = QGroupBox(self)
        # keeps the room of its tallest text: the verdicts shrinking to "Measuring…" after a custom cell's click
        # moved the grid below them (56 px), so the next click landed on another cell
        self.verdicts = SteadyHeightLabel(self.verdict_box)
        self.verdicts.setTextFormat(Qt.TextFormat.RichText)
        # where the training loss is taken: a prefix-LM as trained scores only after its prefix,
        # and the label-leak verdict is computed for the choice (core.masks.label_leak)
        self.loss_label = QLabel(self.verdict_box)
        self.loss_choice = QComboBox(self.verdict_box)
        self.loss_choice.setObjectName("designer.loss")
        for loss in LOSS_CHOICES:
            self.loss_choice.addItem(loss, loss)
        self.loss_label.setBuddy(self.loss_choice)
        self.loss_choice.currentIndexChanged.connect(lambda _index: self._fill_verdicts())
        loss_row = QHBoxLayout()
        loss_row.addWidget(self.loss_label)
        loss_row.addWidget(self.loss_choice)
        loss_row.addStretch(1)
        verdict_layout = QVBoxLayout(self.verdict_box)
        verdict_layout.addLayout(loss_row)
        verdict_layout.addWidget(self.verdicts)

        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addLayout(choice)
        layout.addWidget(self.verdict_box)  # the verdicts first: in sight without scrolling at 1366 × 768
        layout.addLayout(grids, 1)

        self.kind_choice.currentIndexChanged.connect(self._choice_changed)
        self.size_box.valueChanged.connect(self._choice_changed)
        self.separator_edit.editingFinished.connect(self._choice_changed)
        self.retranslate()
        self._show_controls()

    # ------------------------------------------------------------------ the choice
    def kind(self) -> str:
        return str(self.kind_choice.currentData())

    def set_choice(self, kind: str, size: int | None = None, separator: str | None = None) -> None:
        """Choose a mask as the learner would (the tour and tests use this)."""
        blockers = [w.blockSignals(True) for w in (self.kind_choice, self.size_box, self.separator_edit)]
        try:
            self.kind_choice.setCurrentIndex(MASK_KINDS.index(kind))
            if size is not None:
                self.size_box.setValue(int(size))
            if separator is not None:
                self.separator_edit.setText(separator)
        finally:
            for w, was in zip((self.kind_choice, self.size_box, self.separator_edit), blockers):
                w.blockSignals(was)
        self._choice_changed()

    def show_inputs(self, _old, new) -> None:
        """The learner's inputs changed: the choice shows the mask every control shows (the head
        grid's "no mask" is the bidirectional one here too)."""
        self._inputs = new
        shown = new.shown_mask
        if self.kind() == shown.kind and same_mask(self.spec(), shown):
            return
        if shown.kind == "custom" and shown.matrix is not None:
            self._custom = shown.matrix.clone()
        separator = None if shown.separator is None else shown.separator.replace("\n", "\\n").replace("\t", "\\t")
        self.set_choice(shown.kind, size=shown.size, separator=separator)

    def choice_text(self) -> str:
        """The choice as ``core.masks`` spells it (``window:3``, ``documents:.``, ``custom``…)."""
        kind = self.kind()
        if kind in ("prefix", "window"):
            return f"{kind}:{self.size_box.value()}"
        if kind == "documents":
            return f"documents:{self.separator_edit.text() or '.'}"
        return kind

    def set_choice_text(self, text: str) -> None:
        """:meth:`set_choice` from ``core.masks``' spelling (the tour sets and gives back the choice)."""
        kind, _, arg = text.partition(":")
        if kind in ("prefix", "window"):
            self.set_choice(kind, size=int(arg))
        elif kind == "documents":
            self.set_choice(kind, separator=arg)
        else:
            self.set_choice(kind)

    def spec(self) -> MaskSpec | None:
        """The chosen mask as a spec (a custom grid fitted to the text); None without a text for a custom one."""
        kind = self.kind()
        if kind in ("prefix", "window"):
            return MaskSpec(kind, size=int(self.size_box.value()))
        if kind == "documents":
            text = self.separator_edit.text() or "."
            return MaskSpec(kind, separator=text.replace("\\n", "\n").replace("\\t", "\t"))
        if kind == "custom":
            grid = self._custom_grid()
            return None if grid is None else custom_mask(grid)
        return MaskSpec(kind)

    def _custom_grid(self) -> torch.Tensor | None:
        if self._state is None:
            return self._custom
        n = self._state.n_tokens
        if self._custom is None:
            self._custom = torch.ones(n, n, dtype=torch.bool).tril()
        elif self._custom.shape[0] != n:
            self._custom = fit_custom(self._custom, n)
        return self._custom

    def edit_as_custom(self) -> None:
        """Copy the chosen preset into the custom grid (then cells can be clicked)."""
        allowed = self._allowed()
        if allowed is not None:
            self._custom = allowed.clone()
        self.set_choice("custom")

    def toggle_cell(self, query: int, key: int) -> bool:
        """Allow/forbid one cell of the custom grid (the diagonal stays allowed); True if it changed."""
        grid = self._custom_grid()
        if self.kind() != "custom" or grid is None or query == key:
            return False
        n = grid.shape[0]
        if not (0 <= query < n and 0 <= key < n):
            return False
        grid[query, key] = not bool(grid[query, key])
        self._choice_changed()
        return True

    def _grid_click(self, _key, cell) -> None:
        if cell is not None:
            self.toggle_cell(*cell)

    def _choice_changed(self, *_args) -> None:
        self._show_controls()
        spec = self.spec()
        self._error = None
        if spec is None or (self._state is not None and self._allowed() is None):
            self._fill_verdicts()  # a separator that is not one token: said here, nothing sent
            return
        if self._inputs is None or not same_mask(spec, self._inputs.shown_mask):  # (not the session's own, shown)
            self.mask_chosen.emit(None if spec.kind == "causal" else spec)
        self._report = None
        self._fill_grid()
        self._request_report()

    def _show_controls(self) -> None:
        kind = self.kind()
        sized = kind in ("prefix", "window")
        self.size_label.setVisible(sized)
        self.size_box.setVisible(sized)
        if sized:
            self.size_label.setText(tr(f"designer.size.{kind}"))
        self.separator_label.setVisible(kind == "documents")
        self.separator_edit.setVisible(kind == "documents")
        self.to_custom.setVisible(kind != "custom")

    def _allowed(self) -> torch.Tensor | None:
        spec = self.spec()
        if self._state is None or spec is None:
            return None
        try:
            return allowed_for_text(spec, self._state.ids, self._state.model.tokenizer)
        except ValueError as exc:
            self._error = tr("designer.bad_separator", reason=str(exc))
            return None

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self._state is not None and self.grid_image.image is not None

    def show_state(self, state) -> None:
        self._state = state
        self._fill_grid()
        self.ask_after_paint(self._request_report)

    def session_ready(self) -> None:
        self._request_report()

    def shutdown(self) -> None:
        self._pending_key = None

    def showEvent(self, event) -> None:  # noqa: N802 -- a hidden panel measures when it is shown
        super().showEvent(event)
        self.ask_after_paint(self._request_report)

    def retranslate(self) -> None:
        self.explain.setText(tr("designer.explain") if self._state is not None else tr("designer.empty"))
        self.kind_label.setText(tr("designer.kind"))
        for i, kind in enumerate(MASK_KINDS):
            self.kind_choice.setItemText(i, tr(f"designer.kind.{kind}"))
        self.separator_label.setText(tr("designer.separator"))
        self.separator_edit.setToolTip(tr("designer.separator_tip"))
        self.to_custom.setText(tr("designer.to_custom"))
        self.to_custom.setToolTip(tr("designer.to_custom_tip"))
        self.verdict_box.setTitle(tr("designer.verdicts"))
        self.loss_label.setText(tr("designer.loss"))
        for i, loss in enumerate(LOSS_CHOICES):
            self.loss_choice.setItemText(i, tr(f"designer.loss.{loss}"))
        self._show_controls()
        self._fill_grid()
        self._fill_verdicts()

    # ------------------------------------------------------------------ drawing
    def _fill_grid(self) -> None:
        state = self._state
        self.grid_box.setTitle(tr("designer.grid.custom" if self.kind() == "custom" else "designer.grid"))
        self.grid_plot.setToolTip(tr("designer.custom_tip") if self.kind() == "custom" else "")
        layers = state.model.lens.config.n_layer if state is not None else 0
        self.reach_box.setTitle(tr("designer.reach", layers=layers))
        if state is None:
            return
        custom = self.kind() == "custom"
        self.explain.setText(tr("designer.explain") + (" " + tr("designer.custom_tip") if custom else ""))
        allowed = self._allowed()
        if allowed is None:
            self._fill_verdicts()
            return
        n = state.n_tokens
        self.grid_image.setImage(_picture(allowed.numpy(), ALLOWED_RGBA), autoLevels=False)
        self.grid_image.setRect(0, 0, n, n)
        set_heatmap_axes(self.grid_plot, state.tokens, state.tokens, tr("designer.query"), tr("designer.key"))
        self._fill_reach()

    def _fill_reach(self) -> None:
        report, state = self._report, self._state
        if report is None or state is None:
            self.reach_image.clear()
            self.measured_marks.setData([], [])
            self.differ_marks.setData([], [])
            self.reach_note.setText("")
            return
        n = report.reach.shape[0]
        self.reach_image.setImage(_picture(report.reach.numpy(), REACHED_RGBA), autoLevels=False)
        self.reach_image.setRect(0, 0, n, n)
        changed, differs = measured_cells(report)
        for marks, cells in ((self.measured_marks, changed), (self.differ_marks, differs)):
            # row-major image: the edited position (column) is x, the influenced one (row) is y
            marks.setData([col + 0.5 for _row, col in cells], [row + 0.5 for row, _col in cells])
        self.reach_note.setText(tr("designer.reach.marks", probed=len(report.probed_columns), n=n)
                                + (" " + tr("designer.reach.marks_differ", cells=len(differs)) if differs else ""))
        set_heatmap_axes(self.reach_plot, state.tokens, state.tokens, tr("designer.influenced"), tr("designer.source"))

    def _fill_verdicts(self) -> None:
        self.loss_choice.setEnabled(self.kind() == "prefix")  # only a prefix-LM has a prefix to skip
        if self._state is None:
            self._say_verdicts("")
            return
        if self._error:
            self._say_verdicts(self._error)
            return
        report = self._report
        if report is None:
            if self._progress is not None:
                self._say_verdicts(tr("designer.measuring", done=self._progress[0], total=self._progress[1]))
            else:
                self._say_verdicts(tr("designer.waiting") if self.is_served("report_wanted")
                                      else tr("designer.unserved"))
            return
        self._say_verdicts("<br>".join(verdict_lines(report, self._state.tokens, self.loss())))

    # ------------------------------------------------------------------ the verdicts
    def _say_verdicts(self, text: str) -> None:
        self.verdicts.set_texts(text, [])

    def _request_report(self) -> None:
        state, spec = self._state, self.spec()
        if state is None or spec is None or not self.isVisible() or not self.is_served("report_wanted"):
            self._fill_verdicts()
            return
        if self._allowed() is None:
            return
        self._error = None
        key = mask_report_key(state, spec)
        if key == self._pending_key:
            return
        self._pending_key = key
        self._report, self._progress = None, None
        self._fill_reach()
        self._fill_verdicts()
        self.report_wanted.emit(state, spec)

    def show_report_progress(self, done: int, total: int) -> None:
        if self._report is None and self._pending_key is not None:
            self._progress = (int(done), int(total))
            self._fill_verdicts()

    def show_mask_report(self, key, report) -> None:
        if key != self._pending_key:
            return  # another text's or mask's verdicts
        self._report, self._progress, self._error = report, None, None
        self._fill_reach()
        self._fill_verdicts()

    def show_job_failure(self, kind: str, key, message: str, details: str) -> None:
        if kind != MASK_REPORT or key != self._pending_key:
            return
        self._error = tr("designer.failed", reason=message)
        self._pending_key = None
        self._fill_verdicts()

    def loss(self) -> str:
        """Where the training loss is taken (:data:`core.masks.LOSS_CHOICES`): the choice shown for a
        prefix-LM; every position for a mask with no prefix to skip."""
        return self.loss_choice.currentData() if self.kind() == "prefix" else "every"

    def set_loss(self, loss: str) -> None:
        self.loss_choice.setCurrentIndex(LOSS_CHOICES.index(loss))

    def shown_verdicts(self) -> dict | None:
        """The verdicts on display, as core computed them (None before they arrive)."""
        return None if self._report is None else self._report.verdicts(self.loss())

    def measured_marks_shown(self) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(row, column) cells of the dots and crosses drawn over the reach grid (tests)."""
        def cells(marks) -> list[tuple[int, int]]:
            xs, ys = marks.getData()
            return sorted((int(y - 0.5), int(x - 0.5)) for x, y in zip(xs, ys))
        return cells(self.measured_marks), cells(self.differ_marks)

    def plot_for_export(self):
        return self.grid_plot.getPlotItem()


def _positions(positions: list[int]) -> str:
    """#0–#3, #7: runs of positions written as ranges."""
    runs: list[list[int]] = []
    for p in positions:
        if runs and p == runs[-1][-1] + 1:
            runs[-1].append(p)
        else:
            runs.append([p])
    return ", ".join(f"#{r[0]}" if len(r) == 1 else f"#{r[0]}–#{r[-1]}" for r in runs)


def verdict_lines(report, tokens, loss: str = "every") -> list[str]:
    """The verdict sentences of a core.masks.MaskReport (each one from a measured field), the
    label leak's for the loss taken at ``loss``'s positions."""
    leak = report.label_leak(loss)
    where = tr(f"designer.loss.{leak.loss}")
    start = f"#{leak.start} “{tokens[leak.start]}”"
    if leak.leaks:
        query, key = leak.witness
        lines = [tr("designer.leaks.yes", where=where, count=len(leak.positions), positions=_positions(leak.positions),
                    query=f"#{query} “{tokens[query]}”", later=f"#{key} “{tokens[key]}”")]
    elif leak.start > 0:
        lines = [tr("designer.leaks.no_after_prefix", where=where, start=start)]
    else:
        lines = [tr("designer.leaks.no", where=where)]
    lines[-1] += " " + tr("designer.leaks.measured_yes" if leak.measured else "designer.leaks.measured_no")
    keep, n = report.cache_positions_per_layer, report.allowed.shape[0]
    if report.kv_cache_valid:
        text = tr("designer.kv.yes", keep=keep)
        if keep < n:
            text += tr("designer.kv.bounded", keep=keep, n=n)
        lines.append(text)
    else:
        lines.append(tr("designer.kv.no", change=fmt_number(report.kv_max_change)))
    lines.append(tr("designer.reach.confirmed" if report.reach_confirmed else "designer.reach.differs",
                    probed=len(report.probed_columns)))
    return lines
