"""Words that misled a reader of the chapter: what the app says about the unmasked mode, W^O, the model's
numbers and its tokenizer, checked on every registered string and on the loaded model."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest

pytest.importorskip("pytestqt")

from attention_lab.core.models import load_model  # noqa: E402
from attention_lab.ui import i18n  # noqa: E402
from attention_lab.ui.i18n import tr, translator  # noqa: E402
from attention_lab.ui.panels.token_editor import TokenEditorPanel  # noqa: E402
from attention_lab.ui.strings import budget_view, head_grid, kv_bench, leakage, mask, portrait  # noqa: E402,F401
from attention_lab.ui.strings import shapes, token_editor, tour, window  # noqa: E402,F401

from state_factory import build_state  # noqa: E402


def _all_texts():
    for key in i18n.all_keys():
        for lang in i18n.LANGUAGES:
            translator.set_language(lang)
            yield key, lang, tr(key)
    translator.set_language("en")


def test_no_string_calls_the_unmasked_mode_roberta_or_the_heads_sealed():
    for key, lang, text in _all_texts():
        assert "(RoBERTa)" not in text and "RoBERTa-style" not in text, (key, lang)
        assert "causal=False is RoBERTa" not in text and "causal=False é o RoBERTa" not in text, (key, lang)
        assert "sealed compartments" not in text and "compartimentos estanques" not in text, (key, lang)
        assert "never talk" not in text and "nunca conversa" not in text, (key, lang)
        assert "GPT-2's “Ġ”" not in text, (key, lang)


def test_the_unmasked_mode_is_explained_once_as_the_same_weights_without_the_mask():
    # the weights are the loaded model's, named (the demo model is not GPT-2)
    text = tr("tour.step.maps.body", model="demo model")
    assert "the same weights of demo model with the mask removed" in text and "real RoBERTa" in text
    translator.set_language("pt_BR")
    assert "os mesmos pesos de modelo de demonstração com a máscara removida" in tr("tour.step.maps.body", model="modelo de demonstração")


def test_the_multihead_numbers_are_the_loaded_models_tied_to_the_chapters():
    text = tr("tour.step.multihead_cost.body", new=50, d=192, heads=12, dk=16)
    assert "12 slices of 16" in text and "192 dimensions" in text and "768 into 12 × 64" in text
    translator.set_language("pt_BR")
    assert "12 fatias de 16" in tr("tour.step.multihead_cost.body", new=50, d=192, heads=12, dk=16)


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_token_editor_names_the_loaded_models_tokenizer(qtbot, tiny_model, language):
    translator.set_language(language)
    panel = TokenEditorPanel()
    qtbot.addWidget(panel)
    panel.show_state(build_state(tiny_model))
    assert ("50.257" if language == "pt_BR" else "50,257") in panel.explain.text() and tiny_model.name in panel.explain.text()
    demo = load_model("demo")
    panel.show_state(build_state(demo))
    size = f"{demo.tokenizer.vocab_size:,}".replace(",", "." if language == "pt_BR" else ",")  # its own BPE's
    assert size in panel.explain.text() and ("50.257" if language == "pt_BR" else "50,257") not in panel.explain.text()
