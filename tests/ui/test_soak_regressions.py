"""The state bugs the 30-minute soak of 2026-12-01 found, each replayed as the
shortest learner sequence that shows it, on the real window through the fuzzer's driver.

The soak (``python -m attention_lab.devtools.soak --minutes 30``, seed 0, the demo model) reported
them in ``resources/measurements/soak-30min-2026-12-01.json`` (key ``problems``); its seeded
sequence was replayed to the reported step with the full action log, then cut by hand to the
steps below.  Each test fails on the code before its fix (the check that fails is
:func:`attention_lab.devtools.learner_checks.window_problems`, run after every step by ``replay``).
"""

from __future__ import annotations

import pytest

from attention_lab.devtools.learner_driver import LearnerDriver
from test_learner_fuzz import fuzz_models, replay, shared_window  # noqa: F401 -- fixtures and the replayer


@pytest.fixture
def driver(shared_window, fuzz_models, tmp_path):  # noqa: F811 -- the fixtures imported above
    """A learner on this file's shared window, with no download hub (no step here downloads)."""
    learner = LearnerDriver(shared_window, fuzz_models, tmp_path / "exports")
    learner.settle()
    return learner


def test_the_tour_gives_back_the_mask_mode_the_learner_picked_again_during_it(driver):
    """Soak step 322 (and 4870): the learner picked finfo.min, the tour's mask step selected
    -inf, the learner picked -inf in the list themselves; closing the tour put finfo.min
    back.  A pick of the mode already shown changes nothing the tour could compare, so it
    closed on the mode from before its step."""
    replay(driver, [
        ("tour_open", {}),  # the first step (the reset rewinds the tour)
        ("set_mask_mode", {"mode": "finfo.min"}),
        ("tour_next", {}),  # the mask step: -inf
        ("set_mask_mode", {"mode": "-inf"}),  # the learner's own pick, the same mode
        ("tour_close", {}),
    ])
    assert driver.window.panel("panel.mask").selected_mode() == "-inf"


def test_a_mode_picked_in_the_mask_table_counts_as_the_learners_pick(driver, qtbot):
    """The modes table's rows pick a mode too (a click on a row): the tour gives that pick
    back as well, even when the row is the mode the step had selected."""
    from PySide6.QtCore import Qt

    replay(driver, [
        ("tour_open", {}),
        ("set_mask_mode", {"mode": "-1e9"}),
        ("tour_next", {}),  # the mask step: -inf
    ])
    mask = driver.window.panel("panel.mask")
    assert mask.selected_mode() == "-inf"
    table = mask.table
    row = mask.mode_choice.currentIndex()
    qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=table.visualRect(table.model().index(row, 0)).center())
    driver.intent.mask_mode = "-inf"
    replay_more(driver, "tour_close", {})
    assert mask.selected_mode() == "-inf"


def test_a_replacement_typed_into_an_emptied_text_keeps_type_some_text(driver):
    """Soak step 1645 (shrunk from 54 steps): with the field emptied, the chips still show the last
    text; a word typed as a replacement hid "type some text" (and was kept for the next text).  The
    first one went unseen (the session's new request said "type some text" again); the same word
    again changed nothing in the session, so the notice stayed hidden over an empty field."""
    replay(driver, [
        ("clear_text", {}),
        ("type_replacement", {"word": " the"}),
        ("type_replacement", {"word": " the"}),
        ("pick_guess", {"index": 1}),  # a guess of the old text: no replacement either
    ])
    assert driver.window.session.replacement_id is None  # the next text starts without one
    replay_more(driver, "type_text", {"typed": " x"})
    assert driver.window.last_state.text == " x" and driver.window.session.replacement_id is None


def test_a_full_context_out_of_sight_follows_a_language_switch_when_shown(driver):
    """Soak step 1889: a wrong invariant, not an app bug.  The KV panel, out of sight behind the
    heads' tab, said "the text fills the context" in English after a switch to Portuguese: a panel
    out of sight follows the language when it is shown (it did, at once), and the check compared
    its words before that."""
    from attention_lab.ui.i18n import tr

    replay(driver, [
        ("open_tab", {"panel_id": "panel.kvbench"}),
        ("paste_text", {"name": "context_long"}),
        ("open_tab", {"panel_id": "panel.head_grid"}),  # the KV panel goes out of sight
        ("set_language", {"code": "pt_BR"}),
        ("open_tab", {"panel_id": "panel.kvbench"}),
    ])
    kv = driver.window.panel("panel.kvbench")
    n_positions = driver.window.session.model.lens.config.n_positions
    assert kv.message.text() == tr("kvbench.no_room", ctx=n_positions)
    assert kv.message.text().startswith("O texto ocupa todo o contexto")


def replay_more(driver: LearnerDriver, action: str, arguments: dict) -> None:
    """One more step on the current window (no reset), checked like ``replay``'s steps."""
    from attention_lab.devtools.learner_checks import FaultTrap, window_problems
    from attention_lab.devtools.learner_driver import act

    with FaultTrap() as trap:
        act(driver, action, **arguments)
        problems = trap.take() + window_problems(driver)
    assert not problems, f"after {action}{arguments}: " + "\n".join(problems)
