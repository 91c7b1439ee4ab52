"""Bad input through ``attention-lab lab``: one stderr line, exit 2, never a traceback.

Adds to tests/cli/test_lab_cli.py (which has empty/whitespace/too-long text, position and
layer out of range, non-numeric --layer/--position, several-token and empty replacements,
zero new tokens, unknown/missing/corrupt models); nothing here repeats those.  Odd but
valid input (emoji only, NUL, CJK, RTL…) must simply work: exit 0.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from attention_lab import app

ROOT = Path(__file__).resolve().parents[2]

BAD_FLAGS = {  # flags -> a piece of the one line
    "layer -1": (["--layer", "-1"], "layer -1 is out of range"),
    "layer huge": (["--layer", "9" * 30], "is out of range"),
    "layer with underscores (int() reads 1_000)": (["--layer", "1_000"], "layer 1000 is out of range"),
    "layer in Arabic-Indic digits": (["--layer", "٣"], "layer 3 is out of range"),
    "layer empty": (["--layer", ""], "--layer: invalid int value"),
    "layer float": (["--layer", "0.0"], "--layer: invalid int value"),
    "layer missing its value": (["--layer"], "--layer: expected one argument"),
    "head -1": (["--head", "-1"], "head -1 is out of range"),
    "head not a number": (["--head", "x"], "--head: invalid int value"),
    "position huge": (["--position", "99999999999999999999"], "is out of range"),
    "position hugely negative": (["--position", "-99999999999999999999"], "is out of range"),
    "position empty": (["--position", ""], "--position: invalid int value"),
    "new tokens -5": (["--new-tokens", "-5"], "at least 1, got -5"),
    "new tokens huge": (["--new-tokens", "9" * 30], "exceed the context of 64"),
    "new tokens abc": (["--new-tokens", "abc"], "--new-tokens: invalid int value: 'abc'"),
    "new tokens 1e3": (["--new-tokens", "1e3"], "--new-tokens: invalid int value"),
    "new tokens 5.0": (["--new-tokens", "5.0"], "--new-tokens: invalid int value"),
    "bos pushes past the context": (["--bos", "--text", "a", "--new-tokens", "63"], "--new-tokens 62 or less"),
    "text of 200,000 characters": (["--text", "x" * 200_000], "context holds 64"),
    "text starting with a dash": (["--text", "-x"], "--text: expected one argument"),
    "text of Unicode spaces only": (["--text", "\u3000\u2003\x1c\x85"], "empty"),
    "replacement of emoji (2 tokens)": (["--replacement", "👋"], "is 2 tokens"),
    "replacement missing its leading space": (["--replacement", "however"], "' however' (with a leading space) is one token"),
    "replacement of NUL + text": (["--replacement", "\x00abc"], "tokens"),
    "replacement given twice as nothing": (["--replacement"], "--replacement: expected one argument"),
    "bos with a value": (["--bos=yes"], "--bos: ignored explicit argument"),
    "json with a value": (["--json=1"], "--json: ignored explicit argument"),
    "unknown sub-flag": (["--layers", "1", "--layre", "2"], "unrecognized arguments"),
    "positional argument": (["extra"], "unrecognized arguments: extra"),
}

BAD_MODELS = {  # --model value -> a piece of the one line (the marker file must never appear)
    "empty": ("", "no model given"),
    "spaces": ("   ", "no model given"),
    "a file instead of a folder": ("{file}", "is not a folder"),
    "config.json picked instead of its folder, in a folder without weights": ("{lone_config}", "no weights"),
    "/dev/null": ("/dev/null", "is not a folder"),
    "NUL in the path": ("/tmp/a\x00b", "NUL character"),
    "home of an unknown user": ("~nosuchuser-attention-lab/model", "not found"),
    "a name too long for the file system": ("x" * 5000, "File name too long"),
    "a path too long": ("/" + "y/" * 3000, "can't open"),
    "a URL": ("https://huggingface.co/gpt2", "not found"),
    "shell substitution": ("$(touch {marker})", "neither an existing folder nor a model id"),
    "backticks": ("`touch {marker}`", "neither an existing folder nor a model id"),
    "command separator": ("gpt2; touch {marker}", "neither an existing folder nor a model id"),
    "pipe": ("gpt2 | touch {marker}", "neither an existing folder nor a model id"),
    "hub id with traversal": ("../../gpt2", "not found"),
    "hub id with three parts": ("a/b/c", "not found"),
    "hub id not cached": ("someone/some-model", "not in the local Hugging Face cache"),
}

ODD_BUT_VALID = {  # --text -> exit 0
    "emoji only": "👋🎉🙂",
    "family emoji (ZWJ sequence)": "👨‍👩‍👧",
    "NUL inside": "a\x00b",
    "NUL only": "\x00",
    "CJK": "日本語のテキスト",
    "combining accents": "e\u0301a\u0308\u0301",
    "right-to-left with an override": "שלום \u202eabc",
    "control characters": "\x07\x1b[31mred\x1b[0m",
    "lone surrogate": "\ud800x",
    "the end-of-text token typed in": "<|endoftext|>",
    "one token": "a",
    "a text that starts with a dash (glued form)": "=-x",
}


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = app.main(argv)
    return rc, out.getvalue(), err.getvalue()


def assert_one_line_exit_2(rc: int, out: str, err: str, expected: str) -> None:
    assert rc == 2, err
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and err.startswith("attention-lab") and "Traceback" not in err, err
    assert expected in err, err


@pytest.mark.parametrize("name", list(BAD_FLAGS))
def test_bad_flag_is_one_line_and_exit_2(name, tiny_checkpoint, tally):
    tally["bad input", "lab flags with a wrong type or value"] += 1
    flags, expected = BAD_FLAGS[name]
    rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), *flags])
    assert_one_line_exit_2(rc, out, err, expected)


@pytest.mark.parametrize("name", list(BAD_MODELS))
def test_bad_model_spec_is_one_line_and_exit_2(name, tmp_path, monkeypatch, tally):
    tally["bad input", "lab --model values"] += 1
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "downloads"))
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "marker"  # named relative to the working folder: "touch marker"
    (tmp_path / "a-file.txt").write_text("not a model")
    (tmp_path / "lone").mkdir()
    (tmp_path / "lone" / "config.json").write_text(json.dumps({"model_type": "gpt2"}))
    spec, expected = BAD_MODELS[name]
    spec = spec.format(file=tmp_path / "a-file.txt", lone_config=tmp_path / "lone" / "config.json", marker="marker")
    rc, out, err = run_main(["lab", "--model", spec, "--new-tokens", "2"])
    assert_one_line_exit_2(rc, out, err, expected)
    assert not marker.exists()  # the spec never reached a shell


@pytest.mark.parametrize("name", list(ODD_BUT_VALID))
def test_odd_but_valid_text_works(name, tiny_checkpoint, tally):
    tally["bad input", "odd but valid texts (must work)"] += 1
    text = ODD_BUT_VALID[name]
    text_args = [f"--text{text}"] if text.startswith("=") else ["--text", text]
    rc, out, err = run_main(["lab", "--model", str(tiny_checkpoint), "--json", "--new-tokens", "3", *text_args])
    assert (rc, err) == (0, "")
    result = json.loads(out)
    assert result["text"] == text.removeprefix("=")
    assert len(result["tokens"]) == len(result["token_ids"]) >= 1
    assert result["kv_cache"]["identical"] is True


@pytest.mark.parametrize("mode", ["--json", "text"])
def test_text_that_is_not_utf8_in_argv(mode, tiny_checkpoint, tally):
    """Bytes that aren't UTF-8 reach Python as lone surrogates; the output stays valid UTF-8.

    Run for real, with a strict stdout (PYTHONIOENCODING=utf-8): before the fix ``--json`` was
    exit 1 (UnicodeEncodeError), and with the default stdout it wrote a raw 0xFF byte: not UTF-8.
    """
    tally["bad input", "text with bytes that aren't UTF-8 (real process)"] += 1
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1",
               PYTHONIOENCODING="utf-8")
    args = [os.fsencode(sys.executable), b"-m", b"attention_lab", b"lab", b"--model", os.fsencode(tiny_checkpoint),
            b"--new-tokens", b"2", b"--text", b"ab\xffcd"] + ([b"--json"] if mode == "--json" else [])
    proc = subprocess.run(args, capture_output=True, timeout=300, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    assert proc.stderr == b""
    out = proc.stdout.decode("utf-8")  # strict: the output is valid UTF-8
    if mode == "--json":
        assert json.loads(out)["text"] == "ab\udcffcd"  # kept, as an escape: lossless
    else:
        assert "Step 5" in out
