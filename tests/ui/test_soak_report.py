"""The soak's report keeps a new window's construction (start-up) apart from the stalls of a
running window, names the handler of each slow action, and says how many went over the goal."""

from __future__ import annotations

from attention_lab.ui.soak import SLOWEST_KEPT, STALL_GOAL_MS, StallLedger, summarise
from attention_lab.ui.stall_trace import Stall


def test_start_up_is_filed_apart_from_the_running_windows_stalls():
    ledger = StallLedger()
    ledger.add(40.0, "set_layer", {"layer": 1}, startup=False)
    ledger.add(1800.0, "quit_and_start_again", {}, startup=True)
    traced = Stall(ms=150.0, cpu_ms=140.0, off_cpu=False, handler="attention_lab.ui.export.export_plot",
                   hot_spot="attention_lab.ui.export.export_plot", samples=30)
    ledger.add(150.0, "export", {"kind": "svg", "panel_id": "panel.mask"}, startup=False, stall=traced)
    # the running window's worst is the export, not the restart
    assert [e["action"] for e in ledger.slowest] == ["export", "set_layer"]
    assert ledger.slowest[0]["handler"] == "attention_lab.ui.export.export_plot" and ledger.slowest[0]["cpu_ms"] == 140.0
    assert "handler" not in ledger.slowest[1]  # not traced: under the trace threshold
    assert [e["action"] for e in ledger.startups] == ["quit_and_start_again"] and ledger.startup_count == 1
    assert ledger.running_over_goal == 1 and 150.0 > STALL_GOAL_MS > 40.0
    sample = ledger.take_sample()
    assert sample == {"max_stall_ms": 150.0, "max_startup_stall_ms": 1800.0}
    assert ledger.take_sample() == {"max_stall_ms": 0.0, "max_startup_stall_ms": 0.0}  # zeroed per sample

    samples = [{"t_s": 10.0, "rss_mb": 400.0, **sample}, {"t_s": 20.0, "rss_mb": 401.0, "max_stall_ms": 30.0,
                                                          "max_startup_stall_ms": 0.0}]
    summary = summarise(samples, warmup_s=0.0)
    assert summary["max_stall_ms"] == 150.0 and summary["max_startup_stall_ms"] == 1800.0


def test_only_the_slowest_actions_are_kept_slowest_first():
    ledger = StallLedger()
    for ms in range(SLOWEST_KEPT + 5):
        ledger.add(float(ms), "type_text", {}, startup=False)
    kept = [e["stall_ms"] for e in ledger.slowest]
    assert len(kept) == SLOWEST_KEPT and kept == sorted(kept, reverse=True) and kept[0] == SLOWEST_KEPT + 4
