"""gc_pause: what the imports made leaves the collector's sight once, before the first window,
and stays out; a new window or model collects only what is left in sight, so the previous
one's cyclic garbage is freed without walking the imports again."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import textwrap
import weakref
from pathlib import Path

import pytest

from attention_lab.ui import gc_pause

ROOT = Path(__file__).resolve().parents[2]


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


@pytest.fixture
def fresh_tiers(monkeypatch):
    """gc_pause as a new process has it; the test's freeze undone afterwards."""
    monkeypatch.setattr(gc_pause, "_imports_frozen", False)
    monkeypatch.setattr(gc_pause, "_drawn_key", None)
    monkeypatch.setattr(gc_pause, "give_back_free_heap", lambda: True)
    yield
    gc.unfreeze()


def test_the_imports_are_frozen_once_and_never_thawed(fresh_tiers):
    assert gc_pause.freeze_imports()
    frozen = gc.get_freeze_count()
    assert frozen > 0
    assert not gc_pause.freeze_imports()  # a second window: nothing more frozen
    assert gc_pause.collect_on_switch((1, 1)) is False  # the first window's first drawing
    assert gc_pause.collect_on_switch((1, 2))  # a model switch collects ...
    assert gc_pause.collect_on_switch((2, 2))  # ... and so does a new window ...
    assert gc.get_freeze_count() >= frozen - 100  # ... without thawing the imports (a few freed by refcount)


def test_a_switch_frees_the_previous_window_s_cycles(fresh_tiers):
    gc_pause.freeze_imports()
    gc_pause.collect_on_switch((1, 7))
    window = Node()  # made after the freeze: in the collector's sight
    gone = weakref.ref(window)
    del window
    assert gone() is not None  # a cycle: reference counting alone does not free it
    assert not gc_pause.collect_on_switch((1, 7))  # the same window and model's later rounds: nothing
    assert gc_pause.collect_on_switch((2, 7))  # a new window on the same cached model
    assert gone() is None


def test_going_back_to_an_earlier_model_collects_again(fresh_tiers):
    assert not gc_pause.collect_on_switch((1, 1))
    assert gc_pause.collect_on_switch((1, 2))
    assert gc_pause.collect_on_switch((1, 1))  # back to the first: a change, not "done before"


def test_frozen_cycles_stay_which_is_why_windows_are_not_frozen(fresh_tiers):
    # the reason for the two tiers: a frozen window's cycles would never be freed
    # (tests/ui/test_window_memory.py: 444 MB -> 6.9 GB when every window stayed frozen)
    stuck = Node()
    gone = weakref.ref(stuck)
    gc_pause.freeze_imports()
    del stuck
    gc_pause.collect_on_switch((1, 1))
    gc_pause.collect_on_switch((2, 1))
    assert gone() is not None


def test_each_window_s_scheduler_has_its_own_key(qapp):
    from attention_lab.ui.redraw import RedrawScheduler

    one = RedrawScheduler({}, lambda _: False, lambda *_: None)
    two = RedrawScheduler({}, lambda _: False, lambda *_: None)
    assert one.serial != two.serial


def test_a_switch_hands_the_freed_heap_back_to_the_system(monkeypatch):
    # what a closed window or a dropped model frees stays in glibc's heaps as holes
    # (the soak's resident size grew while malloc's bytes in use stayed flat) unless trimmed
    trims = []
    monkeypatch.setattr(gc_pause, "give_back_free_heap", lambda: trims.append(gc.get_count()[2]) or True)
    monkeypatch.setattr(gc_pause, "_drawn_key", None)
    monkeypatch.setattr(gc_pause, "_trim_due", False)
    gc_pause.collect_on_switch((1, 1))
    assert not gc_pause.trim_after_switch() and trims == []  # the first drawing frees nothing: nothing to give back
    gc_pause.collect_on_switch((1, 1))
    assert not gc_pause.trim_after_switch() and trims == []  # the same window's later rounds: no trim per redraw
    gc_pause.collect_on_switch((2, 1))
    assert trims == []  # not with the collection: in a turn of its own (the redraw scheduler's)
    assert gc_pause.trim_after_switch()
    assert trims == [0]  # after the collection (the oldest generation's count back to 0)
    assert not gc_pause.trim_after_switch() and trims == [0]  # once per switch


# the real app on the tiny model (a smoke test: one window, its first analysis drawn): how much
# is frozen when the window is made, and whether the window is still in the collector's sight
# when it closes (frozen, its cycles would outlive it)
APP_TIERS = textwrap.dedent(
    """
    import gc, json, sys
    import attention_lab.ui.launch as launch
    import attention_lab.ui.main_window as main_window

    seen = {}

    class RecordingWindow(main_window.MainWindow):  # the window run_gui makes (imported there)
        def __init__(self, **kwargs):
            seen["frozen_before_window"] = gc.get_freeze_count()
            super().__init__(**kwargs)

    def recording_teardown(app, window, _teardown=launch.teardown):
        seen["frozen_at_close"] = gc.get_freeze_count()
        seen["window_in_sight_at_close"] = any(o is window for o in gc.get_objects())
        return _teardown(app, window)

    main_window.MainWindow = RecordingWindow
    launch.teardown = recording_teardown
    code = launch.run_gui(["--smoke-test", "--model", sys.argv[1]])
    print("TIERS " + json.dumps(seen))
    sys.exit(code)
    """
)


def test_the_app_freezes_its_imports_before_the_window_and_never_the_window(tiny_checkpoint, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", HF_HUB_CACHE=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", APP_TIERS, str(tiny_checkpoint)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    seen = json.loads(proc.stdout.split("TIERS ", 1)[1])
    assert seen["frozen_before_window"] > 50_000  # torch, PySide6, pyqtgraph, the lab: out of sight
    assert seen["frozen_at_close"] >= seen["frozen_before_window"] - 1_000  # nothing thawed them
    assert seen["window_in_sight_at_close"]  # the window itself was never frozen


def test_the_collection_timer_times_each_collection_by_thread_and_generation():
    from attention_lab.devtools.gc_timing import CollectionTimer

    gc.unfreeze()  # (as a new process: whatever an earlier test froze back in sight)
    timer = CollectionTimer().install()
    try:
        gc.collect()  # nothing frozen yet: start-up
        gc.freeze()
        gc.collect()
        gc.collect(0)
    finally:
        timer.remove()
        gc.unfreeze()
    gc.collect()  # removed: not counted
    summary = timer.summary()
    assert summary["MainThread gen2 (start-up, nothing frozen)"]["count"] == 1
    assert summary["MainThread gen2"]["count"] == 1
    assert summary["MainThread gen0"]["count"] >= 1
    assert summary["MainThread gen2"]["max_ms"] >= 0


def test_collection_times_are_summarised_against_the_frame_and_stall_goals():
    from attention_lab.devtools.gc_timing import summarise

    assert summarise([]) == {"count": 0}
    assert summarise([10.0, 20.0, 40.0, 150.0]) == {
        "count": 4, "median_ms": 30.0, "p90_ms": 150.0, "max_ms": 150.0, "over_33ms": 2, "over_100ms": 1}


def test_only_the_switches_that_collect_are_timed_and_the_wrapper_comes_off(monkeypatch):
    from attention_lab.devtools.gc_timing import time_switches

    monkeypatch.setattr(gc_pause, "_drawn_key", None)
    monkeypatch.setattr(gc_pause, "give_back_free_heap", lambda: True)
    original = gc_pause.collect_on_switch
    switches: list[float] = []
    undo = time_switches(switches)
    gc_pause.collect_on_switch((1, 1))  # the first drawing: no collection
    gc_pause.collect_on_switch((1, 1))
    gc_pause.collect_on_switch((2, 1))  # a new window: collected
    undo()
    assert len(switches) == 1
    assert gc_pause.collect_on_switch is original
