"""The soak's ``--actions`` (draw from some actions only, or leave some out: bisecting memory
growth by action kind) and ``--log`` (every action with its arguments, one JSON line)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from attention_lab.devtools.soak import STALL_GOAL_MS, TRACE_MS, chosen_actions

ACTIONS = {"type_text": {}, "set_causal": {}, "export": {}, "download": {}}
DESKTOP = Path(__file__).resolve().parents[2] / "desktop"


def run_python(*arguments: str, platform: str = "offscreen", timeout: float = 300) -> subprocess.CompletedProcess:
    """``python ARGUMENTS`` with the app importable, on Qt platform ``platform``."""
    env = dict(os.environ, QT_QPA_PLATFORM=platform, PYTHONPATH=str(DESKTOP))
    return subprocess.run([sys.executable, *arguments], check=False, env=env, capture_output=True, text=True, timeout=timeout)


def test_actions_all_listed_or_all_but_listed():
    assert chosen_actions("", ACTIONS) == ["download", "export", "set_causal", "type_text"]
    assert chosen_actions("set_causal, type_text", ACTIONS) == ["set_causal", "type_text"]
    assert chosen_actions("-download,export", ACTIONS) == ["set_causal", "type_text"]


def test_a_typo_or_nothing_left_is_an_error_not_a_silent_run_of_everything():
    with pytest.raises(SystemExit, match="unknown actions: set_casual"):
        chosen_actions("set_casual", ACTIONS)
    with pytest.raises(SystemExit, match="leaves no action"):
        chosen_actions("-type_text,set_causal,export,download", ACTIONS)


def test_the_log_holds_every_action_drawn_with_its_arguments(tmp_path: Path):
    log = tmp_path / "actions.jsonl"
    done = run_python("-m", "attention_lab.devtools.soak", "--minutes", "0.08", "--sample-s", "1", "--warmup-min", "0",
                      "--actions", "set_causal,set_head", "--out", str(tmp_path / "report"), "--log", str(log))
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    report = json.loads((tmp_path / "report" / "soak.json").read_text(encoding="utf-8"))
    assert lines and [entry["step"] for entry in lines] == list(range(1, len(lines) + 1))
    assert len(lines) == report["summary"]["steps"]  # every action, none twice
    assert {entry["action"] for entry in lines} <= {"set_causal", "set_head"}
    assert report["summary"]["actions_drawn"] == ["set_causal", "set_head"]
    assert report["summary"]["screen"] == [1366, 768]  # the learner's laptop by default, not Qt's 800×800
    for entry in lines:  # the arguments the driver was called with, to replay the step
        assert set(entry["arguments"]) == ({"causal"} if entry["action"] == "set_causal" else {"head"})
        assert entry["rss_mb"] > 0 and entry["t_s"] >= 0
        # the action's longest stall and its CPU time; the handler only when it was traced (over TRACE_MS)
        assert entry["stall_ms"] >= 0 and entry["cpu_ms"] >= 0 and entry["startup"] is False
        assert ("handler" in entry) == ("hot_spot" in entry) and (entry["stall_ms"] >= TRACE_MS or "handler" not in entry)  # (rounded to 0.1 ms: 50.04 → 50.0)
    over_goal = [entry for entry in lines if entry["stall_ms"] > STALL_GOAL_MS and not entry["startup"]]
    assert report["summary"]["stalls_over_goal"] == len(over_goal)
    assert sum(report["summary"]["over_goal_by_action"].values()) == len(over_goal)
    if sys.platform.startswith("linux"):  # each sample says what the C heap holds (in use, kept, mapped)
        assert report["samples"] and all(s["heap_in_use_mb"] > 0 and "heap_free_mb" in s for s in report["samples"])


@pytest.mark.parametrize("screen", ["laptop", "desktop"])
def test_the_soak_screen_holds_every_size_its_learner_resizes_to(tmp_path: Path, screen: str):
    """Qt's offscreen screen is 800×800: every Reset layout shrank the soak's window to it (a relayout
    and repaint of every dock no learner gets, then the next resize did it all again).
    Each of the soak's screens holds every size its learner resizes to (widths and heights drawn apart)."""
    script = (
        "import itertools, sys; from pathlib import Path\n"
        "from PySide6.QtWidgets import QApplication, QMainWindow\n"
        "from attention_lab.devtools.soak import screen_sizes\n"
        f"sizes = screen_sizes({screen!r})\n"
        "from attention_lab.ui.window_settings import fit_to_screen\n"
        "app = QApplication([])\n"
        "window = QMainWindow(); window.move(0, 0); window.show()\n"
        "for size in itertools.product([w for w, _ in sizes], [h for _, h in sizes]):\n"
        "    window.resize(*size); app.processEvents()\n"
        "    assert not fit_to_screen(window), (size, app.primaryScreen().availableGeometry())\n"
        "    assert window.size().toTuple() == size\n"
        "print('ok', app.primaryScreen().size().toTuple())\n")
    from attention_lab.devtools.soak import SCREENS, offscreen_platform

    platform = offscreen_platform("offscreen", tmp_path, SCREENS[screen])
    done = run_python("-c", script, platform=platform, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert f"ok {SCREENS[screen]}" in done.stdout
    # a platform given by whoever runs the soak (a display, offscreen with its own options) is theirs
    assert offscreen_platform("xcb", tmp_path) == "xcb"
    assert offscreen_platform("offscreen:size=1x1", tmp_path) == "offscreen:size=1x1"


@pytest.mark.parametrize(("screen", "size"), [("laptop", [1366, 768]), ("desktop", [1920, 1200])])
def test_the_learner_resizes_to_the_sizes_of_the_screen_chosen_and_the_report_names_the_machine(tmp_path: Path, screen, size):
    """``--screen``: the soak's window starts at, and is resized to, sizes of the chosen screen (the laptop's
    by default); the report says which screen and which processor, and how fast it painted the whole window
    (stall figures compare only on one machine)."""
    from attention_lab.devtools.soak import screen_sizes

    sizes = screen_sizes(screen)
    log = tmp_path / "actions.jsonl"
    done = run_python("-m", "attention_lab.devtools.soak", "--minutes", "0.05", "--sample-s", "1", "--warmup-min", "0",
                      "--actions", "resize", "--screen", screen, "--out", str(tmp_path / "report"), "--log", str(log))
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads((tmp_path / "report" / "soak.json").read_text(encoding="utf-8"))["summary"]
    assert summary["screen"] == size and summary["screen_choice"] == screen
    assert summary["cpu_count"] >= 1 and isinstance(summary["cpu"], str) and summary["full_window_paint_ms"] > 0
    drawn = [json.loads(line)["arguments"] for line in log.read_text(encoding="utf-8").splitlines()]
    assert drawn and all(a["width"] in {w for w, _ in sizes} and a["height"] in {h for _, h in sizes} for a in drawn)


#: run in the soak's process: after each collection a new window or model's first drawing makes,
#: how many main windows are still alive (gc_pause.collect_on_switch wrapped, as gc_timing wraps it)
_COUNT_WINDOWS_AT_EACH_SWITCH = """
import gc, json, sys
from attention_lab.devtools import soak
from attention_lab.ui import gc_pause
from attention_lab.ui.main_window import MainWindow
alive, original = [], gc_pause.collect_on_switch
def counted(key):
    collected = original(key)
    if collected:
        alive.append(sum(isinstance(o, MainWindow) for o in gc.get_objects()))
    return collected
gc_pause.collect_on_switch = counted
code = soak.main(sys.argv[2:])
open(sys.argv[1], "w").write(json.dumps(alive))
sys.exit(code)
"""


def test_a_closed_window_is_freed_by_the_new_windows_first_collection_not_a_later_model_switch(tmp_path: Path):
    """The soak's loop kept the window an action started in until the next action, so
    "quit and start again" left the closed window alive through the new window's first collection;
    it was freed by the next model switch's instead (8,000 objects of widgets in a running window's
    turn: most of the soak's load_model stalls in ``gc_pause.collect_on_switch``).  Each switch's
    collection must leave only the window in use."""
    alive = tmp_path / "alive.json"
    done = run_python("-c", _COUNT_WINDOWS_AT_EACH_SWITCH, str(alive), "--minutes", "0.1", "--sample-s", "1",
                      "--warmup-min", "0", "--actions", "quit_and_start_again", "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr[-2000:]
    windows_alive = json.loads(alive.read_text(encoding="utf-8"))
    assert len(windows_alive) >= 2, "too few new windows drawn to tell"
    assert windows_alive == [1] * len(windows_alive)
    # the report's own count (a weak set of the windows it opened): one alive at every sample
    samples = json.loads((tmp_path / "report" / "soak.json").read_text(encoding="utf-8"))["samples"]
    assert samples and [s["windows_alive"] for s in samples] == [1] * len(samples)
