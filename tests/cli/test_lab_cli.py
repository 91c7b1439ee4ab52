"""`attention-lab lab`: the headless lab, its JSON, and one-line errors for bad input."""

from __future__ import annotations

import json
import re
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest
import torch

from attention_lab import app
from attention_lab.core.lab import SEED_TEXT

ROOT = Path(__file__).resolve().parents[2]
LAB_KEYS = {"model", "text", "tokens", "token_ids", "mask", "attention", "leakage", "heads", "kv_cache",
            "kv_stability", "shapes"}


def run_cli(*args: str, extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), HF_HUB_OFFLINE="1")
    # the test machines are shared: one OpenMP thread avoids a ~100× slowdown from contention
    env["OMP_NUM_THREADS"] = "1"
    return subprocess.run(
        [sys.executable, *extra, "-m", "attention_lab", *args],
        capture_output=True, text=True, timeout=300, env=env, cwd=str(ROOT),
    )


@pytest.fixture(scope="module")
def lab_json(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


# ---------------------------------------------------------------------------- the JSON
def test_json_has_every_key_with_the_right_shapes(lab_json):
    d = lab_json
    assert LAB_KEYS <= set(d)
    assert {k: d["model"][k] for k in ("n_layer", "n_head", "n_embd", "n_ctx")} == dict(
        n_layer=2, n_head=12, n_embd=48, n_ctx=64
    )
    assert isinstance(d["model"]["name"], str) and d["model"]["name"]
    assert d["text"] == SEED_TEXT
    n = len(d["token_ids"])
    assert d["tokens"][0] == "The" and d["tokens"][1] == "␣big" and len(d["tokens"]) == n
    assert d["mask"] == [[1 if j <= i else 0 for j in range(n)] for i in range(n)]

    att = d["attention"]
    assert att["layer"] == 0
    for mode in ("causal", "bidirectional"):
        maps = torch.tensor(att[mode])
        assert maps.shape == (12, n, n)
        torch.testing.assert_close(maps.sum(-1), torch.ones(12, n), atol=1e-4, rtol=0)
    causal = torch.tensor(att["causal"])
    assert bool((causal.triu(1) == 0).all())  # the future gets exactly nothing
    assert bool((torch.tensor(att["bidirectional"]).triu(1) > 0).any())


def test_json_leakage_is_the_chapters_claim(lab_json):
    leak, n = lab_json["leakage"], len(lab_json["token_ids"])
    p = leak["position"]
    assert p == n - 1  # default: the last token is replaced
    assert leak["replacement_id"] != lab_json["token_ids"][p]
    assert isinstance(leak["replacement"], str) and leak["replacement"]
    assert len(leak["causal"]) == len(leak["bidirectional"]) == n
    assert leak["causal"][:p] == [0.0] * p  # exactly zero before the edit
    assert min(leak["bidirectional"][:p]) > 1e-4  # clearly not
    assert len(leak["causal_layers"]) == 3


def test_json_heads_cover_every_layer(lab_json):
    heads = lab_json["heads"]
    assert [(h["layer"], h["head"]) for h in heads] == [(l, h) for l in range(2) for h in range(12)]
    keys = {"layer", "head", "mean_distance", "entropy", "sink_mass", "previous_token", "current_token",
            "roles", "entropy_ratio", "induction", "offset", "offset_share"}
    assert all(set(h) == keys for h in heads)  # one role system: the chapter's "roles", no older "role"
    assert all(set(h["roles"]) <= {"positional", "previous-token", "sink", "induction"} for h in heads)
    induction = lab_json["detectors"]["induction"]
    assert all(h["induction"] == induction[h["layer"]][h["head"]] for h in heads)
    summary = lab_json["roles"]
    assert summary["layer"] == 0 and set(summary["where"]) == set(summary["sentences"]) == set(summary["descriptions"])
    for role, found in summary["where"].items():
        in_layer = sorted(h["head"] for h in heads if h["layer"] == 0 and role in h["roles"])
        assert sorted(x["head"] for x in found["here"]) == in_layer


def test_kv_model_agrees_with_the_core():
    from attention_lab.core import kvbench

    assert app.KV_MODELS == kvbench.KV_MODELS


def test_json_kv_cache_and_stability(lab_json):
    kv, n = lab_json["kv_cache"], len(lab_json["token_ids"])
    for key in ("new_tokens", "seconds_with_cache", "seconds_without_cache", "speedup", "identical",
                "generated_ids", "cache_bytes"):
        assert key in kv
    assert kv["new_tokens"] == 50 and len(kv["generated_ids"]) == 50 and kv["identical"] is True
    assert kv["cache_bytes"] == 2 * 2 * 12 * 4 * (n + 50 - 1) * 4
    assert kv["seconds_with_cache"] > 0 and kv["seconds_without_cache"] > 0
    # robust timing: 3 interleaved runs, one thread, each position's minimum
    assert kv["repetitions"] == 3 and kv["threads"] == 1 and len(kv["totals_with_cache"]) == 3
    assert kv["seconds_with_cache"] == pytest.approx(sum(kv["per_token_ms_with_cache"]) / 1e3)
    assert kv["seconds_with_cache"] <= min(kv["totals_with_cache"])
    assert kv["speedup_text"] and kv["growth_text"] and kv["model"]["random_weights"] is False
    assert (kv["speedup"] >= 1.2) == kv["clear"] == ("faster" in kv["speedup_text"])

    st = lab_json["kv_stability"]
    assert st["appended_id"] == kv["generated_ids"][0]  # the next greedy token
    assert len(st["n_vs_n_plus_1_max_per_layer"]) == 2 and max(st["n_vs_n_plus_1_max_per_layer"]) < 1e-5
    for name in ("keys", "values"):
        assert st["causal"][name] == [[0.0] * n] * 2
        assert st["bidirectional"][name][0] == [0.0] * n  # layer 0: token + position only
        assert min(st["bidirectional"][name][1]) > 0
    assert [s["name"] for s in lab_json["shapes"]][:3] == ["h", "c_attn", "Q, K, V"]
    assert lab_json["shapes"][2]["shape"] == [12, n, 4]


def test_json_flags(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--json", "--bos", "--layer", "1", "--position", "2",
                   "--replacement", " cat", "--new-tokens", "3", "--text", "the dog bit")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["tokens"] == ["<|endoftext|>", "the", "␣dog", "␣bit"]
    assert d["attention"]["layer"] == 1
    assert (d["leakage"]["position"], d["leakage"]["replacement"], d["leakage"]["replacement_id"]) == (2, "␣cat", 3797)
    assert d["leakage"]["causal"][:2] == [0.0, 0.0]
    assert d["kv_cache"]["new_tokens"] == 3


# ---------------------------------------------------------------------------- the text
def test_text_mode_prints_the_five_steps(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--new-tokens", "5")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for step in range(1, 6):
        assert f"Step {step}" in out
    lines = out.splitlines()
    mask_top = next(line for line in lines if line.startswith("The ") and "[" in line)
    assert mask_top.split("[")[1].split() == ["1"] + ["."] * 7 + ["]"]
    assert "causal exactly 0" in out
    assert "|" in next(line for line in lines if line.startswith("The ") and "1.00" in line)  # side by side
    assert "Identical tokens in both runs: yes" in out
    # binary sizes are written KiB / MiB, as the app writes them ("KB" reads as 1000 bytes)
    cache = next(line for line in lines if line.startswith("Identical tokens in both runs"))
    assert re.search(r"= \d+\.\d (KiB|MiB)$", cache) and " KB" not in out and " MB" not in out
    assert "RoBERTa-style" not in out and "the same weights" not in out  # the loaded model is named instead
    assert "'s weights, mask removed" in out
    assert "n vs n+1" in out and "floating-point rounding" in out
    assert "The chapter's GPT-2 small splits d = 768 into 12 heads of 64; this model splits 48 into 12 heads of 4" in out
    assert "- previous-token heads" in out and "- induction heads" in out
    assert proc.stderr == ""


def test_text_mode_prints_the_mask_modes_measured(tiny_checkpoint):
    """The chapter's "why −∞ and not zero?" as a table: the future's weight, the leak and the rows'
    sums of each way of hiding the future, with the sentence saying what zeroing after the softmax does."""
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--new-tokens", "3")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Why −∞ and not zero?"))
    rows = {line[:28].strip(): line[28:].split() for line in lines[start + 3:start + 8]}
    assert set(rows) == {"score −∞ (the chapter)", "score = float32's minimum", "score −1e9", "score 0",
                         "0 after the softmax"}
    future, leak, rows_off = rows["0 after the softmax"]
    assert future == "0" and float(leak) > 0 and float(rows_off) > 0.01  # hidden, yet the past moves
    assert rows["score −∞ (the chapter)"][:2] == ["0", "0"]
    assert float(rows["score 0"][0]) > 0  # a score of 0 lets the future in
    assert "yet the earlier positions still change with it" in lines[start + 8]


def test_text_mode_speaks_portuguese(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--new-tokens", "3", "--lang", "pt_BR")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for step in range(1, 6):
        assert f"Passo {step}" in out
    assert "Step " not in out and "Why −∞" not in out
    assert "Texto: 'O cachorro grande mordeu o carteiro ontem'" in out  # the course's sentence by default
    assert "causal exatamente 0" in out and "Tokens idênticos nas duas execuções: sim" in out
    assert "Por que −∞ e não zero?" in out and "0 depois do softmax" in out
    assert "O GPT-2 small da apostila divide d = 768 em 12 cabeças de 64" in out
    assert " KiB" in out and " KB" not in out


def test_json_sentences_speak_the_chosen_language(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--json", "--new-tokens", "3", "--lang", "pt_BR")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    assert d["lang"] == "pt_BR" and d["text"] == "O cachorro grande mordeu o carteiro ontem"
    assert all("cabeça" in sentence for sentence in d["roles"]["sentences"].values())
    assert "sem o cache" in d["kv_cache"]["growth_text"].lower()  # each of its wordings compares both sides
    assert d["kv_cache"]["timing"].startswith("o mínimo de cada posição")


def test_every_lab_text_has_both_languages_with_the_same_blanks():
    import string

    from attention_lab.core.lab_texts import LAB_TEXTS

    def blanks(text: str) -> set[str]:
        return {name for _, name, _, _ in string.Formatter().parse(text) if name}

    for key, table in LAB_TEXTS.items():
        assert set(table) == {"en", "pt_BR"}, key
        assert blanks(table["en"]) == blanks(table["pt_BR"]), key


def test_demo_model_names_its_layer_0_heads_and_its_induction_head():
    proc = run_cli("lab", "--model", "demo", "--json", "--new-tokens", "5")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    where = d["roles"]["where"]
    rules = d["roles"]["rules"]
    for h in d["heads"]:  # the rule, checked on the JSON's own numbers: most weight on one offset back
        assert ("positional" in h["roles"]) is (h["offset"] >= 1 and h["offset_share"] >= rules["positional_share"])
    # the chapter's layer 0: a previous-token head (positional, one back) and a sink
    assert where["positional"]["here"] and where["previous-token"]["here"] and where["sink"]["here"]
    assert d["roles"]["sentences"]["previous-token"].startswith("previous-token heads in layer 0: head ")
    # an induction head, above layer 0 (it needs the previous-token head below it): named where it is
    induction = where["induction"]
    assert induction["here"] == [] and induction["nearest_layer"] >= 1 and induction["nearest"]
    assert f"layer {induction['nearest_layer']} has head " in d["roles"]["sentences"]["induction"]


def test_kv_model_gpt2_shapes_times_random_weights(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--json", "--new-tokens", "2", "--kv-model", "gpt2-shapes")
    assert proc.returncode == 0, proc.stderr
    d = json.loads(proc.stdout)
    kv = d["kv_cache"]
    assert kv["model"]["random_weights"] is True and "gibberish" in kv["model"]["note"]
    assert (kv["n_layer"], kv["n_head"], kv["head_dim"]) == (12, 12, 64)
    n = len(d["token_ids"])  # the tiny checkpoint has GPT-2's tokenizer: the same prompt
    assert kv["cache_bytes"] == 2 * 12 * 12 * 64 * (n + 1) * 4
    assert d["kv_stability"]["causal_max_per_layer"] == [0.0, 0.0]  # still measured on the loaded model


def test_lab_imports_neither_qt_nor_transformers(tiny_checkpoint):
    proc = run_cli("lab", "--model", str(tiny_checkpoint), "--new-tokens", "2", "--json", extra=("-X", "importtime"))
    assert proc.returncode == 0
    imported = {line.split("|")[-1].strip().split(".")[0] for line in proc.stderr.splitlines() if "|" in line}
    assert "torch" in imported  # the import log is really there
    assert not {"PySide6", "shiboken6", "pyqtgraph", "transformers"} & imported


# ---------------------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def corrupt_checkpoint(tiny_checkpoint, tmp_path_factory):
    folder = tmp_path_factory.mktemp("corrupt")
    for f in tiny_checkpoint.iterdir():
        shutil.copy(f, folder / f.name)
    (folder / "model.safetensors").write_bytes(b"\x00\x01 not a safetensors file" * 10)
    return folder


@pytest.fixture(scope="module")
def no_weights_checkpoint(tiny_checkpoint, tmp_path_factory):
    folder = tmp_path_factory.mktemp("no-weights")
    for f in tiny_checkpoint.iterdir():
        if f.suffix != ".safetensors":
            shutil.copy(f, folder / f.name)
    return folder


BAD_INPUTS = {  # flags -> what the one line must mention
    "empty text": (["--text", ""], "empty"),
    "whitespace text": (["--text", " \n\t "], "empty"),
    "too long text": (["--text", "word " * 80], "context holds 64"),
    "no room for new tokens": (["--new-tokens", "60"], "--new-tokens 56 or less"),
    "zero new tokens": (["--new-tokens", "0"], "at least 1"),
    "position out of range": (["--position", "8"], "position 8 is out of range"),
    "negative position out of range": (["--position", "-9"], "position -9 is out of range"),
    "replacement of two tokens": (["--replacement", "tomorrow"], "2 tokens"),
    "empty replacement": (["--replacement", ""], "empty"),
    "replacement equal to the original": (["--replacement", " yesterday"], "already at that position"),
    "layer out of range": (["--layer", "2"], "layer 2 is out of range"),
    "head out of range": (["--head", "12"], "head 12 is out of range"),
    "layer not a number": (["--layer", "one"], "--layer: invalid int"),
    "position not a number": (["--position", "1.5"], "--position: invalid int"),
    "unknown flag": (["--colour"], "unrecognized arguments: --colour"),
    "unknown language": (["--lang", "fr"], "invalid choice: 'fr'"),
}


@pytest.mark.parametrize("name", list(BAD_INPUTS))
def test_bad_input_is_one_line_and_exit_2(name, tiny_checkpoint, capsys):
    flags, expected = BAD_INPUTS[name]
    rc = app.main(["lab", "--model", str(tiny_checkpoint), *flags])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert expected in err


@pytest.mark.parametrize("which", ["unknown model", "missing folder", "corrupt weights", "no weights"])
def test_bad_models_are_one_line_and_exit_2(which, tmp_path, corrupt_checkpoint, no_weights_checkpoint, capsys):
    spec, expected = {
        "unknown model": ("no-such-model-anywhere", "no-such-model-anywhere"),
        "missing folder": (str(tmp_path / "nothing-here"), "nothing-here"),
        "corrupt weights": (str(corrupt_checkpoint), "model.safetensors"),
        "no weights": (str(no_weights_checkpoint), "weights"),
    }[which]
    rc = app.main(["lab", "--model", spec])
    out, err = capsys.readouterr()
    assert rc == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert expected in err


def test_default_model_missing_demo_is_exit_2(tmp_path, monkeypatch, capsys):
    from attention_lab.core import models

    monkeypatch.setattr(models, "default_model_spec", lambda: "demo")
    monkeypatch.setattr(models, "demo_model_dir", lambda: tmp_path / "no-demo-model")
    rc = app.main(["lab"])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "demo model" in err


@pytest.mark.parametrize(
    "args",
    [
        ["lab", "--model", "{ckpt}", "--text", "   "],
        ["lab", "--model", "{ckpt}", "--layer", "x"],
        ["lab", "--model", "{corrupt}"],
        ["lab", "--model", "{ckpt}", "--replacement", " the mailman"],
    ],
    ids=["whitespace", "bad-type", "corrupt", "replacement"],
)
def test_bad_input_through_the_real_command(args, tiny_checkpoint, corrupt_checkpoint):
    args = [a.format(ckpt=tiny_checkpoint, corrupt=corrupt_checkpoint) for a in args]
    proc = run_cli(*args)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_unexpected_errors_are_one_line_and_exit_1(tiny_checkpoint, monkeypatch, capsys):
    from attention_lab.core import lab

    def boom(*args, **kwargs):
        raise RuntimeError("something\nbroke")

    monkeypatch.setattr(lab, "run_lab", boom)
    rc = app.main(["lab", "--model", str(tiny_checkpoint)])
    err = capsys.readouterr().err
    assert rc == 1 and err.strip() == "attention-lab: internal error: RuntimeError: something broke"


# ---------------------------------------------------------------------------- the GUI path
def test_without_subcommand_the_gui_starts(monkeypatch):
    calls = []
    fake = types.ModuleType("attention_lab.ui.launch")
    fake.run_gui = lambda argv: calls.append(argv) or 0
    monkeypatch.setitem(sys.modules, "attention_lab.ui.launch", fake)
    assert app.main([]) == 0
    assert app.main(["--model", "demo"]) == 0
    assert calls == [[], ["--model", "demo"]]


def test_gui_missing_is_one_line_and_exit_1(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "attention_lab.ui.launch", None)  # import fails
    assert app.main([]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and err.startswith("attention-lab:")


def test_version_and_help(capsys):
    with pytest.raises(SystemExit) as exc:
        app.main(["--version"])
    assert exc.value.code == 0 and "attention-lab" in capsys.readouterr().out
    with pytest.raises(SystemExit) as exc:
        app.main(["lab", "--help"])
    assert exc.value.code == 0 and "--replacement" in capsys.readouterr().out


def test_help_lists_the_windows_own_options(capsys):
    """``attention-lab --help`` is where a learner looks for ``--lang``: the window's options are
    listed there, the same list the window parses."""
    import argparse

    from attention_lab.ui import launch

    with pytest.raises(SystemExit) as exc:
        app.main(["--help"])
    out = capsys.readouterr().out
    assert exc.value.code == 0
    window = argparse.ArgumentParser()
    app.add_window_arguments(window)
    flags = [a.option_strings[0] for a in window._actions if a.option_strings and a.option_strings[0] != "-h"]
    assert {"--lang", "--model", "--settings", "--smoke-test", "--screenshot", "--size"} <= set(flags)
    assert all(flag in out for flag in flags)
    assert launch._parse(["--lang", "pt_BR", "--size", "1366x768"]).lang == "pt_BR"


@pytest.mark.parametrize("position, replacement", [(None, None), (2, " cat"), (0, None)])
def test_lab_numbers_are_the_apps_pipeline(tiny_checkpoint, position, replacement):
    """Steps 1-4 of the lab are what the app's panels show for the same text, layer, position
    and replacement: the same function computes them (core.pipeline.compute_analysis), the
    default replacement included; the detectors read every layer of that same causal pass."""
    from attention_lab.core.analysis import duplicate_token_scores, previous_token_scores
    from attention_lab.core.lab import run_lab
    from attention_lab.core.models import load_model
    from attention_lab.core.pipeline import AnalysisRequest, compute_analysis

    model = load_model(str(tiny_checkpoint))
    text = "the dog bit the man and the dog ran"
    result = run_lab(model, text, layer=1, position=position, replacement=replacement, new_tokens=2, repetitions=1)
    leak = result["leakage"]
    asked = None if replacement is None else leak["replacement_id"]
    state = compute_analysis(model, AnalysisRequest(request_id=1, text=text, layer=1, position=position,
                                                    replacement_id=asked))
    assert result["token_ids"] == state.ids and leak["position"] == state.position
    assert leak["replacement_id"] == state.replacement_id  # the default: the pipeline's best other guess
    rounded = lambda t: torch.round(t.double(), decimals=6).tolist()  # noqa: E731 -- the JSON's rounding
    assert result["attention"]["causal"] == rounded(state.attention_causal)
    assert result["attention"]["bidirectional"] == rounded(state.attention_bidirectional)
    for name in ("causal", "bidirectional", "causal_layers", "bidirectional_layers"):
        assert leak[name] == getattr(state.leakage, name).tolist(), name
    assert [(h["layer"], h["head"], h["entropy"], h["mean_distance"], h["sink_mass"]) for h in result["heads"]] == [
        (h.layer, h.head, h.entropy, h.mean_distance, h.sink_mass) for h in state.overview
    ]
    assert [s["name"] for s in result["shapes"]] == [r.name for r in state.shapes]
    full = model.lens(state.ids, causal=True, keep_attentions=True, compute_logits=False)
    for index, attn in enumerate(full.attentions):
        torch.testing.assert_close(torch.tensor(result["detectors"]["previous_token"][index]),
                                   previous_token_scores(attn[0]), atol=1e-6, rtol=0, check_dtype=False)
        torch.testing.assert_close(torch.tensor(result["detectors"]["duplicate_token"][index]),
                                   duplicate_token_scores(attn[0], state.ids), atol=1e-6, rtol=0, check_dtype=False)


def test_a_one_layer_model_is_not_promised_a_layer_1(tmp_path):
    """The K/V leak shows from the second layer on; a one-layer model has none, and the text says so."""
    from checkpoints import make_checkpoint

    folder = make_checkpoint(tmp_path / "one-layer", n_layer=1)
    proc = run_cli("lab", "--model", str(folder), "--new-tokens", "3")
    assert proc.returncode == 0, proc.stderr
    assert "from layer 1 on" not in proc.stdout and "this model has a single layer" in proc.stdout
