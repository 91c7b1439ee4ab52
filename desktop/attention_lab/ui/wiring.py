"""Which panel intent calls which session method, and which session result goes to which panel.

The one place where views meet the session (the ndv pattern: views are setters and signals,
the controller's wiring is a table).  Panels don't know the session and never submit work;
the session doesn't know the panels.  Every connection goes to a bound method of the panel,
so Qt drops it when the panel is destroyed.  Tests wire a session to
``MagicMock(spec=…Panel)`` views with the same function.
"""

from __future__ import annotations

from typing import Callable

from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.session import Session


def _mask(session: Session, panel) -> None:  # ui.panels.mask.MaskPanel
    panel.modes_wanted.connect(session.measure_mask_modes)
    session.mask_modes_ready.connect(panel.show_mask_modes)


def _portrait(session: Session, panel) -> None:  # ui.panels.portrait.PortraitPanel
    panel.induction_wanted.connect(session.measure_induction)
    session.induction_ready.connect(panel.show_induction)


def _kv(session: Session, panel) -> None:  # ui.panels.kv_bench.KVBenchPanel
    panel.benchmark_wanted.connect(session.run_kv_benchmark)
    panel.benchmark_cancel_wanted.connect(session.cancel_kv_benchmark)
    panel.stability_wanted.connect(session.measure_kv_stability)
    session.kv_bench_step.connect(panel.show_benchmark_step)
    session.kv_bench_finished.connect(panel.show_benchmark_result)
    session.kv_bench_cancelled.connect(panel.show_benchmark_cancelled)
    session.kv_stability_ready.connect(panel.show_kv_stability)


# by panel id, not by class: a panel's module is imported only when the panel is built
WIRES: dict[str, Callable[[Session, object], None]] = {
    PanelId.MASK: _mask,
    PanelId.PORTRAIT: _portrait,
    PanelId.KVBENCH: _kv,
}


def connect_panel(session: Session, panel) -> None:
    """Connect ``panel``'s intents and result slots to ``session``, then tell it it is served."""
    wire = WIRES.get(panel.panel_id)
    if wire is not None:
        wire(session, panel)
        session.job_failed.connect(panel.show_job_failure)
    panel.session_ready()
