"""Exports cost what the plot shown costs, not what the scene once covered (issue 18's soak: a KV
stability PNG held the GUI thread 2.0 s, 1.8 s of it CPU; the head grid's CSV 360-390 ms)."""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from attention_lab.ui.export import PNG_SCALE, export_plot
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QGraphicsRectItem


def _grown_scene_view(qtbot) -> pg.GraphicsLayoutWidget:
    """A plot shown at 300 x 200 whose scene's rect grew far past it (an item once far away: a
    ``QGraphicsScene`` with no rect set never shrinks its rect, as after a window was resized)."""
    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.setBackground("w")
    view.resize(300, 200)
    plot = view.addPlot()
    plot.plot(np.arange(10.0), np.arange(10.0) ** 2, pen=pg.mkPen((200, 0, 0), width=3))
    view.show()
    qtbot.waitExposed(view)
    far = QGraphicsRectItem(QRectF(0, 0, 8000, 1500))
    view.scene().addItem(far)
    assert view.scene().sceneRect().width() >= 8000  # grown...
    view.scene().removeItem(far)
    assert view.scene().sceneRect().width() >= 8000  # ... and kept
    return view


def test_a_scenes_png_is_twice_the_shown_size_not_its_grown_scene_rect(qtbot, tmp_path):
    view = _grown_scene_view(qtbot)
    png = export_plot(view.scene(), tmp_path / "stability.png")
    image = QImage(str(png))
    shown = view.viewport().rect()
    assert (image.width(), image.height()) == (shown.width() * PNG_SCALE, shown.height() * PNG_SCALE)
    # the plot is in it: the red curve and the black axes on the white background
    pixels = [image.pixelColor(x, y) for x in range(0, image.width(), 3) for y in range(0, image.height(), 3)]
    assert any(c.red() > 150 and c.green() < 80 and c.blue() < 80 for c in pixels)
    assert any(c.lightness() < 60 for c in pixels) and image.pixelColor(1, 1) == QColor("white")


def test_an_items_png_is_twice_its_shown_size(qtbot, tmp_path):
    view = _grown_scene_view(qtbot)
    item = view.ci
    image = QImage(str(export_plot(item, tmp_path / "item.png")))
    assert image.width() == int(item.mapRectToDevice(item.boundingRect()).width()) * PNG_SCALE
    assert 0 < image.height() < 3 * view.height()


def test_qts_svg_fallback_draws_what_the_scenes_view_shows(qtbot, tmp_path):
    from attention_lab.ui.export import _svg_with_qt

    view = _grown_scene_view(qtbot)
    path = tmp_path / "stability.svg"
    _svg_with_qt(view.scene(), path)
    text = path.read_text(encoding="utf-8")
    shown = view.viewport().rect()
    assert f'viewBox="0 0 {shown.width()} {shown.height()}"' in text
