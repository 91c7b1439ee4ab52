"""The head portrait's scatter labels never overlap ("h4" and "h8" were drawn over each other
in the demo model's layer 0 at 1366×768)."""

from __future__ import annotations

from attention_lab.ui.panels.panel_kit import grouped_point_labels


def test_labels_that_would_overlap_are_written_once():
    """Two points closer on screen than a label's box share one label; far apart, each keeps its own."""
    points = [("h4", 1.00, 2.00), ("h8", 1.01, 2.01), ("h2", 5.0, 0.5)]
    near = grouped_point_labels(points, (0.01, 0.01), char_px=7, line_px=14)  # 1 px apart: overlapping
    assert near == [("h4, h8", 1.00, 2.00), ("h2", 5.0, 0.5)]
    zoomed = grouped_point_labels(points, (0.0001, 0.0001), char_px=7, line_px=14)  # 100 px apart: room
    assert [text for text, _x, _y in zoomed] == ["h4", "h8", "h2"]


def test_the_demo_models_portrait_at_laptop_size_has_no_overlapping_labels(qtbot, make_window):
    window = make_window(model_spec="demo", language="en")
    window.resize(1366, 708)
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=60_000)
    dock = window.docks["panel.portrait"]
    dock.show()
    dock.raise_()
    portrait = window.panel("panel.portrait")
    qtbot.waitUntil(lambda: bool(portrait._labels.shown), timeout=30_000)
    qtbot.wait(200)
    labels = [item for item in portrait._labels.shown if item.isVisible()]
    rects = [item.sceneBoundingRect() for item in labels]
    overlapping = [(labels[i].toPlainText(), labels[j].toPlainText())
                   for i in range(len(rects)) for j in range(i + 1, len(rects)) if rects[i].intersects(rects[j])]
    assert not overlapping
    written = sorted(int(h[1:]) for item in labels for h in item.toPlainText().split(", "))
    assert written == list(range(window.session.model.config.n_head))  # every head named once
