"""Which panel intent calls which session method, and which session result goes to which panel.

The one place where views meet the session (the ndv pattern: views are setters and signals,
the controller's wiring is a table).  Panels don't know the session and never submit work;
the session doesn't know the panels.  Every connection goes to a bound method of the panel,
so Qt drops it when the panel is destroyed.  Tests wire a session to
``MagicMock(spec=…Panel)`` views with the same function.

What only the window does (the status bar, error dialogs, opening a head in the grid,
writing an applied edit back into the editor) arrives through :class:`WindowSlots`.
"""

from __future__ import annotations

from typing import Callable, Protocol

from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.session import Session


class WindowSlots(Protocol):
    def apply_replacement(self) -> None: ...
    def select_head(self, layer: int, head: int) -> None: ...
    def show_status(self, message: str) -> None: ...
    def show_error(self, message: str, details: str = "") -> None: ...


def _follow_inputs(session: Session, panel) -> None:
    """``panel`` shows the learner's inputs: now (it may be built long after they were set) and at each change."""
    session.inputs_changed.connect(panel.show_inputs)
    panel.show_inputs(session.inputs, session.inputs)


def _token_editor(session: Session, panel, window: WindowSlots | None) -> None:  # panels.token_editor
    _follow_inputs(session, panel)
    panel.text_changed.connect(session.set_text)
    panel.position_requested.connect(session.set_position)
    panel.replacement_requested.connect(session.set_replacement)
    panel.bos_toggled.connect(session.set_bos)
    panel.set_word_resolver(session.replacement_from_word)
    if window is not None:
        panel.apply_requested.connect(window.apply_replacement)
        panel.status_message.connect(window.show_status)


def _head_grid(session: Session, panel, window: WindowSlots | None) -> None:  # panels.head_grid
    _follow_inputs(session, panel)
    panel.layer_requested.connect(session.set_layer)
    panel.causal_requested.connect(session.set_causal)
    panel.knockout_toggled.connect(session.toggle_knockout)
    panel.grid_pixels_changed.connect(session.set_grid_pixels)
    if window is not None:
        panel.head_selected.connect(window.select_head)
        panel.status_message.connect(window.show_status)


def _leakage(session: Session, panel, window: WindowSlots | None) -> None:  # panels.leakage
    panel.position_requested.connect(session.set_position)
    panel.replacement_requested.connect(session.set_replacement)
    panel.set_word_resolver(session.replacement_from_word)
    if window is not None:
        panel.status_message.connect(window.show_status)


def _mask(session: Session, panel, window: WindowSlots | None) -> None:  # panels.mask
    _follow_inputs(session, panel)
    panel.mode_picked.connect(session.set_mask_mode)
    panel.modes_wanted.connect(session.measure_mask_modes)
    session.mask_modes_ready.connect(panel.show_mask_modes)
    session.job_failed.connect(panel.show_job_failure)
    if window is not None:
        panel.error_raised.connect(window.show_error)


def _portrait(session: Session, panel, window: WindowSlots | None) -> None:  # panels.portrait
    panel.induction_wanted.connect(session.measure_induction)
    panel.knockout_toggled.connect(session.toggle_knockout)  # the head grid's intent: one knocked-out set
    session.induction_ready.connect(panel.show_induction)
    session.job_failed.connect(panel.show_job_failure)
    if window is not None:
        panel.head_selected.connect(window.select_head)
        panel.error_raised.connect(window.show_error)


def _kv(session: Session, panel, window: WindowSlots | None) -> None:  # panels.kv_bench
    _follow_inputs(session, panel)
    panel.new_tokens_chosen.connect(session.set_kv_new_tokens)
    panel.benchmark_wanted.connect(session.run_kv_benchmark)
    panel.benchmark_cancel_wanted.connect(session.cancel_kv_benchmark)
    panel.stability_wanted.connect(session.measure_kv_stability)
    session.kv_bench_step.connect(panel.show_benchmark_step)
    session.kv_bench_finished.connect(panel.show_benchmark_result)
    session.kv_bench_cancelled.connect(panel.show_benchmark_cancelled)
    session.kv_stability_ready.connect(panel.show_kv_stability)
    session.job_failed.connect(panel.show_job_failure)
    if window is not None:
        panel.error_raised.connect(window.show_error)
        panel.status_message.connect(window.show_status)


def _mask_designer(session: Session, panel, window: WindowSlots | None) -> None:  # panels.mask_designer
    _follow_inputs(session, panel)
    panel.mask_chosen.connect(session.set_mask)
    panel.report_wanted.connect(session.measure_mask_report)
    session.mask_report_progress.connect(panel.show_report_progress)
    session.mask_report_ready.connect(panel.show_mask_report)
    session.job_failed.connect(panel.show_job_failure)
    if window is not None:
        panel.error_raised.connect(window.show_error)


def _knockout(session: Session, panel, window: WindowSlots | None) -> None:  # panels.knockout
    panel.knockout_chosen.connect(session.set_knockout)
    panel.knockout_wanted.connect(session.run_knockout)
    panel.ranking_wanted.connect(session.rank_heads)
    panel.ranking_cancel_wanted.connect(session.cancel_ranking)
    session.analysis_mask_changed.connect(panel.show_knockout_choice)
    session.knockout_ready.connect(panel.show_knockout)
    session.ranking_progress.connect(panel.show_ranking_progress)
    session.ranking_ready.connect(panel.show_ranking)
    session.ranking_cancelled.connect(panel.show_ranking_cancelled)
    session.job_failed.connect(panel.show_job_failure)
    if window is not None:
        panel.head_selected.connect(window.select_head)


def _generate(session: Session, panel, window: WindowSlots | None) -> None:  # panels.generate
    panel.generation_wanted.connect(session.generate)
    session.generation_ready.connect(panel.show_generation)
    session.job_failed.connect(panel.show_job_failure)


def _shapes(session: Session, panel, window: WindowSlots | None) -> None:  # panels.shapes: shows, asks nothing
    pass


# by panel id, not by class: a panel's module is imported only when the panel is built
WIRES: dict[PanelId, Callable[[Session, object, WindowSlots | None], None]] = {
    PanelId.TOKEN_EDITOR: _token_editor,
    PanelId.HEAD_GRID: _head_grid,
    PanelId.LEAKAGE: _leakage,
    PanelId.MASK: _mask,
    PanelId.PORTRAIT: _portrait,
    PanelId.KVBENCH: _kv,
    PanelId.SHAPES: _shapes,
    PanelId.MASK_DESIGNER: _mask_designer,
    PanelId.KNOCKOUT: _knockout,
    PanelId.GENERATE: _generate,
}


def connect_panel(session: Session, panel, window: WindowSlots | None = None) -> None:
    """Connect ``panel``'s intents and result slots to ``session`` (and ``window``), then tell
    it it is served."""
    WIRES[PanelId(panel.panel_id)](session, panel, window)
    panel.session_ready()


def connect_exports(session: Session, exports) -> None:
    """File › Export's table and PNG (``export.PanelExports``): the intents to the session's worker
    jobs, the written file or the failure back."""
    exports.csv_wanted.connect(session.export_csv)
    exports.png_wanted.connect(session.export_png)
    session.file_exported.connect(exports.file_written)
    session.file_export_failed.connect(exports.file_failed)
