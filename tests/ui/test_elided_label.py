"""The one-line label that gives up width (the status bar's model and mode, the leakage edit in the
token editor): shortened in the middle when narrow, whole in its tooltip, and
never asking its row for another layout pass when it is resized or given the same words."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent  # noqa: E402
from PySide6.QtWidgets import QHBoxLayout, QWidget  # noqa: E402

from paint_counter import EventCounter  # noqa: E402

from attention_lab.ui.elided_label import ElidedLabel  # noqa: E402

TEXT = "Leakage edit: #24 “␣modules” → “␣delimitadores”"


@pytest.fixture
def row(qtbot):
    box = QWidget()
    qtbot.addWidget(box)
    label = ElidedLabel(600, box)
    layout = QHBoxLayout(box)
    layout.addWidget(label, 1)
    label.setText(TEXT)
    box.resize(700, 40)
    box.show()
    qtbot.waitExposed(box)
    return box, label


def test_it_shows_the_whole_text_when_there_is_room_and_the_middle_shortened_when_not(qtbot, row):
    box, label = row
    assert label.shown_text() == TEXT and label.toolTip() == ""
    box.resize(label.minimumSizeHint().width() + 40, 40)
    qtbot.waitUntil(lambda: label.width() < label.natural_width())
    shown = label.shown_text()
    assert "…" in shown and shown[0] == TEXT[0] and shown[-1] == TEXT[-1]
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert label.text() == TEXT and label.toolTip() == TEXT  # the words stay whole; the tooltip has them
    box.resize(700, 40)
    qtbot.waitUntil(lambda: label.shown_text() == TEXT)
    assert label.toolTip() == ""


def test_it_is_never_wider_than_its_most_nor_narrower_than_a_few_letters(row):
    _box, label = row
    label.setText(TEXT * 4)
    assert label.sizeHint().width() == 600
    assert label.minimumSizeHint().width() == ElidedLabel.MIN_WIDTH


def test_a_resize_or_the_same_words_ask_the_row_for_no_layout_pass(qtbot, row):
    """Eliding by setting the short text on each resize asked for another pass, and the panel around
    it was painted twice on a model switch."""
    box, label = row
    box.resize(200, 40)
    qtbot.wait(50)
    requests = EventCounter(box, QEvent.Type.LayoutRequest)
    label.resize(150, label.height())
    label.setText(TEXT)
    qtbot.wait(50)
    assert requests.count == 0
    label.setText(TEXT + "!")  # new words: the row lays out again for their width
    qtbot.wait(50)
    assert requests.count == 1


def test_a_token_that_looks_like_a_tag_is_shown_as_text(qtbot, row):
    _box, label = row
    label.setText("“<b>” → “</b>”")
    assert label.textFormat().name == "PlainText"
