"""Shapes: the chapter's "dimensions in practice" table for the current model and input.

The rows come from the lens itself (``state.shapes``: what the forward pass really
produced in layer 0), so the table is a measurement, not a drawing.  Below it, the
chapter's claim "multi-head costs no more than one head", with the arithmetic done on
the current model's numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QAbstractItemView,
    QFrame,
    QGroupBox,
    QHeaderView,
    QLabel,
    QScrollArea,
    QTableWidget,
    QVBoxLayout,
    QWidget,
)

from attention_lab.ui.i18n import tr
from attention_lab.ui.model_label import model_label
from attention_lab.ui.number_format import fixed, integer
from attention_lab.ui.strings import shapes as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import (
    explanation_label,
    monospace_font,
    set_box_title,
    set_cell_text,
    set_header_labels,
)


@dataclass(frozen=True)
class HeadCost:
    """Attention parameters of one layer for ``heads`` heads of width ``head_dim`` on a ``d``-wide stream."""

    d: int
    heads: int
    head_dim: int

    @property
    def width(self) -> int:  # Q, K and V each: heads × d_k
        return self.heads * self.head_dim

    @property
    def c_attn_weights(self) -> int:
        return self.d * 3 * self.width

    @property
    def c_attn_biases(self) -> int:
        return 3 * self.width

    @property
    def c_proj_weights(self) -> int:  # the concat (width) back to d
        return self.width * self.d

    @property
    def c_proj_biases(self) -> int:
        return self.d

    @property
    def per_layer(self) -> int:
        return self.c_attn_weights + self.c_attn_biases + self.c_proj_weights + self.c_proj_biases

    def score_macs(self, n: int) -> int:
        return self.heads * n * n * self.head_dim


def head_costs(d: int, heads: int) -> tuple[HeadCost, HeadCost, HeadCost]:
    """(the model's split, one full-width head, heads that each keep the full width)."""
    return HeadCost(d, heads, d // heads), HeadCost(d, 1, d), HeadCost(d, heads, d)


def format_shape(shape: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ")"


class ShapesPanel(Panel):
    panel_id = PanelId.SHAPES
    title_key = "shapes.title"

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.explain = explanation_label()

        self.table = QTableWidget(0, 3)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setVisible(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        mono = monospace_font()
        self._mono = mono

        self.cost_box = QGroupBox()
        self.cost_explain = QLabel(self.cost_box)
        self.cost_explain.setWordWrap(True)
        self.cost_table = QTableWidget(0, 3, self.cost_box)
        self.cost_table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.cost_table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        # its formulas are wider than a laptop's dock: the table scrolls sideways rather than cut them
        self.cost_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAsNeeded)
        self.cost_table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.cost_table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.cost_table.setWordWrap(False)
        for t in (self.table, self.cost_table):
            t.verticalHeader().setMinimumSectionSize(self.fontMetrics().height() + 6)
            t.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.cost_verdict = QLabel(self.cost_box)
        self.cost_verdict.setWordWrap(True)
        box_layout = QVBoxLayout(self.cost_box)
        box_layout.addWidget(self.cost_explain)
        box_layout.addWidget(self.cost_table)
        box_layout.addWidget(self.cost_verdict)

        # whole tables, no inner scroll bars: in a small dock the panel scrolls as one page
        page = QWidget()
        page_layout = QVBoxLayout(page)
        page_layout.addWidget(self.explain)
        page_layout.addWidget(self.table)
        page_layout.addWidget(self.cost_box)
        page_layout.addStretch(1)
        self.scroll = QScrollArea(self)
        self.scroll.setWidgetResizable(True)
        self.scroll.setFrameShape(QFrame.Shape.NoFrame)
        self.scroll.setWidget(page)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.scroll)
        self.retranslate()

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None and self.table.rowCount() > 0

    def show_state(self, state) -> None:
        self.state = state
        self._fill()

    def retranslate(self) -> None:
        set_header_labels(self.table, [tr("shapes.col.step"), tr("shapes.col.shape"), tr("shapes.col.note")])
        set_box_title(self.cost_box, tr("shapes.cost.title"))
        self._fill()

    # ------------------------------------------------------------------ filling
    def _numbers(self) -> dict:
        cfg = self.state.model.lens.config
        return dict(
            model=model_label(self.state.model),
            n=self.state.n_tokens,
            heads=cfg.n_head,
            dk=cfg.head_dim,
            d=cfg.n_embd,
            layers=cfg.n_layer,
        )

    def _fill(self) -> None:
        if self.state is None:
            self.explain.setText(tr("shapes.empty"))
            self.table.setRowCount(0)
            self.cost_table.setRowCount(0)
            self.cost_explain.setText("")
            self.cost_verdict.setText("")
            return
        nums = self._numbers()
        self.explain.setText(tr("shapes.explain", **nums))
        rows = list(self.state.shapes)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            key = f"shapes.note.{row.name}"
            note = tr(key, **nums)
            if note == key:  # a row the lens added that the table doesn't know: its own note
                note = row.note
            step_key = f"shapes.step.{row.name}"  # the lens's names that are words get translated; code names stay
            # each cell's text changed in place (a language switch changes a few words of the table)
            set_cell_text(self.table, r, 0, tr(step_key) if tr(step_key) != step_key else row.name)
            shape_item = set_cell_text(self.table, r, 1, format_shape(row.shape))
            shape_item.setFont(self._mono)
            shape_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            set_cell_text(self.table, r, 2, note)
        self._fill_costs(nums)
        self._fit_height(self.table)
        self._fit_height(self.cost_table)

    @staticmethod
    def _fit_height(table: QTableWidget) -> None:
        """Tables this small read best whole: no inner scroll bar, the panel scrolls instead."""
        table.resizeRowsToContents()
        height = table.horizontalHeader().height() + 2 * table.frameWidth()
        height += sum(table.rowHeight(r) for r in range(table.rowCount()))
        if table.horizontalScrollBarPolicy() != Qt.ScrollBarPolicy.ScrollBarAlwaysOff:
            height += table.horizontalScrollBar().sizeHint().height()  # room for it, should it show
        table.setFixedHeight(height + 2)

    def _fill_costs(self, nums: dict) -> None:
        multi, single, multiplied = head_costs(nums["d"], nums["heads"])
        n, layers = nums["n"], nums["layers"]
        self.cost_explain.setText(tr("shapes.cost.explain", **nums))
        set_header_labels(
            self.cost_table,
            [tr("shapes.cost.col.multi", **nums), tr("shapes.cost.col.single", **nums), tr("shapes.cost.col.multiplied", **nums)],
        )

        def width(c: HeadCost) -> str:
            return f"{c.heads} × {c.head_dim} = {integer(c.width)}"

        def c_attn(c: HeadCost) -> str:
            return f"{integer(c.d)} × {integer(3 * c.width)} + {integer(c.c_attn_biases)} = {integer(c.c_attn_weights + c.c_attn_biases)}"

        def c_proj(c: HeadCost) -> str:
            return f"{integer(c.width)} × {integer(c.d)} + {integer(c.c_proj_biases)} = {integer(c.c_proj_weights + c.c_proj_biases)}"

        def layer(c: HeadCost) -> str:
            return f"{integer(c.per_layer)}"

        def model(c: HeadCost) -> str:
            return f"{layers} × {integer(c.per_layer)} = {integer(layers * c.per_layer)}"

        def scores(c: HeadCost) -> str:
            return f"{c.heads} × {n} × {n} × {c.head_dim} = {integer(c.score_macs(n))}"

        rows = [
            ("shapes.cost.row.width", width),
            ("shapes.cost.row.c_attn", c_attn),
            ("shapes.cost.row.c_proj", c_proj),
            ("shapes.cost.row.layer", layer),
            ("shapes.cost.row.model", model),
            ("shapes.cost.row.scores", scores),
        ]
        self.cost_table.setRowCount(len(rows))
        set_header_labels(self.cost_table, [tr(key, **nums) for key, _ in rows], Qt.Orientation.Vertical)
        for r, (_, cell) in enumerate(rows):
            for c, cost in enumerate((multi, single, multiplied)):
                item = set_cell_text(self.cost_table, r, c, cell(cost))
                item.setFont(self._mono)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.cost_verdict.setText(
            tr(
                "shapes.cost.verdict",
                per_layer=integer(multi.per_layer),
                ratio=fixed(multiplied.per_layer / multi.per_layer, 1),
                **nums,
            )
        )

    def table_for_export(self):
        """The shape table, then the cost comparison (CSV export)."""
        if self.state is None:
            return None
        header = ["step", "shape", "note"]
        rows = [[row.name, format_shape(row.shape), row.note] for row in self.state.shapes]
        multi, single, multiplied = self.cost_numbers()
        for label, cost in (("cost: heads x d_k", multi), ("cost: 1 head x d", single), ("cost: heads x d", multiplied)):
            rows.append([label, f"({cost.heads}, {cost.head_dim})", f"attention parameters per layer: {cost.per_layer}"])
        return header, rows


    def cost_numbers(self) -> tuple[HeadCost, HeadCost, HeadCost] | None:
        """The three costs shown (for the tour and the tests), or None before a state."""
        if self.state is None:
            return None
        cfg = self.state.model.lens.config
        return head_costs(cfg.n_embd, cfg.n_head)
