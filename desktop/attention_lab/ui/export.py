"""Export a plot as PNG or SVG, and a table of numbers as CSV.

Plots take a scene item (a PlotItem, a GraphicsLayout) or a whole ``GraphicsScene``; PNG is
rendered by pyqtgraph's exporter at twice the on-screen size so it stays sharp on slides.  SVG is
drawn in one pass by Qt's SVG generator (pyqtgraph's exporter draws and re-parses each item: ~100 ms
of the GUI thread for the head grid), pyqtgraph's exporter only for a plot inside a layout.  CSV is written with the ``csv`` module in UTF-8 with a BOM, which spreadsheet
programs need to read "␣" and accents correctly; a large table held as columns
(:class:`ColumnRows`) is formatted a column at a time, to the same bytes.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

PNG_SCALE = 2


def _shown_width(exporter: Any) -> int:
    """The width the exported item or scene is shown at, in device pixels (pyqtgraph's target rect:
    a scene's view widget, or the item mapped to the screen).

    Never a scene's ``sceneRect()``: with no rect set, a ``QGraphicsScene`` keeps growing it to hold
    everything its items ever covered and never shrinks it, while pyqtgraph renders only what the view
    shows.  The KV panel's stability view (a scene) grew to 10,961 px after some resizes: a PNG of
    21,922 px x 3,234 px, 14.7 s of the GUI thread's CPU, then Qt refused to write it (over 256 MB)."""
    return max(1, int(exporter.getTargetRect().width()))


def export_plot(item: Any, path: str | os.PathLike) -> Path:
    """Write ``item`` (pyqtgraph item or scene, or a widget that has ``scene()``) as PNG or SVG by suffix."""
    from pyqtgraph import exporters
    from PySide6.QtWidgets import QApplication

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"export as .png or .svg, not {suffix or 'no suffix'!r}")
    if hasattr(item, "scene") and not hasattr(item, "sceneRect") and callable(item.scene) and hasattr(item, "viewport"):
        item = item.scene()  # a GraphicsView widget: export everything it shows
    QApplication.processEvents()  # let pending layout settle so the exported size is right
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".png":
        exporter = exporters.ImageExporter(item)
        exporter.parameters()["width"] = _shown_width(exporter) * PNG_SCALE
        exporter.parameters()["antialias"] = True
        exporter.export(str(path))
    else:
        if _qt_draws_it_as_shown(item):
            _svg_with_qt(item, path)  # one pass: 5-33 ms of CPU where pyqtgraph's exporter took 40-130
        else:
            _patch_svg_closepath()
            try:
                exporters.SVGExporter(item).export(str(path))
            except ValueError:
                # a path pyqtgraph's post-processing still can't parse: Qt's own SVG generator
                # draws the same part of the scene (the plot's neighbours can come along, nothing is lost)
                _svg_with_qt(item, path)
    if not path.is_file() or path.stat().st_size == 0:
        raise OSError(f"nothing was written to {path}")
    return path


_svg_patched = False


def _patch_svg_closepath() -> None:
    """Let pyqtgraph 0.14's SVG exporter read paths that end in "Z".

    Qt 6.12's SVG generator closes rectangles with a ``Z`` token; pyqtgraph's
    ``correctCoordinates`` expects every token to be ``x,y`` and fails ("not enough values
    to unpack", so no SVG at all).  The wrapper hides the ``Z`` from it and puts it back.
    """
    global _svg_patched
    if _svg_patched:
        return
    import sys

    import pyqtgraph.exporters.SVGExporter  # noqa: F401 -- the module, for its function

    module = sys.modules["pyqtgraph.exporters.SVGExporter"]
    original = module.correctCoordinates

    def correct_coordinates(node, defs, item, options):
        closed = []
        for path_node in node.getElementsByTagName("path"):
            tokens = path_node.getAttribute("d").split()
            if any(t in ("Z", "z") for t in tokens):
                path_node.setAttribute("d", " ".join(t for t in tokens if t not in ("Z", "z")))
                closed.append(path_node)
        result = original(node, defs, item, options)
        for path_node in closed:
            path_node.setAttribute("d", path_node.getAttribute("d").rstrip() + " Z")
        return result

    module.correctCoordinates = correct_coordinates
    _svg_patched = True


def _scene_and_source(item: Any):
    """The scene ``item`` is drawn in and the part of it to export, in scene coordinates."""
    if hasattr(item, "sceneBoundingRect"):
        return item.scene(), item.sceneBoundingRect()
    # a whole GraphicsScene: what its view shows (its sceneRect only ever grows: see _shown_width)
    view = item.views()[0]
    return item, view.mapToScene(view.viewport().rect()).boundingRect()


def _qt_draws_it_as_shown(item: Any) -> bool:
    """Whether Qt's SVG generator, drawing the scene's part under ``item``, draws ``item`` and nothing
    else: a whole scene or a top-level item (a panel's layout, a PlotWidget's plot).  It draws everything
    in the scene there, so a plot inside a layout would take along its neighbours' items (off the page
    but in the file): that one goes through pyqtgraph's exporter, which draws the item alone."""
    return not (hasattr(item, "parentItem") and item.parentItem() is not None)


SVG_DPI = 96  # the resolution screens and browsers take an SVG's size at: the file opens at the size shown


def _svg_with_qt(item: Any, path: Path) -> None:
    """Draw ``item`` (or what a scene's view shows) into an SVG with Qt's generator in one pass: text
    stays text, an image is embedded as PNG, curves and scatter symbols are vector paths."""
    from pyqtgraph import exporters
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    scene, source = _scene_and_source(item)
    width, height = max(1, int(source.width())), max(1, int(source.height()))
    # SVG 1.1, not Qt's default SVG Tiny 1.2: Tiny has no clip paths, and a plot clips what reaches past
    # its axes (a curve the learner zoomed into, a label at the edge); 1.1 writes each plot's clip
    generator = QSvgGenerator(QSvgGenerator.SvgVersion.Svg11)
    generator.setFileName(str(path))
    generator.setResolution(SVG_DPI)  # also makes a font's points the pixels it is shown at
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setTitle("Attention Lab")
    # pyqtgraph's export mode: scatter symbols drawn as shapes, not as a cached pixmap each
    exporter = exporters.SVGExporter(item)
    exporter.setExportMode(True, {"antialias": True, "background": None, "painter": None, "width": width, "height": height})
    painter = QPainter(generator)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        background = _background_colour(scene)
        if background is not None:
            painter.fillRect(QRectF(0, 0, width, height), background)
        scene.render(painter, QRectF(0, 0, width, height), source)
    finally:
        painter.end()
        exporter.setExportMode(False)


def _background_colour(scene: Any):
    """The colour the plot is shown on (a pyqtgraph view paints it, not the scene), as pyqtgraph's
    exporter fills it; None when the view shows none."""
    from PySide6.QtCore import Qt

    for view in scene.views():
        brush = view.backgroundBrush()
        if brush.style() != Qt.BrushStyle.NoBrush:
            return brush.color()
    return None


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


CSV_CHUNK_ROWS = 65_536  # rows formatted at a time: a context-long head grid table is 786,432 rows


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


def export_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    """Write ``header`` and ``rows`` as CSV (UTF-8 with a BOM).  Rows held as columns
    (:class:`ColumnRows`) are formatted a column at a time; the bytes are the same as row by row."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(header))
        if isinstance(rows, ColumnRows):
            quoted: dict[str, str] = {}
            for start in range(0, len(rows), CSV_CHUNK_ROWS):
                texts = [_column_texts(column[start:start + CSV_CHUNK_ROWS], quoted) for column in rows.columns]
                handle.write("".join(f"{line}\r\n" for line in map(",".join, zip(*texts))))
        else:
            for row in rows:
                writer.writerow([_cell(v) for v in row])
    return path


def export_target(target: Any, kind: str, path: str | os.PathLike) -> Path:
    """Write a panel's export (a plot for ``png``/``svg``, ``(header, rows)`` for ``csv``) to
    ``path``, its suffix set to the kind's; returns the path written."""
    path = Path(path)
    if path.suffix.lower() != f".{kind}":
        path = path.with_suffix(f".{kind}")
    if kind == "csv":
        header, rows = target
        export_csv(path, header, rows)
    else:
        export_plot(target, path)
    return path


# ---------------------------------------------------------------------------- where the dialog opens
EXPORT_FOLDER_KEY = "export/folder"


def suggested_path(settings, filename: str) -> str:
    """Where the export dialog opens: the folder of the last export (remembered in the settings) if it
    still exists; on first use the learner's Pictures folder for an image, Documents for a table; the home
    folder if those are missing.  Never the app's own folder, where a checkout's files would be."""
    from PySide6.QtCore import QStandardPaths

    last = str(settings.value(EXPORT_FOLDER_KEY, "") or "")
    if last and Path(last).is_dir():
        return str(Path(last) / filename)
    kind = QStandardPaths.StandardLocation.DocumentsLocation if filename.endswith(".csv") else QStandardPaths.StandardLocation.PicturesLocation
    for folder in (QStandardPaths.writableLocation(kind), str(Path.home())):
        if folder and Path(folder).is_dir():
            return str(Path(folder) / filename)
    return filename


def remember_folder(settings, path: str | os.PathLike) -> None:
    settings.setValue(EXPORT_FOLDER_KEY, str(Path(path).parent))
