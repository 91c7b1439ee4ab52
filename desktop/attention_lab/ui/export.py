"""Export a plot as PNG or SVG, and a table of numbers as CSV.

Plots use pyqtgraph's exporters, which take a scene item (a PlotItem, a GraphicsLayout)
or a whole ``GraphicsScene``; PNG is rendered at twice the on-screen size so it stays sharp
on slides.  CSV is written with the ``csv`` module in UTF-8 with a BOM, which spreadsheet
programs need to read "␣" and accents correctly.
"""

from __future__ import annotations

import csv
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
        _patch_svg_closepath()
        try:
            exporters.SVGExporter(item).export(str(path))
        except ValueError:
            # a path pyqtgraph's post-processing still can't parse: Qt's own SVG generator
            # draws the same scene (axes can come out less exact, but nothing is lost)
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


def _svg_with_qt(item: Any, path: Path) -> None:
    from PySide6.QtCore import QRectF, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    if hasattr(item, "sceneBoundingRect"):
        scene, source = item.scene(), item.sceneBoundingRect()
    else:  # a whole GraphicsScene: what its view shows (its sceneRect only ever grows: see _shown_width)
        view = item.views()[0]
        scene, source = item, view.mapToScene(view.viewport().rect()).boundingRect()
    width, height = max(1, int(source.width())), max(1, int(source.height()))
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(width, height))
    generator.setViewBox(QRectF(0, 0, width, height))
    generator.setTitle("Attention Lab")
    painter = QPainter(generator)
    try:
        scene.render(painter, QRectF(0, 0, width, height), source)
    finally:
        painter.end()


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return repr(value)  # full precision: an exact 0 stays "0.0", 1e-9 stays 1e-09
    if hasattr(value, "item") and callable(value.item):  # numpy / torch scalars
        return _cell(value.item())
    return value


def export_csv(path: str | os.PathLike, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(header))
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
