"""A table of numbers written as CSV (UTF-8 with a BOM, which spreadsheet programs need to read
"␣" and accents correctly), with the ``csv`` module; a large table held as columns
(:class:`ColumnRows`) is formatted a column at a time, to the same bytes.

Qt-free: the head grid's context-long table (786,432 rows) takes 1.6 s of CPU to write, so File ›
Export › CSV runs it on the worker (:func:`attention_lab.core.jobs.export_csv_job`); the window
only gathers the panel's ``(header, rows)``.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any


def _cell(value: Any) -> Any:
    # numpy / torch scalars first: numpy's float64 *is* a float, and its repr is "np.float64(0.5)"
    if hasattr(value, "item") and callable(value.item):
        return _cell(value.item())
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(value)  # full precision: an exact 0 stays "0.0", 1e-9 stays 1e-09
    return value


class ColumnRows(Sequence):
    """A table's rows held as its columns (numpy arrays or lists, one per header name), so a large
    table is written column by column instead of cell by cell (:func:`export_csv`).  It is a
    sequence of rows all the same, for whoever reads a panel's ``table_for_export()``.

    The head grid's table has heads x tokens x tokens rows: 786,432 rows for a context-long text,
    5 s of the GUI thread written row by row; the soak's exports of shorter texts stalled 360 ms."""

    def __init__(self, columns: Sequence[Any]):
        self.columns = list(columns)
        lengths = {len(column) for column in self.columns}
        if len(lengths) > 1:
            raise ValueError(f"columns of different lengths: {sorted(lengths)}")
        self._length = lengths.pop() if lengths else 0

    def __len__(self) -> int:
        return self._length

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        row = [column[index] for column in self.columns]
        return [value.item() if hasattr(value, "item") and callable(value.item) else value for value in row]


#: rows formatted at a time (a context-long head grid table is 786,432 rows).  The writer runs on the
#: worker, and each chunk's ``map(repr, …)`` / ``join`` is one C call that keeps the GIL from the GUI
#: thread until it ends: 65,536-row chunks left the window's event loop 200-550 ms gaps during a write,
#: 8,192-row chunks 90-170 ms, at the same CPU (1.6-1.8 s either way; 2 cores at load 4-5)
CSV_CHUNK_ROWS = 8_192


def _csv_field(text: str) -> str:
    """``text`` as the csv module writes it in a row (quoted when it holds a comma, a quote or a line
    break), asked of the module itself so the fast path writes exactly what it would."""
    buffer = io.StringIO()
    csv.writer(buffer).writerow(["", text])  # a second field: a lone empty field is written as ""
    return buffer.getvalue()[1:-2]


def _column_texts(column: Any, quoted: dict[str, str]) -> list[str]:
    """Each cell of ``column`` as the csv module writes ``_cell(value)`` (floats by ``repr``, NaN as an
    empty field, integers by ``str``, strings quoted when needed: ``quoted`` caches each string's)."""
    import numpy as np

    if isinstance(column, np.ndarray) and column.dtype.kind == "f":
        values = column.astype(np.float64, copy=False)
        if np.isnan(values).any():
            return ["" if math.isnan(v) else repr(v) for v in values.tolist()]
        return list(map(repr, values.tolist()))
    if isinstance(column, np.ndarray) and column.dtype.kind in "iu" and column.size:
        low, high = int(column.min()), int(column.max())
        if high - low < len(column):  # indices (layer, head, query, key): each number's text made once
            numbers = np.array([str(i) for i in range(low, high + 1)], dtype=object)
            return numbers[column - low].tolist()
    if isinstance(column, np.ndarray) and column.dtype.kind in "iub":
        return list(map(str, column.tolist()))
    values = column.tolist() if isinstance(column, np.ndarray) else list(column)
    try:
        distinct = set(values) if values and type(values[0]) is str else set()
    except TypeError:  # an unhashable cell: not a text column
        distinct = set()
    if distinct and all(type(v) is str for v in distinct):  # a text column (tokens): quote each text once
        for text in distinct - quoted.keys():
            quoted[text] = _csv_field(text)
        return [quoted[v] for v in values]
    texts = []
    for value in values:
        value = _cell(value)  # a float is its repr by now
        if value is None:
            texts.append("")  # as the csv module writes None
            continue
        value = value if isinstance(value, str) else str(value)  # as the csv module writes the rest
        text = quoted.get(value)
        if text is None:
            text = quoted[value] = _csv_field(value)
        texts.append(text)
    return texts


def export_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence[Any]], *,
               check: Callable[[], None] | None = None) -> Path:
    """Write ``header`` and ``rows`` as CSV (UTF-8 with a BOM).  Rows held as columns
    (:class:`ColumnRows`) are formatted a column at a time; the bytes are the same as row by row.

    ``check`` is called between chunks of rows (the worker's cancel check: it raises to stop);
    a file stopped half-way (cancelled, disk full) is removed rather than left looking like a whole table."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    check = check or (lambda: None)
    handle = path.open("w", newline="", encoding="utf-8-sig")  # a folder it can't write to fails here, file untouched
    try:
        with handle:
            writer = csv.writer(handle)
            writer.writerow(list(header))
            if isinstance(rows, ColumnRows):
                quoted: dict[str, str] = {}
                for start in range(0, len(rows), CSV_CHUNK_ROWS):
                    check()
                    texts = [_column_texts(column[start:start + CSV_CHUNK_ROWS], quoted) for column in rows.columns]
                    handle.write("".join(f"{line}\r\n" for line in map(",".join, zip(*texts))))
            else:
                for index, row in enumerate(rows):
                    if index % CSV_CHUNK_ROWS == 0:
                        check()
                    writer.writerow([_cell(v) for v in row])
    except BaseException:  # stopped, or the disk full: what was written is no whole table
        path.unlink(missing_ok=True)
        raise
    return path
