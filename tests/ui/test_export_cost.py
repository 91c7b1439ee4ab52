"""Exports cost what the plot shown costs, not what the scene once covered (the 30-minute soak: a KV
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


# ---------------------------------------------------------------------------- CSV written by columns
def _row_by_row(path, header, rows):
    """The CSV as export_csv wrote every table before tables could be held as columns."""
    import csv

    from attention_lab.core.csv_table import _cell

    with path.open("w", newline="", encoding="utf-8-sig") as handle:
        writer = csv.writer(handle)
        writer.writerow(list(header))
        for row in rows:
            writer.writerow([_cell(v) for v in row])
    return path.read_bytes()


def test_a_table_held_as_columns_is_written_byte_for_byte_as_row_by_row(tmp_path, monkeypatch):
    from attention_lab.core import csv_table as export

    monkeypatch.setattr(export, "CSV_CHUNK_ROWS", 3)  # several chunks, the last one short
    words = ["plain", "a,comma", 'a "quote"', "two\nlines", "", " ␣lead", "🙂", "x\r", None, "last"]
    n = len(words)
    weights = np.array([0.0, 1e-9, np.nan, 1 / 3, -2.5, 7.0, 3e38, np.inf, 0.1, np.float32(0.1)], dtype=np.float32)
    mixed = ["text", 2, 0.5, None, [1, 2], ("a", '"b"'), np.float64(0.25), True, "", {"k": 1}]  # any cell at all
    columns = [np.arange(n), weights, weights.astype(np.float64) * 3, words, [np.int64(5)] * n,
               np.array(words, dtype=object), np.array([True, False] * 5), mixed]
    header = ["i", "w32", "w64", "word", "scalar", "object", "flag", "mixed"]
    rows = export.ColumnRows(columns)
    assert len(rows) == n and rows[1] == [1, float(np.float32(1e-9)), float(np.float32(1e-9)) * 3, "a,comma", 5,
                                          "a,comma", False, 2]
    assert [len(row) for row in rows] == [len(header)] * n  # a sequence of rows, as panels' tables are
    written = export.export_csv(tmp_path / "columns.csv", header, rows).read_bytes()
    assert written == _row_by_row(tmp_path / "rows.csv", header, [list(row) for row in zip(*columns)])
    assert b"np." not in written and b",0.0,0.0,plain," in written  # numpy's float64 written as a number


def test_the_head_grids_table_is_the_same_file_as_its_row_by_row_table(qtbot, tiny_model, tmp_path):
    from attention_lab.ui.export import export_csv
    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from state_factory import build_state

    state = build_state(tiny_model, 'Dogs, "cats" and\tbirds 🙂', layer=1)
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.show_state(state)
    causal, bidi = state.attention_causal.numpy(), state.attention_bidirectional.numpy()
    for tab in (0, 1):  # every head of the layer; the enlarged head only
        panel.tabs.setCurrentIndex(tab)
        header, rows = panel.table_for_export()
        heads = [panel.head] if tab == 1 else range(causal.shape[0])
        n = state.n_tokens
        expected = [[state.layer, h, q, state.tokens[q], k, state.tokens[k], float(causal[h, q, k]), float(bidi[h, q, k])]
                    for h in heads for q in range(n) for k in range(n)]
        assert len(rows) == len(expected) == len(heads) * n * n
        written = export_csv(tmp_path / f"grid{tab}.csv", header, rows).read_bytes()
        assert written == _row_by_row(tmp_path / f"expected{tab}.csv", header, expected)
