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
