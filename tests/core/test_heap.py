"""give_back_free_heap returns the C heap's free pages: the resident size falls; the worker trims only
when glibc keeps more than a bound freed, so a soak's resident size does not creep up."""

from __future__ import annotations

import sys

import pytest
from attention_lab.core.heap import give_back_free_heap


def _resident_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim; other allocators give back on their own")
def test_memory_freed_below_a_block_in_use_goes_back_to_the_system():
    blocks = [bytes(2000) for _ in range(60_000)]  # 120 MB of malloc'd blocks (over pymalloc's 512 bytes)
    pinned = bytes(2000)  # allocated last, on top: glibc cannot shrink the heap from its top
    del blocks
    held = _resident_mb()
    assert give_back_free_heap()
    assert held - _resident_mb() > 60  # most of the 120 MB is back; without the trim none of it
    assert len(pinned) == 2000


# A child process: its heap has no history (the test process's may keep anything freed).  It
# frees MB of malloc'd blocks under one that stays (as a job's tensors, cut from the heap once
# glibc's threshold has risen, lie under Python's and Qt's objects), asks the bound whether to
# trim, and prints: trimmed?, the resident MB that went away, trimmed again at once?
_A_JOB_FREES = r"""
import sys
from attention_lab.core.heap import KeptHeapBound

def resident_mb():
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))

bound = KeptHeapBound(bound_bytes=64 * 1024 * 1024, min_interval_s=0.0)  # both calls ask glibc
blocks = [bytes(2000) for _ in range(int(sys.argv[1]) * 512)]  # argv[1] MB (over pymalloc's 512 bytes)
pinned = bytes(2000)  # allocated last, on top: glibc cannot shrink the heap from its top
del blocks
held = resident_mb()
trimmed = bound.after_job()
print(trimmed, round(held - resident_mb(), 1), bound.after_job())
"""


def _after_a_job_freeing(mb: int) -> tuple[bool, float, bool]:
    import os
    import subprocess
    from pathlib import Path

    desktop = Path(__file__).resolve().parents[2] / "desktop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(desktop), os.environ.get("PYTHONPATH", "")])}
    env.pop("GLIBC_TUNABLES", None)  # glibc's own defaults, whatever the caller set
    done = subprocess.run([sys.executable, "-c", _A_JOB_FREES, str(mb)], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    trimmed, given_back_mb, trimmed_again = done.stdout.split()
    return trimmed == "True", float(given_back_mb), trimmed_again == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2 and malloc_trim")
def test_a_job_that_frees_more_than_the_bound_leaves_less_than_the_bound_kept():
    trimmed, given_back_mb, trimmed_again = _after_a_job_freeing(120)
    assert trimmed
    assert given_back_mb > 120 - 64  # what stays kept and resident is under the bound
    # the freed blocks stay on glibc's lists (mallinfo2 still counts them), their pages are gone:
    # the next job's check does not trim again until the resident size has grown by the bound
    assert not trimmed_again


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2 and malloc_trim")
def test_a_job_that_frees_less_than_the_bound_keeps_it_for_the_next_job():
    trimmed, given_back_mb, _ = _after_a_job_freeing(30)
    assert not trimmed
    assert given_back_mb < 5  # still resident: the next analysis reuses those pages


def _libc_malloc_and_free():
    """glibc with malloc and free callable from Python (blocks the test holds outside Python's allocator)."""
    import ctypes

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    return libc


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_heap_usage_counts_blocks_in_use_and_the_large_ones_mapped():
    from attention_lab.core.heap import heap_usage_mb

    libc = _libc_malloc_and_free()
    before = heap_usage_mb()
    assert set(before) == {"heap_in_use_mb", "heap_free_mb", "mapped_blocks_mb"}
    small = [libc.malloc(4000) for _ in range(10_000)]  # 40 MB of heap blocks
    large = libc.malloc(64 * 1024 * 1024)  # over glibc's largest threshold: always its own mapping
    held = heap_usage_mb()
    assert held["heap_in_use_mb"] - before["heap_in_use_mb"] > 35
    assert held["mapped_blocks_mb"] - before["mapped_blocks_mb"] > 63
    for block in [*small, large]:
        libc.free(block)
    after = heap_usage_mb()
    assert held["heap_in_use_mb"] - after["heap_in_use_mb"] > 35
    assert after["mapped_blocks_mb"] <= before["mapped_blocks_mb"] + 0.125  # glibc's smallest mmap threshold: 128 KiB


def test_the_bound_asks_glibc_at_most_once_an_interval(monkeypatch):
    """mallinfo2 walks every free block (6.5 ms a job in the fuzzer's fragmented test process):
    a burst of jobs within the interval asks once; the first job after it asks again."""
    from attention_lab.core import heap

    asked = []
    monkeypatch.setattr(heap, "kept_heap_bytes", lambda: asked.append(1) or 0)  # nothing kept: no trim
    now = [100.0]
    bound = heap.KeptHeapBound(min_interval_s=1.0, clock=lambda: now[0])
    for _ in range(50):
        now[0] += 0.01  # 50 jobs in half a second
        assert not bound.after_job()
    assert len(asked) == bound.checks == 1
    now[0] += 1.0
    bound.after_job()
    assert len(asked) == bound.checks == 2


def test_a_check_within_the_interval_never_trims(monkeypatch):
    """Over the bound, the check trims; a job right after it trims nothing until the interval is over."""
    from attention_lab.core import heap

    trims = []
    monkeypatch.setattr(heap, "kept_heap_bytes", lambda: 200 * 1024 * 1024)
    monkeypatch.setattr(heap, "give_back_free_heap", lambda: trims.append(1) or True)
    resident = [500 * 1024 * 1024]
    monkeypatch.setattr(heap, "_resident_bytes", lambda: resident[0])
    now = [0.0]
    bound = heap.KeptHeapBound(bound_bytes=64 * 1024 * 1024, min_interval_s=1.0, clock=lambda: now[0])
    assert bound.after_job() and trims == [1]
    resident[0] += 100 * 1024 * 1024  # freed pages touched again: over the bound once more
    now[0] += 0.5
    assert not bound.after_job() and trims == [1]
    now[0] += 0.5
    assert bound.after_job() and trims == [1, 1]


_MALLOC_INFO = """<malloc version="1">
<heap nr="0">
<sizes>
</sizes>
<total type="fast" count="3" size="1048576"/>
<total type="rest" count="10" size="2097152"/>
<system type="current" size="13631488"/>
<system type="max" size="20971520"/>
<aspace type="total" size="13631488"/>
</heap>
<heap nr="1">
<total type="fast" count="0" size="0"/>
<total type="rest" count="1" size="1048576"/>
<system type="current" size="5242880"/>
</heap>
<total type="fast" count="3" size="1048576"/>
<total type="mmap" count="2" size="4194304"/>
<system type="current" size="18874368"/>
</malloc>"""


def test_malloc_info_is_read_as_each_arenas_bytes_in_use_main_arena_first():
    from attention_lab.core.heap import parse_malloc_info

    # main arena: 13 MB taken, 1 + 2 MB free; the thread's: 5 MB taken, 1 MB free; the totals after the
    # heaps (and the mapped blocks) are no arena
    assert parse_malloc_info(_MALLOC_INFO) == [10.0, 4.0]
    assert parse_malloc_info("") == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_info")
def test_blocks_a_worker_thread_holds_are_counted_in_an_arena_other_than_the_main_one():
    """A soak tells the GUI thread's growth (the main arena) from the workers' (their own arenas)."""
    import threading

    from attention_lab.core.heap import arenas_in_use_mb

    libc = _libc_malloc_and_free()
    before = arenas_in_use_mb()
    held: list[int] = []
    worker = threading.Thread(target=lambda: held.extend(libc.malloc(4000) for _ in range(10_000)))  # 40 MB
    worker.start()
    worker.join()
    during = arenas_in_use_mb()
    for block in held:
        libc.free(block)
    after = arenas_in_use_mb()
    assert before and len(during) >= 2
    assert sum(during[1:]) - sum(before[1:]) > 35  # in the thread's arena ...
    assert abs(during[0] - before[0]) < 5  # ... not in the main one
    assert sum(during[1:]) - sum(after[1:]) > 35  # and freed from it
