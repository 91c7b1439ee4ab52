"""The bundled demo model, loaded through the public loading code, against its model card."""

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


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


def test_architecture_and_size(demo):
    cfg = demo.lens.config
    assert demo.is_demo and demo.source == "demo"
    assert cfg.n_head == 12 and cfg.n_layer >= 4 and cfg.n_positions >= 256
    assert cfg.vocab_size == 50257
    assert (demo_model_dir() / "model.safetensors").stat().st_size <= 30 * 1024 * 1024
    assert (demo_model_dir() / "MODEL_CARD.md").exists()


def test_uses_gpt2_tokenizer(demo):
    assert demo.tokenizer.encode("Hello world") == [15496, 995]
    assert demo.tokenizer.encode(" the") == [262]


def test_heldout_loss_below_unigram_baseline(demo):
    recorded = json.loads((demo_model_dir() / "training.json").read_text())
    loss, _ = evaluation.heldout_loss(demo, evaluation.HELDOUT.read_text(encoding="utf-8"))
    assert loss < recorded["unigram_heldout_loss"] - 0.5
    assert loss == pytest.approx(6.907, abs=0.01)  # the model card's number


def test_head_findings_match_the_model_card(demo):
    sentences = evaluation.heldout_sentences(evaluation.HELDOUT.read_text(encoding="utf-8"))
    stats = evaluation.mean_head_stats(demo, sentences)
    best_prev = max(stats, key=lambda k: stats[k]["previous_token"])
    best_sink = max(stats, key=lambda k: stats[k]["sink_mass"])
    assert best_prev == (0, 4) and stats[best_prev]["previous_token"] == pytest.approx(0.286, abs=0.005)
    assert best_sink == (2, 0) and stats[best_sink]["sink_mass"] == pytest.approx(0.280, abs=0.005)


def test_cached_and_uncached_generation_identical(demo):
    result = run_kv_benchmark(demo.lens, demo.tokenizer.encode("The old bridge over the river"), new_tokens=20)
    assert result.identical and len(result.generated_ids) == 20


def test_is_the_default_without_gpt2_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "models"))
    assert default_model_spec() == "demo"
