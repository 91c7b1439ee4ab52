"""`attention-lab lab --steps N`: generation one token at a time, headless (JSON, text, bad values)."""

from __future__ import annotations

import json

import pytest
import torch
from test_lab_masks_knockout_cli import run_main  # app.main in this process, stdout and stderr captured

from attention_lab import app

STEP_KEYS = {"position", "token_id", "token", "top", "cache_positions", "cache_bytes", "attention_row",
             "earlier_rows_max_change", "logits_max_diff_cache_vs_recompute", "work"}
WORK_KEYS = {"attention_cached", "attention_recompute", "total_cached", "total_recompute"}
STALE_KEYS = {"kv_drift_per_step", "top1_agreement", "max_prob_diff"}
INSIDE_KEYS = {"q", "keys", "scores", "scaled", "weights", "values", "head_output", "concat", "projected",
               "max_error_vs_layer"}
FAST = ("--new-tokens", "2")  # step 5's benchmark is not what these tests are about


@pytest.fixture(scope="module")
def generation_json(tiny_checkpoint):
    rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), "--steps", "3", "--layer", "1", "--head", "2",
                             "--json", *FAST])
    assert rc == 0, err
    return json.loads(out)


def test_json_has_the_steps_the_stale_cache_and_inside_the_head(generation_json):
    d = generation_json
    n = len(d["token_ids"])
    steps = d["steps"]
    assert len(steps) == 3
    for i, s in enumerate(steps):
        assert STEP_KEYS <= set(s) and WORK_KEYS == set(s["work"])
        assert s["position"] == n + i and s["cache_positions"] == n + i
        assert s["cache_bytes"] == 2 * 2 * 12 * 4 * s["cache_positions"] * 4
        assert len(s["top"]) == 5 and set(s["top"][0]) == {"id", "token", "p"}
        assert s["top"][0]["id"] == s["token_id"]  # greedy: the likeliest token
        row = torch.tensor(s["attention_row"], dtype=torch.float64)
        assert row.shape == (12, s["cache_positions"])  # heads × positions of layer 1
        torch.testing.assert_close(row.sum(-1), torch.ones(12, dtype=torch.float64), atol=1e-5, rtol=0)
        assert s["earlier_rows_max_change"] == 0
        assert s["logits_max_diff_cache_vs_recompute"] <= 1e-4
        assert s["work"]["attention_recompute"] > s["work"]["attention_cached"] > 0
    assert d["generation"]["token_ids"] == [s["token_id"] for s in steps]

    stale = d["stale_cache"]
    assert STALE_KEYS <= set(stale)
    assert len(stale["kv_drift_per_step"]) == 3 and all(len(r) == 2 for r in stale["kv_drift_per_step"])
    assert 0 <= stale["top1_agreement"] <= 1 and stale["max_prob_diff"] >= 0

    inside = d["inside_head"]
    assert INSIDE_KEYS <= set(inside) and (inside["layer"], inside["head"]) == (1, 2)
    positions = steps[-1]["cache_positions"]
    assert len(inside["q"]) == 4 and len(inside["keys"]) == positions and len(inside["keys"][0]) == 4
    assert len(inside["weights"]) == positions and abs(sum(inside["weights"]) - 1) < 1e-5
    assert len(inside["concat"]) == len(inside["projected"]) == 48
    assert inside["max_error_vs_layer"] <= 1e-5
    torch.testing.assert_close(torch.tensor(inside["weights"], dtype=torch.float64),
                               torch.tensor(steps[-1]["attention_row"][2], dtype=torch.float64),
                               atol=1e-6, rtol=0)


def test_without_steps_the_json_has_no_generation(tiny_checkpoint, capsys):
    assert app.main(["lab", "--model", str(tiny_checkpoint), "--json", *FAST]) == 0
    d = json.loads(capsys.readouterr().out)
    assert not {"steps", "stale_cache", "inside_head", "generation"} & set(d)


def test_text_mode_prints_the_steps(tiny_checkpoint, capsys):
    assert app.main(["lab", "--model", str(tiny_checkpoint), "--steps", "2", *FAST]) == 0
    out = capsys.readouterr().out
    assert "Generation, one token at a time (2 greedy steps" in out
    assert "changed by exactly 0" in out
    assert "Without the mask, with a cache anyway (2 steps)" in out
    assert "Inside head 0 of layer 0" in out and "Recomposed against the layer's own output" in out
    assert "2 × 2 layers × 12 heads × 4 (d_k) ×" in out


BAD_STEPS = {
    "zero steps": (["--steps", "0"], "--steps must be at least 1, got 0"),
    "negative steps": (["--steps", "-3"], "--steps must be at least 1"),
    "past the context": (["--steps", "60"], "use --steps 56 or less"),
    "not a number": (["--steps", "two"], "--steps: invalid int"),
    "a head that doesn't exist": (["--steps", "2", "--head", "12"], "head 12 is out of range"),
    "a layer that doesn't exist": (["--steps", "2", "--layer", "5"], "layer 5 is out of range"),
}


@pytest.mark.parametrize("name", list(BAD_STEPS))
def test_bad_values_exit_2_with_one_sentence(name, tiny_checkpoint, capsys):
    flags, expected = BAD_STEPS[name]
    rc = app.main(["lab", "--model", str(tiny_checkpoint), *flags, *FAST])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert expected in err


def test_text_mode_in_portuguese(tiny_checkpoint, capsys):
    assert app.main(["lab", "--model", str(tiny_checkpoint), "--steps", "2", "--lang", "pt_BR", *FAST]) == 0
    out = capsys.readouterr().out
    assert "Geração, um token por vez (2 passos gulosos" in out and "mudaram exatamente 0" in out
    assert "Sem a máscara, com cache mesmo assim (2 passos)" in out and "Dentro da cabeça 0 da camada 0" in out
    assert "Generation, one token" not in out
