"""give_back_free_heap returns the C heap's free pages: the resident size falls (issue 18)."""

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


# A child process: mallopt is process-wide and cannot be undone, and the parent's heap has a history.
# It frees one large tensor (the threshold's raise), then makes 80 MB of tensors over the fixed
# threshold, each followed by a small block that stays (a Python or Qt object made while the
# tensor lived), frees the tensors and prints how many MB stayed resident.
_LARGE_TENSORS_COME_AND_GO = r"""
import sys
import torch
from attention_lab.core.heap import LARGE_BLOCK_BYTES, fix_large_block_threshold

def resident_mb():
    with open("/proc/self/status", encoding="ascii") as status:
        return next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))

if sys.argv[1] == "fixed":
    assert fix_large_block_threshold()
torch.set_num_threads(1)
floats = max(LARGE_BLOCK_BYTES, 1024 * 1024) // 4  # a tensor at (or over) the threshold: attention maps, say
first = torch.ones(4 * floats)  # its own mapping; freed, it raises glibc's threshold over the others' size
del first
before = resident_mb()
tensors, kept = [], []
for _ in range(80 * 1024 * 1024 // (4 * floats)):
    tensors.append(torch.ones(floats))
    kept.append(bytes(2000))  # malloc'd (over pymalloc's 512 bytes), lives on
del tensors
print(round(resident_mb() - before, 1))
"""


def _resident_growth_mb(mode: str) -> float:
    import os
    import subprocess
    from pathlib import Path

    desktop = Path(__file__).resolve().parents[2] / "desktop"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(desktop), os.environ.get("PYTHONPATH", "")])}
    env.pop("GLIBC_TUNABLES", None)  # glibc's own defaults, whatever the caller set
    done = subprocess.run([sys.executable, "-c", _LARGE_TENSORS_COME_AND_GO, mode], capture_output=True, text=True,
                          env=env, timeout=120, check=True)
    return float(done.stdout.split()[-1])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mmap threshold; other allocators map large blocks on their own")
def test_freed_tensors_leave_the_resident_size_once_the_large_block_threshold_is_fixed():
    # glibc's default: the first freed tensor raised the threshold, the later ones came from the
    # heap under blocks still in use, and their 80 MB stay resident after they are freed
    assert _resident_growth_mb("default") > 60
    # fixed: each had its own mapping, returned when it was freed
    assert _resident_growth_mb("fixed") < 10


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallinfo2")
def test_heap_usage_counts_blocks_in_use_and_the_large_ones_mapped():
    import ctypes

    from attention_lab.core.heap import LARGE_BLOCK_BYTES, heap_usage_mb

    libc = ctypes.CDLL("libc.so.6")
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
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
    assert after["mapped_blocks_mb"] <= before["mapped_blocks_mb"] + LARGE_BLOCK_BYTES / 2**20
