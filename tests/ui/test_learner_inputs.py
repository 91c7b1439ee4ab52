"""The learner's inputs in one value, owned by the session: every change is announced once as
(old, new), the panels show it, and every control that shows the mask shows the same mask, in
words (the head grid's "no mask" and the designer's choice used to disagree, and the grid named
a designed mask by its spec, "window:3")."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.core.inputs import BIDIRECTIONAL, LearnerInputs, same_mask  # noqa: E402
from attention_lab.core.masks import parse_mask_spec  # noqa: E402
from attention_lab.ui.i18n import translator  # noqa: E402
from attention_lab.ui.panels.head_grid import HeadGridPanel  # noqa: E402
from attention_lab.ui.panels.kv_bench import KVBenchPanel  # noqa: E402
from attention_lab.ui.panels.mask import MaskPanel  # noqa: E402
from attention_lab.ui.panels.mask_designer import MaskDesignerPanel  # noqa: E402
from attention_lab.ui.panels.token_editor import TokenEditorPanel  # noqa: E402
# the designer's tests' tiny model, session and panel wiring
from test_mask_designer_knockout import LONG, TEXT, make_panel, model, session  # noqa: E402,F401


def settle(qtbot, session):
    with qtbot.waitSignal(session.state_ready, timeout=LONG):
        session.analyse_now()


def test_each_change_is_one_new_value_announced_once(qtbot, session):
    seen = []
    session.inputs_changed.connect(lambda old, new: seen.append((old, new)))
    first = session.inputs
    session.set_text(TEXT)
    session.set_layer(1)
    session.set_layer(1)  # no change: nothing announced
    session.set_kv_new_tokens(7)
    session.set_mask_mode("zero-score")
    assert [new.changed_fields(old) for old, new in seen] == [{"text"}, {"layer"}, {"kv_new_tokens"}, {"mask_mode"}]
    assert seen[0][0] is first and seen[-1][1] is session.inputs
    assert first == LearnerInputs()  # the old value is untouched
    assert (session.text, session.layer, session.inputs.kv_new_tokens) == (TEXT, 1, 7)


def test_a_snapshot_given_back_is_what_every_panel_shows(qtbot, session):
    editor = make_panel(qtbot, session, TokenEditorPanel)
    mask = make_panel(qtbot, session, MaskPanel)
    kv = make_panel(qtbot, session, KVBenchPanel)
    session.set_text(TEXT)
    settle(qtbot, session)
    snapshot = session.inputs
    session.set_text("Another text entirely")
    session.set_mask_mode("finfo.min")
    session.set_kv_new_tokens(9)
    assert (editor.text(), mask.selected_mode(), kv.new_token_count()) == ("Another text entirely", "finfo.min", 9)
    assert session.set_inputs(snapshot)
    assert session.inputs is snapshot
    assert (editor.text(), mask.selected_mode(), kv.new_token_count()) == (TEXT, "-inf", snapshot.kv_new_tokens)
    # and a panel built after the inputs were set shows them at once
    late = make_panel(qtbot, session, MaskPanel)
    session.set_mask_mode("zero-score")
    other = make_panel(qtbot, session, MaskPanel)
    assert late.selected_mode() == other.selected_mode() == "zero-score"


def test_the_head_grids_no_mask_is_the_designers_bidirectional(qtbot, session):
    grid = make_panel(qtbot, session, HeadGridPanel)
    designer = make_panel(qtbot, session, MaskDesignerPanel)
    session.set_text(TEXT)
    settle(qtbot, session)
    grid.bidirectional.click()  # the learner picks "Bidirectional (no mask)" in the grid
    assert not session.causal
    assert designer.kind() == "bidirectional"  # the designer said "causal" (and "no leak") before
    assert same_mask(designer.spec(), BIDIRECTIONAL)
    grid.causal.click()
    assert designer.kind() == "causal" and session.causal


def test_bidirectional_in_the_designer_is_the_grids_no_mask_not_a_mask_named_bidirectional(qtbot, session):
    grid = make_panel(qtbot, session, HeadGridPanel)
    designer = make_panel(qtbot, session, MaskDesignerPanel)
    session.set_text(TEXT)
    settle(qtbot, session)
    designer.set_choice("bidirectional")
    settle(qtbot, session)
    assert grid.bidirectional.isChecked() and not grid.causal.isChecked()
    assert "bidirectional" not in grid.causal.text().lower()  # was "With the mask bidirectional"
    grid.causal.click()  # "with the mask" when the mask chosen is none: GPT-2's
    assert session.mask is None and designer.kind() == "causal"


@pytest.mark.parametrize("language, spec, words", [
    ("en", "window:3", "sliding window of 3"),
    ("en", "documents:.", "documents split at '.'"),
    ("pt_BR", "window:3", "janela deslizante de 3"),
])
def test_a_designed_mask_is_named_in_words_in_the_grid(qtbot, session, language, spec, words):
    translator.set_language(language)
    grid = make_panel(qtbot, session, HeadGridPanel)
    designer = make_panel(qtbot, session, MaskDesignerPanel)
    session.set_text(TEXT)
    session.set_mask(parse_mask_spec(spec))
    settle(qtbot, session)
    assert words in grid.causal.text() and spec not in grid.causal.text()
    assert designer.choice_text() == spec  # the designer follows a mask set elsewhere (the tour)
    grid.bidirectional.click()
    assert designer.kind() == "bidirectional"
    grid.causal.click()
    assert designer.choice_text() == spec  # "with the mask" gives the designed mask back
