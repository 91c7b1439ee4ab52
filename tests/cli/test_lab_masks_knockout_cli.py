"""``attention-lab lab --mask … --ablate … --ablation …``: the JSON keys, computed under the
mask, and one clear line with exit 2 for bad input."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import torch

from attention_lab import app
from attention_lab.core import ablation, masks
from attention_lab.core.models import load_model

TEXT = "The dog ran. The cat sat. A bird"


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = app.main(argv)
    return rc, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def lab(tiny_checkpoint):
    def run(*flags: str) -> dict:
        rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), "--text", TEXT, "--new-tokens", "3",
                                 "--json", *flags])
        assert (rc, err) == (0, ""), err
        return json.loads(out)
    return run


@pytest.mark.parametrize("spec", ["causal", "bidirectional", "prefix:3", "window:2", "documents:."])
def test_json_mask_keys_are_computed_under_the_mask(lab, tiny_checkpoint, spec):
    result = lab("--mask", spec)
    model = load_model(str(tiny_checkpoint))
    ids = result["token_ids"]
    n = len(ids)
    allowed = masks.allowed_matrix(masks.parse_mask_spec(spec, model.tokenizer), ids)
    assert result["mask_spec"] == spec
    assert result["mask"] == allowed.long().tolist()
    assert result["reach"] == masks.reach(allowed, model.lens.config.n_layer).long().tolist()
    v = result["verdicts"]
    assert set(v) == {"loss", "leaks_labels", "leaking_positions", "kv_cache_valid", "cache_positions_per_layer"}
    assert v["loss"] == "every"  # the loss at every position: the label-leak verdict for that choice
    assert v["leaks_labels"] is (spec in ("bidirectional", "prefix:3")) is bool(v["leaking_positions"])
    assert v["kv_cache_valid"] is (spec != "bidirectional")
    assert v["cache_positions_per_layer"] == {"window:2": 2, "documents:.": 4}.get(spec, n)
    measured = result["mask_measurements"]
    assert measured["reach_confirmed"] and measured["leaks_labels_measured"] is v["leaks_labels"]
    assert (measured["kv_max_change"] == 0.0) is v["kv_cache_valid"]
    # the shown layer's maps under the mask: forbidden cells exactly 0, rows sum to 1
    maps = torch.tensor(result["attention_under_mask"])
    assert maps.shape == (model.lens.config.n_head, n, n)
    assert float(maps.masked_select(~allowed.expand_as(maps)).abs().sum()) == 0.0
    torch.testing.assert_close(maps.sum(-1), torch.ones(maps.shape[:2], dtype=maps.dtype), atol=1e-5, rtol=0)
    leak = result["leakage_under_mask"]
    assert leak["changed_as_reach_predicts"]
    assert [x > 0 for x in leak["final"]] == [bool(r[result["leakage"]["position"]]) for r in result["reach"]]
    if spec == "causal":  # the default mask is the chapter's: the same numbers as step 3
        assert leak["final"] == pytest.approx(result["leakage"]["causal"], abs=1e-6)
        assert result["attention_under_mask"] == result["attention"]["causal"]


@pytest.mark.parametrize("mode", ["zero", "mean"])
def test_json_ablation(lab, tiny_checkpoint, mode):
    result = lab("--mask", "window:2", "--ablate", "0.3,1.7", "--ablation", mode, "--position", "5")
    ab = result["ablation"]
    assert ab["heads"] == [[0, 3], [1, 7]] and ab["mode"] == mode and ab["position"] == 5
    for key in ("top_before", "top_after"):
        assert len(ab[key]) == 5 and set(ab[key][0]) == {"token", "id", "p"}
    model = load_model(str(tiny_checkpoint))
    ids = result["token_ids"]
    allowed = masks.allowed_matrix(masks.parse_mask_spec("window:2"), ids)
    again = ablation.knockout(model.lens, ids, [(0, 3), (1, 7)], mode, 5, allowed=allowed)
    assert ab["loss_before"] == pytest.approx(again.loss_before, abs=1e-6)
    assert ab["loss_after"] == pytest.approx(again.loss_after, abs=1e-6)
    assert [g["id"] for g in ab["top_after"]] == [t for t, _ in again.top_after]
    assert ab["top_before"][0]["token"] == model.tokenizer.token_texts([ab["top_before"][0]["id"]])[0]


def test_text_mode_shows_the_designer_and_the_knockout(tiny_checkpoint):
    rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), "--text", TEXT, "--new-tokens", "3",
                             "--mask", "prefix:3", "--ablate", "0.1"])
    assert rc == 0, err
    assert "Mask designer — prefix:3" in out and "Leaks the labels in parallel training: yes" in out
    assert "with the loss only after the prefix, as a prefix-LM is trained: no" in out
    assert "That is with the loss at every position (leaking: #0, #1)" in out  # #2's label lies after the prefix
    assert "Head knockout (zero): layer 0, head 1;" in out and "Mean next-token loss" in out


BAD = {  # flags -> a piece of the one line
    "window 0": (["--mask", "window:0"], "--mask window:0: the window must be at least 1, got 0"),
    "negative prefix": (["--mask", "prefix:-3"], "--mask prefix:-3: the prefix length must be at least 0, got -3"),
    "unknown kind": (["--mask", "diagonal:2"], "unknown mask kind 'diagonal'"),
    "window without a number": (["--mask", "window:"], "window:W needs a whole number W"),
    "empty mask": (["--mask", ""], "--mask: the mask is empty"),
    "documents without a token": (["--mask", "documents:"], "needs the separator token"),
    "documents with a two-token separator": (["--mask", "documents:hello world"], "is 2 tokens, not one"),
    "a head that does not exist": (["--ablate", "99.0"], "--ablate: head 99.0 does not exist"),
    "a head index too large": (["--ablate", "0.12"], "head 0.12 does not exist"),
    "a head listed twice": (["--ablate", "0.1,1.2,0.1"], "head 0.1 is listed twice"),
    "not L.H": (["--ablate", "3"], "is not LAYER.HEAD"),
    "empty head list": (["--ablate", ""], "no heads given"),
    "unknown ablation": (["--ablate", "0.1", "--ablation", "half"], "--ablation: invalid choice: 'half'"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_is_one_line_and_exit_2(name, tiny_checkpoint):
    flags, expected = BAD[name]
    rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), "--new-tokens", "3", *flags])
    assert rc == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("attention-lab") and "Traceback" not in err, err
    assert expected in err, err
