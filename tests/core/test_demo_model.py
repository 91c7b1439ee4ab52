"""The bundled demo model, loaded through the public loading code, against its model card.

``CARD`` below repeats the numbers of ``resources/demo-model/MODEL_CARD.md`` (change both
when the model is replaced); they are recomputed here with the app's own analysis on the
held-out prose in ``tests/data``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from attention_lab.core.kvbench import run_kv_benchmark
from attention_lab.core.models import default_model_spec, demo_model_dir, load_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import evaluate_demo_model as evaluation  # noqa: E402

pytestmark = pytest.mark.skipif(not (demo_model_dir() / "model.safetensors").exists(), reason="demo model not bundled")

# what MODEL_CARD.md states (python packaging/evaluate_demo_model.py resources/demo-model)
CARD = {
    "vocab_size": 8192,
    "heldout_loss": 5.837,
    "previous_token_head": (2, 3),
    "previous_token": 0.638,
    "sink_head": (0, 7),
    "sink": 0.930,
}


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def head_stats(demo):
    sentences = evaluation.heldout_sentences(evaluation.HELDOUT.read_text(encoding="utf-8"))
    return evaluation.mean_head_stats(demo, sentences)


def test_architecture_and_size(demo):
    cfg = demo.lens.config
    assert demo.is_demo and demo.source == "demo"
    assert cfg.n_head == 12 and cfg.n_layer >= 4 and cfg.n_positions >= 256
    assert cfg.vocab_size == demo.tokenizer.vocab_size == CARD["vocab_size"]
    assert (demo_model_dir() / "model.safetensors").stat().st_size <= 30 * 1024 * 1024
    assert (demo_model_dir() / "MODEL_CARD.md").exists()


def test_its_own_byte_level_tokenizer_is_stated_and_lossless(demo):
    """Not GPT-2's vocabulary: the label says so, and any text survives the round trip."""
    assert "not GPT-2's" in demo.name and f"{CARD['vocab_size']}-token BPE" in demo.name
    assert "not GPT-2's tokenizer" in (demo_model_dir() / "MODEL_CARD.md").read_text(encoding="utf-8")
    for text in ["The big dog bit the mailman", "O cachorro grande mordeu o carteiro ontem", "naïve 🙂 日本 \t\n"]:
        assert demo.tokenizer.decode(demo.tokenizer.encode(text)) == text
    config = json.loads((demo_model_dir() / "config.json").read_text())
    assert demo.tokenizer.eos_id == config["eos_token_id"] == config["bos_token_id"]
    assert len(demo.tokenizer.encode("The weather changed quickly")) <= 6  # words, not bytes


def test_heldout_loss_below_unigram_baseline(demo):
    recorded = json.loads((demo_model_dir() / "training.json").read_text())
    loss, _ = evaluation.heldout_loss(demo, evaluation.HELDOUT.read_text(encoding="utf-8"))
    assert loss < recorded["unigram_heldout_loss"] - 1.0
    assert loss == pytest.approx(CARD["heldout_loss"], abs=0.01)


def test_previous_token_and_sink_heads_of_the_model_card(head_stats):
    best_prev = max(head_stats, key=lambda k: head_stats[k]["previous_token"])
    best_sink = max(head_stats, key=lambda k: head_stats[k]["sink_mass"])
    assert best_prev == CARD["previous_token_head"]
    assert head_stats[best_prev]["previous_token"] == pytest.approx(CARD["previous_token"], abs=0.005)
    assert head_stats[best_prev]["previous_token"] >= 0.5
    assert best_sink == CARD["sink_head"]
    assert head_stats[best_sink]["sink_mass"] == pytest.approx(CARD["sink"], abs=0.005)
    assert head_stats[best_sink]["sink_mass"] >= 0.5


def test_the_lab_portrait_finds_them_too(demo):
    """``attention-lab lab --model demo`` on the chapter's sentence names the card's heads, in
    the very lines the card quotes."""
    from attention_lab.core.lab import render_text, run_lab

    result = run_lab(demo, new_tokens=5)
    roles = {(h["layer"], h["head"]): h["roles"] for h in result["heads"]}
    assert "sink" in roles[CARD["sink_head"]]
    assert "previous-token" in roles[CARD["previous_token_head"]]
    layer, head = CARD["previous_token_head"]
    sentence = result["roles"]["sentences"]["previous-token"]
    assert f"layer {layer} has" in sentence and f"head {head} (" in sentence
    text = render_text(result)
    card = (demo_model_dir() / "MODEL_CARD.md").read_text(encoding="utf-8")
    for line in result["roles"]["sentences"].values():
        assert f"- {line}" in text and f"- {line}" in card


def test_cached_and_uncached_generation_identical(demo):
    result = run_kv_benchmark(demo.lens, demo.tokenizer.encode("The old bridge over the river"), new_tokens=20)
    assert result.identical and len(result.generated_ids) == 20


def test_is_the_default_without_gpt2_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "models"))
    assert default_model_spec() == "demo"
