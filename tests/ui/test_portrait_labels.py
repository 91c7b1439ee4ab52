"""The head portrait's scatter labels never overlap ("h4" and "h8" were drawn over each other
in the demo model's layer 0 at 1366×768)."""

from __future__ import annotations

import re

import pytest

from attention_lab.ui.panels.panel_kit import grouped_point_labels


def test_labels_that_would_overlap_are_written_once():
    """Two points closer on screen than a label's box share one label; far apart, each keeps its own."""
    points = [("h4", 1.00, 2.00), ("h8", 1.01, 2.01), ("h2", 5.0, 0.5)]
    near = grouped_point_labels(points, (0.01, 0.01), char_px=7, line_px=14)  # 1 px apart: overlapping
    assert near == [("h4, h8", 1.00, 2.00), ("h2", 5.0, 0.5)]
    zoomed = grouped_point_labels(points, (0.0001, 0.0001), char_px=7, line_px=14)  # 100 px apart: room
    assert [text for text, _x, _y in zoomed] == ["h4", "h8", "h2"]


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_demo_models_portrait_at_laptop_size_has_no_overlapping_labels(qtbot, make_window, language):
    window = make_window(model_spec="demo", language=language)
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
    view = portrait.plot.getPlotItem().getViewBox().sceneBoundingRect()
    past = [(item.toPlainText(), item.sceneBoundingRect().left(), item.sceneBoundingRect().right(), view.left(), view.right())
            for item in labels
            if item.sceneBoundingRect().right() > view.right() + 1 or item.sceneBoundingRect().left() < view.left() - 1]
    assert not past, f"labels run past the plot's edges: {past}"
    written = sorted(int(h) for item in labels for h in re.findall(r"h(\d+)", item.toPlainText()))
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


def test_a_label_that_would_run_past_the_view_goes_left_of_its_point_or_stays_inside():
    """"h2, h3, h7, h8" ran out of the portrait's plot at 1366×768 (its points at the right of the view)."""
    points = [("h2", 90.0, 0.0), ("h5", 10.0, 0.0)]
    (text, x, _y), (other, x5, _y5) = grouped_point_labels(points, (1.0, 1.0), char_px=10, line_px=14, x_range=(0.0, 100.0))
    assert (text, other, x5) == ("h2", "h5", 10.0)  # room on the right: where it was
    assert x + 0.15 * 20 == pytest.approx(90.0 - 1.15 * 20)  # its box drawn over [67, 87]: left of its point at 90
    # a label fitting on neither side is kept whole inside the view, flush with its right edge
    wide = grouped_point_labels([("h2, h3, h7, h8", 50.0, 0.0)], (1.0, 1.0), 10, 14, x_range=(0.0, 160.0))
    assert wide[0][1] + 0.15 * 140 == pytest.approx(160.0 - 140)
    # boxes are checked where they are drawn: two flipped labels side by side still merge when they cross
    both = grouped_point_labels([("h2", 95.0, 0.0), ("h3", 97.0, 0.0)], (1.0, 1.0), 10, 14, x_range=(0.0, 100.0))
    assert [t for t, _x, _y in both] == ["h2, h3"]
    # wider than the view itself: on lines of as many heads as fit
    crowd = [(f"h{h}", 50.0, 0.0) for h in (2, 3, 7, 8, 9)]  # five heads in one spot, a view 8 characters wide
    lines = grouped_point_labels(crowd, (1.0, 1.0), 10, 14, x_range=(0.0, 80.0))
    assert lines[0][0] == "h2, h3,\nh7, h8,\nh9"
