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


def test_a_merged_label_that_grows_onto_another_is_merged_again_and_boxes_sit_right_of_their_points():
    """"h2" and "h8" share a spot; their joined label is wider and reaches "h6" beyond either one's own
    box, so all three become one.  A point left of a label by less than its own label's width crosses
    that label even when the other's label is short."""
    points = [("h2", 0.0, 0.0), ("h8", 1.0, 0.0), ("h6", 40.0, 0.0), ("h9", 200.0, 0.0)]
    merged = grouped_point_labels(points, (1.0, 1.0), char_px=10, line_px=14)
    assert merged == [("h2, h8, h6", 0.0, 0.0), ("h9", 200.0, 0.0)]
    # the boxes start right of their points: "h10" 25 px left of "h7" reaches it, 25 px right of it does not
    assert len(grouped_point_labels([("h7", 100.0, 0.0), ("h10", 75.0, 0.0)], (1.0, 1.0), 10, 14)) == 1
    assert len(grouped_point_labels([("h7", 100.0, 0.0), ("h10", 135.0, 0.0)], (1.0, 1.0), 10, 14)) == 2
    # the text items' margins count: 16 px apart vertically is clear without them, crossing with 4 px each side
    apart = [("h1", 0.0, 0.0), ("h3", 0.0, 16.0)]
    assert len(grouped_point_labels(apart, (1.0, 1.0), 10, 14)) == 2
    assert len(grouped_point_labels(apart, (1.0, 1.0), 10, 14, margin_px=4)) == 1
