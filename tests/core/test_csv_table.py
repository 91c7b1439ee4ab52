"""The CSV job the window's File › Export › CSV runs on the worker (core, no Qt)."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from attention_lab.core import csv_table, job_protocol, jobs
from attention_lab.core.csv_table import ColumnRows


def _table(n: int = 10):
    return ["i", "word", "weight"], ColumnRows([np.arange(n), ["a,b", "c"] * (n // 2), np.linspace(0, 1, n)])


def test_the_job_writes_what_export_csv_writes(tmp_path):
    header, rows = _table()
    written = jobs.export_csv_job(tmp_path / "job.csv", header, rows, cancel=threading.Event())
    assert written == tmp_path / "job.csv"
    assert written.read_bytes() == csv_table.export_csv(tmp_path / "direct.csv", header, rows).read_bytes()
    assert written.read_bytes().startswith("\ufeffi,word,weight\r\n0,\"a,b\",0.0\r\n".encode())


@pytest.mark.parametrize("as_columns", [True, False], ids=["columns", "rows"])
def test_a_cancelled_job_stops_between_chunks_and_leaves_no_half_file(tmp_path, monkeypatch, as_columns):
    monkeypatch.setattr(csv_table, "CSV_CHUNK_ROWS", 3)
    header, rows = _table()
    cancel = threading.Event()
    checks = []

    def cancel_after_the_first_chunk():
        checks.append(1)
        if len(checks) == 2:
            cancel.set()
        jobs.raise_if_cancelled(cancel)

    with pytest.raises(job_protocol.Cancelled):
        csv_table.export_csv(tmp_path / "half.csv", header, rows if as_columns else list(rows),
                             check=cancel_after_the_first_chunk)
    assert len(checks) == 2 and not (tmp_path / "half.csv").exists()


def test_a_file_that_cannot_be_opened_is_left_as_it_was(tmp_path):
    header, rows = _table()
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(OSError):
        jobs.export_csv_job(tmp_path / "a-file" / "x.csv", header, rows)
    assert (tmp_path / "a-file").read_text() == "not a folder"


def test_exports_to_two_files_are_two_kinds_and_one_file_is_one():
    assert job_protocol.file_export_kind("/a/x.csv") != job_protocol.file_export_kind("/a/y.csv")
    assert job_protocol.file_export_kind("/a/x.csv") == job_protocol.file_export_kind(Path("/a/x.csv"))
