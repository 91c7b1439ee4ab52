"""The head grid's fixed-budget view on a real model run: one query's row in every head of the
layer and their average, computed from the analysis state (pytest-qt, offscreen)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

pytest.importorskip("pytestqt")

import numpy as np  # noqa: E402

from attention_lab.core.budget import budget_rows, default_query  # noqa: E402
from attention_lab.ui.i18n import translator  # noqa: E402
from attention_lab.ui.panels.panel_kit import fmt_number  # noqa: E402
from attention_lab.ui.panels.head_grid import BUDGET, SIDE_BY_SIDE, VIEWS, HeadGridPanel  # noqa: E402

from state_factory import build_state  # noqa: E402  (tiny_model, English: tests/ui/conftest.py)


def _grid(qtbot, state):
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(1000, 700)
    panel.show()
    panel.show_state(state)
    panel.tabs.setCurrentIndex(1)
    panel.set_view(BUDGET)
    return panel


def test_budget_view_shows_the_verbs_row_in_every_head_and_their_average(qtbot, tiny_model):
    state = build_state(tiny_model)  # the chapter's sentence: "The big dog bit the mailman yesterday"
    panel = _grid(qtbot, state)
    view = panel.budget
    assert view.isVisible() and not panel.head_view.isVisible()
    query = view.query()
    assert state.tokens[query].strip("␣") == "bit"  # the chapter's verb is the default query
    expected = budget_rows(state.attention_causal, query)
    drawn = view.image.image
    heads = tiny_model.lens.config.n_head
    assert drawn.shape == (heads + 1, query + 1)  # the average on top, then a row per head
    assert np.allclose(drawn[0], expected.average.numpy(), atol=1e-6)
    assert np.allclose(drawn[1:], expected.rows.numpy(), atol=1e-6)
    # every cell's weight written, by one item (a label item per cell made the tour's first step stall)
    from attention_lab.ui.panels.panel_kit import CellLabels

    written = {(x, y): t for t, x, y in view._cells.texts()}
    assert isinstance(view._cells, CellLabels) and len(written) == (heads + 1) * (query + 1)
    assert written[(0.5, 1.5)] == f"{drawn[1, 0]:.2f}" and written[(query + 0.5, 0.5)] == f"{drawn[0, query]:.2f}"
    assert not [item for item in view.plot.items if type(item).__name__ == "TextItem"]
    text = view.summary_text()
    assert f"The {heads} heads of layer {state.layer}" in text
    assert f"at most {fmt_number(expected.average_top_weight, 2)}" in text
    assert f"on {len(expected.keys_chosen)} different tokens" in text

    # the learner picks another query: new numbers
    view.set_query(2)
    other = budget_rows(state.attention_causal, 2)
    assert view.rows().query == 2 and view.image.image.shape == (heads + 1, 3)
    assert np.allclose(view.image.image[0], other.average.numpy(), atol=1e-6)
    assert view.summary_text() != text
    # the choice is kept for a new layer of the same text, reset for a new text
    panel.show_state(build_state(tiny_model, layer=1))
    assert view.query() == 2
    assert np.allclose(view.image.image[1:], budget_rows(panel.state.attention_causal, 2).rows.numpy(), atol=1e-6)
    new_text = build_state(tiny_model, "A cat sat on the mat and the dog slept")
    panel.show_state(new_text)
    assert view.query() == default_query(new_text.attention_causal, new_text.tokens)

    # the selected head is outlined; Portuguese words
    panel.head_spin.setValue(3)
    assert view.outline.rect().top() == 3 + 1  # under the average row
    translator.set_language("pt_BR")
    assert panel.view_combo.itemText(VIEWS.index(BUDGET)).startswith("orçamento fixo")
    assert "cabeças da camada" in view.summary_text() and "Primeira linha: a média" in view.summary_text()
    # and back to the maps
    panel.set_view(SIDE_BY_SIDE)
    assert panel.head_view.isVisible() and not view.isVisible()


def test_query_zero_says_it_can_only_look_at_itself(qtbot, tiny_model):
    panel = _grid(qtbot, build_state(tiny_model))
    panel.budget.set_query(0)
    assert "only look at itself" in panel.budget.summary_text()
