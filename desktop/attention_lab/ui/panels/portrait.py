"""Head portrait (lab step 4): what each head of the selected layer does.

For each head: the mean distance it looks back, the entropy of its distribution, the
mass it puts on token 0, its previous-token score, its induction score and the chapter's
roles these numbers give (:mod:`core.roles`: positional by the chapter's rule, the stricter
previous-token, sink, induction -- a head may hold several or none).  Roles are thresholded
labels (as in Clark et al. 2019), so the thresholds are adjustable and the roles recomputed
from the same numbers.  Under the table, where each role lives when the layer shown has
none (:mod:`ui.panels.role_where`).  Induction scores need their own input (a repeated
random sequence), so they are computed once per model on the worker and cached.
"""

from __future__ import annotations

import dataclasses

import pyqtgraph as pg
from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontMetrics, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QApplication,
    QDoubleSpinBox,
    QGridLayout,
    QGroupBox,
    QHeaderView,
    QLabel,
    QMenu,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core import roles as chapter_roles
from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.number_format import fixed
from attention_lab.ui.strings import induction as _induction_texts  # noqa: F401 -- registers the texts
from attention_lab.ui.strings import portrait as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.core.jobs import InductionScores
from attention_lab.core.job_protocol import INDUCTION, model_serial
from attention_lab.ui.panels.panel_kit import (
    TextPool,
    grouped_point_labels,
    explanation_label,
    make_plot,
    role_colour,
    roles_text,
    set_box_title,
    set_header_labels,
)
from attention_lab.ui.panels.plot_setters import set_axis_label, show_grid
from attention_lab.ui.panels.role_where import RoleWhereBox


COLUMNS = ("head", "mean_distance", "entropy", "sink_mass", "previous_token", "induction", "roles")
NO_ROLE = "none"  # a head that holds none of the chapter's roles (its colour and legend entry)
PLOT_LEFT_AXIS_PX = 80  # the scatter's left axis (its words and numbers) and the plot's margins
LABEL_GAP = 0.15  # a point's label starts this share of its own width right of the point
ROWS_IN_SIGHT = 6  # of the heads table, at least: half of a layer's twelve, enough to compare them


def role_text(role: str) -> str:
    return tr("portrait.legend.none") if role == NO_ROLE else tr(f"roles.{role}.name")


def primary_role(held: tuple[str, ...]) -> str:
    """The role a head's point and cell are coloured by: its first in :data:`core.roles.ROLES`."""
    return held[0] if held else NO_ROLE


def threshold_text(name: str) -> str:
    key = f"portrait.threshold.{name}"
    text = tr(key)
    return name.replace("_", " ") if text == key else text


class _SortItem(QTableWidgetItem):
    """A cell shown as text but sorted by a number (Qt would sort "10" before "9")."""

    def __init__(self, text: str, key: float | str):
        super().__init__(text)
        self.setData(Qt.ItemDataRole.UserRole, key)

    def __lt__(self, other: QTableWidgetItem) -> bool:  # type: ignore[override]
        a, b = self.data(Qt.ItemDataRole.UserRole), other.data(Qt.ItemDataRole.UserRole)
        try:
            return a < b
        except TypeError:
            return str(a) < str(b)


class PortraitPanel(Panel):
    panel_id = PanelId.PORTRAIT
    title_key = "portrait.title"

    head_selected = Signal(int, int)  # (layer, head)
    error_raised = Signal(str, str)
    induction_wanted = Signal(object)  # LoadedModel: measure its induction scores (Session.measure_induction)
    # layer, head: Shift+click or the right-click menu knocks a head out (or back in), the head
    # grid's own intent (Session.toggle_knockout); panels/knockout.py shows the set
    knockout_toggled = Signal(int, int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._stats: list = []  # HeadStats of the shown layer
        self._roles: dict[int, chapter_roles.HeadRoles] = {}  # head -> its roles (shown layer)
        self._where: dict[str, chapter_roles.RoleWhere] = {}
        self._induction_serial: int | None = None  # the model whose scores are cached or asked for
        # the scores with the serial of the model they were measured on: a state of another
        # model (other layer and head counts) never reads them, even before its own arrive
        self._induction: InductionScores | None = None
        self._induction_error: str | None = None
        self._selected: int | None = None

        self.explain = explanation_label(self)

        # thresholds: one spin box per field of core.roles.RoleRules
        self.threshold_box = QGroupBox(self)
        self._spins: dict[str, QDoubleSpinBox] = {}
        self._spin_labels: dict[str, QLabel] = {}
        # two thresholds a row: in one row they made the panel ≥ 1195 px wide, and opening
        # its tab widened the whole window
        form = QGridLayout()
        form.setHorizontalSpacing(8)
        for index, field in enumerate(self._threshold_fields()):
            spin = QDoubleSpinBox(self.threshold_box)
            spin.setDecimals(3)  # a random-weight model's heads differ in the third decimal
            spin.setRange(0.0, 1000.0)
            spin.setSingleStep(0.05 if field.default <= 1 else 0.5)
            spin.setValue(float(field.default))
            spin.setObjectName(f"threshold.{field.name}")
            spin.valueChanged.connect(self._on_thresholds_changed)
            label = QLabel(self.threshold_box)
            label.setWordWrap(True)  # two long rules side by side would be wider than a laptop's dock
            label.setBuddy(spin)
            row, column = divmod(index, 2)
            form.addWidget(label, row, 2 * column)
            form.addWidget(spin, row, 2 * column + 1)
            self._spins[field.name] = spin
            self._spin_labels[field.name] = label
        self.reset_button = QPushButton(self.threshold_box)
        self.reset_button.clicked.connect(self.reset_thresholds)
        rows = (len(self._spins) + 1) // 2  # under the last column's spin box: no extra column widens the panel
        form.addWidget(self.reset_button, rows - 1 if len(self._spins) % 2 else rows, 3)
        form.setColumnStretch(4, 1)
        self.threshold_box.setLayout(form)

        self.table = QTableWidget(0, len(COLUMNS), self)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.AscendingOrder)
        self.table.cellClicked.connect(self._on_cell_clicked)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_table_menu)
        self._keep_rows_in_sight()

        self.plot = make_plot(self)
        show_grid(self.plot, x=True, y=True, alpha=0.25)
        self.scatter = pg.ScatterPlotItem(size=13, hoverable=True, tip=None)
        self.scatter.sigClicked.connect(self._on_points_clicked)
        self.plot.addItem(self.scatter)
        self.selection_ring = pg.ScatterPlotItem(size=22, pen=pg.mkPen("k", width=2), brush=None, symbol="o")
        self.plot.addItem(self.selection_ring)
        # the legend lives under the plot: inside it, it would cover the heads it explains
        self.legend = QLabel(self)
        self.legend.setTextFormat(Qt.TextFormat.RichText)
        self.legend.setWordWrap(True)
        # "h3" beside each point, placed within the points' own range (a label widening it moved the points)
        self._labels = TextPool(self.plot.getPlotItem(), ignore_bounds=True, anchor=(-LABEL_GAP, 0.5))
        self._label_margin = QTextDocument().documentMargin()  # what a pg.TextItem adds around its text
        view = self.plot.getPlotItem().getViewBox()
        view.sigTransformChanged.connect(self._place_labels)  # zoom, resize
        view.sigResized.connect(self._place_labels)  # a new width with the same range (an axis grown beside it)

        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.where_box = RoleWhereBox(self)
        # "Show": the window switches the grid to that layer and enlarges the head
        self.where_box.show_wanted.connect(self.head_selected)

        left = QWidget(self)
        left_layout = QVBoxLayout(left)
        left_layout.setContentsMargins(0, 0, 0, 0)
        left_layout.addWidget(self.table, 1)
        left_layout.addWidget(self.where_box)
        left_layout.addWidget(self.note)
        right = QWidget(self)
        right_layout = QVBoxLayout(right)
        right_layout.setContentsMargins(0, 0, 0, 0)
        right_layout.addWidget(self.plot, 1)
        right_layout.addWidget(self.legend)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        splitter.addWidget(left)
        splitter.addWidget(right)
        splitter.setStretchFactor(0, 3)
        splitter.setStretchFactor(1, 2)
        splitter.setSizes([600, 400])

        layout = QVBoxLayout(self)
        layout.addWidget(self.explain)
        layout.addWidget(self.threshold_box)
        layout.addWidget(splitter, 1)
        self.retranslate()

    def _keep_rows_in_sight(self) -> None:
        """The table never shorter than ``ROWS_IN_SIGHT`` rows (with its header and sideways scroll
        bar): in a laptop's dock it got what the thresholds and the roles box left, two rows of the
        twelve heads, and the learner scrolled inside it to compare them.  The dock scrolls instead."""
        table = self.table
        height = (table.horizontalHeader().sizeHint().height()
                  + ROWS_IN_SIGHT * table.verticalHeader().defaultSectionSize()
                  + table.horizontalScrollBar().sizeHint().height() + 2 * table.frameWidth())
        table.setMinimumHeight(height)

    # ------------------------------------------------------------------ wiring
    def session_ready(self) -> None:
        if self.state is not None:
            self._ensure_induction()

    def shutdown(self) -> None:
        if self._induction is None:
            self._induction_serial = None  # scores still on their way are not drawn

    # ------------------------------------------------------------------ Panel
    def has_data(self) -> bool:
        return self.state is not None and (self.table.rowCount() > 0 or self.state.n_tokens < 2)

    def show_state(self, state) -> None:
        self.state = state
        self._recompute_roles()
        self._ensure_induction()

    def retranslate(self) -> None:
        """The panel's words in the current language; the scatter's points stay as drawn (a language
        changes no number: drawn again, the scatter was re-ranged and its plot repainted)."""
        set_box_title(self.threshold_box, tr("portrait.thresholds"))
        self.reset_button.setText(tr("portrait.reset"))
        rules = self.thresholds()
        for name, label in self._spin_labels.items():
            label.setText(threshold_text(name))
            role = "previous-token" if name == "previous_token" else name.split("_")[0]
            rule = chapter_roles.describe(role, rules, lang=translator.language)
            for widget in (label, self._spins[name]):
                widget.setToolTip(f"{rule['name']}: {rule['rule']}")
        set_header_labels(self.table, [tr(f"portrait.col.{c}") for c in COLUMNS])
        pi = self.plot.getPlotItem()
        set_axis_label(pi, "bottom", tr("portrait.scatter.x"))
        set_axis_label(pi, "left", tr("portrait.scatter.y"))
        # room for the bottom axis' words beside the left axis: the splitter's 2/5 of a narrow dock cut them
        words = QFontMetrics(pi.getAxis("bottom").label.font()).horizontalAdvance(tr("portrait.scatter.x"))
        self.plot.setMinimumWidth(words + PLOT_LEFT_AXIS_PX)
        self._fill(words_only=True)

    # ------------------------------------------------------------------ thresholds
    @staticmethod
    def _threshold_fields() -> list[dataclasses.Field]:
        return list(dataclasses.fields(chapter_roles.RoleRules))

    def thresholds(self) -> chapter_roles.RoleRules:
        """The chapter's role rules under the values shown (defaults: core's)."""
        if len(self._spins) < len(self._threshold_fields()):  # still being built
            return chapter_roles.RoleRules()
        return chapter_roles.RoleRules(**{name: spin.value() for name, spin in self._spins.items()})

    def set_threshold(self, name: str, value: float) -> None:
        self._spins[name].setValue(value)

    def reset_thresholds(self) -> None:
        for field in self._threshold_fields():
            spin = self._spins[field.name]
            spin.blockSignals(True)
            spin.setValue(float(field.default))
            spin.blockSignals(False)
        self._on_thresholds_changed()

    def _on_thresholds_changed(self, *_args) -> None:
        if self.state is not None:
            self._recompute_roles()

    def _recompute_roles(self) -> None:
        """Roles of every head under the thresholds shown: the numbers come with the analysis
        (every layer's portrait, measured on the worker), so this is a few comparisons per head."""
        state = self.state
        if state.n_tokens < 2:  # row 0 of a causal map is always [1, 0, …]: nothing to portray
            self._stats, self._roles, self._where = [], {}, {}
        else:
            self._stats = list(state.portrait)
            table = chapter_roles.role_map(state.overview, state.n_tokens, self._induction_table(), self.thresholds())
            self._roles = {r.head: r for r in table if r.layer == state.layer}
            self._where = chapter_roles.where_all(table, state.layer)
        self._fill()

    def _induction_table(self):
        """This model's ``[L, H]`` induction scores, None until they arrive."""
        if self._induction is None or self._induction.model_serial != model_serial(self.state.model):
            return None
        return self._induction.scores

    def roles_of(self, head: int) -> tuple[str, ...]:
        """The chapter's roles ``head`` of the shown layer holds under the thresholds shown."""
        held = self._roles.get(head)
        return held.roles if held is not None else ()

    def where(self, role: str) -> chapter_roles.RoleWhere | None:
        """Where ``role``'s heads are, seen from the shown layer (None before a portrait)."""
        return self._where.get(role)

    # ------------------------------------------------------------------ induction (worker, once per model)
    def _ensure_induction(self) -> None:
        model = self.state.model
        serial = model_serial(model)
        if self._induction_serial == serial or not self.is_served("induction_wanted"):
            return  # cached or asked for, or asked for when the session is connected
        self._induction_serial = serial
        self._induction = None
        self._induction_error = None
        self.induction_wanted.emit(model)

    def show_induction(self, result: InductionScores) -> None:
        if result.model_serial != self._induction_serial:
            return
        self._induction = result
        if self.state is not None:
            self._recompute_roles()  # induction becomes a role now

    def show_job_failure(self, kind: str, serial: int, message: str, details: str) -> None:
        if kind != INDUCTION or serial != self._induction_serial:
            return
        self._induction_error = message
        self._induction_serial = None  # try again with the next state
        self._fill()
        self.error_raised.emit(tr("portrait.induction.failed", message=message), details)

    def induction_for(self, head: int) -> float | None:
        if (self._induction is None or self.state is None
                or self._induction.model_serial != model_serial(self.state.model)):
            return None  # (scores of the previous model, until this one's arrive: other shapes)
        return float(self._induction.scores[self.state.layer, head])

    # ------------------------------------------------------------------ view
    def stats(self) -> list:
        """The HeadStats shown (roles under the current thresholds)."""
        return list(self._stats)

    def _induction_sequence(self) -> str:
        """" Measured on: …" -- the sequence the induction scores come from, named (its first half)."""
        result = self._induction
        if result is None or not result.ids or self.state is None or self._induction_table() is None:
            return ""
        body = list(result.ids)
        eos = getattr(self.state.model.tokenizer, "eos_id", None)
        if body and body[0] == eos:
            body = body[1:]
        half = self.state.model.tokenizer.decode(body[: len(body) // 2]).strip()
        return " " + tr("portrait.induction.sequence", first=half, count=len(result.ids))

    def _fill(self, words_only: bool = False) -> None:
        """Everything shown for the state; ``words_only``: all but the scatter's points."""
        if self.state is None:
            self.explain.setText(tr("portrait.empty"))
            self.note.setText("")
            return
        state = self.state
        if not self._stats:
            self.explain.setText(tr("portrait.too_short"))
        else:
            self.explain.setText(tr("portrait.explain", heads=len(self._stats), layer=state.layer)
                                 + " " + tr("portrait.knockout_hint"))
        self.note.setText(
            tr("portrait.induction.note") + self._induction_sequence()
            if self._induction_error is None
            else tr("portrait.induction.failed", message=self._induction_error)
        )
        pending = set() if self._induction_table() is not None else {"induction"}
        if self._stats:
            self.where_box.show_where(self._where, pending)
        self.where_box.setVisible(bool(self._stats))
        self._fill_table()
        self._fill_scatter(words_only)

    def _cells(self, s) -> list[tuple[str, float | str]]:
        """(text, sort key) of one head's row."""
        induction = self.induction_for(s.head)
        if induction is None:
            ind = (tr("portrait.induction.pending") if self._induction_error is None else "—", -1.0)
        else:
            ind = (fixed(induction, 3), induction)
        # a knocked-out head keeps its row (its own attention is unchanged), marked ✕
        head_text = f"{s.head} ✕" if s.head in self.knocked_out() else str(s.head)
        return [
            (head_text, s.head),
            (fixed(s.mean_distance, 3), float(s.mean_distance)),
            (fixed(s.entropy, 3), float(s.entropy)),
            (fixed(s.sink_mass, 3), float(s.sink_mass)),
            (fixed(s.previous_token, 3), float(s.previous_token)),
            ind,
            (roles_text(self.roles_of(s.head)), ",".join(self.roles_of(s.head))),
        ]

    def _fill_table(self) -> None:
        """Rows filled in place: a new item per cell per edit relaid the whole table out
        (~20 ms of GUI time per analysis); changing the texts of the items there is cheap."""
        table = self.table
        header = table.horizontalHeader()
        sort_column, sort_order = header.sortIndicatorSection(), header.sortIndicatorOrder()
        head_role = Qt.ItemDataRole.UserRole + 1
        by_head = {s.head: s for s in self._stats}
        shown = [table.item(row, 0) for row in range(table.rowCount())]
        table.setSortingEnabled(False)  # filling a sorted table moves rows under our feet
        table.setUpdatesEnabled(False)
        # sized to the contents once at the end, not after every cell (~0.2 ms per cell)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        try:
            if len(shown) == len(by_head) and all(i is not None and i.data(head_role) in by_head for i in shown):
                rows = [(row, by_head[item.data(head_role)]) for row, item in enumerate(shown)]
            else:
                table.setRowCount(len(self._stats))
                rows = list(enumerate(self._stats))
            for row, s in rows:
                for col, (text, key) in enumerate(self._cells(s)):
                    item = table.item(row, col)
                    if item is None:
                        item = _SortItem(text, key)
                        if 0 < col < 6:
                            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
                        table.setItem(row, col, item)
                    elif item.text() != text or item.data(Qt.ItemDataRole.UserRole) != key:
                        item.setText(text)
                        item.setData(Qt.ItemDataRole.UserRole, key)
                    if item.data(head_role) != s.head:
                        item.setData(head_role, s.head)
                role_item = table.item(row, len(COLUMNS) - 1)
                colour = pg.mkColor(*role_colour(primary_role(self.roles_of(s.head))), 60)
                if role_item.background().color() != colour:
                    role_item.setBackground(colour)
        finally:
            header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
            table.setUpdatesEnabled(True)
            table.setSortingEnabled(True)
            table.sortItems(sort_column, sort_order)

    def _place_labels(self, *_args) -> None:
        """"h3" beside each point; heads whose labels would overlap at this zoom share one ("h4, h8")."""
        stats = self._stats
        shown = self._labels.items  # measured in the labels' own font once they exist
        metrics = QFontMetrics(shown[0].textItem.font() if shown else QApplication.font())
        points = [(f"h{s.head}", float(s.mean_distance), float(s.entropy)) for s in stats]
        pixel = self.plot.getPlotItem().getViewBox().viewPixelSize()
        x_range = tuple(self.plot.getPlotItem().getViewBox().viewRange()[0])
        # a digit's advance, not the average character's: the labels are "h" and digits, and digits are wider
        labels = grouped_point_labels(points, pixel, metrics.horizontalAdvance("0"), metrics.height(), gap=LABEL_GAP,
                                      margin_px=self._label_margin, x_range=x_range, text_px=metrics.horizontalAdvance)
        self._labels.show((text, x, y, (40, 40, 40)) for text, x, y in labels)

    def _fill_scatter(self, words_only: bool = False) -> None:
        """The heads' points, their labels and the roles' legend; ``words_only``: the legend."""
        if not words_only:
            self._draw_points()
        counts: dict[str, int] = {}
        for s in self._stats:  # a head with several roles counts in each (coloured by its first)
            for role in self.roles_of(s.head) or (NO_ROLE,):
                counts[role] = counts.get(role, 0) + 1
        order = (*chapter_roles.ROLES, NO_ROLE)
        self.legend.setText(
            "&nbsp;&nbsp; ".join(
                f'<span style="color: rgb{role_colour(role)}; font-size: large">●</span> {role_text(role)} ({counts[role]})'
                for role in order if role in counts
            )
        )

    def _draw_points(self) -> None:
        spots = []
        knocked = self.knocked_out()
        for s in self._stats:
            colour = role_colour(primary_role(self.roles_of(s.head)))
            spots.append(
                dict(
                    pos=(float(s.mean_distance), float(s.entropy)),
                    data=s.head,
                    brush=pg.mkBrush(*colour, 220),
                    pen=pg.mkPen(40, 40, 40),
                    symbol="x" if s.head in knocked else "o",
                )
            )
        self.scatter.setData(spots)
        self._place_labels()
        self._update_selection_ring()
        self.plot.getPlotItem().enableAutoRange()

    def _update_selection_ring(self) -> None:
        chosen = [s for s in self._stats if s.head == self._selected]
        if chosen:
            s = chosen[0]
            self.selection_ring.setData([float(s.mean_distance)], [float(s.entropy)])
        else:
            self.selection_ring.setData([], [])

    # ------------------------------------------------------------------ selection
    def select_head(self, head: int) -> None:
        """Mark ``head`` here and tell the window (which opens it in the head grid)."""
        if self.state is None:
            return
        self._selected = head
        self._update_selection_ring()
        for row in range(self.table.rowCount()):
            item = self.table.item(row, 0)
            if item is not None and item.data(Qt.ItemDataRole.UserRole + 1) == head:
                self.table.blockSignals(True)
                self.table.selectRow(row)
                self.table.blockSignals(False)
                break
        self.head_selected.emit(self.state.layer, head)

    def _head_at_row(self, row: int) -> int | None:
        item = self.table.item(row, 0)
        return None if item is None else int(item.data(Qt.ItemDataRole.UserRole + 1))

    def _on_cell_clicked(self, row: int, _col: int) -> None:
        head = self._head_at_row(row)
        if head is not None:
            self._click_head(head)

    def _on_points_clicked(self, _item, points, *_ev) -> None:
        if len(points):
            self._click_head(int(points[0].data()))

    def _click_head(self, head: int) -> None:
        """A click opens the head; Shift+click knocks it out (or back in), as in the head grid."""
        if QApplication.keyboardModifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.toggle_knockout(head)
        else:
            self.select_head(head)

    # ------------------------------------------------------------------ knockout
    def knocked_out(self) -> set[int]:
        """Heads of the shown layer knocked out in the analysis shown."""
        if self.state is None:
            return set()
        return {h for layer, h in self.state.extras.get("knockout", ()) if layer == self.state.layer}

    def toggle_knockout(self, head: int) -> None:
        if self.state is not None:
            self.knockout_toggled.emit(self.state.layer, int(head))

    def knockout_menu(self, head: int) -> QMenu:
        """The right-click menu of a head's row: knock it out, or put it back."""
        menu = QMenu(self)
        key = "portrait.put_back" if head in self.knocked_out() else "portrait.knock_out"
        action = menu.addAction(tr(key, layer=self.state.layer if self.state is not None else 0, head=head))
        action.triggered.connect(lambda: self.toggle_knockout(head))
        return menu

    def _on_table_menu(self, pos) -> None:
        head = self._head_at_row(self.table.rowAt(pos.y()))
        if head is not None and self.state is not None:
            self.knockout_menu(head).exec(self.table.viewport().mapToGlobal(pos))

    # ------------------------------------------------------------------ export
    def table_for_export(self):
        if not self._stats:
            return None
        header = ["layer", "head", "mean_distance", "entropy", "sink_mass", "previous_token", "induction", "roles"]
        rows = []
        for s in self._stats:
            induction = self.induction_for(s.head)
            rows.append(
                [
                    s.layer,
                    s.head,
                    float(s.mean_distance),
                    float(s.entropy),
                    float(s.sink_mass),
                    float(s.previous_token),
                    "" if induction is None else induction,
                    " ".join(self.roles_of(s.head)),
                ]
            )
        return header, rows

    def plot_for_export(self):
        return self.plot.getPlotItem() if self._stats else None
