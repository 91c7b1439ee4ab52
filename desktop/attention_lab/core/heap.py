"""Give the C heap's free memory back to the system (glibc's ``malloc_trim``).

glibc keeps memory that was freed inside its heaps (the main one and one arena per thread
that allocates: the worker's torch tensors) for later allocations, and returns it to the
system only from the top of a heap.  What a dropped model or a closed window frees is
mostly in the middle, between blocks still in use, so the resident size stays where it was
and the next model or window is laid out around the holes: issue 18's soak grew 450 → 555 MB
in 3.6 minutes while the bytes malloc had handed out stayed at 150-200 MB (``mallinfo2``);
with the heap trimmed after each window it stayed at 440-470 MB.  ``malloc_trim(0)`` hands
every whole free page back (``madvise``), in every arena, keeping the blocks in use where
they are.

:func:`fix_large_block_threshold` keeps the large blocks out of the heap in the first place.
glibc serves a block of ``M_MMAP_THRESHOLD`` or more (128 KiB at start) with its own ``mmap``,
unmapped the moment it is freed; but each time such a block is freed, glibc raises the
threshold to that block's size (up to 32 MiB), so once the first large tensors of a long text
(one layer's attention maps: heads x positions x positions floats, 3 MB for the demo model at
256 tokens; its logits, 8 MB) have come and gone, every later tensor of their size is cut from the heap, between small blocks that stay, and its pages stay resident
after it is freed.  Pinning the threshold (``mallopt``) stops the raise.  Measured on an
8-minute soak (the same seeded actions, 1,600-1,700 of them, on 2 busy cores): the heap glibc
held grew 222 -> 380 MB, 166 MB of it freed but kept, with the raise; 136 -> 153 MB, 15-25 MB
kept, with the threshold pinned at 128 KiB (median resident size -18 MB, peak -58 MB).  The
price: each large tensor's pages are fresh (page faults) instead of reused: +40 k faults, about
+100 ms of system time per 256-token analysis of the demo model and +20 ms per edit update there
(on the busy machine); short texts' tensors are under the threshold and pay nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_trim = None  # libc's malloc_trim, once looked up; False where there is none

# mallopt's parameters (glibc's malloc.h)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3

# Blocks this large or larger get their own mapping, returned to the system when freed: glibc's
# starting threshold, kept.  Tensors of the demo model's analysis are mostly above it (one
# layer's attention maps at 256 positions: 3 MB); Python's objects and Qt's are far below.
LARGE_BLOCK_BYTES = 128 * 1024
# A heap's free top beyond this goes back at once: glibc's starting value too (the dynamic
# raise doubles it along with the mmap threshold).
TRIM_TOP_BYTES = 128 * 1024


def _libc():
    """glibc, or None (not Linux, or a C library without malloc_trim/mallopt: musl)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 -- glibc's own: musl has mallopt as a stub but no malloc_trim
        return libc
    except (OSError, AttributeError):
        return None


def fix_large_block_threshold(large_block_bytes: int = LARGE_BLOCK_BYTES, trim_top_bytes: int = TRIM_TOP_BYTES) -> bool:
    """Keep glibc from raising its mmap threshold: blocks of ``large_block_bytes`` or more (the
    tensors) always get their own mapping, given back when freed.  True when set (glibc only;
    elsewhere a no-op: other allocators map large blocks on their own).  Call once at start-up."""
    libc = _libc()
    if libc is None:
        return False
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.mallopt.restype = ctypes.c_int
    # either setting turns glibc's dynamic raise off (it stops adjusting both); set both so
    # neither keeps a raised value from before the call
    return bool(libc.mallopt(M_MMAP_THRESHOLD, large_block_bytes)) and bool(libc.mallopt(M_TRIM_THRESHOLD, trim_top_bytes))


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 and later): byte counts as ``size_t``."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def heap_usage_mb() -> dict[str, float]:
    """What the C heap holds now, in MB (every arena; glibc 2.33+, else empty): ``heap_in_use_mb``
    (blocks handed out from the heaps), ``heap_free_mb`` (freed, kept by glibc: resident unless
    trimmed), ``mapped_blocks_mb`` (large blocks in their own mappings: the tensors).  The
    resident size minus these is everything malloc does not count: code, Python's object arenas,
    thread stacks.  A soak that grows in ``heap_free_mb`` keeps freed memory; in
    ``heap_in_use_mb``, holds on to something."""
    libc = _libc()
    mallinfo2 = getattr(libc, "mallinfo2", None) if libc is not None else None
    if mallinfo2 is None:
        return {}
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    mb = 1024 * 1024
    return {"heap_in_use_mb": round(info.uordblks / mb, 1), "heap_free_mb": round(info.fordblks / mb, 1),
            "mapped_blocks_mb": round(info.hblkhd / mb, 1)}


def give_back_free_heap() -> bool:
    """Return the C heap's free pages to the system; True when some were (glibc only).

    Elsewhere (macOS, Windows, musl) there is no ``malloc_trim`` and this does nothing: their
    allocators give large frees back on their own."""
    global _trim
    if _trim is None:
        libc = _libc()
        _trim = False if libc is None else libc.malloc_trim
        if _trim:
            _trim.argtypes = [ctypes.c_size_t]
            _trim.restype = ctypes.c_int
    return bool(_trim(0)) if _trim else False
