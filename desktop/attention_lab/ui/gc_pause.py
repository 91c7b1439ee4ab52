"""Python's cyclic garbage collector kept from stalling the window (issue 19).

A full collection walks every object the process tracks: with torch, pyqtgraph, the window
and a model, 170 000 objects and 110-350 ms of the GUI thread (measured with ``gc.callbacks``
while the perf probe started the app, 2 busy cores).  After start-up they come whenever the
allocation counters say so: in the middle of a redraw as likely as anywhere.  What exists
once a model's first analysis is drawn (modules, the model, the window) lives as long as the
model does, so :func:`freeze_long_lived` moves it out of the collector's sight (``gc.freeze``)
and later collections walk only what was made since.  Frozen objects are still freed by
reference counting; only garbage in reference cycles would stay, so the next model's first
drawing thaws everything, collects once (the previous model's cycles: a model switch is a
slow moment anyway) and freezes again.
"""

from __future__ import annotations

import gc

_frozen_for: set[int] = set()  # the models (serials) whose long-lived objects were frozen


def freeze_long_lived(model_serial: int) -> bool:
    """Freeze every object that exists now, once per model (True when it did)."""
    if model_serial in _frozen_for:
        return False
    if _frozen_for:  # another model before this one: free its garbage first
        gc.unfreeze()
        gc.collect()
    _frozen_for.add(model_serial)
    gc.freeze()
    return True
