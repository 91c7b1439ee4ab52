"""A PNG file from an RGBA picture, Qt-free: File › Export › PNG's encoding, done on the worker.

Painting a plot needs the GUI thread; compressing the painted pixels does not, and it was most of
the export: the head grid's 1376 × 894 picture took 7-11 ms to paint and 61-63 ms of the GUI
thread's CPU to encode and write as a PNG (the soak's ``export`` stalls).  This writes the same
kind of file (8-bit RGBA, not interlaced) with ``zlib``, which lets other threads run while it
compresses.
"""

from __future__ import annotations

import os
import struct
import zlib
from pathlib import Path

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
COMPRESSION_LEVEL = 6  # zlib's default: files within a few per cent of level 9, several times faster
ROWS_PER_PASS = 256  # rows compressed per call (a cancelled export stops between them)


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png_bytes(rgba: np.ndarray, check=None) -> bytes:
    """The PNG file of ``rgba`` (height × width × 4, uint8, rows top to bottom).  ``check`` is
    called between passes (it raises to stop)."""
    pixels = np.ascontiguousarray(rgba, dtype=np.uint8)
    if pixels.ndim != 3 or pixels.shape[2] != 4 or pixels.shape[0] == 0 or pixels.shape[1] == 0:
        raise ValueError(f"a PNG needs height × width × 4 pixels, not {pixels.shape}")
    height, width = pixels.shape[:2]
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8 bits, RGBA, deflate, no filter, no interlace
    compressor = zlib.compressobj(COMPRESSION_LEVEL)
    parts = []
    for top in range(0, height, ROWS_PER_PASS):
        if check is not None:
            check()
        rows = pixels[top : top + ROWS_PER_PASS].reshape(-1, width * 4)
        filtered = np.zeros((rows.shape[0], width * 4 + 1), dtype=np.uint8)  # each row's filter byte: 0, none
        filtered[:, 1:] = rows
        parts.append(compressor.compress(filtered.tobytes()))
    parts.append(compressor.flush())
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", b"".join(parts)) + _chunk(b"IEND", b"")


def write_png(path: str | os.PathLike, rgba: np.ndarray, check=None) -> Path:
    """Write ``rgba`` to ``path`` as a PNG (its folder made if missing); returns the path."""
    path = Path(path)
    data = png_bytes(rgba, check)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path
