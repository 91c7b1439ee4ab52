"""What each Lab tour step points at, as a part of a widget in the window (a :class:`~.in_view.Target`).

A step's words name something on screen ("the Mask panel's "zero the score" row", "the stripe
of the best induction head"); the tour brings that part into view when the step settles
(:meth:`TourDock.bring_target_into_view`), and the tests and the learner checks ask
:func:`step_target` whether the window really shows it (``in_view.in_sight``).
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QRectF
from PySide6.QtWidgets import QMainWindow, QTableWidget

from attention_lab.core.tour import STEP_KEYS
from attention_lab.ui.in_view import Target
from attention_lab.ui.panels.ids import PanelId


def _whole(panel_id: PanelId, attribute: str) -> Callable[[QMainWindow], Target | None]:
    def target(window: QMainWindow) -> Target | None:
        panel = window.built_panel(panel_id)
        if panel is None:
            return None
        widget = getattr(panel, attribute)
        return Target(widget, widget.rect(), name=f"{panel_id.value}.{attribute}")

    return target


def _table_row(table: QTableWidget, row: int, name: str) -> Target:
    model = table.model()
    rect = table.visualRect(model.index(row, 0))
    for column in range(1, table.columnCount()):
        rect = rect.united(table.visualRect(model.index(row, column)))

    def reveal() -> None:
        table.scrollTo(model.index(row, 0))

    return Target(table.viewport(), rect, reveal, name)


def _zero_score_row(window: QMainWindow) -> Target | None:
    """The Mask panel's table, the selected mode's row ("zero the score" in this step): its name and its row sums."""
    panel = window.built_panel(PanelId.MASK)
    if panel is None:
        return None
    return Target(panel.table.viewport(), panel.mode_row_rect(), panel.show_mode_row, "panel.mask.zero_score_row")


def _c_proj_row(window: QMainWindow) -> Target | None:
    """The Shapes table's c_proj row: the one matmul that mixes the heads."""
    panel = window.built_panel(PanelId.SHAPES)
    if panel is None:
        return None
    table = panel.table
    for row in range(table.rowCount()):
        item = table.item(row, 0)
        if item is not None and item.text().strip() == "c_proj":
            return _table_row(table, row, "panel.shapes.c_proj_row")
    return Target(table, table.rect(), name="panel.shapes.table")


def _repeated_half(window: QMainWindow) -> Target | None:
    """The enlarged head's map, its rows of the sequence's second copy: where an induction head's stripe is."""
    grid = window.built_panel(PanelId.HEAD_GRID)
    if grid is None or grid.state is None or not grid._head_plots:
        return None
    n = grid.state.n_tokens
    _plot, image, _over, _texts = grid._head_plots[0]
    scene_rect = image.mapRectToScene(QRectF(0, n // 2, n, n - n // 2))
    rect = grid.head_view.mapFromScene(scene_rect).boundingRect()
    return Target(grid.head_view, rect.intersected(grid.head_view.rect()), name="panel.head_grid.repeated_half")


#: step key -> what the step points at (None while its panel is not built)
TARGETS: dict[str, Callable[[QMainWindow], Target | None]] = {
    "budget": _whole(PanelId.HEAD_GRID, "budget"),
    "mask": _whole(PanelId.MASK, "grid_plot"),
    "why_inf": _zero_score_row,
    "maps": _whole(PanelId.HEAD_GRID, "head_view"),
    "multihead_cost": _whole(PanelId.SHAPES, "cost_box"),
    "wo_mixes": _c_proj_row,
    "leakage": _whole(PanelId.LEAKAGE, "bar_plot"),
    "portrait": _whole(PanelId.PORTRAIT, "table"),
    "induction": _repeated_half,
    "kvcache": _whole(PanelId.GENERATE, "map_box"),
    "mask_designer": _whole(PanelId.MASK_DESIGNER, "reach_box"),
    "knockout": _whole(PanelId.KNOCKOUT, "map_box"),
}
assert set(TARGETS) == set(STEP_KEYS)


def step_target(window: QMainWindow, key: str) -> Target | None:
    """What step ``key`` points at in ``window`` now (its rectangle as laid out at this moment)."""
    return TARGETS[key](window)
