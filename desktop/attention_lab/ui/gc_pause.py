"""Python's cyclic garbage collector kept from stalling the window or growing its memory.

A full collection walks every object the process tracks, and its cost grows with their number.
Two tiers keep that number small where it matters:

- **What the imports made** (torch, PySide6, pyqtgraph, the lab's modules: 179 000 objects and
  110-200 ms of a full collection, measured on 2 busy cores) never becomes garbage.
  :func:`freeze_imports` moves it out of the collector's sight (``gc.freeze``) once, before
  the first window exists, and nothing thaws it again (the process ends with it).
- **The windows and models** stay in sight: 6 000-14 000 objects with a window, its model and
  panels (and a closed window's, until it is collected).  When a new window or model draws
  its first analysis, :func:`collect_on_switch` collects once: the previous one's reference
  cycles (a closed window, a dropped model) are freed and the C heap handed back.  In a soak
  of model loads and new windows (:mod:`attention_lab.devtools.gc_timing`, 2 busy cores) such a
  collection took 3-35 ms of GUI-thread CPU, most of it freeing the closed window; the whole
  switch with the heap's trim a median 41 ms, where the thaw-and-collect below took 140 ms.

An earlier version froze everything once the first analysis was drawn, windows and models with the
imports; CPython has one frozen generation (``gc.unfreeze`` thaws all of it), so freeing an
old window's cycles meant thawing and collecting the imports too: 330-470 ms of the GUI thread
on each of ~600 model loads and new windows in the 30-minute soak.  Leaving the
windows frozen instead kept each one with its cycles for good (444 MB → 6.9 GB in 30 minutes,
``tests/ui/test_window_memory.py``).
"""

from __future__ import annotations

import gc

from attention_lab.core.heap import give_back_free_heap

_imports_frozen = False
_drawn_key: object = None  # the (window, model) whose first analysis was drawn last
_trim_due = False  # a switch collected since the heap was last handed back


def freeze_imports() -> bool:
    """Freeze every object that exists now, once per process (True when it did).

    Call it after the imports and before the first window: whatever is frozen is never
    collected again, and a window frozen with its cycles would stay in memory after it closes.
    Frozen objects are still freed by reference counting.  Modules imported later (a panel's,
    when its tab is first built) stay in the collector's sight: a few thousand objects."""
    global _imports_frozen
    if _imports_frozen:
        return False
    _imports_frozen = True
    gc.freeze()
    return True


def collect_on_switch(key: object) -> bool:
    """Collect once when ``key`` differs from the last one drawn, other than the first (True when it did).

    ``key`` names the window and its model (the redraw scheduler passes its own serial and the
    model's), so a new window on the same cached model collects too: the closed window's cycles
    are freed.  The collection walks only what :func:`freeze_imports` left in sight.  The heap is
    handed back by :func:`trim_after_switch`, in a turn of the event loop of its own: the two in one
    turn held the GUI thread ~120 ms (the soak's model loads)."""
    global _drawn_key, _trim_due
    previous, _drawn_key = _drawn_key, key
    if previous is None or previous == key:
        return False
    gc.collect()
    _trim_due = True
    return True


def trim_after_switch() -> bool:
    """Hand the C heap's free pages back after a switch's collection (True when one was due).

    What the collection (and the earlier window or model) freed is mostly holes in the C heap
    that glibc keeps: handed back, or the resident size only grows."""
    global _trim_due
    if not _trim_due:
        return False
    _trim_due = False
    give_back_free_heap()
    return True
