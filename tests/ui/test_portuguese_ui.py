"""The Portuguese interface shows no English and no English-formatted number.

The window is opened in pt_BR with every dock shown, every tab opened once and the lab tour open;
every visible text (``visible_texts.py``) is checked:

* an **English word** is a word of the app's English texts that no Portuguese text uses (so a new
  string in both languages extends the check by itself), plus the common English words of
  :data:`ENGLISH_EXTRA` (texts built in code, core error messages).  A word that is the same in both
  languages, a token's text, a model id or a unit goes in :data:`ALLOWED`;
* a **number** must use the decimal comma: "0.918" (a point after a leading 0, or before 1–2 or
  4+ digits) is wrong in Portuguese, where "2.304" reads as two thousand three hundred and four.

A failure lists ``where: “text” → the words`` — fix the string (``ui/strings/<view>.py``) or the code
that builds it, or, for a word that is right in Portuguese, add it to :data:`ALLOWED`.
"""

from __future__ import annotations

import importlib
import pkgutil
import re

import pyqtgraph as pg
import pytest
from visible_texts import SeenText, open_everything, visible_texts

import attention_lab.ui.strings as strings_package
from attention_lab.ui import i18n

#: words that are the same in both languages, or names: technical terms the Portuguese chapter keeps,
#: model and file names, units
ALLOWED = {
    "gpt", "gpt2", "distilgpt2", "demo", "bos", "kv", "softmax", "token", "tokens", "multi", "head", "lab",
    "attention", "endoftext", "finfo", "min", "ms", "s", "mib", "gib", "kib", "b", "png", "svg", "csv", "json",
    "torch", "cpu", "cuda", "id", "ids", "q", "k", "v", "c", "attn", "proj", "x", "n", "i", "d", "dk", "o",
    "roberta", "score", "scores", "inf", "e", "hub", "hugging", "face", "python", "bpe", "utf",
}  # fmt: skip

#: English words the string tables may not contain (texts built in code, core messages)
ENGLISH_EXTRA = {
    "the", "of", "and", "to", "in", "is", "on", "for", "with", "layer", "layers", "heads", "mean", "distance",
    "exact", "per", "block", "output", "input", "weight", "weights", "row", "rows", "failed", "error", "file",
    "not", "found", "model", "sink", "query", "key", "value", "previous", "current", "mixed", "broad",
    "faster", "identical", "step", "of", "tokens/s",
}  # fmt: skip

WORD = re.compile(r"[^\W\d_]+", re.UNICODE)
WRONG_NUMBER = re.compile(r"(?<![\d.,])(?:0\.\d+|\d+\.\d{1,2}(?!\d)|\d+\.\d{4,})(?![\d.])")


def _words(text: str) -> set[str]:
    return {w.lower() for w in WORD.findall(i18n_plain(text))}


def i18n_plain(text: str) -> str:
    return re.sub(r"\{[^{}]*\}|<[^<>]*>|&\w+;", " ", text)


def english_words() -> set[str]:
    for module in pkgutil.iter_modules(strings_package.__path__):
        importlib.import_module(f"{strings_package.__name__}.{module.name}")
    english, portuguese = set(), set()
    for key in i18n.all_keys():
        english |= _words(i18n._TABLE[key]["en"])
        portuguese |= _words(i18n._TABLE[key]["pt_BR"])
    return (english - portuguese | ENGLISH_EXTRA) - ALLOWED


def problems_in(text: str, english: set[str], allowed: set[str]) -> list[str]:
    found = sorted({w for w in (w.lower() for w in WORD.findall(text)) if w in english and w not in allowed})
    found += [f"number {m.group(0)}" for m in WRONG_NUMBER.finditer(text)]
    return found


def test_the_detector_sees_english_and_points():
    english = english_words()
    assert "layer" in english and "camada" not in english and "softmax" not in english
    assert problems_in("camada 0 · cabeça 7: distância média 1,25", english, set()) == []
    assert problems_in("layer 0 · head 7: mean distance", english, set()) == ["distance", "layer", "mean"]
    assert problems_in("peso 0.918; 2.304 parâmetros; 1.5×", english, set()) == ["number 0.918", "number 1.5"]


@pytest.mark.parametrize("model", ["demo"])
def test_no_english_in_the_portuguese_interface(qtbot, make_window, model):
    window = make_window(model_spec=model, language="pt_BR")
    open_everything(qtbot, window)
    state = window.last_state
    english = english_words()
    # the learner's tokens and the model's name are theirs, not the interface's
    data = " ".join(state.tokens) + " " + state.text + " " + induction_words(window) + " " + model_guesses(window)
    allowed = {w.lower() for w in WORD.findall(data)}
    model = window.session.model
    allowed |= {w.lower() for w in WORD.findall(model.spec + ("" if model.is_demo else " " + model.name))}
    grid = window.panel("panel.head_grid")
    hovers = [grid.cell_text(0, 0, 0), grid.cell_text(0, 0, 1)]  # a weight, and the masked future
    for layer in range(model.config.n_layer):  # the all-layers map's hover names each head's role
        for head in range(model.config.n_head):
            grid._overview_hover(None, (layer, head), None)
            hovers.append(grid.hover.text())
    failures = []
    for seen in visible_texts(window) + [SeenText("head grid hover", text) for text in hovers]:
        found = problems_in(seen.text, english, allowed)
        if found:
            failures.append(f"{seen.where}: “{seen.text[:120]}” → {', '.join(found)}")
    assert not failures, f"{len(failures)} English texts in the Portuguese interface:\n" + "\n".join(failures)


def test_spin_boxes_and_axis_ticks_follow_a_language_switch(qtbot, make_window):
    """Switched from English to Portuguese while open, a threshold spin box and a plot's tick numbers take
    the decimal comma (and go back), without rebuilding the window."""
    from PySide6.QtWidgets import QDoubleSpinBox

    window = make_window(model_spec="demo", language="en")
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=60_000)
    window.docks["panel.portrait"].raise_()  # in sight: a panel behind a tab follows the language when shown
    qtbot.waitUntil(lambda: not window._out_of_sight("panel.portrait"))
    portrait = window.panel("panel.portrait")
    spin = portrait.findChildren(QDoubleSpinBox)[0]
    spin.setValue(0.25)
    axis = portrait.findChildren(pg.PlotWidget)[0].getPlotItem().getAxis("left")
    assert spin.text() == "0.250" and axis.tickStrings([0.5, 1.0], 1.0, 0.5) == ["0.5", "1.0"]
    window.set_language("pt_BR")
    qtbot.waitUntil(lambda: spin.text() == "0,250")  # the panels in sight follow one per turn
    assert axis.tickStrings([0.5, 1.0], 1.0, 0.5) == ["0,5", "1,0"]
    assert axis.tickStrings([0.0001, 25000.0], 1.0, 0.5) == ["0,0001", "25000"]
    window.set_language("en")
    qtbot.waitUntil(lambda: spin.text() == "0.250")
    assert spin.value() == 0.25


def induction_words(window) -> str:
    """The words of the sequence the portrait names as its induction scores' (the model's tokens: data, not the interface's words)."""
    from attention_lab.core.roles import repeated_words_text

    return repeated_words_text(window.session.model.tokenizer)


def model_guesses(window) -> str:
    """The model's guesses for the edited position, offered as replacements (its tokens: data, not the interface's
    words -- a bilingual model guesses English words after a Portuguese text too)."""
    from PySide6.QtWidgets import QComboBox

    box = window.panel("panel.leakage").findChild(QComboBox, "leakage.replacement")
    return " ".join(box.itemText(i) for i in range(box.count())) + " " + box.currentText()
