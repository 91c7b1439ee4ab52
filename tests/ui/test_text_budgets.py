"""Every text has a budget a learner who just read the chapter can take in, in both languages:

- a panel's first paragraph (what its explanation shows before "More…") ≤ 60 words;
- a tour step's body (before "More…") ≤ 80 words;
- a measured fact's first sentence ≤ 2 numbers: the one claim and the number that proves it.

The rest of a text goes behind :data:`panel_kit.MORE`, which :class:`panel_kit.ExplanationLabel`
shows as a "More…" link."""

from __future__ import annotations

import os
import re
import string

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.ui.panels.panel_kit import MORE, ExplanationLabel  # noqa: E402
from string_tables import every_text  # noqa: E402

PANEL_WORDS, STEP_WORDS, FACT_NUMBERS = 60, 80, 2

#: a fact's fields that name something (a token, a layer, a head, a position, a model, a list of
#: heads with their own numbers, counted once) rather than measure it
NAMES = re.compile(r"^(layer|head|pos|query|model|mask|mode|last|old|new|token|first|appended|reference|before|identical|"
                   r"leaks|confirmed|positional|sinks|n_vs_n1|\w+_(head|layer|token))$")


ID_WORDS = re.compile(r"\b(?:layers?|camadas?|tokens?|positions?|posição|posições|heads?|cabeças?|query|consulta)"
                      r"\s+\d+(?:\s*[–-]\s*)?", re.IGNORECASE)

#: sentences a panel words from a measurement, held to the facts' rule
MEASURED = re.compile(r"^(tour\.fact\.|mask\.selected\.|kvstab\.(causal|bidir)|designer\.(leaks|kv)\.|"
                      r"leakage\.summary\.|budget\.first|kvbench\.status)")


def _first_part(text: str) -> str:
    return text.split(MORE)[0]


def _words(text: str) -> int:
    prose = re.sub(r"<[^<>]*>", " ", text)
    prose = re.sub(r"\{[^{}]*\}", " x ", prose)  # a placeholder is one word
    return len([w for w in prose.split() if re.search(r"\w", w)])


def _first_sentence(text: str) -> str:
    prose = _first_part(text)
    match = re.search(r"[.!?](\s|$)", re.sub(r"\{[^{}]*\}", lambda m: m.group(0).replace(".", "·"), prose))
    return prose[: match.end()] if match else prose


def _numbers(sentence: str) -> list[str]:
    fields = [f for _, f, _, _ in string.Formatter().parse(sentence) if f]
    measured = [f for f in fields if not NAMES.match(f)]
    prose = re.sub(r"\{[^{}]*\}", " ", sentence)
    prose = re.sub(ID_WORDS, " ", prose)  # "layer 0", "token 0", "layers 1–": names, not measurements
    literal = re.findall(r"(?<![#\w{−])\d+(?:[.,]\d+)?", prose)
    return measured + literal


def _panel_keys(table) -> list[str]:
    return [k for k in table if k.endswith("explain") and not k.startswith(("tour.", "ideas."))]


def test_a_panels_first_paragraph_is_at_most_60_words():
    table = every_text()
    over = [f"{key} ({lang}): {_words(_first_part(text))} words"
            for key in _panel_keys(table) for lang, text in table[key].items() if _words(_first_part(text)) > PANEL_WORDS]
    assert not over, "put the rest behind “More…” (panel_kit.MORE):\n" + "\n".join(over)


def test_a_tour_steps_body_is_at_most_80_words():
    table = every_text()
    keys = [k for k in table if re.fullmatch(r"tour\.step\.[\w-]+\.body", k)]
    assert len(keys) >= 10
    over = [f"{key} ({lang}): {_words(_first_part(text))} words"
            for key in keys for lang, text in table[key].items() if _words(_first_part(text)) > STEP_WORDS]
    assert not over, "put the rest behind “More…” (panel_kit.MORE):\n" + "\n".join(over)


def test_a_measured_facts_first_sentence_has_at_most_2_numbers():
    table = every_text()
    keys = [k for k in table if MEASURED.match(k)]
    assert len([k for k in keys if k.startswith("tour.fact.")]) >= 20 and len(keys) >= 35
    over = [f"{key} ({lang}): {_numbers(_first_sentence(text))}"
            for key in keys for lang, text in table[key].items() if len(_numbers(_first_sentence(text))) > FACT_NUMBERS]
    assert not over, "one claim and the number that proves it first; the rest behind “More…”:\n" + "\n".join(over)


@pytest.mark.parametrize(
    "text, rule",
    [
        # the old texts the budgets were set against: each breaks its rule
        ("Each head writes its result into its own slice of the concatenated vector. The split alone keeps it there: "
         "without W^O, head 3's result would leave the attention block in head 3's dimensions only (later, the next "
         "layer's projections and the MLP do read every dimension). W^O (c_proj in GPT-2) is a d × d matrix that, "
         "inside the block, writes every head's slice into every output dimension, so the heads' findings are "
         "combined before they join the residual stream. The tour nudged each head's values and counted which "
         "output dimensions of the attention block moved: with c_proj, and with c_proj replaced by the identity.",
         "step"),
        ("<b>{mode}</b>: no leak (the future gets {future}), but rows sum to between {lo} and {hi} instead of 1: the "
         "attention is no longer a weighted average.", "fact"),
        ("In {model}, Q, K and V come out of the reshape as {heads} × {n} × {dk}: {heads} heads × {dk} = {width} "
         "columns each, exactly what 1 head × {d} would have.", "fact"),
        ("In layer {layer}, the {heads} heads spend the budget of “{token}” (query {query}) on {chosen} different "
         "tokens, up to {top} (head {top_head} on “{top_token}”).", "fact"),
    ],
)
def test_the_budgets_catch_the_old_dense_texts(text, rule):
    if rule == "step":
        assert _words(_first_part(text)) > STEP_WORDS
    else:
        assert len(_numbers(_first_sentence(text))) > FACT_NUMBERS


def test_the_counts_read_as_a_learner_reads():
    assert _words("<b>Step 1: the mask.</b> {n} tokens, −∞ added.") == 7
    assert _first_sentence("Layer {layer} has no head: none puts {share_min_pct} back." + MORE + " More.") == \
        "Layer {layer} has no head: none puts {share_min_pct} back."
    assert _numbers("On #{pos} the {n} tokens moved by {leak_max}, 2 of them.") == ["n", "leak_max", "2"]
    assert _numbers("K and V of layers 1–{last} changed by up to {max}; layer 0 by {layer0}.") == ["max", "layer0"]


def test_the_label_shows_the_first_part_and_a_more_link_that_opens_the_rest(qtbot):
    from attention_lab.ui.i18n import tr

    label = ExplanationLabel()
    qtbot.addWidget(label)
    label.setText("First claim." + MORE + " The details.")
    assert "First claim." in label.text() and "The details." not in label.text() and tr("more.more") in label.text()
    label.linkActivated.emit("#more")
    assert "The details." in label.text() and tr("more.less") in label.text() and label.expanded
    label.setText("Another claim." + MORE + " Other details.")  # the learner's choice stays for the next text
    assert "Other details." in label.text()
    label.linkActivated.emit("#less")
    assert "Other details." not in label.text() and label.source_text() == "Another claim." + MORE + " Other details."
    label.setText("No details here.")
    assert label.text() == "No details here." and not label.has_more()
