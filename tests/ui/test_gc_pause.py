"""gc_pause: the objects of a model's start-up leave the collector's sight once, and the next
model's thaws and collects them first (its cyclic garbage is freed, not frozen forever)."""

from __future__ import annotations

import gc
import weakref

from attention_lab.ui import gc_pause


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


def test_freeze_once_per_model_and_thaw_for_the_next(monkeypatch):
    monkeypatch.setattr(gc_pause, "_frozen_for", set())
    try:
        cyclic = Node()
        gone = weakref.ref(cyclic)
        assert gc_pause.freeze_long_lived(1)
        assert gc.get_freeze_count() > 0
        assert not gc_pause.freeze_long_lived(1)  # the same model's later rounds: nothing to do
        del cyclic
        gc.collect()
        assert gone() is not None  # frozen: the collector does not see it
        assert gc_pause.freeze_long_lived(2)  # another model: thaw, collect, freeze again
        assert gone() is None
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
