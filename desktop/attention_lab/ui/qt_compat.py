"""Work around a PySide6 6.12 reference-counting bug on Python 3.11.

Measured here (PySide6 6.12.0, Python 3.11.7): every call of a Qt method that returns
nothing (``setText``, ``setPos``, ``addItem``…) hands Python ``None`` back *without* a new
reference, and some paths do the same with ``True`` (six language switches of the full
window took ~5,600 references from ``True``).  Once a count reaches zero the interpreter
aborts ("Fatal Python error: none_dealloc" / "bool_dealloc"): the app dies mid-session,
typically while pyqtgraph redraws.  Python 3.12 made these singletons immortal, so the bug
is harmless there; on 3.11 we give ``None``, ``True`` and ``False`` a reference count so
large (2⁴⁰) that no session can exhaust it -- what 3.12 does by design.  They are never
freed in a correct program, so this changes nothing else.
"""

from __future__ import annotations

import ctypes
import sys

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
