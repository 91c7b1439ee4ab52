"""Python's cyclic garbage collector kept from stalling the window (issue 19).

A full collection walks every object the process tracks: with torch, pyqtgraph, the window
and a model, 170 000 objects and 110-350 ms of the GUI thread (measured with ``gc.callbacks``
while the perf probe started the app, 2 busy cores).  After start-up they come whenever the
allocation counters say so: in the middle of a redraw as likely as anywhere.  What exists
once a model's first analysis is drawn (modules, the model, the window) lives as long as the
model does, so :func:`freeze_long_lived` moves it out of the collector's sight (``gc.freeze``)
and later collections walk only what was made since.  Frozen objects are still freed by
reference counting; only garbage in reference cycles would stay, so the first drawing of
another model or in another window thaws everything, collects once (the previous one's
cycles: a model switch is a slow moment anyway) and freezes again.
"""

from __future__ import annotations

import gc

from attention_lab.core.heap import give_back_free_heap

_frozen_key: object = None  # what the frozen objects were frozen for: (window, model)


def freeze_long_lived(key: object) -> bool:
    """Freeze every object that exists now, once per ``key`` in a row (True when it did).

    ``key`` names the window and its model (the redraw scheduler passes its own serial and the
    model's): any change thaws and collects first.  Keyed by the model alone, a second window
    on the same (cached) model froze nothing new and never thawed, so every earlier window stayed
    frozen with its cycles: a 30-minute soak that starts a new window 173 times grew from 444 MB
    to 6.9 GB; and a switch back to an earlier model kept the garbage made in between."""
    global _frozen_key
    if key == _frozen_key:
        return False
    if _frozen_key is not None:  # another window or model before this one: free its garbage first
        gc.unfreeze()
        gc.collect()
        # what the collection (and the earlier window or model) freed is mostly holes in the C
        # heap that glibc keeps: hand the pages back, or the resident size only grows (issue 18)
        give_back_free_heap()
    _frozen_key = key
    gc.freeze()
    return True
