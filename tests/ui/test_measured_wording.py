"""Sentences that must agree with the numbers the app measures next to them, in both languages."""

from __future__ import annotations

import re

from string_tables import every_text


def _sentences(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+|<li>|<br>", re.sub(r"<!--more-->", " ", text))


def test_zeroing_after_the_softmax_is_never_said_to_hide_the_future():
    """The mask panel measures the past moving through the softmax's denominator when the future changes."""
    said = [f"{key} ({lang})" for key, by_lang in every_text().items() for lang, text in by_lang.items()
            if re.search(r"hides the future|esconde o futuro", text)]
    assert not said
    why = every_text()["mask.why.explain"]
    assert "denominator" in why["en"] and "denominador" in why["pt_BR"]


def test_o_n_per_token_is_said_of_attention_and_next_to_what_the_plot_shows():
    """At these lengths the whole step's matrix products dominate: uncached time grows linearly, cached flat."""
    found = 0
    for key, by_lang in every_text().items():
        for lang, text in by_lang.items():
            for sentence in _sentences(text):
                if "O(n²)" in sentence:
                    found += 1
                    assert re.search(r"[Aa]ttention|atenção", sentence), f"{key} ({lang}): {sentence}"
            if "O(n²)" in text:
                assert re.search(r"linearly|linearmente", text) and re.search(r"flat|plano", text), f"{key} ({lang})"
    assert found >= 6  # the KV panel, the tour and the key ideas, in both languages


def test_a_one_layer_model_is_never_promised_a_layer_1():
    table = every_text()
    for key in ("kvstab.bidir_one_layer", "tour.fact.kvcache.pending.one_layer"):
        for lang, text in table[key].items():
            assert not re.search(r"layer 1\b|camada 1\b", text), f"{key} ({lang})"


def test_the_mask_removed_is_the_loaded_models_not_gpt2s():
    said = [f"{key} ({lang})" for key, by_lang in every_text().items() for lang, text in by_lang.items()
            if re.search(r"GPT-2 weights|pesos do GPT-2", text)]
    assert not said
    maps = every_text()["tour.step.maps.body"]
    assert all("{model}" in text for text in maps.values())


def test_the_sink_heads_are_described_by_one_rule_in_both_languages():
    """The rule is a share of the weight on token 0; no text promises "almost everything" or low entropy."""
    for key, by_lang in every_text().items():
        for lang, text in by_lang.items():
            if re.search(r"\bsink|vala", text):
                assert not re.search(r"almost everything|quase tudo|quase todo o peso", text), f"{key} ({lang})"
