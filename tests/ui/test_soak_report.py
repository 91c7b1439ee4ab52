"""The soak's report keeps a new window's construction (start-up) apart from the stalls of a
running window, names the handler of each slow action, and says how many went over the goal."""

from __future__ import annotations

from attention_lab.devtools.soak import (
    NOT_TRACED,
    SLOWEST_KEPT,
    STALL_GOAL_MS,
    StallLedger,
    log_line,
    summarise,
)
from attention_lab.devtools.stall_trace import Stall


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


def test_the_over_goal_actions_are_counted_per_hot_spot_and_per_action_most_first():
    ledger = StallLedger()
    export = Stall(ms=400.0, cpu_ms=380.0, off_cpu=False, handler="attention_lab.ui.main_window.export_current",
                   hot_spot="attention_lab.ui.export.export_plot", samples=90)
    qt = Stall(ms=300.0, cpu_ms=290.0, off_cpu=False, handler="Qt C++", hot_spot="Qt C++", samples=70)
    for _ in range(3):
        ledger.add(400.0, "export", {"kind": "png"}, startup=False, stall=export)
    ledger.add(300.0, "reset_layout", {}, startup=False, stall=qt)
    ledger.add(120.0, "set_head", {"head": 1}, startup=False)  # over the goal, not sampled
    ledger.add(90.0, "export", {"kind": "csv"}, startup=False, stall=export)  # under the goal: not counted
    ledger.add(900.0, "quit_and_start_again", {}, startup=True, stall=qt)  # start-up: not counted
    breakdown = ledger.over_goal_breakdown()
    assert list(breakdown["over_goal_by_hot_spot"].items()) == [
        ("attention_lab.ui.export.export_plot", 3), ("Qt C++", 1), (NOT_TRACED, 1)]
    assert list(breakdown["over_goal_by_action"].items()) == [("export", 3), ("reset_layout", 1), ("set_head", 1)]
    assert sum(breakdown["over_goal_by_action"].values()) == ledger.running_over_goal == 5


def test_a_log_line_holds_the_stall_its_cpu_time_and_when_traced_its_handler():
    traced = Stall(ms=150.0, cpu_ms=140.0, off_cpu=False, handler="h.slot", hot_spot="h.hot", samples=30)
    ledger = StallLedger()
    line = log_line(7, 3.456, ledger.add(150.0, "export", {"kind": "svg"}, startup=False, stall=traced), 12.0,
                    startup=False)
    assert line["step"] == 7 and line["t_s"] == 3.46 and line["arguments"] == {"kind": "svg"} and line["rss_mb"] > 0
    assert (line["stall_ms"], line["cpu_ms"], line["handler"], line["hot_spot"]) == (150.0, 140.0, "h.slot", "h.hot")
    quiet = log_line(8, 4.0, ledger.add(20.0, "set_head", {"head": 0}, startup=False), 12.04, startup=False)
    assert (quiet["stall_ms"], quiet["cpu_ms"]) == (20.0, 12.0) and "handler" not in quiet  # the heartbeat's CPU


def test_the_drift_of_the_live_heap_is_reported_beside_the_resident_drift():
    """The resident drift mixes what the app holds with what glibc keeps freed; the
    live heap's drift (glibc's bytes in use), measured the same way, tells them apart."""
    samples = [{"t_s": 10.0 * i, "rss_mb": 400.0 + (60.0 if i >= 10 else 0.0), "heap_in_use_mb": 170.0 + 0.1 * (i >= 10),
                "max_stall_ms": 0.0} for i in range(20)]
    summary = summarise(samples, warmup_s=0.0)
    assert summary["drift_after_warmup_mb"] == 60.0
    assert summary["live_heap_drift_after_warmup_mb"] == 0.1
    # no heap figures (not glibc): no live drift, the resident one still
    bare = [{k: v for k, v in s.items() if k != "heap_in_use_mb"} for s in samples]
    assert summarise(bare, warmup_s=0.0)["live_heap_drift_after_warmup_mb"] is None


def test_the_live_heaps_drift_is_split_between_the_main_arena_and_the_threads_arenas():
    """A step of the live heap is put down to the GUI thread's side (the main arena) or the
    workers' (their arenas) by the same drift of each."""
    samples = [{"t_s": 10.0 * i, "rss_mb": 400.0, "heap_in_use_mb": 170.0 + 30.0 * (i >= 10),
                "main_arena_in_use_mb": 130.0 + 28.0 * (i >= 10), "thread_arenas_in_use_mb": 40.0 + 2.0 * (i >= 10),
                "max_stall_ms": 0.0} for i in range(20)]
    summary = summarise(samples, warmup_s=0.0)
    assert (summary["live_heap_drift_after_warmup_mb"], summary["main_arena_drift_after_warmup_mb"],
            summary["thread_arenas_drift_after_warmup_mb"]) == (30.0, 28.0, 2.0)


def test_the_pixmap_cache_probe_measures_what_qts_cache_holds(qapp):
    """The soak's end reports what Qt's QPixmapCache holds (its styles' pixmaps per size: Qt's, bounded
    by its limit); a 1000 x 1000 pixmap put in it (4 MB) is measured, and the cache is left empty."""
    import sys

    import pytest
    from attention_lab.devtools.soak import pixmap_cache_mb
    from PySide6.QtGui import QPixmap, QPixmapCache

    if not sys.platform.startswith("linux"):
        pytest.skip("glibc's mallinfo2")
    pixmap = QPixmap(1000, 1000)
    pixmap.fill()
    QPixmapCache.clear()
    assert QPixmapCache.insert("soak-probe-test", pixmap)
    del pixmap  # the cache's copy only
    held = pixmap_cache_mb()
    assert 3.5 < held["pixmap_cache_mb"] < 5.0
    assert held["pixmap_cache_limit_mb"] == QPixmapCache.cacheLimit() / 1024
    assert QPixmapCache.find("soak-probe-test") is None


def test_the_drift_trend_is_not_moved_by_a_swing_that_the_end_to_end_drift_follows():
    """In 30-minute soaks the resident size swung ±15-25 MB over minutes, and the median of 5 samples at
    each end landed where the swing was (33 MB "drift" on a flat run).  The trend through every
    sample (Theil-Sen) is ~0 on a flat swing and the whole growth on a steady one."""
    import math

    period = 145 / 4.5  # samples: a trough at the first samples after the warm-up, a crest at the last
    swing = [{"t_s": 10.0 * i, "rss_mb": 450.0 + 20.0 * math.sin(2 * math.pi * (i - 32) / period - math.pi / 2),
              "heap_in_use_mb": 160.0, "max_stall_ms": 0.0, "windows_alive": 1} for i in range(180)]
    summary = summarise(swing, warmup_s=300.0)
    assert summary["drift_after_warmup_mb"] > 15  # the ends: a trough then a crest
    assert abs(summary["drift_trend_after_warmup_mb"]) < 5
    assert summary["live_heap_drift_trend_after_warmup_mb"] == 0.0
    assert summary["closed_windows_alive_max"] == 0
    growing = [dict(s, rss_mb=400.0 + 0.02 * s["t_s"], windows_alive=1 + (s["t_s"] >= 900)) for s in swing]
    summary = summarise(growing, warmup_s=300.0)
    assert summary["drift_trend_after_warmup_mb"] == round(0.02 * (1790 - 300), 1)
    assert summary["closed_windows_alive_max"] == 1
    # older reports' samples without heap figures or window counts: those figures are None
    bare = [{k: v for k, v in s.items() if k not in ("heap_in_use_mb", "windows_alive")} for s in swing]
    summary = summarise(bare, warmup_s=300.0)
    assert summary["live_heap_drift_trend_after_warmup_mb"] is None and summary["closed_windows_alive_max"] is None
