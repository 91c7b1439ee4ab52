"""File › Export as SVG walks the plot's items, not one item per label: the soak's 7.1 s stall
exporting the Mask panel came from a map whose every cell label was an item of its own."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph.exporters.SVGExporter  # noqa: E402,F401 -- the module, to count its walk
import sys  # noqa: E402

from PySide6.QtSvg import QSvgRenderer  # noqa: E402

from attention_lab.ui.export import export_plot  # noqa: E402
from attention_lab.ui.i18n import tr  # noqa: E402
from attention_lab.ui.panels.mask import MaskPanel  # noqa: E402

from state_factory import build_state  # noqa: E402

SHORT = "The big dog bit"
LONGER = "The big dog bit the mailman yesterday and then it ran far away"


def _export_counting(item, path, monkeypatch) -> int:
    """Export ``item`` as SVG to ``path``; the number of scene items the exporter visited."""
    module = sys.modules["pyqtgraph.exporters.SVGExporter"]
    original = module._generateItemSvg
    visited = []

    def counting(item, *args, **kwargs):
        visited.append(item)
        return original(item, *args, **kwargs)

    monkeypatch.setattr(module, "_generateItemSvg", counting)  # its recursion goes through the name too
    export_plot(item, path)
    monkeypatch.setattr(module, "_generateItemSvg", original)
    return len(visited)


def test_the_mask_maps_export_walks_the_same_items_for_a_longer_text(qtbot, tiny_model, tmp_path, monkeypatch):
    panel = MaskPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.show()
    walked = {}
    for name, text in (("short", SHORT), ("longer", LONGER)):
        state = build_state(tiny_model, text)
        panel.show_state(state)
        qtbot.wait(10)
        path = tmp_path / f"{name}.svg"
        walked[name] = (_export_counting(panel.plot_for_export(), path, monkeypatch), state.n_tokens)
        svg = path.read_text(encoding="utf-8")
        assert QSvgRenderer(str(path)).isValid() and "<svg" in svg
        if name == "short":  # its cells wide enough on screen for their labels: in the file too
            assert tr(f"mask.cell.{panel.selected_mode()}") in svg
    (short, n_short), (longer, n_long) = walked["short"], walked["longer"]
    assert n_long >= 2 * n_short  # four times the cells ...
    assert longer == short  # ... and not one item more to walk: the labels are one item
    assert short < 60
