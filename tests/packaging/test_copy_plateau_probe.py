"""The copy-plateau probe: its rows mark exactly the tokens only copying predicts, its head
measure finds a head that attends where an induction head does, and a short run prints its lines."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "packaging") not in sys.path:
    sys.path.insert(0, str(ROOT / "packaging"))

import copy_plateau_probe as probe  # noqa: E402


def _rows(layout: str, **extra):
    args = probe.parse(["--layout", layout, "--batch", "6", "--seq", "64", "--vocab", "5000", *extra.get("argv", [])])
    return probe.make_rows(args, torch.Generator().manual_seed(3))


@pytest.mark.parametrize("layout", ["twice", "half", "alphabet", "spread"])
def test_a_copyable_token_repeats_the_token_one_segment_back_and_only_copies_are_marked(layout):
    rows, copyable = _rows(layout)
    assert copyable.any()
    for r in range(rows.shape[0]):
        row = rows[r].tolist()
        for i in torch.nonzero(copyable[r]).flatten().tolist():
            # the previous token occurred before, and what followed it then is this token
            before = [j for j in range(i - 1) if row[j] == row[i - 1]]
            assert before and any(row[j + 1] == row[i] for j in before), (r, i)
        # a second copy's first token is not predictable from the row: never marked
        if layout == "half":
            assert not copyable[r, 32] and copyable[r, 33:64].all() and not copyable[r, :32].any()


def test_period2_marks_the_tokens_after_each_snippets_first_pair():
    rows, copyable = _rows("period2")
    for r in range(rows.shape[0]):
        for i in torch.nonzero(copyable[r]).flatten().tolist():
            assert rows[r, i] == rows[r, i - 2]
    assert not copyable[:, :2].any()


def test_mix_alternates_period2_and_copy_rows():
    rows, copyable = _rows("mix")
    assert (rows[0, 2:4] == rows[0, 0:2]).all() and copyable[0, 2]  # a period-2 row starts "A B A B"
    length = int(torch.nonzero(copyable[1])[0]) - 1  # a copy row: its first segment, then the segment again
    assert length >= 8 and (rows[1, length : 2 * length] == rows[1, :length]).all() and not copyable[1, 2]


def test_spread_rows_say_segments_again_at_distances_that_vary():
    rows, copyable = _rows("spread", argv=["--seq", "128", "--seg-min", "3", "--seg-max", "6", "--gap-max", "40"])
    distances = set()
    for r in range(rows.shape[0]):
        row = rows[r].tolist()
        for i in torch.nonzero(copyable[r]).flatten().tolist():
            distances.add(min(i - j for j in range(i - 1) if row[j] == row[i - 1] and row[j + 1] == row[i]))
    assert len(distances) > 8 and max(distances) > 20  # no one distance back pays: only "what followed it"


def test_mix_spread_alternates_period2_and_spread_rows_and_scores_the_spread_ones():
    rows, copyable = _rows("mix-spread")
    assert (rows[0, 2:4] == rows[0, 0:2]).all() and copyable[0, 2]
    first = int(torch.nonzero(copyable[1])[0])
    assert any(rows[1, j] == rows[1, first - 1] and rows[1, j + 1] == rows[1, first] for j in range(first - 1))


def test_attn_only_models_add_nothing_from_their_mlps_and_init_range_sets_the_weights_scale():
    argv = ["--layers", "2", "--embd", "32", "--heads", "4", "--vocab", "50", "--seq", "16"]
    plain, wide = probe.make_model(probe.parse(argv)), probe.make_model(probe.parse(argv + ["--init-range", "0.1"]))
    assert 0.08 < float(wide.transformer.wte.weight.detach().std()) < 0.12 and float(plain.transformer.wte.weight.detach().std()) < 0.03
    model = probe.make_model(probe.parse(argv + ["--attn-only"]))
    ids = torch.randint(0, 50, (1, 16))
    before = model(input_ids=ids).logits
    with torch.no_grad():
        for block in model.transformer.h:
            block.ln_2.weight.mul_(3.0)  # the MLP's input: no effect once the MLP is gone
    assert torch.equal(model(input_ids=ids).logits, before)


def test_an_alphabet_row_holds_its_own_few_tokens_only():
    rows, _ = _rows("alphabet", argv=["--alphabet", "5"])
    alphabets = [set(row.tolist()) for row in rows]
    assert all(len(a) <= 5 for a in alphabets) and len({frozenset(a) for a in alphabets}) > 1


def test_segment_vocab_draws_from_the_first_ids_only():
    rows, _ = _rows("twice", argv=["--segment-vocab", "30"])
    assert int(rows.max()) < 30


def test_the_head_measure_scores_an_attention_that_looks_where_induction_looks():
    """A model whose every head attends to the token after the previous occurrence scores 1."""
    args = probe.parse(["--layers", "1", "--embd", "16", "--heads", "2", "--vocab", "60", "--seq", "64"])
    model = probe.make_model(args)
    half = 20

    class Ideal(torch.nn.Module):  # stands in for GPT-2: the attention an induction head would have
        config = model.config

        def eval(self):
            return self

        def train(self, mode=True):
            return self

        def forward(self, input_ids, output_attentions):
            n = input_ids.shape[1]
            att = torch.zeros(1, 2, n, n)
            att[0, :, 0, 0] = 1.0
            for i in range(1, n):
                j = i - half + 1 if i > half else i - 1  # second copy: after the first occurrence; else i-1
                att[0, :, i, j] = 1.0
            return type("Out", (), {"attentions": (att,)})()

    found = probe.best_heads(Ideal(), 60, half)
    assert found["induction"]["score"] == pytest.approx(1.0)
    assert found["previous_token"]["score"] == pytest.approx(half / (2 * half - 1), abs=1e-3)
    assert found["duplicate_token"]["score"] == pytest.approx(0.0)  # not the first occurrence itself


def test_a_short_run_prints_the_plateau_and_its_measured_lines_and_saves_its_model(capsys, tmp_path):
    argv = ["--layers", "1", "--embd", "24", "--heads", "2", "--vocab", "40", "--batch", "2", "--seq", "24",
            "--seg-min", "3", "--seg-max", "6", "--steps", "200", "--measure-every", "200",
            "--save", str(tmp_path / "model")]
    assert probe.main(argv) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert lines[0]["plateau"] == pytest.approx(3.689, abs=1e-3)  # ln 40
    assert [line["step"] for line in lines[1:]] == [100, 200]
    last = lines[-1]
    assert 0.0 < last["copy_loss"] < 10.0
    assert 0.0 <= last["induction"]["score"] <= 1.0 and len(last["induction"]["layer_head"]) == 2
    assert 0.0 <= last["duplicate_token"]["score"] <= 1.0
    from transformers import GPT2LMHeadModel

    saved = GPT2LMHeadModel.from_pretrained(str(tmp_path / "model"))
    assert saved.config.vocab_size == 40 and (tmp_path / "model" / "model.safetensors").is_file()
