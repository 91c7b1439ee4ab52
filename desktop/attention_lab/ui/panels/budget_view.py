"""The head grid's fixed-budget view (the chapter's §1): one query token, every head, and their average.

Every row of attention sums to 1, so one head must choose where its budget goes.  The view
shows the chosen query's row in each head of the layer (one row of a heatmap per head) and,
above them, the heads' average -- the single blurred row one head would have to settle for.
The numbers come from :func:`core.budget.budget_rows` on the current analysis state; the
query opens on :func:`core.budget.default_query` (the chapter's verb, "bit" / "mordeu", or
where the heads disagree most) and the learner can pick any position.  The head the grid has
selected is outlined.
"""

from __future__ import annotations

import html

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtWidgets import QComboBox, QHBoxLayout, QLabel, QSizePolicy, QVBoxLayout, QWidget

from attention_lab.core.budget import BudgetRows, budget_rows, default_query, word_at
from attention_lab.ui import number_format
from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.heatmap_kit import colormap, fit_token_ticks
from attention_lab.ui.panels.panel_kit import MORE, CellLabels, explanation_label, fmt_number
from attention_lab.ui.panels.plot_setters import plain_axes, set_axis_label, set_ticks, set_title, set_view_range
from attention_lab.ui.strings import budget_view as _texts  # noqa: F401 -- registers the texts

CELL_TEXT_LIMIT = 160  # weights written in the cells up to this many cells
WHITE, BLACK = (255, 255, 255), (0, 0, 0)  # a cell's weight on a dark / light colour


class BudgetView(QWidget):
    """One query's row in every head of the layer, and the heads' average row under them."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("head_grid.budget")
        self._state = None
        self._head = 0
        self._rows: BudgetRows | None = None
        self._ids: tuple | None = None  # the text the query was chosen for: a new text gets a new default
        self.explain = explanation_label(self)
        self.query_label = QLabel(self)
        self.query_combo = QComboBox(self)
        self.query_combo.setObjectName("head_grid.budget.query")
        self.query_combo.currentIndexChanged.connect(lambda _i: self._render())
        self.view = pg.GraphicsLayoutWidget(self)
        self.view.setBackground("w")
        self.plot = self.view.addPlot(row=0, col=0, enableMenu=False)
        self.plot.hideButtons()
        plain_axes(self.plot)
        vb = self.plot.getViewBox()
        vb.invertY(True)
        vb.setMouseEnabled(x=False, y=False)
        vb.disableAutoRange()
        self.image = pg.ImageItem(axisOrder="row-major")
        self.image.setLookupTable(colormap().getLookupTable(0.0, 1.0, 256))
        self.plot.addItem(self.image)
        self.bar = pg.ColorBarItem(values=(0.0, 1.0), colorMap=colormap(), interactive=False, width=14)
        self.bar.setImageItem(self.image)
        self.view.addItem(self.bar, row=0, col=1)
        # the average row sits apart, above a white gap: it is not one more head
        self.gap = pg.InfiniteLine(angle=0, pen=pg.mkPen("w", width=6))
        self.plot.addItem(self.gap)
        self.outline = pg.QtWidgets.QGraphicsRectItem()
        self.outline.setPen(pg.mkPen((230, 80, 20), width=2, cosmetic=True))
        self.outline.setZValue(10)
        self.plot.addItem(self.outline)
        # one item paints every cell's weight: a TextItem per cell cost ~2 ms each on first use,
        # and the tour's first step (this view) stalled the window 0.19-0.28 s making 52 of them
        self._cells = CellLabels()
        self.plot.addItem(self._cells)
        self.view.setMinimumHeight(120)
        # the words never make the dock scroll: the map beside them sets the height (its rows are the point)
        self.explain.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Ignored)
        self.explain.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        row = QHBoxLayout()
        row.addWidget(self.query_label)
        row.addWidget(self.query_combo)
        row.addStretch(1)
        # the words beside the map, not above it: on a laptop screen the heads' dock is short,
        # and the map (a row per head) needs the height
        side = QVBoxLayout()
        side.addLayout(row)
        side.addWidget(self.explain, 1)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.view, 3)
        layout.addLayout(side, 2)
        self.retranslate()

    # ------------------------------------------------------------------ public
    def show_state(self, state, head: int) -> None:
        """Draw ``state``'s layer for the chosen query; a new text opens on the default query."""
        self._state, self._head = state, head
        ids = tuple(state.ids)
        keep = self.query() if ids == self._ids else None
        self._ids = ids
        self.query_combo.blockSignals(True)
        self.query_combo.clear()
        for i, token in enumerate(state.tokens):
            self.query_combo.addItem(tr("budget.query.item", i=i, token=token), i)
        self.query_combo.setCurrentIndex(keep if keep is not None else default_query(self._attention(), state.tokens))
        self.query_combo.blockSignals(False)
        self._render()

    def set_head(self, head: int) -> None:
        self._head = head
        self._outline()

    def query(self) -> int | None:
        return self.query_combo.currentData()

    def set_query(self, position: int) -> None:
        self.query_combo.setCurrentIndex(self.query_combo.findData(position))

    def rows(self) -> BudgetRows | None:
        """The numbers drawn (None before a state)."""
        return self._rows

    def summary_text(self) -> str:
        """The explanation as plain text (for tests and the tour)."""
        from PySide6.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setHtml(self.explain.source_text().replace(MORE, ""))  # both parts, whether "More…" is open or not
        return doc.toPlainText()

    def retranslate(self) -> None:
        self.query_label.setText(tr("budget.query"))
        if self._state is not None:
            for i, token in enumerate(self._state.tokens):
                self.query_combo.setItemText(i, tr("budget.query.item", i=i, token=token))
            self._render()

    # ------------------------------------------------------------------ drawing
    def _attention(self):
        return self._state.attention_causal  # the budget is the causal row's: the past only

    def _render(self) -> None:
        state, query = self._state, self.query()
        if state is None or query is None:
            return
        rows = budget_rows(self._attention(), query)
        self._rows = rows
        heads, keys = rows.heads, query + 1
        # the average on top: on a short dock it stays in sight, the heads' rows scroll under it
        table = np.vstack([rows.average.numpy()[None], rows.rows.numpy()]).astype(np.float32)
        self.image.setImage(table, autoLevels=False, levels=(0.0, 1.0))
        self.image.setRect(QRectF(0, 0, keys, heads + 1))
        self.gap.setValue(1)
        labels = [(0.5, tr("budget.average"))] + [(h + 1.5, tr("budget.head", head=h)) for h in range(heads)]
        set_ticks(self.plot.getAxis("left"), [labels, []])
        fit_token_ticks(self.plot, "bottom", state.tokens[:keys])
        set_axis_label(self.plot, "bottom", tr("budget.key_axis"))
        token = word_at(state.tokens, query)  # “mordeu”, not its last piece “u”
        set_title(self.plot, html.escape(tr("budget.title", token=token, query=query, layer=state.layer)), size="10pt")
        set_view_range(self.plot, (0, keys), (0, heads + 1))
        cells = []
        if keys * (heads + 1) <= CELL_TEXT_LIMIT:
            cells = [(number_format.fixed(float(table[r, k]), 2), k + 0.5, r + 0.5, WHITE if table[r, k] < 0.55 else BLACK)
                     for r in range(heads + 1) for k in range(keys)]
        self._cells.show_labels(cells)
        self._outline()
        self.explain.setText(self._explanation(rows, state))

    def _outline(self) -> None:
        if self._rows is None:
            return
        head = min(self._head, self._rows.heads - 1)
        self.outline.setRect(QRectF(0, head + 1, self._rows.query + 1, 1))  # row 0 is the average

    @staticmethod
    def _explanation(rows: BudgetRows, state) -> str:
        if rows.query == 0:
            return tr("budget.first")
        tokens = state.tokens
        top_head = max(range(rows.heads), key=lambda h: rows.top_weight[h])
        return tr(
            "budget.explain",
            token=html.escape(word_at(tokens, rows.query)),
            heads=rows.heads,
            layer=state.layer,
            chosen=len(rows.keys_chosen),
            top=fmt_number(rows.top_weight[top_head], 2),
            top_head=top_head,
            top_token=html.escape(tokens[rows.top_key[top_head]]),
            avg_top=fmt_number(rows.average_top_weight, 2),
            avg_token=html.escape(tokens[rows.average_top_key]),
            avg_entropy=fmt_number(rows.average_entropy, 2),
            head_entropy=fmt_number(rows.mean_head_entropy, 2),
        )
