"""The soak with every garbage collection timed: where the collector stalls the window.

``python -m attention_lab.devtools.gc_timing SOAK-OPTIONS`` runs :mod:`attention_lab.devtools.soak` with
the same options while ``gc.callbacks`` times each collection (the CPU time of the thread that
ran it, which other processes on the machine do not inflate), and
:func:`attention_lab.ui.gc_pause.collect_on_switch` times each collection it makes when a new
window or model draws its first analysis (``malloc_trim`` included).  At the end it prints one
line, ``gc_timing {...}``: for each thread and generation, and for the switches, how many, the
median, the 90th percentile, the longest and how many took over 33 and 100 ms.  Collections
made while nothing is frozen yet (the imports, before the first window) are counted apart.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Sequence

FRAME_PAIR_MS = 33.0  # two frames at 60 Hz: the perf probe's trace threshold
STALL_GOAL_MS = 100.0  # the soak's goal for a running window's stall


def summarise(ms: list[float]) -> dict:
    """Count, median, 90th percentile, longest and how many over 33 and 100 ms."""
    if not ms:
        return {"count": 0}
    ordered = sorted(ms)
    return {
        "count": len(ordered),
        "median_ms": round(statistics.median(ordered), 1),
        "p90_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))], 1),
        "max_ms": round(ordered[-1], 1),
        "over_33ms": sum(m > FRAME_PAIR_MS for m in ordered),
        "over_100ms": sum(m > STALL_GOAL_MS for m in ordered),
    }


class CollectionTimer:
    """Times every collection through ``gc.callbacks``, by thread name and generation."""

    def __init__(self):
        self.ms: dict[str, list[float]] = defaultdict(list)
        self._started: dict[int, float] = {}  # thread id -> its CPU clock when its collection began

    def install(self) -> CollectionTimer:
        gc.callbacks.append(self._callback)
        return self

    def remove(self) -> None:
        if self._callback in gc.callbacks:
            gc.callbacks.remove(self._callback)

    def _callback(self, phase: str, info: dict) -> None:
        thread = threading.get_ident()
        if phase == "start":
            self._started[thread] = time.thread_time()
        elif thread in self._started:
            took = (time.thread_time() - self._started.pop(thread)) * 1000.0
            # before anything is frozen the process is still importing: start-up, filed apart
            start_up = " (start-up, nothing frozen)" if gc.get_freeze_count() == 0 else ""
            self.ms[f"{threading.current_thread().name} gen{info['generation']}{start_up}"].append(took)

    def summary(self) -> dict:
        return {key: summarise(ms) for key, ms in sorted(self.ms.items())}


def time_switches(switches: list[float]):
    """Wrap ``gc_pause.collect_on_switch`` (looked up by the redraw scheduler at each call) so
    that each call that collected adds its CPU ms to ``switches``; returns the undo."""
    from attention_lab.ui import gc_pause

    original = gc_pause.collect_on_switch

    def timed(key: object) -> bool:
        started = time.thread_time()
        collected = original(key)
        if collected:
            switches.append((time.thread_time() - started) * 1000.0)
        return collected

    gc_pause.collect_on_switch = timed
    return lambda: setattr(gc_pause, "collect_on_switch", original)


def main(argv: Sequence[str] | None = None) -> int:
    from attention_lab.devtools import soak

    timer = CollectionTimer().install()
    switches: list[float] = []
    undo = time_switches(switches)
    try:
        code = soak.main(sys.argv[1:] if argv is None else argv)
    finally:
        undo()
        timer.remove()
    print("gc_timing " + json.dumps({"collections": timer.summary(), "switches": summarise(switches)}))
    return code


if __name__ == "__main__":
    sys.exit(main())
