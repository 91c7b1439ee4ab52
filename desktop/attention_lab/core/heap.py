"""Give the C heap's free memory back to the system (glibc's ``malloc_trim``).

glibc keeps memory that was freed inside its heaps (the main one and one arena per thread
that allocates: the worker's torch tensors) for later allocations, and returns it to the
system only from the top of a heap.  What a dropped model or a closed window frees is
mostly in the middle, between blocks still in use, so the resident size stays where it was
and the next model or window is laid out around the holes: the soak grew 450 → 555 MB
in 3.6 minutes while the bytes malloc had handed out stayed at 150-200 MB (``mallinfo2``);
with the heap trimmed after each window it stayed at 440-470 MB.  ``malloc_trim(0)`` hands
every whole free page back (``madvise``), in every arena, keeping the blocks in use where
they are.

The worker keeps what it holds bounded (:func:`trim_when_kept_over`, after every job): glibc
serves a large block (``M_MMAP_THRESHOLD`` or more: 128 KiB at start) with its own mapping, but
each time such a block is freed it raises the threshold to that block's size (up to 32 MiB), so
once a long text's tensors (one layer's attention maps: 3 MB for the demo model at 256 tokens;
its logits, 8 MB) have come and gone, later ones are cut from the heap, and what they free stays
resident.  Pinning the threshold at start-up (``mallopt``; measured on an 8-minute soak: kept
heap 166 -> 15-25 MB, median resident size -18 MB) cost every long analysis fresh pages: 60-100 %
more CPU per 256-token analysis (202 -> 321 ms, 18 k -> 56 k page faults).  Reusing the kept
pages is what makes the dynamic threshold fast, so it stays; the heap is trimmed only when what
it keeps freed exceeds :data:`KEPT_HEAP_BOUND_BYTES`.  Measured on 2 busy cores: the check
(``mallinfo2`` over ~3,000 free blocks and a ``/proc`` read) costs 0.05 ms of CPU per job; 16
analyses of the 256-token text kept 28-37 MB and never trimmed (CPU as without the check: 193-221
vs 209-256 ms); trimming after every one of them costs 3-4 ms per trim and +9 k page faults per
analysis (28 k, still half the fixed threshold's 56 k); the edit probe's GUI stalls
(``max_stall_cpu_ms``) were the same with a trim after every job and with none (7-22 ms).  The
8-minute soak (seed 0): 4 trims; median resident size after warm-up 438 MB (445 with glibc alone,
426 with the fixed threshold), peak 510 (522, 471).

``mallinfo2`` walks every free block of every arena, so its cost grows with the heap's
fragmentation: in the learner fuzzer's long-lived test process it took 6.5 ms of the worker's
CPU per job (107 checks, 0.69 s of a 14.5 s chunk; 2 busy cores), 5 % of the chunk.  The bound
checks at most once every :data:`CHECK_INTERVAL_S` instead of after every job: a learner typing
queues several analyses a second, and what they free stays kept at most that long, or until the
first job after it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import mmap
import re
import sys
import time
from collections.abc import Callable

_trim = None  # libc's malloc_trim, once looked up; False where there is none

# What glibc may keep freed before the worker trims: a few long analyses' worth of tensors (each
# 256-token analysis of the demo model frees 10-20 MB), so the pages the next analysis reuses stay
# and a trim (which walks and locks every arena) comes once every several long texts, not per
# job; the soak with the dynamic threshold kept up to 166 MB freed, with the app's whole heap in use
# at 120-210 MB.
KEPT_HEAP_BOUND_BYTES = 64 * 1024 * 1024
#: the least time between two of the bound's checks (``mallinfo2``: milliseconds on a fragmented heap)
CHECK_INTERVAL_S = 1.0


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


class _MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 and later): byte counts as ``size_t``."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


_mallinfo2_fn = None  # libc's mallinfo2, once looked up; False where there is none


def _mallinfo2() -> _MallInfo2 | None:
    """glibc's counts over every arena (it walks their free lists: tens of microseconds), or None."""
    global _mallinfo2_fn
    if _mallinfo2_fn is None:
        libc = _libc()
        _mallinfo2_fn = getattr(libc, "mallinfo2", None) if libc is not None else None
        if _mallinfo2_fn is None:
            _mallinfo2_fn = False
        else:
            _mallinfo2_fn.restype = _MallInfo2
    return _mallinfo2_fn() if _mallinfo2_fn else None


def heap_usage_mb() -> dict[str, float]:
    """What the C heap holds now, in MB (every arena; glibc 2.33+, else empty): ``heap_in_use_mb``
    (blocks handed out from the heaps), ``heap_free_mb`` (freed, kept by glibc: resident unless
    trimmed), ``mapped_blocks_mb`` (large blocks in their own mappings: the tensors).  The
    resident size minus these is everything malloc does not count: code, Python's object arenas,
    thread stacks.  A soak that grows in ``heap_free_mb`` keeps freed memory; in
    ``heap_in_use_mb``, holds on to something."""
    info = _mallinfo2()
    if info is None:
        return {}
    mb = 1024 * 1024
    return {"heap_in_use_mb": round(info.uordblks / mb, 1), "heap_free_mb": round(info.fordblks / mb, 1),
            "mapped_blocks_mb": round(info.hblkhd / mb, 1)}


_HEAP_XML = re.compile(r'<heap nr="\d+">(.*?)</heap>', re.DOTALL)
_FREE_XML = re.compile(r'<total type="(?:fast|rest)" count="\d+" size="(\d+)"')
_SYSTEM_XML = re.compile(r'<system type="current" size="(\d+)"')


def parse_malloc_info(xml: str) -> list[float]:
    """MB in use in each arena of a ``malloc_info`` report, the main arena first: what the arena
    took from the system less its free blocks (fast bins and the rest)."""
    in_use = []
    for heap in _HEAP_XML.finditer(xml):
        body = heap.group(1)
        system = _SYSTEM_XML.search(body)
        if system is None:
            continue
        free = sum(int(size) for size in _FREE_XML.findall(body))
        in_use.append(round((int(system.group(1)) - free) / (1024 * 1024), 1))
    return in_use


def arenas_in_use_mb() -> list[float]:
    """MB in use in each of glibc's arenas now, the main arena first; empty where there is no glibc.

    The main arena is the first thread's (the GUI thread's: Qt, Python's larger objects); every
    other thread that allocates (the workers: torch's tensors, the tokenizers) is given an arena of
    its own, up to 8 per core.  Which of them holds a growth of ``heap_in_use_mb`` says which side
    of the app to look at in a soak's memory drift.  ``malloc_info`` walks every free block, like
    ``mallinfo2``, and writes XML (about 15 KB): milliseconds, for a sample, not for every job."""
    libc = _libc()
    if libc is None or not hasattr(libc, "open_memstream"):
        return []
    buffer, size = ctypes.c_void_p(), ctypes.c_size_t()
    libc.open_memstream.restype = ctypes.c_void_p
    libc.open_memstream.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t)]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    libc.free.argtypes = [ctypes.c_void_p]
    stream = libc.open_memstream(ctypes.byref(buffer), ctypes.byref(size))
    if not stream:
        return []
    libc.malloc_info(0, stream)
    libc.fclose(stream)  # sets buffer and size
    try:
        xml = ctypes.string_at(buffer.value, size.value).decode("ascii", "replace")
    finally:
        libc.free(buffer)
    return parse_malloc_info(xml)


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


def kept_heap_bytes() -> int | None:
    """Bytes glibc keeps freed in its heaps (every arena), or None (no glibc 2.33+).  A trim does
    not lower it: the freed blocks stay on glibc's lists, only their pages go back."""
    info = _mallinfo2()
    return None if info is None else info.fordblks


def _resident_bytes() -> int:
    with open("/proc/self/statm", "rb") as statm:  # pages: size, resident, ...
        return int(statm.read().split()[1]) * _PAGE_BYTES


_PAGE_BYTES = mmap.PAGESIZE  # 4 KiB on x86-64; 16 or 64 KiB on some ARM kernels (Windows too: no `resource` there)


class KeptHeapBound:
    """Trims the heap after a job when glibc keeps more than ``bound_bytes`` freed that may be
    resident (see the module docstring).  ``mallinfo2``'s free count stays where it was after a
    trim (the blocks stay listed, their pages are gone), so a second trim waits until the resident
    size has also grown by ``bound_bytes`` since the last one: freed pages touched again.  Checking
    costs a ``mallinfo2`` call (microseconds to milliseconds: it walks every free block) and a
    ``/proc`` read, so it happens at most once every ``min_interval_s`` of ``clock``; trimming
    costs tens of ms."""

    def __init__(self, bound_bytes: int = KEPT_HEAP_BOUND_BYTES, min_interval_s: float = CHECK_INTERVAL_S,
                 clock: Callable[[], float] = time.monotonic):
        self.bound_bytes = bound_bytes
        self.min_interval_s = min_interval_s
        self.trims = 0
        self.checks = 0  # the times glibc was asked (mallinfo2)
        self._clock = clock
        self._checked_at: float | None = None
        self._resident_after_trim: int | None = None

    def after_job(self) -> bool:
        """Trim when over the bound; True when it did (glibc only).  Within ``min_interval_s``
        of the last check: nothing asked, False."""
        now = self._clock()
        if self._checked_at is not None and now - self._checked_at < self.min_interval_s:
            return False
        self._checked_at = now
        self.checks += 1
        kept = kept_heap_bytes()
        if kept is None or kept <= self.bound_bytes:
            return False
        if self._resident_after_trim is not None and _resident_bytes() - self._resident_after_trim <= self.bound_bytes:
            return False
        trimmed = give_back_free_heap()
        self._resident_after_trim = _resident_bytes()
        self.trims += trimmed
        return trimmed


#: the process's one bound: the heap is the process's, whichever worker ran the job
KEPT_HEAP = KeptHeapBound()
