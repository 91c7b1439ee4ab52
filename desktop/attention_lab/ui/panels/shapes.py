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
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attention_lab.ui.i18n import register, tr
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.panels.panel_kit import explanation_label, monospace_font

register(
    {
        "shapes.title": {"en": "Shapes", "pt_BR": "Dimensões"},
        "shapes.explain": {
            "en": "<b>The dimensions, in practice.</b> What one attention block of <b>{model}</b> really produced "
            "for your {n} tokens ({heads} heads of d<sub>k</sub> = {dk}). One matmul (c_attn) gives Q, K and V; "
            "a reshape splits the {d} dimensions into {heads} slices of {dk}; each head makes its own "
            "{n}×{n} map; concat regroups the slices and c_proj (W<sup>O</sup>) mixes them. "
            "The output has the same shape as the input.",
            "pt_BR": "<b>As dimensões, na prática.</b> O que um bloco de atenção de <b>{model}</b> produziu de fato "
            "para os seus {n} tokens ({heads} cabeças de d<sub>k</sub> = {dk}). Um único matmul (c_attn) gera Q, K e V; "
            "um reshape divide as {d} dimensões em {heads} fatias de {dk}; cada cabeça faz o seu próprio mapa "
            "{n}×{n}; o concat reagrupa as fatias e o c_proj (W<sup>O</sup>) as mistura. "
            "A saída tem a mesma forma da entrada.",
        },
        "shapes.empty": {
            "en": "<b>The dimensions, in practice.</b> Analyse a text to see the shapes.",
            "pt_BR": "<b>As dimensões, na prática.</b> Analise um texto para ver as formas.",
        },
        "shapes.col.step": {"en": "Step", "pt_BR": "Etapa"},
        "shapes.col.shape": {"en": "Shape", "pt_BR": "Forma"},
        "shapes.col.note": {"en": "What it is", "pt_BR": "O que é"},
        "shapes.note.h": {"en": "token + position embeddings", "pt_BR": "embeddings de token + posição"},
        "shapes.note.c_attn": {"en": "a single matmul: Q, K, V fused", "pt_BR": "um único matmul: Q, K, V juntos"},
        "shapes.note.Q, K, V": {
            "en": "reshaped into heads: {heads} heads in parallel",
            "pt_BR": "reshape em cabeças: {heads} cabeças em paralelo",
        },
        "shapes.note.scores": {
            "en": "Q·Kᵀ/√d_k: {heads} independent {n}×{n} maps",
            "pt_BR": "Q·Kᵀ/√d_k: {heads} mapas {n}×{n} independentes",
        },
        "shapes.note.attention": {"en": "after the mask and the softmax", "pt_BR": "depois da máscara e do softmax"},
        "shapes.note.per head": {"en": "weighted sum of V, per head", "pt_BR": "soma ponderada de V, por cabeça"},
        "shapes.note.concat": {"en": "concat: regroups the slices", "pt_BR": "concat: reagrupa as fatias"},
        "shapes.note.c_proj": {"en": "c_proj (W^O) mixes the heads", "pt_BR": "c_proj (W^O) mistura as cabeças"},
        "shapes.note.block output": {
            "en": "output: same shape as the input",
            "pt_BR": "saída: mesma forma da entrada",
        },
        "shapes.note.logits": {"en": "ln_f, then × wteᵀ: one score per vocabulary entry", "pt_BR": "ln_f, depois × wteᵀ: uma pontuação por item do vocabulário"},
        "shapes.cost.title": {
            "en": "Multi-head costs no more than one head",
            "pt_BR": "Multi-head não custa mais que uma cabeça",
        },
        "shapes.cost.explain": {
            "en": "Divide, don't multiply: the model splits its {d} dimensions into {heads} slices of {dk} "
            "instead of running {heads} heads of {d} each. c_attn is d×3d either way, c_proj d×d either way.",
            "pt_BR": "Dividir, não multiplicar: o modelo divide as suas {d} dimensões em {heads} fatias de {dk} "
            "em vez de rodar {heads} cabeças de {d} cada. O c_attn é d×3d de qualquer jeito, e o c_proj, d×d.",
        },
        "shapes.cost.col.multi": {"en": "{heads} heads × {dk}", "pt_BR": "{heads} cabeças × {dk}"},
        "shapes.cost.col.single": {"en": "1 head × {d}", "pt_BR": "1 cabeça × {d}"},
        "shapes.cost.col.multiplied": {
            "en": "{heads} heads × {d} (multiplying)",
            "pt_BR": "{heads} cabeças × {d} (multiplicando)",
        },
        "shapes.cost.row.width": {"en": "Q/K/V width (heads × d_k)", "pt_BR": "Largura de Q/K/V (cabeças × d_k)"},
        "shapes.cost.row.c_attn": {"en": "c_attn weights + biases", "pt_BR": "c_attn: pesos + vieses"},
        "shapes.cost.row.c_proj": {"en": "c_proj (W^O) weights + biases", "pt_BR": "c_proj (W^O): pesos + vieses"},
        "shapes.cost.row.layer": {"en": "attention parameters per layer", "pt_BR": "parâmetros de atenção por camada"},
        "shapes.cost.row.model": {
            "en": "attention parameters, all {layers} layers",
            "pt_BR": "parâmetros de atenção, as {layers} camadas",
        },
        "shapes.cost.row.scores": {
            "en": "multiply-adds for Q·Kᵀ ({n} tokens)",
            "pt_BR": "multiplicações-somas de Q·Kᵀ ({n} tokens)",
        },
        "shapes.cost.verdict": {
            "en": "{heads} heads × {dk} = {d} = 1 head × {d}: the same {per_layer} parameters per layer. "
            "Multiplying instead ({heads} heads of {d}) would cost {ratio}× more.",
            "pt_BR": "{heads} cabeças × {dk} = {d} = 1 cabeça × {d}: os mesmos {per_layer} parâmetros por camada. "
            "Multiplicar ({heads} cabeças de {d}) custaria {ratio}× mais.",
        },
    }
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
        self._state = None
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
        self.cost_table.horizontalHeader().setStretchLastSection(True)
        self.cost_table.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
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
        return self._state is not None and self.table.rowCount() > 0

    def show_state(self, state) -> None:
        self._state = state
        self._fill()

    def retranslate(self) -> None:
        self.table.setHorizontalHeaderLabels([tr("shapes.col.step"), tr("shapes.col.shape"), tr("shapes.col.note")])
        self.cost_box.setTitle(tr("shapes.cost.title"))
        self._fill()

    # ------------------------------------------------------------------ filling
    def _numbers(self) -> dict:
        cfg = self._state.model.lens.config
        return dict(
            model=self._state.model.name,
            n=self._state.n_tokens,
            heads=cfg.n_head,
            dk=cfg.head_dim,
            d=cfg.n_embd,
            layers=cfg.n_layer,
        )

    def _fill(self) -> None:
        if self._state is None:
            self.explain.setText(tr("shapes.empty"))
            self.table.setRowCount(0)
            self.cost_table.setRowCount(0)
            self.cost_explain.setText("")
            self.cost_verdict.setText("")
            return
        nums = self._numbers()
        self.explain.setText(tr("shapes.explain", **nums))
        rows = list(self._state.shapes)
        self.table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            key = f"shapes.note.{row.name}"
            note = tr(key, **nums)
            if note == key:  # a row the lens added that the table doesn't know: its own note
                note = row.note
            name_item = QTableWidgetItem(row.name)
            shape_item = QTableWidgetItem(format_shape(row.shape))
            shape_item.setFont(self._mono)
            shape_item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            for c, item in enumerate((name_item, shape_item, QTableWidgetItem(note))):
                self.table.setItem(r, c, item)
        self._fill_costs(nums)
        self._fit_height(self.table)
        self._fit_height(self.cost_table)

    @staticmethod
    def _fit_height(table: QTableWidget) -> None:
        """Tables this small read best whole: no inner scroll bar, the panel scrolls instead."""
        table.resizeRowsToContents()
        height = table.horizontalHeader().height() + 2 * table.frameWidth()
        height += sum(table.rowHeight(r) for r in range(table.rowCount()))
        table.setFixedHeight(height + 2)

    def _fill_costs(self, nums: dict) -> None:
        multi, single, multiplied = head_costs(nums["d"], nums["heads"])
        n, layers = nums["n"], nums["layers"]
        self.cost_explain.setText(tr("shapes.cost.explain", **nums))
        self.cost_table.setHorizontalHeaderLabels(
            [tr("shapes.cost.col.multi", **nums), tr("shapes.cost.col.single", **nums), tr("shapes.cost.col.multiplied", **nums)]
        )

        def width(c: HeadCost) -> str:
            return f"{c.heads} × {c.head_dim} = {c.width:,}"

        def c_attn(c: HeadCost) -> str:
            return f"{c.d:,} × {3 * c.width:,} + {c.c_attn_biases:,} = {c.c_attn_weights + c.c_attn_biases:,}"

        def c_proj(c: HeadCost) -> str:
            return f"{c.width:,} × {c.d:,} + {c.c_proj_biases:,} = {c.c_proj_weights + c.c_proj_biases:,}"

        def layer(c: HeadCost) -> str:
            return f"{c.per_layer:,}"

        def model(c: HeadCost) -> str:
            return f"{layers} × {c.per_layer:,} = {layers * c.per_layer:,}"

        def scores(c: HeadCost) -> str:
            return f"{c.heads} × {n} × {n} × {c.head_dim} = {c.score_macs(n):,}"

        rows = [
            ("shapes.cost.row.width", width),
            ("shapes.cost.row.c_attn", c_attn),
            ("shapes.cost.row.c_proj", c_proj),
            ("shapes.cost.row.layer", layer),
            ("shapes.cost.row.model", model),
            ("shapes.cost.row.scores", scores),
        ]
        self.cost_table.setRowCount(len(rows))
        self.cost_table.setVerticalHeaderLabels([tr(key, **nums) for key, _ in rows])
        for r, (_, cell) in enumerate(rows):
            for c, cost in enumerate((multi, single, multiplied)):
                item = QTableWidgetItem(cell(cost))
                item.setFont(self._mono)
                item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                self.cost_table.setItem(r, c, item)
        self.cost_verdict.setText(
            tr(
                "shapes.cost.verdict",
                per_layer=f"{multi.per_layer:,}",
                ratio=f"{multiplied.per_layer / multi.per_layer:.1f}",
                **nums,
            )
        )

    def table_for_export(self):
        """The shape table, then the cost comparison (CSV export)."""
        if self._state is None:
            return None
        header = ["step", "shape", "note"]
        rows = [[row.name, format_shape(row.shape), row.note] for row in self._state.shapes]
        multi, single, multiplied = self.cost_numbers()
        for label, cost in (("cost: heads x d_k", multi), ("cost: 1 head x d", single), ("cost: heads x d", multiplied)):
            rows.append([label, f"({cost.heads}, {cost.head_dim})", f"attention parameters per layer: {cost.per_layer}"])
        return header, rows


    def cost_numbers(self) -> tuple[HeadCost, HeadCost, HeadCost] | None:
        """The three costs shown (for the tour and the tests), or None before a state."""
        if self._state is None:
            return None
        cfg = self._state.model.lens.config
        return head_costs(cfg.n_embd, cfg.n_head)
