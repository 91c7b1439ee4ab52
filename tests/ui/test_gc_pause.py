"""gc_pause: the objects of a model's start-up leave the collector's sight once, and the next
model's thaws and collects them first (its cyclic garbage is freed, not frozen forever)."""

from __future__ import annotations

import gc
import weakref

from attention_lab.ui import gc_pause


class Node:
    def __init__(self):
        self.me = self  # a reference cycle: only the cyclic collector frees it


def _frozen_then_thawed(monkeypatch, first, second) -> None:
    monkeypatch.setattr(gc_pause, "_frozen_key", None)
    try:
        cyclic = Node()
        gone = weakref.ref(cyclic)
        assert gc_pause.freeze_long_lived(first)
        assert gc.get_freeze_count() > 0
        assert not gc_pause.freeze_long_lived(first)  # the same window and model's later rounds: nothing
        del cyclic
        gc.collect()
        assert gone() is not None  # frozen: the collector does not see it
        assert gc_pause.freeze_long_lived(second)  # thaw, collect, freeze again
        assert gone() is None
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_freeze_once_per_model_and_thaw_for_the_next(monkeypatch):
    _frozen_then_thawed(monkeypatch, (1, 1), (1, 2))


def test_a_new_window_on_the_same_model_thaws_the_last_one(monkeypatch):
    # the soak's "quit and start again" keeps the cached model: keyed by the model alone, every
    # earlier window stayed frozen (444 MB -> 6.9 GB in 30 minutes)
    _frozen_then_thawed(monkeypatch, (1, 7), (2, 7))


def test_going_back_to_an_earlier_model_thaws_what_was_made_in_between(monkeypatch):
    monkeypatch.setattr(gc_pause, "_frozen_key", None)
    try:
        assert gc_pause.freeze_long_lived((1, 1))
        assert gc_pause.freeze_long_lived((1, 2))
        assert gc_pause.freeze_long_lived((1, 1))  # back to the first: a change, not "done before"
    finally:
        gc.unfreeze()


def test_each_window_s_scheduler_has_its_own_key(qapp):
    from attention_lab.ui.redraw import RedrawScheduler

    one = RedrawScheduler({}, lambda _: False, lambda *_: None)
    two = RedrawScheduler({}, lambda _: False, lambda *_: None)
    assert one.serial != two.serial


def test_a_thaw_hands_the_freed_heap_back_to_the_system(monkeypatch):
    # issue 18: what a closed window or a dropped model frees stays in glibc's heaps as holes
    # (the soak's resident size grew while malloc's bytes in use stayed flat) unless trimmed
    trims = []
    monkeypatch.setattr(gc_pause, "give_back_free_heap", lambda: trims.append(gc.get_freeze_count()) or True)
    monkeypatch.setattr(gc_pause, "_frozen_key", None)
    try:
        gc_pause.freeze_long_lived((1, 1))
        assert trims == []  # the first freeze frees nothing: nothing to give back
        gc_pause.freeze_long_lived((1, 1))
        assert trims == []  # the same window's later rounds: no trim per redraw
        gc_pause.freeze_long_lived((2, 1))
        assert trims == [0]  # after the thaw and collection, before freezing again
    finally:
        gc.unfreeze()
