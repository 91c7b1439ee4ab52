"""The bundled demo model, loaded through the public loading code, against its model card.

The card's table is ``evaluate_demo_model.py --card`` on the committed weights and the corpus's
held-out prose (kept in ``tests/data/demo-heldout``): it is measured again here and must agree,
and the goals the model was trained for are checked on the same numbers.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from attention_lab.core.kvbench import run_kv_benchmark
from attention_lab.core.models import default_model_spec, demo_model_dir, load_model

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))

import evaluate_demo_model as evaluation  # noqa: E402

pytestmark = pytest.mark.skipif(not (demo_model_dir() / "model.safetensors").exists(), reason="demo model not bundled")

HELDOUT = ROOT / "tests" / "data" / "demo-heldout"
CARD_FILE = demo_model_dir() / "MODEL_CARD.md"
#: the heads the card names (python packaging/evaluate_demo_model.py resources/demo-model --corpus tests/data/demo-heldout --card)
CARD = {"vocab_size": 16384, "previous_token_head": (0, 4), "sink_head": (0, 1), "induction_head": (1, 6)}


@pytest.fixture(scope="module")
def demo():
    return load_model("demo")


@pytest.fixture(scope="module")
def table():
    return evaluation.model_card_table(demo_model_dir(), evaluation.heldout_files(HELDOUT))


NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?")


def _agrees(measured: str, stated: str) -> bool:
    """The same line of a table: its words exactly, each number to its last printed digit give or take
    one (the float order of another machine's arithmetic can move a last digit)."""
    if NUMBER.sub("#", measured) != NUMBER.sub("#", stated):
        return False
    for a, b in zip(NUMBER.findall(measured), NUMBER.findall(stated)):
        digits = len(a.split(".")[1]) if "." in a else 0
        if abs(float(a.replace(",", "")) - float(b.replace(",", ""))) > 1.01 * 10 ** -digits:
            return False
    return True


def test_the_model_cards_table_is_measured_again_and_agrees(table):
    card = CARD_FILE.read_text(encoding="utf-8").splitlines()
    for line in evaluation.card_markdown(table).splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            label = line.split(" | ")[0]
            stated = [c for c in card if c.split(" | ")[0] == label]
            assert stated, f"the card has no line {label!r}"
            assert any(_agrees(line, c) for c in stated), f"measured {line!r}, the card says {stated}"


def test_the_goals_it_was_trained_for(table):
    heads = table["heads"]
    assert all(table["heldout"][lang]["bits_per_char"] <= 2.4 for lang in ("en", "pt_BR"))
    words = table["tokenizer"]["model"]["tokens_per_word"]
    assert words["pt_BR"] <= 1.6 and words["en"] <= 1.5
    assert heads["previous_token_best_layer0"]["score"] >= 0.5
    assert (heads["previous_token_best_layer0"]["layer"], heads["previous_token_best_layer0"]["head"]) == CARD["previous_token_head"]
    assert heads["sink_best_layer0"]["score"] >= 0.6
    assert (heads["sink_best_layer0"]["layer"], heads["sink_best_layer0"]["head"]) == CARD["sink_head"]
    tour = table["tour_induction"]
    assert tour["score"] >= 0.3 and (tour["layer"], tour["head"]) == CARD["induction_head"]
    assert heads["positional_layer0_en"] and heads["positional_layer0_pt_BR"]
    assert table["size_bytes"] <= 30 * 1024 * 1024


def test_architecture_and_size(demo):
    cfg = demo.lens.config
    assert demo.is_demo and demo.source == "demo"
    assert cfg.n_head == 12 and cfg.n_layer >= 4 and cfg.n_positions >= 256
    assert cfg.vocab_size == demo.tokenizer.vocab_size == CARD["vocab_size"]
    assert (demo_model_dir() / "model.safetensors").stat().st_size <= 30 * 1024 * 1024


def test_its_own_byte_level_tokenizer_is_stated_and_lossless(demo):
    """Not GPT-2's vocabulary: the label says so, and any text survives the round trip."""
    assert "not GPT-2's" in demo.name and f"{CARD['vocab_size']}-token BPE" in demo.name
    assert "not GPT-2's tokenizer" in CARD_FILE.read_text(encoding="utf-8")
    for text in ["The big dog bit the mailman", "O cachorro grande mordeu o carteiro ontem", "naïve 🙂 日本 \t\n"]:
        assert demo.tokenizer.decode(demo.tokenizer.encode(text)) == text
    config = json.loads((demo_model_dir() / "config.json").read_text())
    assert demo.tokenizer.eos_id == config["eos_token_id"] == config["bos_token_id"]
    assert len(demo.tokenizer.encode("The weather changed quickly")) <= 6  # words, not bytes


def test_the_lab_portrait_finds_them_in_layer_0_as_the_card_says(demo):
    """``attention-lab lab --model demo`` on the chapter's sentence names the card's heads in layer 0,
    in the very lines the card quotes."""
    from attention_lab.core.lab import render_text, run_lab

    result = run_lab(demo, new_tokens=5)
    roles = {(h["layer"], h["head"]): h["roles"] for h in result["heads"]}
    assert "sink" in roles[CARD["sink_head"]]
    assert "previous-token" in roles[CARD["previous_token_head"]]
    sentence = result["roles"]["sentences"]["previous-token"]
    assert sentence.startswith("previous-token heads in layer 0: ") and f"head {CARD['previous_token_head'][1]} (" in sentence
    text = render_text(result)
    card = CARD_FILE.read_text(encoding="utf-8")
    for line in result["roles"]["sentences"].values():
        assert f"- {line}" in text and f"- {line}" in card


def test_cached_and_uncached_generation_identical(demo):
    result = run_kv_benchmark(demo.lens, demo.tokenizer.encode("The old bridge over the river"), new_tokens=20)
    assert result.identical and len(result.generated_ids) == 20


def test_is_the_default_without_gpt2_in_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "models"))
    assert default_model_spec() == "demo"
