"""The demo recipe's guided heads: the attention they steer is the block's own, the patterns are
the app's detectors', the weight fades to nothing, and the loss does move a head."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "packaging"))
sys.path.insert(0, str(ROOT / "desktop"))

import head_guide  # noqa: E402
import train_demo_model as recipe  # noqa: E402
from attention_lab.core.analysis import induction_pattern  # noqa: E402

from test_demo_recipe import corpus, sources, tiny  # noqa: E402,F401 -- the recipe's tiny corpus and run


def _model(layers: int = 2, width: int = 48):
    hp = {**recipe.DEFAULTS, "n_layer": layers, "n_embd": width, "n_positions": 32, "init_range": 0.1}
    model = recipe.make_model(hp, 100, 0)
    model.config._attn_implementation = "eager"  # the implementation that hands its weights back
    return model


def test_the_recomputed_attention_is_the_blocks_own_for_every_head():
    model = _model()
    ids = torch.randint(0, 100, (3, 20), generator=torch.Generator().manual_seed(0))
    guide = head_guide.HeadGuide(model, {"previous": (0, 3), "induction": (1, 7)})
    with torch.no_grad():
        attentions = model(input_ids=ids, output_attentions=True).attentions
    for layer in (0, 1):
        for head in range(12):
            mine = head_guide.head_log_attention(model.transformer.h[layer].attn, guide.inputs[layer], head).exp()
            assert torch.allclose(mine, attentions[layer][:, head], atol=1e-6), (layer, head)
    guide.remove()
    model(input_ids=ids)
    assert guide.inputs == {}  # removed hooks keep nothing


def test_induction_targets_are_the_detectors_pattern_row_by_row():
    ids = torch.tensor([[5, 6, 7, 5, 6, 7, 5, 9], [1, 1, 1, 2, 3, 2, 3, 1]])
    targets = head_guide.induction_targets(ids)
    for b in range(ids.shape[0]):
        assert torch.equal(targets[b].float(), induction_pattern(ids[b].tolist())), b
    assert targets[0, 3].nonzero().flatten().tolist() == [1]  # the second 5 looks where 6 followed the first


def _one_hot_log(n: int, where) -> torch.Tensor:
    """Log-attention of one row of ``n`` positions putting (almost) all mass on ``where(i)``."""
    a = torch.full((1, n, n), 1e-9)
    for i in range(n):
        a[0, i, where(i)] = 1.0
    a = a.tril()
    return (a / a.sum(-1, keepdim=True)).log()


def test_each_pattern_loss_is_zero_where_the_head_looks_right_and_large_where_it_does_not():
    n = 8
    ids = torch.tensor([[3, 4, 5, 3, 4, 5, 3, 4]])
    previous = _one_hot_log(n, lambda i: max(i - 1, 0))
    sink = _one_hot_log(n, lambda i: 0)
    induction = _one_hot_log(n, lambda i: i - 2 if i >= 3 else max(i - 1, 0))  # after the copy 3 back
    assert head_guide.pattern_loss("previous", previous, ids) < 1e-6
    assert head_guide.pattern_loss("sink", sink, ids) < 1e-6
    assert head_guide.pattern_loss("induction", induction, ids) < 1e-6
    assert head_guide.pattern_loss("previous", sink, ids) > 10
    assert head_guide.pattern_loss("sink", previous, ids) > 10
    assert head_guide.pattern_loss("induction", sink, ids) > 10
    fresh = torch.tensor([[1, 2, 3, 4, 5, 6, 7, 8]])  # nothing occurs twice: nothing to guide
    assert float(head_guide.pattern_loss("induction", sink, fresh)) == 0.0
    with pytest.raises(ValueError, match="unknown pattern"):
        head_guide.pattern_loss("copy", sink, ids)


def test_the_weight_fades_linearly_to_nothing():
    hp = {"guide_weight": 2.0, "guide_steps": 100}
    assert [head_guide.weight_at(hp, s) for s in (0, 50, 100, 5000)] == [2.0, 1.0, 0.0, 0.0]
    assert head_guide.weight_at({"guide_weight": 0.0, "guide_steps": 100}, 0) == 0.0


def test_the_guide_loss_moves_the_named_head_and_no_other_by_much():
    torch.manual_seed(0)
    model = _model(layers=1)
    guide = head_guide.HeadGuide(model, {"previous": (0, 5)})
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    gen = torch.Generator().manual_seed(1)

    def previous_token_attention(head: int) -> float:
        ids = torch.randint(0, 100, (4, 24), generator=torch.Generator().manual_seed(2))
        with torch.no_grad():
            a = model(input_ids=ids, output_attentions=True).attentions[0][:, head]
        guide.inputs.clear()
        return float(a[:, 1:, :].diagonal(dim1=-2, dim2=-1).mean())

    before = previous_token_attention(5)
    for _ in range(60):
        ids = torch.randint(0, 100, (4, 24), generator=gen)
        model(input_ids=ids)
        loss, parts = guide.loss(ids)
        loss.backward()
        opt.step()
        opt.zero_grad()
    assert before < 0.3 and previous_token_attention(5) > 0.9
    assert previous_token_attention(4) < 0.5


def test_heads_are_named_layer_colon_head():
    assert head_guide.parse_head("1:6") == (1, 6) and head_guide.parse_head("") is None
    with pytest.raises(ValueError, match="LAYER:HEAD"):
        head_guide.parse_head("one:six")


def test_the_recipe_refuses_a_guided_head_it_does_not_have(corpus, tmp_path, capsys):  # noqa: F811
    for bad in (["--guide-induction", "2:0"], ["--guide-sink", "0:12"], ["--guide-previous", "x"]):
        with pytest.raises(SystemExit):
            recipe.main(["--corpus", str(corpus), "--work", str(tmp_path / "w"), "--no-measure", *tiny(), *bad])
        assert "guide" in capsys.readouterr().err


def test_a_guided_run_logs_each_patterns_loss_while_the_guide_holds(corpus, tmp_path):  # noqa: F811
    work = tmp_path / "run"
    args = ["--corpus", str(corpus), "--work", str(work), "--no-measure",
            *tiny(guide_weight=1.0, guide_steps=3, guide_previous="0:2", guide_sink="0:3", guide_induction="1:1")]
    assert recipe.main(args) == 0
    state = json.loads((work / "ckpt" / "state.json").read_text())
    entries = [e for e in state["log"] if "step" in e]
    assert set(entries[0]["guide_loss"]) == {"previous", "sink", "induction"}
    assert entries[0]["guide_weight"] == pytest.approx(1 / 3, abs=1e-4)  # step 2 of 3
    assert "guide_loss" not in entries[1]  # steps 3-5: the guide has let go
    assert state["hyperparameters"]["guide_induction"] == "1:1"
