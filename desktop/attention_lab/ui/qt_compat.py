"""Work around two PySide6 6.12 reference-counting bugs.

**Immortal singletons (Python 3.11).**

Measured here (PySide6 6.12.0, Python 3.11.7): every call of a Qt method that returns
nothing (``setText``, ``setPos``, ``addItem``…) hands Python ``None`` back *without* a new
reference, and some paths do the same with ``True`` (six language switches of the full
window took ~5,600 references from ``True``).  Once a count reaches zero the interpreter
aborts ("Fatal Python error: none_dealloc" / "bool_dealloc"): the app dies mid-session,
typically while pyqtgraph redraws.  Python 3.12 made these singletons immortal, so the bug
is harmless there; on 3.11 we give ``None``, ``True`` and ``False`` a reference count so
large (2⁴⁰) that no session can exhaust it -- what 3.12 does by design.  They are never
freed in a correct program, so this changes nothing else.

**A timer's callable outlives its context** (:func:`call_later`).  ``QTimer.singleShot(ms,
context, fn)`` keeps ``fn`` for good when ``context`` is deleted before the timer fires (measured: a
bound method and a lambda alike; once fired, it is freed).  A window closed
with such a call on its way stayed in memory with everything ``fn`` reaches: the 30-minute soak kept
one closed window from minute 8 to the end (a resize's paint-hold check, due on the next turn,
when the window was quit).
"""

from __future__ import annotations

import ctypes
import sys
import weakref
from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

_EXTRA_REFS = 1 << 40
_applied = False


def immortalize_none() -> bool:
    """Apply the workaround once (Python < 3.12 only); True if it was applied now."""
    global _applied
    if _applied or sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False
    for singleton in (None, True, False):
        # ob_refcnt is the first field of every CPython object (a Py_ssize_t)
        ctypes.c_ssize_t.from_address(id(singleton)).value += _EXTRA_REFS
    _applied = True
    return True


class _Pending(QObject):
    """One :func:`call_later`'s callable, a child of its context: it goes when the context goes."""

    def __init__(self, context: QObject, fn: Callable[[], object]):
        super().__init__(context)
        self.fn: Callable[[], object] | None = fn


def call_later(ms: int, context: QObject, fn: Callable[[], object]) -> None:
    """``QTimer.singleShot(ms, context, fn)`` without its leak: ``fn`` is called after ``ms`` unless
    ``context`` is deleted first, and then it is freed with it.

    The timer's own context is a small child of ``context`` that holds ``fn``; the callable Qt
    keeps (and PySide never frees if the context dies first) holds only a weak reference to it.
    Same delivery as ``singleShot`` (a 0 ms call is posted behind the events already posted:
    ``ui/redraw.py`` relies on that order)."""
    pending = _Pending(context, fn)
    QTimer.singleShot(ms, pending, _caller(weakref.ref(pending)))


def call_after_posted_work(context: QObject, fn: Callable[[], object]) -> None:
    """Call ``fn`` in a turn of its own after what is posted now has run (a step's layout and paint).

    A 0 ms call is posted behind that work but runs in the same pass over posted events, before
    the paint it follows; a 1 ms timer started from it fires in a later turn, after the paint and
    after the timers already due (input, the perf probe's heartbeat): the panels' redraw steps,
    the tour's steps and the enlarged head.  Dropped, and freed, if ``context`` goes first."""
    call_later(0, context, lambda: call_later(1, context, fn))


def _caller(pending_ref: weakref.ref) -> Callable[[], None]:
    # a closure over the weak reference alone: this is what Qt may keep for good
    def call() -> None:
        pending = pending_ref()
        if pending is None or pending.fn is None:
            return
        fn, pending.fn = pending.fn, None
        pending.deleteLater()
        fn()

    return call
