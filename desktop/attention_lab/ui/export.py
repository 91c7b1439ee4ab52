"""File › Export: a plot as PNG or SVG (painted here, on the GUI thread: they paint Qt items), a
table of numbers as CSV (written on the worker: :class:`PanelExports`).

Plots take a scene item (a PlotItem, a GraphicsLayout) or a whole ``GraphicsScene``; PNG is
rendered by pyqtgraph's exporter at twice the on-screen size so it stays sharp on slides, and the
window's File › Export has its pixels encoded and written on the worker
(:func:`attention_lab.core.png_file.write_png`: the encoding was ~85 % of a PNG export's time on the
GUI thread, a stall of the soak's exports).  SVG is
drawn in one pass by Qt's SVG generator (pyqtgraph's exporter draws and re-parses each item: ~100 ms
of the GUI thread for the head grid), pyqtgraph's exporter only for a plot inside a layout.  CSV is
written by :mod:`attention_lab.core.csv_table` (Qt-free) through the session's
:meth:`~attention_lab.ui.session.Session.export_csv`.
"""

from __future__ import annotations

import os
import traceback
from pathlib import Path
from typing import Any

from PySide6.QtCore import QObject, Signal

from attention_lab.core.csv_table import ColumnRows, export_csv  # noqa: F401 -- the panels' table type; tests
from attention_lab.ui.i18n import tr

PNG_SCALE = 2


def _shown_width(exporter: Any) -> int:
    """The width the exported item or scene is shown at, in device pixels (pyqtgraph's target rect:
    a scene's view widget, or the item mapped to the screen).

    Never a scene's ``sceneRect()``: with no rect set, a ``QGraphicsScene`` keeps growing it to hold
    everything its items ever covered and never shrinks it, while pyqtgraph renders only what the view
    shows.  The KV panel's stability view (a scene) grew to 10,961 px after some resizes: a PNG of
    21,922 px x 3,234 px, 14.7 s of the GUI thread's CPU, then Qt refused to write it (over 256 MB)."""
    return max(1, int(exporter.getTargetRect().width()))


def _exported_item(item: Any) -> Any:
    """``item``, or the scene of a GraphicsView widget (everything it shows)."""
    if hasattr(item, "scene") and not hasattr(item, "sceneRect") and callable(item.scene) and hasattr(item, "viewport"):
        return item.scene()
    return item


def render_png_pixels(item: Any):
    """``item`` (as :func:`export_plot` takes it) painted at :data:`PNG_SCALE` times its shown width, as
    height × width × 4 RGBA bytes (a copy: the worker may encode them while the GUI goes on)."""
    import numpy as np
    from pyqtgraph import exporters
    from PySide6.QtGui import QImage
    from PySide6.QtWidgets import QApplication

    item = _exported_item(item)
    QApplication.processEvents()  # let pending layout settle so the exported size is right
    exporter = exporters.ImageExporter(item)
    exporter.parameters()["width"] = _shown_width(exporter) * PNG_SCALE
    exporter.parameters()["antialias"] = True
    image = exporter.export(toBytes=True).convertToFormat(QImage.Format.Format_RGBA8888)
    rows = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    return rows[:, : image.width() * 4].reshape(image.height(), image.width(), 4).copy()


def export_plot(item: Any, path: str | os.PathLike) -> Path:
    """Write ``item`` (pyqtgraph item or scene, or a widget that has ``scene()``) as PNG or SVG by suffix,
    here and now (the window's File › Export has a PNG written on the worker: :class:`PanelExports`)."""
    from pyqtgraph import exporters
    from PySide6.QtWidgets import QApplication

    from attention_lab.core.png_file import write_png

    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in (".png", ".svg"):
        raise ValueError(f"export as .png or .svg, not {suffix or 'no suffix'!r}")
    if suffix == ".png":
        write_png(path, render_png_pixels(item))
    else:
        item = _exported_item(item)
        QApplication.processEvents()  # let pending layout settle so the exported size is right
        path.parent.mkdir(parents=True, exist_ok=True)
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


def with_kind_suffix(kind: str, path: str | os.PathLike) -> Path:
    """``path`` with the suffix of ``kind`` (``png``, ``svg``, ``csv``)."""
    path = Path(path)
    return path if path.suffix.lower() == f".{kind}" else path.with_suffix(f".{kind}")


class PanelExports(QObject):
    """The window's File › Export: an SVG is painted to its file at once; a PNG is painted here and
    its pixels are the intent :attr:`png_wanted`, a table the intent :attr:`csv_wanted`
    (``ui/wiring.py`` hands them to the session, whose worker writes the file: a context-long head
    grid table held the GUI thread 1.6 s, a PNG's encoding 60 ms of its 70), and the written file
    or the failure comes back to :meth:`file_written` / :meth:`file_failed`."""

    csv_wanted = Signal(object, object, object)  # path, header, rows
    png_wanted = Signal(object, object)  # path, height × width × 4 RGBA pixels

    def __init__(self, window):
        super().__init__(window)
        self.window = window
        self._names: dict[Path, str] = {}  # a file being written: its panel's name, for the error

    def export_current(self, kind: str, path: str | os.PathLike | None = None) -> Path | None:
        """Export the current panel's plot (svg: written when this returns; png: painted now, written
        by the worker) or numbers (csv: written by the worker); :meth:`file_written` says when the
        worker has written its file.  Asks for a file when ``path`` is None.  Returns the file's
        path, None when there is nothing to export or no file chosen."""
        from PySide6.QtWidgets import QFileDialog

        window = self.window
        panel = window.current_panel()
        if panel is None:
            return None
        name = tr(panel.title_key)
        target = panel.table_for_export() if kind == "csv" else panel.plot_for_export()
        if target is None:
            window.show_status(tr("status.nothing_to_export", panel=name))
            return None
        if path is None:
            suggested = suggested_path(window.settings, f"{panel.panel_id.value.removeprefix('panel.')}.{kind}")
            path, _ = QFileDialog.getSaveFileName(window, tr("dialog.export_title"), suggested, f"{kind.upper()} (*.{kind})")
            if not path:
                return None
        path = with_kind_suffix(kind, path)
        if kind == "csv":
            self._names[path] = name
            header, rows = target
            self.csv_wanted.emit(path, list(header), rows)
            return path
        try:
            if kind == "png":
                pixels = render_png_pixels(target)
            else:
                export_plot(target, path)
        except Exception as exc:
            window.show_error(f"{name}: {exc}", traceback.format_exc())
            return None
        if kind == "png":
            self._names[path] = name
            self.png_wanted.emit(path, pixels)
            return path
        self._written(path)
        return path

    @property
    def writing(self) -> list[Path]:
        """The files the worker was asked to write and has not written yet (nor failed to)."""
        return list(self._names)

    def file_written(self, path: Path) -> None:
        self._names.pop(Path(path), None)
        self._written(Path(path))

    def file_failed(self, path: Path, message: str, details: str) -> None:
        name = self._names.pop(Path(path), "")
        self.window.show_error(f"{name}: {message}" if name else message, details)

    def _written(self, path: Path) -> None:
        remember_folder(self.window.settings, path)
        self.window.show_status(tr("status.exported", path=str(path)))


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
