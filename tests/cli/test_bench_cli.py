"""``python -m attention_lab.devtools.bench``: runs on a tiny model and reports every row and field.

No timed assertions: the numbers depend on the machine.  What is checked is that every
row of the performance goals' table is there, with its ratio and verdict (or a note saying why not),
and that bad flags are one line on stderr with exit code 2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ROW_IDS = {
    "forward_attentions",
    "rank_heads_32",
    "edit_update",
    "edit_update_middle",
    "edit_scaling",
    "generate_50",
    "kv_speedup_50",
    "kv_speedup_200",
    "startup",
    "startup_all_panels",
    "gui_stall_edit",
    "gui_stall_first_open",
    "gui_stall_kvbench",
    "gui_stall_long_text",
    "gui_stall_idle_build",
    "gui_stall_rank_heads",
    "gui_stall_generate",
    "peak_memory_32",
    "peak_memory_1024",
}
IN_PROCESS = {"forward_attentions", "rank_heads_32", "edit_update", "edit_update_middle", "edit_scaling", "generate_50",
              "kv_speedup_50", "kv_speedup_200"}
ROW_FIELDS = {"id", "model", "figure", "compared_with", "goal", "unit", "tokens", "ours", "theirs", "ratio",
              "verdict", "note", "ours_samples", "theirs_samples", "details"}
VERDICTS = {"met", "not met", "reported", "skipped", "failed"}


def _bench(*args: str, timeout: float = 850) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "desktop")
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.setdefault("OMP_NUM_THREADS", "1")  # a shared CI box: keep torch from oversubscribing it
    return subprocess.run([sys.executable, "-m", "attention_lab.devtools.bench", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=str(ROOT))


@pytest.fixture(scope="module")
def report(tiny_checkpoint):
    out = _bench("--json", "--quick", "--reps", "1", "--model", str(tiny_checkpoint))
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1, out.stdout[-2000:]  # one JSON object, nothing else on stdout
    return json.loads(lines[0])


def test_every_row_is_reported(report):
    assert {"command", "machine", "settings", "notes", "rows"} <= set(report)
    # which processor: speed figures compare only on one machine (core/machine.py)
    assert {"cpu", "cpu_count", "torch_threads", "load_average"} <= set(report["machine"])
    ids = {row["id"] for row in report["rows"]}
    assert ids == ROW_IDS
    for row in report["rows"]:
        assert set(row) == ROW_FIELDS, row["id"]
        assert row["verdict"] in VERDICTS, row
        assert row["figure"] and row["goal"] and row["model"]
        if row["verdict"] in ("skipped", "failed"):
            assert row["note"], f"{row['id']}: a row that wasn't measured must say why"
        else:
            assert row["ours"] is not None and row["ratio"] is not None, row["id"]
            assert row["ratio"] > 0


def test_in_process_rows_are_measured_side_by_side(report):
    rows = [r for r in report["rows"] if r["id"] in IN_PROCESS]
    for row in rows:
        assert row["verdict"] in ("met", "not met", "reported"), row
        if row["id"].startswith("kv_speedup"):
            assert row["details"]["identical"] is True  # cache and no cache generate the same ids
            assert row["details"]["repetitions"] == 1
            assert row["ratio"] == pytest.approx(row["theirs"] / row["ours"])  # without ÷ with
        else:
            assert len(row["ours_samples"]) == 1  # --quick: exactly --reps runs, no extra ones
            assert len(row["theirs_samples"]) == len(row["ours_samples"])
            ratio = row["theirs"] / row["ours"] if row["id"] == "generate_50" else row["ours"] / row["theirs"]
            assert row["ratio"] == pytest.approx(ratio)
    generate = next(r for r in rows if r["id"] == "generate_50")
    assert generate["details"]["identical_to_transformers"] is True  # same greedy tokens as transformers
    scaling = [r for r in rows if r["id"] == "edit_scaling"]
    assert [r["tokens"] for r in scaling] == sorted(r["tokens"] for r in scaling) and len(scaling) >= 2
    assert report["settings"]["reps"] == 1 and report["settings"]["quick"] is True


def test_memory_rows_compare_with_the_weights(report):
    for row in (r for r in report["rows"] if r["id"].startswith("peak_memory")):
        if row["verdict"] in ("met", "not met"):
            assert row["unit"] == "MB"
            assert row["ours"] > row["theirs"] > 0  # the process holds at least its weights
            assert row["details"]["peak_mb"] == row["ours"]


def test_text_table_lists_every_row(report):
    from attention_lab.devtools.bench import render_text

    text = render_text(report)
    table = [line for line in text.splitlines() if line.startswith("| ")]
    assert table[0].startswith("| figure |")
    assert len(table) == 1 + len(report["rows"])
    for line, row in zip(table[1:], report["rows"]):
        assert row["verdict"] in line and row["goal"] in line


def test_the_app_command_line_has_no_bench():
    """The bench is a developer's tool: the installed app's command line doesn't offer it."""
    from attention_lab import app

    assert app.SUBCOMMANDS == ("lab",)
    assert "bench" not in app.build_parser().format_help()


@pytest.mark.parametrize(
    "args, expected",
    [
        (["--reps", "0"], "--reps"),
        (["--reps", "many"], "--reps"),
        (["--skip", "everything"], "--skip"),
        (["--threads", "0"], "--threads"),
        (["--no-such-flag"], "unrecognized"),
        (["--model", "/no/such/folder/anywhere"], "/no/such/folder"),  # the one case that loads torch
    ],
)
def test_bad_flags_are_one_line_and_exit_2(args, expected):
    out = _bench(*args, "--quick", timeout=600)
    assert out.returncode == 2, (out.returncode, out.stderr)
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and expected in lines[0], out.stderr
    assert "Traceback" not in out.stderr
    assert out.stdout == ""


def test_gui_stall_rows_for_chosen_phases(tiny_checkpoint, monkeypatch):
    """The bench asks the stall probe for the phases it wants (the GPT-2-small-shaped model
    gets the edit and the context-long text) and reports exactly those rows."""
    from attention_lab.devtools import bench

    monkeypatch.setenv("PYTHONPATH", str(ROOT / "desktop"))
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    rows = bench.bench_gui_stalls(str(tiny_checkpoint), "tiny", bench.Settings(reps=1, quick=True),
                                  phases=("edit", "tabs", "long_text", "idle_build", "rank_heads", "generate"))
    assert [r.id for r in rows] == ["gui_stall_edit", "gui_stall_first_open", "gui_stall_long_text", "gui_stall_idle_build",
                                     "gui_stall_rank_heads", "gui_stall_generate"]
    for row in rows:
        assert row.verdict in ("met", "not met"), row.note
        assert len(row.ours_samples) == 1 and row.ours == max(row.ours_samples) > 0
        assert "median of 1 probe run" in row.note
        assert isinstance(row.details["top_handlers"], list)
    # every panel behind a tab was opened for the first time, and its stall measured
    opened = {"panel.kvbench", "panel.mask", "panel.portrait", "panel.shapes", "panel.mask_designer", "panel.knockout",
              "panel.generate"}
    assert set(rows[1].details["first_open_ms"]) == set(rows[1].details["first_open_cpu_ms"]) == opened
    assert rows[3].details["done"] is True  # the tabs' panels were all built in idle time, before the edits
    assert rows[2].details["hover_max_stall_ms"] > 0  # the mouse swept the grid of the long text
    for row in (rows[0], rows[1], rows[2]):  # the busiest turn's CPU beside the stall's wall time
        assert 0 < row.details["per_run_max_cpu_ms"][0] <= row.ours_samples[0] + 1
        assert "CPU in its busiest turn" in row.note
    assert "mouse sweeping" in rows[2].note
    assert 56 <= rows[2].tokens <= 64  # about the tiny model's whole context (decoding may merge a few)


def test_bench_names_the_handlers_that_held_the_gui_thread():
    from attention_lab.devtools.bench import top_handlers

    stalls = [{"ms": 40.0, "handler": "a.paint"}, {"ms": 90.0, "handler": "b.show_state"},
              {"ms": 35.0, "handler": "a.paint"}, {"ms": 34.0, "handler": "c.layout"}, {"ms": 33.5, "handler": "d.x"},
              {"ms": 500.0, "handler": "e.waiting", "off_cpu": True}]  # not the app's work: left out
    assert top_handlers(stalls) == [("b.show_state", 90.0, 1), ("a.paint", 75.0, 2), ("c.layout", 34.0, 1)]


def test_stall_probe_refuses_an_unknown_phase():
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-m", "attention_lab.devtools.perf_probe", "--phases", "edit,typing"],
                         capture_output=True, text=True, timeout=120, env=env, cwd=str(ROOT))
    assert out.returncode == 2 and "typing" in out.stderr


def test_kv_rows_hold_gpt2_shapes_to_the_goals(tiny_checkpoint):
    from attention_lab.devtools import bench
    from attention_lab.core.models import load_model

    model = load_model(tiny_checkpoint)
    for label, goals in ((bench.GPT2_SMALL_LABEL, ["≥ 2, identical outputs", "≥ 4, identical outputs"]),
                         ("another model", ["reported, identical outputs"] * 2)):
        bm = bench.BenchModel(label, str(tiny_checkpoint), tiny_checkpoint, model, measure_memory=False)
        rows = bench.bench_kv(bm, bench.Settings(quick=True))
        assert [r.goal for r in rows] == goals
        for row, goal in zip(rows, (2.0, 4.0)):
            expected = ("met" if row.ratio >= goal else "not met") if label == bench.GPT2_SMALL_LABEL else "reported"
            assert row.verdict == expected
            assert row.details["threads"] == 1
            assert " ms " in row.note  # the growth sentence, in the row's note
