"""The main window on a real (tiny, random-weight) GPT-2 checkpoint, offscreen.

Each test drives the window the way a learner does (typing, clicking chips, menus) and
checks what the panels show against the model's own numbers.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPointF, QSettings, Qt
from PySide6.QtGui import QGuiApplication

from attention_lab.core.lab import SEED_TEXT, SEED_TEXTS
from attention_lab.ui.errors import ErrorDialog
from attention_lab.ui.i18n import tr
from attention_lab.ui.main_window import MainWindow

ROOT = Path(__file__).resolve().parents[2]
STATE_TIMEOUT_MS = 30000
MY_PANELS = ("panel.token_editor", "panel.head_grid", "panel.leakage")


def wait_state(qtbot, window: MainWindow, predicate=lambda s: True, timeout: int = STATE_TIMEOUT_MS):
    qtbot.waitUntil(lambda: window.last_state is not None and bool(predicate(window.last_state)), timeout=timeout)
    return window.last_state


def type_text(window: MainWindow, text: str) -> None:
    window.panel("panel.token_editor").editor.setPlainText(text)


# ---------------------------------------------------------------------------- panels populate
def test_starts_on_the_seed_sentence_and_every_panel_gets_data(qtbot, make_window, tiny_model):
    window = make_window()
    state = wait_state(qtbot, window)
    assert state.text == SEED_TEXT
    assert state.ids == tiny_model.tokenizer.encode(SEED_TEXT)
    for pid in MY_PANELS:
        assert window.panels[pid].has_data(), pid
    # the panels behind other tabs are built, and draw it, when their tab is opened (not
    # before: start-up doesn't build them, and an edit costs them nothing while no one looks)
    behind = set(window.docks) - set(MY_PANELS)
    assert behind and set(dict.keys(window.panels)) == set(MY_PANELS) and not window.panels_waiting
    built = []
    window.panel_built.connect(built.append)
    for pid in sorted(behind):
        window.docks[pid].raise_()
        qtbot.waitUntil(lambda pid=pid: pid in dict.keys(window.panels), timeout=STATE_TIMEOUT_MS)
        qtbot.waitUntil(lambda pid=pid: window.panels[pid].has_data(), timeout=STATE_TIMEOUT_MS)
    assert sorted(p.panel_id for p in built) == sorted(behind)
    assert not window.panels_waiting
    assert len(window.panels) == len(window.docks) and all(p.has_data() for p in window.panels.values())
    # a new state: the open tabs draw it at once, the others wait again
    window.session.set_layer(1)
    state = wait_state(qtbot, window, lambda s: s.layer == 1)
    # (opening the KV tab hid the head grid: they share the left tab group)
    assert "panel.head_grid" in window.panels_waiting and "panel.kvbench" not in window.panels_waiting
    assert window.panel("panel.head_grid").state is not state
    window.docks["panel.head_grid"].raise_()
    qtbot.waitUntil(lambda: window.panel("panel.head_grid").state is state, timeout=STATE_TIMEOUT_MS)
    assert window.findChild(ErrorDialog, "error_dialog") is None or not window.findChild(ErrorDialog, "error_dialog").isVisible()
    # status bar: model, token count, mode, time
    assert "tokens" in window.status.tokens.text() and str(state.n_tokens) in window.status.tokens.text()
    assert "causal" in window.status.mode.text()
    assert "ms" in window.status.time.text()
    assert window.session.model.name in window.status.model.text()


def test_a_closed_panel_catches_up_when_it_is_opened_again(qtbot, make_window):
    """A dock the learner closed is out of sight: new analyses skip it, and reopening it
    (View menu) draws the newest one."""
    window = make_window()
    wait_state(qtbot, window)
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: window.panel("panel.mask").has_data(), timeout=STATE_TIMEOUT_MS)
    mask = window.panel("panel.mask")
    window.docks["panel.mask"].close()
    qtbot.waitUntil(lambda: "panel.mask" not in window.panels_waiting and not window.docks["panel.mask"].isVisible())
    type_text(window, "A different sentence for the closed panel")
    state = wait_state(qtbot, window, lambda s: s.text.startswith("A different"))
    assert "panel.mask" in window.panels_waiting
    assert mask.state is not state
    window.docks["panel.mask"].toggleViewAction().trigger()  # back into its tab group…
    window.docks["panel.mask"].raise_()  # …and its tab chosen
    qtbot.waitUntil(lambda: mask.state is state, timeout=STATE_TIMEOUT_MS)
    assert "panel.mask" not in window.panels_waiting and mask.isEnabled()


def test_a_panel_out_of_sight_follows_a_language_switch_when_it_is_shown(qtbot, make_window):
    """A language switch re-labels the panels in sight one per turn of the event loop (each
    one's layout and paint after the others'); one behind another tab keeps its old words (no
    work for a view no one sees) until its tab is chosen."""
    window = make_window()
    wait_state(qtbot, window)
    window.docks["panel.mask"].raise_()
    qtbot.waitUntil(lambda: window.panel("panel.mask").has_data(), timeout=STATE_TIMEOUT_MS)
    mask = window.panel("panel.mask")
    window.docks["panel.shapes"].raise_()  # the mask's tab group: the mask goes out of sight
    qtbot.waitUntil(lambda: window._out_of_sight("panel.mask"))
    english = mask.grid_box.title()
    head_grid = window.panel("panel.head_grid")
    assert not window._out_of_sight("panel.head_grid")
    window.set_language("pt_BR")
    try:
        assert "panel.head_grid" in window.redraw.untranslated  # its turn comes…
        qtbot.waitUntil(lambda: head_grid.layer_label.text() == tr("head_grid.layer"), timeout=STATE_TIMEOUT_MS)
        assert "panel.head_grid" not in window.redraw.untranslated  # …without being shown again
        assert mask.grid_box.title() == english and "panel.mask" in window.redraw.untranslated
        window.docks["panel.mask"].raise_()
        qtbot.waitUntil(lambda: mask.grid_box.title() == tr("mask.grid"), timeout=STATE_TIMEOUT_MS)
        assert mask.grid_box.title() != english and "panel.mask" not in window.redraw.untranslated
    finally:
        window.set_language("en")


def test_each_chip_is_wide_enough_for_its_token_and_its_label(qtbot):
    """Chip widths come from cached measurements (labels: the sum of their characters'
    fractional advances); every chip still holds its token and its "position · id" label."""
    from PySide6.QtGui import QFontMetrics

    from attention_lab.ui.panels.token_editor import ChipView

    view = ChipView()
    qtbot.addWidget(view)
    view.resize(900, 300)
    tokens = ["␣The", "␣mailman", "↵", "W", "␣yesterday", "."] * 40
    ids = [(i * 7919) % 50257 for i in range(len(tokens))]
    view.set_tokens(tokens, ids, 0, len(tokens) - 1)
    fm_text, fm_small = QFontMetrics(view._text_font), QFontMetrics(view._small_font)
    for i in range(len(tokens)):
        width = view.chip_rect(i).width() - 2 * view.PAD_X
        assert width >= fm_text.horizontalAdvance(tokens[i]), i
        assert width >= fm_small.horizontalAdvance(f"{i} · {ids[i]}"), i


def test_token_editor_shows_every_token_as_a_chip(qtbot, make_window, tiny_model):
    window = make_window()
    state = wait_state(qtbot, window)
    editor = window.panel("panel.token_editor")
    texts = tiny_model.tokenizer.token_texts(state.ids)
    assert editor.chips.tokens == texts
    assert editor.chips.ids == state.ids
    assert texts[1].startswith("␣")  # " big": the leading space is visible
    assert editor.count.text() == f"{len(state.ids)} tokens"
    # clicking chip 3 makes it the edited position of the leakage diff
    rect = editor.chips.chip_rect(3)
    qtbot.mouseClick(editor.chips, Qt.MouseButton.LeftButton, pos=rect.center())
    state = wait_state(qtbot, window, lambda s: s.position == 3)
    assert window.panel("panel.leakage").position.value() == 3
    assert "#3" in editor.replace_label.text()
    # the model's guesses for position 3 are listed; picking one sets the replacement
    assert editor.predictions.count() == 10
    item = editor.predictions.item(1)
    wanted = item.data(Qt.ItemDataRole.UserRole)
    editor._prediction_clicked(item)
    state = wait_state(qtbot, window, lambda s: s.replacement_id == wanted and s.position == 3)
    assert state.leakage.replacement_id == wanted


def test_head_grid_shows_each_head_with_a_shared_scale(qtbot, make_window):
    window = make_window()
    state = wait_state(qtbot, window)
    grid = window.panel("panel.head_grid")
    heads = state.model.lens.config.n_head
    assert heads == 12
    # one mosaic: every head's tile is its map, the gaps between tiles are blank (NaN)
    for h in range(heads):
        np.testing.assert_array_equal(grid.head_map(h), state.attention_causal[h].numpy())
    assert np.isnan(grid.mosaic.image).sum() == grid.mosaic.image.size - heads * state.n_tokens ** 2
    assert grid.mosaic_overlay.isVisible()  # the forbidden future is hatched under the mask
    assert [t.toPlainText() for t in grid._titles] == [f"head {h}" for h in range(heads)]
    # one colour bar drives the image
    grid.bar.setLevels((0.0, 0.5))
    assert tuple(grid.mosaic.levels) == (0.0, 0.5)
    # hover text, query → key
    n = state.n_tokens
    text = grid.cell_text(0, 2, 1)
    assert f"“{state.tokens[2]}” (query 2) → “{state.tokens[1]}” (key 1)" in text
    assert f"{float(state.attention_causal[0, 2, 1]):.3f}" in text
    assert "masked" in grid.cell_text(0, 1, n - 1)  # above the diagonal: the future
    # bidirectional: no mask, no hatching, the other attention
    grid.bidirectional.click()
    state = wait_state(qtbot, window, lambda s: not s.causal)
    for h in range(heads):
        np.testing.assert_array_equal(grid.head_map(h), state.attention_bidirectional[h].numpy())
    assert not grid.mosaic_overlay.isVisible()
    assert "bidirectional" in window.status.mode.text()


def test_clicking_a_head_enlarges_it_side_by_side(qtbot, make_window):
    window = make_window()
    state = wait_state(qtbot, window)
    grid = window.panel("panel.head_grid")
    qtbot.waitUntil(lambda: grid.grid_view.isVisible())
    clicked = []
    grid.head_clicked.connect(lambda layer, head: clicked.append((layer, head)))
    geometry = grid.mosaic.geometry
    x, y = geometry.origin(5)  # head 5's tile, in the image's pixels
    n = state.n_tokens
    scene_pos = grid.mosaic.mapToScene(QPointF(x + n / 2, y + n / 2))
    view_pos = grid.grid_view.mapFromScene(scene_pos)
    qtbot.mouseClick(grid.grid_view.viewport(), Qt.MouseButton.LeftButton, pos=view_pos)
    qtbot.waitUntil(lambda: grid.tabs.currentIndex() == 1)
    assert grid.head == 5 and clicked == [(state.layer, 5)]
    # (a tab opened before idle time made its plots makes them one a turn, then draws the head)
    qtbot.waitUntil(lambda: 1 not in grid._stale and bool(getattr(grid, "_head_images", None)), timeout=10_000)
    # side by side by default: the causal and the bidirectional map of head 5
    np.testing.assert_array_equal(grid._head_images[True], state.attention_causal[5].numpy())
    np.testing.assert_array_equal(grid._head_images[False], state.attention_bidirectional[5].numpy())


def test_overview_colours_every_layer_and_head(qtbot, make_window):
    window = make_window()
    state = wait_state(qtbot, window)
    grid = window.panel("panel.head_grid")
    cfg = state.model.lens.config
    assert grid.overview_image.image is None  # drawn when its tab is first opened, not before
    grid.tabs.setCurrentIndex(2)
    assert grid.overview_image.image.shape == (cfg.n_layer, cfg.n_head)
    grid.metric_combo.setCurrentIndex(1)  # entropy
    expected = {(s.layer, s.head): s.entropy for s in state.overview}
    assert grid._overview_values[1, 3] == pytest.approx(expected[(1, 3)])
    # clicking a head of layer 1 switches the layer and opens it
    grid._overview_click("overview", (1, 3))
    state = wait_state(qtbot, window, lambda s: s.layer == 1)
    assert grid.layer.value() == 1 and grid.head == 3 and grid.tabs.currentIndex() == 1


def test_layer_selector_recomputes_the_layer(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    grid = window.panel("panel.head_grid")
    grid.layer.setValue(1)
    state = wait_state(qtbot, window, lambda s: s.layer == 1)
    assert [s.layer for s in state.portrait] == [1] * 12
    np.testing.assert_array_equal(grid.head_map(0), state.attention_causal[0].numpy())


# ---------------------------------------------------------------------------- leakage
def test_editing_a_late_token_updates_the_leakage_panel(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    leak = window.panel("panel.leakage")
    edited = "The big dog bit the mailman today"
    type_text(window, edited)
    state = wait_state(qtbot, window, lambda s: s.text == edited)
    p = state.position
    assert p == state.n_tokens - 1  # default: the last token
    assert np.all(leak.shown_causal[:p] == 0.0)  # exact zeros before the edit
    assert np.all(leak.shown_bidirectional[:p] > 0.0)  # leaks everywhere without the mask
    assert [(text, x) for text, x, _y in leak.zero_labels.texts()] == [("0 (exact)", i - 0.2) for i in range(p)]
    assert "exactly 0" in leak.summary.text()
    # heights drawn are the numbers computed
    np.testing.assert_array_equal(leak.causal_bars.opts["height"], state.leakage.causal.numpy())
    # pick another replacement from the list: the panel follows
    target = next(i for i in range(leak.replacement.count()) if leak.replacement.itemData(i) != state.replacement_id)
    wanted = leak.replacement.itemData(target)
    leak.replacement.setCurrentIndex(target)
    leak._replacement_chosen(target)
    state = wait_state(qtbot, window, lambda s: s.replacement_id == wanted)
    assert np.all(leak.shown_causal[: state.position] == 0.0)
    # the layer-by-layer heatmap shows the same tensors
    np.testing.assert_array_equal(leak._heat[True][1].image, state.leakage.causal_layers.numpy())


def test_typed_replacement_word(qtbot, make_window, tiny_model):
    window = make_window()
    state = wait_state(qtbot, window)
    editor = window.panel("panel.token_editor")
    editor.word.setText("today")  # the replaced token has a leading space: " today" is used
    editor._use_word()
    today = tiny_model.tokenizer.encode(" today")[0]
    state = wait_state(qtbot, window, lambda s: s.replacement_id == today)
    assert state.extras["replacement_text"] == "␣today"
    editor.word.setText("Constantinople's")  # several tokens: refused with a message
    editor._use_word()
    assert editor.message.isVisible() and "tokens" in editor.message.text()
    # "write into the text" applies the edit
    editor.apply.click()
    state = wait_state(qtbot, window, lambda s: s.text.endswith(" today"))
    assert editor.text() == state.text == "The big dog bit the mailman today"


def test_200_rapid_edits_end_on_the_final_text(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    shown: list[str] = []
    window.session.state_ready.connect(lambda s: shown.append(s.text))
    texts = [f"The big dog bit the mailman {i} times" for i in range(200)]
    for text in texts:
        type_text(window, text)
    state = wait_state(qtbot, window, lambda s: s.text == texts[-1])
    qtbot.waitUntil(lambda: not window.session.pending and not window.worker.busy, timeout=STATE_TIMEOUT_MS)
    assert window.last_state.text == texts[-1]
    assert shown[-1] == texts[-1]
    assert len(shown) < 20  # debounced: not 200 analyses
    assert window.panel("panel.token_editor").chips.ids == state.ids
    assert window.panel("panel.leakage").state is state


def test_200_forced_requests_show_only_the_latest(qtbot, make_window):
    """Without the debounce (each edit submitted at once) stale results still never win."""
    window = make_window()
    wait_state(qtbot, window)
    shown: list[str] = []
    window.session.state_ready.connect(lambda s: shown.append(s.text))
    texts = [f"Edit number {i} of the sentence" for i in range(200)]
    for text in texts:
        window.session.set_text(text)
        window.session.analyse_now()
    qtbot.waitUntil(lambda: window.last_state.text == texts[-1] and not window.worker.busy, timeout=STATE_TIMEOUT_MS)
    assert shown[-1] == texts[-1]
    order = [texts.index(t) for t in shown]
    assert order == sorted(order)  # never an older text after a newer one
    assert len(shown) < 200


# ---------------------------------------------------------------------------- models
def test_a_model_that_fails_to_load_keeps_the_previous_one(qtbot, make_window, tmp_path):
    window = make_window()
    state = wait_state(qtbot, window)
    previous = window.session.model
    broken = tmp_path / "not-a-model"
    broken.mkdir()
    (broken / "config.json").write_text("{ this is not json")
    with qtbot.waitSignal(window.session.error, timeout=STATE_TIMEOUT_MS) as blocker:
        window.open_model_folder(str(broken))
    message, details = blocker.args
    assert "not-a-model" in message and "still active" in message
    dialog = window.findChild(ErrorDialog, "error_dialog")
    assert dialog is not None and dialog.isVisible() and "not-a-model" in dialog.message.text()
    dialog.copy.click()
    assert "not-a-model" in QGuiApplication.clipboard().text()
    dialog.close()
    assert window.session.model is previous
    # the status bar no longer says the folder is loading (it did until the next message)
    assert tr("status.loading", spec=str(broken)) not in window.statusBar().currentMessage()
    # still usable: the next edit is analysed with the previous model
    type_text(window, "Still working after the failure")
    state = wait_state(qtbot, window, lambda s: s.text == "Still working after the failure")
    assert state.model is previous


def test_worker_error_shows_a_dialog_and_the_app_stays_usable(qtbot, make_window, monkeypatch, tally):
    import attention_lab.ui.session as session_module

    window = make_window()
    wait_state(qtbot, window)
    real = session_module.compute_analysis

    def broken(model, request, cancel=None, progress=None):
        raise RuntimeError("injected failure in the analysis")

    monkeypatch.setattr(session_module, "compute_analysis", broken)
    tally["fault", "the analysis raises mid-way (worker thread)"] += 1
    with qtbot.waitSignal(window.session.error, timeout=STATE_TIMEOUT_MS):
        type_text(window, "This edit fails")
    dialog = window.findChild(ErrorDialog, "error_dialog")
    assert dialog.isVisible() and "injected failure" in dialog.message.text()
    assert "Traceback" in dialog.details.toPlainText()
    dialog.close()
    monkeypatch.setattr(session_module, "compute_analysis", real)
    type_text(window, "This edit works")
    wait_state(qtbot, window, lambda s: s.text == "This edit works")


def test_text_longer_than_the_context_is_cut_visibly(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    long_text = " ".join(f"word{i}" for i in range(60))  # well over the tiny model's 64 positions
    type_text(window, long_text)
    state = wait_state(qtbot, window, lambda s: s.text == long_text)
    assert state.n_tokens == 64 and state.truncated
    editor = window.panel("panel.token_editor")
    cut = state.original_length - 64
    assert editor.message.isVisible() and str(cut) in editor.message.text() and "64" in editor.message.text()
    assert editor.chips.cut == cut
    assert editor.editor.extraSelections()  # the ignored tail is highlighted in the text
    assert "cut" in window.status.tokens.text()


def test_empty_text_greys_the_panels_until_there_is_text(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    with qtbot.waitSignal(window.session.notice, timeout=STATE_TIMEOUT_MS):
        type_text(window, "")
    assert not window.panel("panel.leakage").isEnabled()
    type_text(window, "Back again")
    wait_state(qtbot, window, lambda s: s.text == "Back again")
    assert window.panel("panel.leakage").isEnabled()


# ---------------------------------------------------------------------------- settings / language
def test_settings_round_trip(qtbot, make_window, isolated_settings, tiny_checkpoint):
    window = make_window()
    wait_state(qtbot, window)
    type_text(window, "Saved across restarts")
    window.panel("panel.head_grid").layer.setValue(1)
    window.panel("panel.token_editor").bos.setChecked(True)
    wait_state(qtbot, window, lambda s: s.text == "Saved across restarts" and s.layer == 1 and s.extras["bos"])
    window.panel("panel.head_grid").bidirectional.click()
    window.set_language("pt_BR")
    window.docks["panel.shapes"].close()
    window.close()
    assert not window.worker.thread.is_alive()

    again = make_window(model_spec=None)  # the model comes from the settings too
    state = wait_state(qtbot, again)
    assert state.text == "Saved across restarts"
    assert again.panels["panel.token_editor"].text() == "Saved across restarts"
    assert state.layer == 1 and state.causal is False and state.extras["bos"] is True
    assert state.tokens[0] == "<|endoftext|>"
    assert again.session.model.spec == str(tiny_checkpoint)
    assert again.menus.file_menu.title() == "&Arquivo"
    assert not again.docks["panel.shapes"].isVisible()
    again.reset_layout()
    assert again.docks["panel.shapes"].isVisibleTo(again)


@pytest.mark.parametrize(
    "content",
    [
        b"\x00\xff\xfe garbage \x89PNG\r\n[General\nlayer=",
        b"[General]\nlayer=not a number\ncausal=perhaps\nwindow_state=@ByteArray(nonsense)\ngeometry=12\nlanguage=klingon\n",
    ],
)
def test_corrupt_settings_fall_back_to_defaults(qtbot, make_window, tmp_path, content, tally):
    tally["fault", "corrupt settings file"] += 1
    path = tmp_path / "corrupt.ini"
    path.write_bytes(content)
    settings = QSettings(str(path), QSettings.Format.IniFormat)
    window = make_window(settings=settings)
    state = wait_state(qtbot, window)
    assert state.layer == 0 and state.causal is True
    if b"klingon" in content:
        assert {"layer", "causal", "window_state", "language"} <= set(window.settings_problems)
        assert "reset to defaults" in window.statusBar().currentMessage() or window.settings_problems


def test_language_switch_changes_visible_strings(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    leak = window.panel("panel.leakage")
    english = (window.menus.file_menu.title(), window.docks["panel.leakage"].windowTitle(), leak.position_label.text())
    assert english == ("&File", "Leakage diff", "Edited position")
    window.menus.language_actions["pt_BR"].trigger()
    assert window.menus.file_menu.title() == "&Arquivo"  # the window's own words at once…
    assert window.docks["panel.leakage"].windowTitle() == "Vazamento"
    qtbot.waitUntil(lambda: leak.position_label.text() == "Posição editada")  # …the panels in sight one per turn
    assert "exatamente 0" in leak.summary.text()
    assert window.panel("panel.head_grid").tabs.tabText(0) == "Cabeças da camada 0"
    assert window.panel("panel.token_editor").explain.text().startswith("<b>O modelo lê tokens")
    window.menus.language_actions["en"].trigger()
    assert window.menus.file_menu.title() == "&File"
    qtbot.waitUntil(lambda: "exactly 0" in leak.summary.text())



def test_the_default_sentence_follows_the_language_until_the_learner_types(qtbot, make_window, isolated_settings):
    """The Portuguese interface starts on the Portuguese chapter's sentence; switching the language swaps an
    untouched default (and analyses it), never the learner's own text."""
    portuguese = SEED_TEXTS["pt_BR"]
    assert portuguese == "O cachorro grande mordeu o carteiro ontem"
    window = make_window()
    wait_state(qtbot, window, lambda s: s.text == SEED_TEXT)
    window.set_language("pt_BR")
    wait_state(qtbot, window, lambda s: s.text == portuguese)
    assert window.panel("panel.token_editor").text() == portuguese
    type_text(window, "Meu próprio texto")
    wait_state(qtbot, window, lambda s: s.text == "Meu próprio texto")
    window.set_language("en")
    assert window.panel("panel.token_editor").text() == "Meu próprio texto"
    assert window.session.text == "Meu próprio texto"
    window.close()

    isolated_settings.remove("text")
    again = make_window(language="pt_BR")
    assert again.session.text == portuguese  # chosen before the first analysis, not swapped after it
    assert wait_state(qtbot, again).text == portuguese



def test_an_emptied_text_shows_no_stale_token_count(qtbot, make_window):
    """Emptying the text greys the panels; the status bar and the token editor must not keep the old count."""
    window = make_window()
    state = wait_state(qtbot, window)
    old = f"{state.n_tokens} tokens"
    assert old in window.status.tokens.text()
    type_text(window, "")
    editor = window.panel("panel.token_editor")
    qtbot.waitUntil(lambda: not window.panel("panel.leakage").isEnabled(), timeout=STATE_TIMEOUT_MS)
    assert old not in window.status.tokens.text()
    assert old not in editor.count.text()
    window.retranslate()  # a later re-labelling (language, model) must not bring it back
    assert old not in window.status.tokens.text()



@pytest.mark.parametrize("text, remark", [("     ", "token_editor.remark.spaces"), ("👋🎉", "token_editor.remark.bytes_of")])
def test_a_text_of_spaces_or_emoji_is_explained(qtbot, make_window, text, remark):
    from attention_lab.ui.i18n import tr

    window = make_window()
    wait_state(qtbot, window)
    type_text(window, text)
    state = wait_state(qtbot, window, lambda s: s.text == text)
    editor = window.panel("panel.token_editor")
    qtbot.waitUntil(lambda: editor.message.isVisible(), timeout=STATE_TIMEOUT_MS)  # the panel draws the state
    from attention_lab.ui.model_label import model_label

    assert editor.message.text() == tr(remark, model=model_label(window.session.model))  # (the tokenizer named)
    if remark.endswith("bytes_of"):
        assert any("<0x" in t for t in state.tokens)  # the chips the remark explains
    type_text(window, "The dog")
    wait_state(qtbot, window, lambda s: s.text == "The dog")
    qtbot.waitUntil(lambda: not editor.message.isVisible(), timeout=STATE_TIMEOUT_MS)  # an ordinary text: none


# ---------------------------------------------------------------------------- export
def test_the_export_dialog_opens_in_the_last_folder_used(qtbot, make_window, tmp_path, monkeypatch):
    """First use: the learner's Pictures folder (or home), never the app's folder; then the last folder used."""
    from attention_lab.ui import main_window

    opened = []

    def fake_dialog(_parent, _title, start, _filter):
        opened.append(start)
        return str(tmp_path / "chosen" / "grid.png"), ""

    (tmp_path / "chosen").mkdir()
    monkeypatch.setattr(main_window.QFileDialog, "getSaveFileName", fake_dialog)
    window = make_window()
    wait_state(qtbot, window)
    with qtbot.waitSignal(window.session.file_exported, timeout=STATE_TIMEOUT_MS):  # written on the worker
        assert window.export_current("png", panel_id="panel.head_grid") == tmp_path / "chosen" / "grid.png"
    first = Path(opened[0])
    assert first.name == "head_grid.png" and first.parent.is_dir()
    assert first.is_absolute() and first.parent != Path.cwd() and first.parent != ROOT and ROOT not in first.parents
    window.export_current("png", panel_id="panel.head_grid")
    assert Path(opened[1]) == tmp_path / "chosen" / "head_grid.png"  # where the last export went


def test_export_plots_and_numbers(qtbot, make_window, tmp_path):
    window = make_window()
    state = wait_state(qtbot, window)
    with qtbot.waitSignal(window.session.file_exported, timeout=STATE_TIMEOUT_MS):
        png = window.export_current("png", tmp_path / "grid.png", panel_id="panel.head_grid")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = window.export_current("svg", tmp_path / "leakage.svg", panel_id="panel.leakage")
    assert "<svg" in svg.read_text(encoding="utf-8")
    with qtbot.waitSignal(window.session.file_exported, timeout=STATE_TIMEOUT_MS) as written:
        out = window.export_current("csv", tmp_path / "leakage.csv", panel_id="panel.leakage")
    assert written.args == [out] and window.statusBar().currentMessage() == tr("status.exported", path=str(out))
    rows = list(csv.DictReader(out.open(encoding="utf-8-sig")))
    assert len(rows) == state.n_tokens
    p = state.position
    assert all(float(r["causal_final"]) == 0.0 for r in rows[:p])
    assert all(float(r["bidirectional_final"]) > 0.0 for r in rows[:p])
    assert rows[1]["token"] == state.tokens[1]


def test_the_head_grids_csv_is_written_on_the_worker_byte_for_byte(qtbot, make_window, tmp_path, monkeypatch):
    """File › Export › CSV: the table is written by the worker thread (a context-long one held the GUI
    thread 1.6 s), the same bytes as writing the panel's table directly; two exports in a row both land."""
    from attention_lab.core import jobs
    from attention_lab.core.csv_table import export_csv

    threads = []
    job = jobs.export_csv_job

    def on_which_thread(*args, **kwargs):
        threads.append(threading.current_thread())
        return job(*args, **kwargs)

    monkeypatch.setattr(jobs, "export_csv_job", on_which_thread)
    window = make_window()
    wait_state(qtbot, window)
    with qtbot.waitSignals([window.session.file_exported] * 2, timeout=STATE_TIMEOUT_MS):
        first = window.export_current("csv", tmp_path / "grid", panel_id="panel.head_grid")
        second = window.export_current("csv", tmp_path / "grid-again.csv", panel_id="panel.head_grid")
    assert first == tmp_path / "grid.csv" and threads == [window.worker.thread] * 2
    assert window.exports.writing == [] and not window.worker.busy
    header, rows = window.panel("panel.head_grid").table_for_export()
    expected = export_csv(tmp_path / "direct.csv", header, rows).read_bytes()
    assert first.read_bytes() == expected == second.read_bytes()


def test_a_png_is_painted_on_the_gui_thread_and_encoded_on_the_worker(qtbot, make_window, tmp_path, monkeypatch):
    """File › Export › PNG: the plot is painted here (it needs the GUI thread) and its pixels are encoded
    and written by the worker thread: the encoding was ~60 ms of the head grid's ~70 ms export on the GUI
    thread (the soak's ``export`` stalls).  The file holds the picture painted, twice the shown width."""
    from PySide6.QtGui import QImage

    from attention_lab.core import jobs
    from attention_lab.ui import export

    threads, painted = [], []
    job, render = jobs.export_png_job, export.render_png_pixels

    def on_which_thread(*args, **kwargs):
        threads.append(threading.current_thread())
        return job(*args, **kwargs)

    def kept(item):
        painted.append(render(item))
        return painted[-1]

    monkeypatch.setattr(jobs, "export_png_job", on_which_thread)
    monkeypatch.setattr(export, "render_png_pixels", kept)
    window = make_window()
    wait_state(qtbot, window)
    with qtbot.waitSignal(window.session.file_exported, timeout=STATE_TIMEOUT_MS) as written:
        path = window.export_current("png", tmp_path / "grid", panel_id="panel.head_grid")
        assert window.exports.writing == [path]
    assert written.args == [path] == [tmp_path / "grid.png"] and threads == [window.worker.thread]
    assert window.exports.writing == [] and window.statusBar().currentMessage() == tr("status.exported", path=str(path))
    image = QImage(str(path)).convertToFormat(QImage.Format.Format_RGBA8888)
    grid = window.panel("panel.head_grid").grid_view
    assert image.width() == painted[0].shape[1] == int(grid.ci.mapRectToDevice(grid.ci.boundingRect()).width()) * export.PNG_SCALE
    pixels = np.frombuffer(image.constBits(), dtype=np.uint8).reshape(image.height(), image.bytesPerLine())
    assert np.array_equal(pixels[:, : image.width() * 4].reshape(painted[0].shape), painted[0])


def test_a_csv_that_cannot_be_written_says_why_in_the_error_dialog(qtbot, make_window, tmp_path, monkeypatch):
    """The export's error path: the panel's name and the reason; the learner's other file untouched."""
    window = make_window()
    wait_state(qtbot, window)
    errors = []
    monkeypatch.setattr(window, "show_error", lambda message, details="": errors.append((message, details)))
    (tmp_path / "a-file").write_text("not a folder")
    with qtbot.waitSignal(window.session.file_export_failed, timeout=STATE_TIMEOUT_MS):
        window.export_current("csv", tmp_path / "a-file" / "grid.csv", panel_id="panel.head_grid")
    assert len(errors) == 1 and errors[0][0].startswith(tr("head_grid.title") + ": ") and "Traceback" in errors[0][1]
    assert (tmp_path / "a-file").read_text() == "not a folder" and window.exports.writing == []
    assert window.statusBar().currentMessage() != tr("status.exported", path=str(tmp_path / "a-file" / "grid.csv"))


# ---------------------------------------------------------------------------- shutdown
def test_closing_during_work_exits_cleanly_and_quickly(qtbot, make_window):
    window = make_window()
    wait_state(qtbot, window)
    started = threading.Event()

    def long_job(*, cancel, progress):  # stands in for a benchmark: stops at its next cancel check
        started.set()
        while not cancel.wait(0.02):
            pass

    window.worker.submit("kvbench", long_job)
    type_text(window, "An edit queued behind the long job")
    window.session.analyse_now()
    assert started.wait(5)
    threads = [window.worker.thread, window.download_worker.thread]
    t0 = time.monotonic()
    window.close()
    assert time.monotonic() - t0 < 2.0
    assert not any(t.is_alive() for t in threads)


def test_closing_while_the_model_loads(qtbot, make_window):
    window = make_window()  # closes at once: the load and first analysis are still queued
    threads = [window.worker.thread, window.download_worker.thread]
    t0 = time.monotonic()
    window.close()
    assert time.monotonic() - t0 < 2.0
    assert not any(t.is_alive() for t in threads)


@pytest.mark.parametrize("which,extra", [("tiny", ["--all-panels"]), ("demo", ["--all-panels"]), ("demo", [])],
                         ids=["tiny-all", "demo-all", "demo-first-view"])
def test_smoke_test_command_exits_zero(tiny_checkpoint, which, extra, tmp_path):
    from attention_lab.core.models import demo_model_dir

    if which == "demo" and not (demo_model_dir() / "model.safetensors").exists():
        pytest.skip("demo model not bundled")
    spec = str(tiny_checkpoint) if which == "tiny" else "demo"
    # an empty hub cache: the default must not depend on what this machine has cached
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", HF_HUB_CACHE=str(tmp_path))
    proc = subprocess.run(
        [sys.executable, "-m", "attention_lab", "--smoke-test", "--model", spec, *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke test: ok" in proc.stdout
    # the first view is the three panels in sight; --all-panels builds and checks all of them
    from attention_lab.ui.docks import EXPECTED_PANELS

    assert (f"{EXPECTED_PANELS} panels with data" if extra else "3 panels with data (the first view") in proc.stdout


def test_the_command_exits_quickly_after_the_window_but_runs_exit_handlers(tiny_checkpoint, tmp_path):
    """``attention_lab.app.run``: after a window the process ends without the interpreter's
    teardown (os._exit), yet exit handlers run, output is flushed and the code is kept."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('exit handler ran'))\n"
        "from attention_lab.app import run\n"
        f"run(['--smoke-test', '--model', {str(tiny_checkpoint)!r}])\n"
        "print('not reached')\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", HF_HUB_CACHE=str(tmp_path))
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke test: ok" in proc.stdout and "exit handler ran" in proc.stdout
    assert "not reached" not in proc.stdout
    # a failing start keeps its exit code
    bad = code.replace(repr(str(tiny_checkpoint)), repr(str(tmp_path / "no-such-model")))
    proc = subprocess.run([sys.executable, "-c", bad], cwd=ROOT, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 1 and "exit handler ran" in proc.stdout


# ---------------------------------------------------------------------------- downloads
# The download dialog against a loopback hub: test_download_dialog.py


# ---------------------------------------------------------------------------- start-up work
def test_the_first_analysis_comes_with_the_model(qtbot, make_window, monkeypatch):
    """At start-up the worker analyses the text right after loading the model (while the
    window is still being built): no second job is asked for."""
    from attention_lab.ui.worker import InferenceWorker

    kinds: list[str] = []
    submit = InferenceWorker.submit
    monkeypatch.setattr(InferenceWorker, "submit", lambda self, kind, *a, **k: (kinds.append(kind), submit(self, kind, *a, **k))[1])
    window = make_window()
    state = wait_state(qtbot, window)
    assert state.text == SEED_TEXT and kinds == ["model"]
    assert state.request_id == window.session._next_id  # the session's own numbering goes on


def test_inputs_changed_during_the_loading_are_analysed_anew(qtbot, tiny_checkpoint):
    """The analysis made with the model is dropped when the text changed meanwhile."""
    from attention_lab.ui.session import Session
    from attention_lab.ui.worker import InferenceWorker

    worker = InferenceWorker()
    session = Session(worker, debounce_ms=10)
    try:
        session.text = "the text at start-up"
        states = []
        session.state_ready.connect(states.append)
        session.load_model(str(tiny_checkpoint), analyse_along=True)
        session.set_text("typed while the model was loading")
        qtbot.waitUntil(lambda: any(s.text.startswith("typed") for s in states), timeout=STATE_TIMEOUT_MS)
        assert all(s.text.startswith("typed") for s in states)  # the stale analysis was never shown
    finally:
        worker.shutdown(2.0)


def test_nothing_cached_means_no_hub_library_at_start_up(tmp_path):
    """Choosing the default model with an empty hub cache doesn't import huggingface_hub
    (~0.13 s of every launch); a cached repository is still looked up through it."""
    code = (
        "import sys\n"
        "from attention_lab.core import models\n"
        "print(models.default_model_spec(), 'huggingface_hub' in sys.modules)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), HF_HUB_CACHE=str(tmp_path), HF_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["demo", "False"]


def test_opening_the_tabs_keeps_the_window_and_leaves_no_stray_tab_bar(qtbot, make_window):
    """Every tab opens inside the window's size (the portrait's thresholds once made it
    1195 px wide), and no leftover tab bar (Qt's, from building a tab group) stays shown."""
    from PySide6.QtWidgets import QTabBar

    window = make_window()
    wait_state(qtbot, window)
    width = window.width()
    for pid in ("panel.mask", "panel.portrait", "panel.shapes", "panel.kvbench", "panel.leakage"):
        window.docks[pid].raise_()
        qtbot.waitUntil(lambda pid=pid: pid in dict.keys(window.panels) and window.panels[pid].isVisible(),
                        timeout=STATE_TIMEOUT_MS)
        qtbot.wait(50)
        assert window.width() == width, pid
    shown = [bar for bar in window.findChildren(QTabBar) if bar.parent() is window and bar.isVisible()]
    tabs = [[bar.tabText(i) for i in range(bar.count())] for bar in shown]
    assert len(shown) == 2  # the left and the right tab groups
    for mine in tabs:
        assert not any(len(other) > len(mine) and other[: len(mine)] == mine for other in tabs), tabs


def test_download_progress_does_not_run_the_event_loop(qtbot, make_window, monkeypatch):
    """A progress update must not handle other events inside it: QProgressDialog.setValue on
    a modal dialog did, so the "finished" event closed and deleted the dialog in the middle
    of an update (the likely cause of a segfault there, once, in CI)."""
    from PySide6.QtCore import QTimer

    window = make_window()
    wait_state(qtbot, window)
    monkeypatch.setattr(window.session, "download", lambda repo: None)  # the dialog alone
    window.download_model("someone/tiny-gpt2")
    dialog = window.downloads.dialog
    assert dialog is not None and dialog.isModal()
    finished = []
    QTimer.singleShot(0, lambda: finished.append(window.downloads.on_finished(True, "")))
    window.downloads.on_progress(10, 100, "model.safetensors")
    window.downloads.on_progress(50, 100, "model.safetensors")
    assert not finished and window.downloads.dialog is dialog  # nothing else ran meanwhile
    assert dialog.value() == 500
    qtbot.waitUntil(lambda: bool(finished))
    assert window.downloads.dialog is None


def test_closing_the_window_shuts_every_built_panel_down(qtbot, make_window):
    """The window's close is what calls each panel's ``shutdown()`` (a result still on its
    way is then not drawn, a running benchmark is cancelled), once, for every panel built."""
    from attention_lab.ui.panels.ids import PanelId

    window = make_window()
    wait_state(qtbot, window)
    for panel_id in PanelId:
        window.panel(panel_id)  # built now, each of them
    calls: list[PanelId] = []
    for panel_id, panel in window.panels.items():
        original = panel.shutdown
        panel.shutdown = lambda pid=panel_id, run=original: (calls.append(pid), run())
    window.close()
    assert sorted(calls) == sorted(PanelId)
    assert not window.worker.thread.is_alive()
