"""core/png_file.py: File › Export › PNG's encoding, done on the worker, off the GUI thread."""

from __future__ import annotations

import struct
import threading
import zlib

import numpy as np
import pytest

from attention_lab.core import job_protocol, jobs
from attention_lab.core.png_file import SIGNATURE, png_bytes, write_png


def _read_png(data: bytes):
    """The chunks of a PNG, read by hand (no image library here): its header and its pixels."""
    assert data[:8] == SIGNATURE
    at, chunks = 8, []
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind, body = data[at + 4 : at + 8], data[at + 8 : at + 8 + length]
        (crc,) = struct.unpack(">I", data[at + 8 + length : at + 12 + length])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append((kind, body))
        at += 12 + length
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    width, height, depth, colour, _c, _f, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, colour, interlace) == (8, 6, 0)
    raw = np.frombuffer(zlib.decompress(chunks[1][1]), dtype=np.uint8).reshape(height, width * 4 + 1)
    assert (raw[:, 0] == 0).all()  # no filter on any row
    return raw[:, 1:].reshape(height, width, 4)


def test_the_pixels_come_back_from_the_file_as_they_went_in(tmp_path):
    rng = np.random.default_rng(0)
    rgba = rng.integers(0, 256, size=(300, 7, 4), dtype=np.uint8)  # over one pass of rows
    path = write_png(tmp_path / "sub" / "x.png", rgba)
    assert path.parent.is_dir()
    assert np.array_equal(_read_png(path.read_bytes()), rgba)
    rgba[0, 0, 0] ^= 1  # another picture, another file
    assert np.array_equal(_read_png(png_bytes(rgba)), rgba)


def test_a_picture_of_no_pixels_or_channels_is_refused():
    for shape in ((0, 4, 4), (4, 4, 3), (4, 4)):
        with pytest.raises(ValueError):
            png_bytes(np.zeros(shape, dtype=np.uint8))


def test_the_job_stops_when_cancelled_and_writes_nothing(tmp_path):
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(job_protocol.Cancelled):
        jobs.export_png_job(tmp_path / "x.png", np.zeros((2, 2, 4), dtype=np.uint8), cancel=cancel)
    assert not (tmp_path / "x.png").exists()
    written = jobs.export_png_job(tmp_path / "x.png", np.full((2, 3, 4), 200, dtype=np.uint8), cancel=threading.Event())
    assert _read_png(written.read_bytes()).shape == (2, 3, 4)
    assert job_protocol.file_export_kind(tmp_path / "x.png") != job_protocol.file_export_kind(tmp_path / "x.csv")
