"""SVG export in one pass through Qt's SVG generator (pyqtgraph's exporter drew and re-parsed
each of ~65 items, 100-120 ms of the GUI thread's CPU for a head grid), still a vector file a learner
opens in a browser or Inkscape: titles, axis words and tick labels as text, the heatmap embedded."""

from __future__ import annotations

import base64
import re
import xml.etree.ElementTree as ET

import numpy as np
import pyqtgraph as pg
import pytest
from attention_lab.ui import export
from attention_lab.ui.export import SVG_DPI, export_plot
from PySide6.QtGui import QImage

SVG = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"


def _heatmap_view(qtbot) -> pg.GraphicsLayoutWidget:
    """A head-grid-like layout: a titled heatmap with axis words, and a titled line plot with symbols."""
    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.setBackground("w")
    view.resize(520, 260)
    heat = view.addPlot(title="head 3")
    heat.addItem(pg.ImageItem(np.random.default_rng(0).random((6, 6))))
    heat.setLabel("bottom", "key (source)")
    heat.setLabel("left", "query (destination)")
    line = view.addPlot(title="Time per generated token")
    line.plot(np.arange(10.0), np.arange(10.0) ** 0.5, pen=pg.mkPen((200, 0, 0), width=2), symbol="o", symbolSize=6)
    line.setLabel("bottom", "position of the new token")
    view.show()
    qtbot.waitExposed(view)
    qtbot.wait(50)  # autorange and the ticks it picks settle, as before a learner's export
    return view


def _texts(root) -> list[str]:
    return [(node.text or "").strip() for node in root.iter(f"{SVG}text") if (node.text or "").strip()]


def test_the_fast_svg_holds_the_words_the_ticks_and_the_heatmap_as_pyqtgraph_wrote_them(qtbot, tmp_path, monkeypatch):
    view = _heatmap_view(qtbot)
    item = view.ci
    assert export._qt_draws_it_as_shown(item)  # both plots shown whole: the one-pass path
    reference = tmp_path / "pyqtgraph.svg"
    export._patch_svg_closepath()
    pg.exporters.SVGExporter(item).export(str(reference))  # what the app wrote before
    monkeypatch.setattr(pg.exporters.SVGExporter, "export", lambda *a, **k: pytest.fail("took the slow path"))
    path = export_plot(item, tmp_path / "grid.svg")

    root = ET.parse(path).getroot()
    texts = _texts(root)
    for words in ("head 3", "key (source)", "query (destination)", "Time per generated token", "position of the new token"):
        assert words in texts
    assert sorted(texts) == sorted(_texts(ET.parse(reference).getroot()))  # every tick label too, as text
    images = [node.get(XLINK_HREF) for node in root.iter(f"{SVG}image")]
    assert len(images) == 1 and images[0].startswith("data:image/png;base64,")  # the heatmap, and only it
    heatmap = QImage.fromData(base64.b64decode(images[0].split(",", 1)[1]))
    assert (heatmap.width(), heatmap.height()) == (6, 6)  # the data's cells, kept sharp at any zoom
    assert len({heatmap.pixel(x, y) for x in range(6) for y in range(6)}) > 20  # 36 random values' colours
    # opens at the size shown: the view box is the item's on-screen size, width/height at 96 dpi
    shown = item.sceneBoundingRect()
    assert root.get("viewBox") == f"0 0 {int(shown.width())} {int(shown.height())}"
    width_mm = float(re.fullmatch(r"([\d.]+)mm", root.get("width")).group(1))
    assert width_mm == pytest.approx(int(shown.width()) / SVG_DPI * 25.4, abs=0.01)


def _line_plot_view(qtbot) -> pg.PlotWidget:
    view = pg.PlotWidget(background="w")
    qtbot.addWidget(view)
    view.resize(300, 200)
    view.plot(np.arange(10.0), np.arange(10.0) ** 0.5, pen=pg.mkPen((200, 0, 0), width=2), symbol="o", symbolSize=6)
    view.show()
    qtbot.waitExposed(view)
    qtbot.wait(50)
    return view


def test_scatter_symbols_are_vector_shapes_not_pixmaps(qtbot, tmp_path):
    view = _line_plot_view(qtbot)
    item = view.getPlotItem()  # as the KV panel exports its plot
    assert export._qt_draws_it_as_shown(item)
    root = ET.parse(export_plot(item, tmp_path / "line.svg")).getroot()
    assert not list(root.iter(f"{SVG}image"))  # drawn outside pyqtgraph's export mode, each dot was a PNG
    assert len(list(root.iter(f"{SVG}path"))) >= 10  # ten dots


def test_one_plot_of_a_layout_goes_through_pyqtgraph_which_draws_it_alone(qtbot, tmp_path, monkeypatch):
    """Qt would draw the whole scene under the plot: the heatmap next to it would be in the file."""
    view = _heatmap_view(qtbot)
    line = view.ci.getItem(0, 1)
    assert not export._qt_draws_it_as_shown(line)
    monkeypatch.setattr(export, "_svg_with_qt", lambda *a: pytest.fail("drew the neighbours"))
    root = ET.parse(export_plot(line, tmp_path / "line.svg")).getroot()
    assert not list(root.iter(f"{SVG}image")) and "position of the new token" in _texts(root)


def test_the_background_the_plot_is_shown_on_is_filled(qtbot, tmp_path):
    view = _heatmap_view(qtbot)
    text = export_plot(view.ci, tmp_path / "grid.svg").read_text(encoding="utf-8")
    assert 'fill="#ffffff"' in text


def test_a_zoomed_plot_is_clipped_at_its_axes(qtbot, tmp_path):
    """A curve reaching past its axes (the learner zoomed in) is clipped to its plot's frame, as on
    screen: SVG 1.1's clip paths (Qt's default SVG Tiny has none, and drew the curve across the axes)."""
    view = _line_plot_view(qtbot)
    item = view.getPlotItem()
    item.setXRange(2, 4, padding=0)
    qtbot.wait(20)
    root = ET.parse(export_plot(item, tmp_path / "zoomed.svg")).getroot()
    clips = {node.get("id"): node for node in root.iter(f"{SVG}clipPath")}
    parents = {child: parent for parent in root.iter() for child in parent}
    curves = [node for node in root.iter(f"{SVG}path") if node.get("d", "").count("L") >= 9]  # the 10-point curve
    assert curves
    frame = item.getViewBox().sceneBoundingRect().translated(-item.sceneBoundingRect().topLeft())
    for curve in curves:
        node = curve
        while node in parents and not node.get("clip-path"):
            node = parents[node]
        clip_id = re.fullmatch(r"url\(#(.+)\)", node.get("clip-path", "")).group(1)
        numbers = [float(n) for n in re.findall(r"-?[\d.]+", clips[clip_id].find(f"{SVG}path").get("d"))]
        xs, ys = numbers[0::2], numbers[1::2]
        assert (min(xs), min(ys), max(xs), max(ys)) == pytest.approx(
            (frame.left(), frame.top(), frame.right(), frame.bottom()), abs=1.0)
