"""The token strip (ChipView) draws its chips once per layout, not once per paint: a scroll bar appearing
beside a long text's strip keeps the chips where they are, and a repaint copies the drawn
strip, drawing only the selected and the edited chip again."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attention_lab.ui.panels.token_editor import ChipView

TOKENS = [f"tok{i}" for i in range(120)]
IDS = list(range(1000, 1120))


def strip(qtbot, width: int = 700) -> ChipView:
    view = ChipView()
    qtbot.addWidget(view)
    view.resize(width, 400)
    view.set_tokens(TOKENS, IDS, 0, 5)
    view.show()
    return view


def rects(view: ChipView) -> list:
    return [view.chip_rect(i) for i in range(len(TOKENS))]


def test_a_scroll_bar_or_two_moves_no_chip_and_more_room_is_used(qtbot):
    view = strip(qtbot)
    before = rects(view)
    relayouts = []
    original = view._relayout
    view._relayout = lambda: (relayouts.append(view.width()), original())[1]
    view.resize(700 - view._slack(), 400)  # two scroll bars appear
    assert rects(view) == before and relayouts == []
    assert all(r.right() < view.width() for r in before)  # no chip under a scroll bar
    view.resize(1400, 400)  # a much wider dock: the rows get longer
    assert relayouts == [1400]
    assert max(r.y() for r in rects(view)) < max(r.y() for r in before)


def test_a_repaint_copies_the_strip_and_draws_only_the_marked_chips(qtbot):
    view = strip(qtbot)
    view.edited = 7
    drawn = []
    original = view._draw_chip
    view._draw_chip = lambda painter, chip, **kw: (drawn.append(chip.index), original(painter, chip, **kw))[1]
    first = view.grab().toImage()
    assert set(drawn) >= set(range(len(TOKENS)))  # the first paint draws the strip
    drawn.clear()
    view.select(9)  # a click elsewhere: the strip stays, the marks move
    second = view.grab().toImage()
    assert sorted(drawn) == [7, 9]
    assert first != second
    drawn.clear()
    view.set_tokens(TOKENS[:-1] + ["new"], IDS, 0, 9)  # another text: drawn again
    view.grab()
    assert len(set(drawn)) == len(TOKENS)


def test_the_row_of_guesses_is_rebuilt_only_when_the_guesses_change(qtbot):
    """A late edit keeps the guesses at its position: the row is kept, not rebuilt and re-laid
    out on each analysis; another position's guesses replace it."""
    import dataclasses

    from attention_lab.ui.panels.token_editor import TokenEditorPanel
    from synthetic_state import synthetic_state

    panel = TokenEditorPanel()
    qtbot.addWidget(panel)
    state = synthetic_state()
    panel.show_state(state)
    first = panel.predictions.item(0)
    labels = [panel.predictions.item(i).text() for i in range(panel.predictions.count())]
    assert first is not None and labels
    panel.show_state(dataclasses.replace(state, request_id=2))  # the same guesses
    assert panel.predictions.item(0) is first
    moved = dataclasses.replace(state, request_id=3, position=state.position - 1)
    panel.show_state(moved)
    expected = moved.model.tokenizer.token_texts(moved.top_ids[moved.position - 1].tolist())
    assert [panel.predictions.item(i).text().split("  ")[0] for i in range(panel.predictions.count())] == expected
    assert panel.predictions.item(0) is not first


def test_a_context_long_strip_lays_out_and_finds_every_chip(qtbot):
    """~1000 chips laid out as plain integers (a QRect per chip was 4 ms of the relayout, issue
    19): rows fill the width left to right without overlap, and a click at any point of a chip
    finds that chip, at no point between two."""
    from PySide6.QtCore import QPoint

    tokens = [("w" * (1 + i % 7)) for i in range(993)]
    view = ChipView()
    qtbot.addWidget(view)
    view.resize(900, 400)
    view.set_tokens(tokens, list(range(993)), 31, 992)
    boxes = [view.chip_rect(i) for i in range(993)]
    assert all(not b.isNull() for b in boxes)
    for a, b in zip(boxes, boxes[1:]):
        assert (b.y() == a.y() and b.x() > a.right()) or b.y() > a.bottom()  # next in the row, or a row below
        assert not a.intersects(b)
    assert all(b.right() < view.width() - view._slack() for b in boxes)
    for i in (0, 1, 500, 992):
        b = boxes[i]
        for point in (b.topLeft(), b.bottomRight(), b.center()):
            assert view.index_at(point) == i
        assert view.index_at(QPoint(b.right() + 1, b.center().y())) in (None, i + 1) or i == 992
    assert view.index_at(QPoint(boxes[0].left() - 1, boxes[0].top())) is None  # the gap before the first chip
    assert view._chips[-1].index == -1  # the cut marker follows the tokens
