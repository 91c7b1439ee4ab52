"""Soak run: a learner clicking around the real window for N minutes, memory and stalls sampled.

    python -m attention_lab.ui.soak --minutes 30 --out soak-report/

Opens the main window (offscreen when there is no display) on the bundled demo model and
performs random learner actions from :data:`attention_lab.ui.learner_driver.ACTIONS`
(the ones the stateful test draws from, with a seeded ``random.Random``), letting the
window settle after each and checking it with :mod:`attention_lab.ui.learner_checks`.
Every ``--sample-s`` seconds it records the resident memory (``VmRSS``) and the longest
stall of the GUI thread since the last sample (the longest gap between the beats of a
5 ms timer: :class:`attention_lab.ui.perf_probe.Heartbeat`).

It writes ``soak.json`` (samples, summary, the first problems found) and ``soak.png``
(memory and longest stall over time) to ``--out``, prints the summary, and exits 1 when
an exception, a Qt warning or an inconsistent window was seen.  "Memory drift" is the
median resident size of the last ``DRIFT_WINDOW`` samples minus that of the samples just
after the warm-up (the first ``--warmup-min`` minutes: caches, fonts and lazily built
panels fill up then).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Sequence

DRIFT_WINDOW = 5  # samples averaged (median) at each end of the drift
MAX_PROBLEMS_KEPT = 20
SLOWEST_KEPT = 15


def resident_mb() -> float:
    """This process's resident memory now (Linux /proc; the peak elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024 if sys.platform == "darwin" else 1024)


def soak_models(folder: Path, start: str) -> dict[str, str]:
    """The models the learner switches between: ``start``, the demo, a copy of the demo in
    another folder (another model object, same weights) and a broken folder."""
    import shutil

    from attention_lab.core.models import demo_model_dir

    other = folder / "demo-copy"
    if not other.exists():
        shutil.copytree(demo_model_dir(), other)
    broken = folder / "broken-model"
    broken.mkdir(exist_ok=True)
    (broken / "config.json").write_text('{"model_type": "gpt2", "n_layer": 2', encoding="utf-8")  # cut short
    return {"start": start, "demo": "demo", "other": str(other), "broken": str(broken)}


def summarise(samples: list[dict], warmup_s: float) -> dict:
    after = [s for s in samples if s["t_s"] >= warmup_s]
    drift = None
    if len(after) >= 2:
        head = statistics.median(s["rss_mb"] for s in after[:DRIFT_WINDOW])
        tail = statistics.median(s["rss_mb"] for s in after[-DRIFT_WINDOW:])
        drift = round(tail - head, 1)
    return {
        "samples": len(samples),
        "rss_start_mb": round(samples[0]["rss_mb"], 1) if samples else None,
        "rss_end_mb": round(samples[-1]["rss_mb"], 1) if samples else None,
        "rss_max_mb": round(max(s["rss_mb"] for s in samples), 1) if samples else None,
        "drift_after_warmup_mb": drift,
        "max_stall_ms": round(max(s["max_stall_ms"] for s in samples), 1) if samples else None,
        "max_stall_after_warmup_ms": round(max(s["max_stall_ms"] for s in after), 1) if after else None,
    }


def plot(samples: list[dict], path: Path, title: str) -> None:
    """Memory and the longest stall over time, one above the other, as a PNG."""
    import numpy as np
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter

    view = pg.GraphicsLayoutWidget()
    view.setBackground("w")
    view.resize(900, 600)
    t = np.array([s["t_s"] / 60 for s in samples], dtype=float)
    rows = (("rss_mb", "resident memory (MB)", (31, 95, 168)), ("max_stall_ms", "longest GUI stall (ms, log)", (200, 60, 30)))
    for row, (key, label, colour) in enumerate(rows):
        item = view.addPlot(row=row, col=0)
        item.plot(t, np.array([s[key] for s in samples], dtype=float), pen=pg.mkPen(colour, width=2), symbol="o", symbolSize=4,
                  symbolBrush=colour, symbolPen=None)
        item.setLabel("left", label)
        item.setLabel("bottom", "minutes")
        item.showGrid(x=True, y=True, alpha=0.3)
        if row == 0:
            item.setTitle(title)
        item.getAxis("left").setWidth(64)
        if key == "max_stall_ms":  # log scale: 5 ms beats and multi-second stalls on one plot
            item.setLogMode(y=True)
            item.addLine(y=2.0, pen=pg.mkPen((120, 120, 120), style=pg.QtCore.Qt.PenStyle.DashLine))  # 100 ms
    view.show()
    pg.QtWidgets.QApplication.processEvents()
    exporter = ImageExporter(view.scene())
    exporter.parameters()["width"] = 900
    exporter.export(str(path))
    view.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_lab.ui.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, required=True, help="how long to click around")
    parser.add_argument("--out", default="soak-report", help="folder for soak.json and soak.png")
    parser.add_argument("--model", default="demo", help="the model to start with (default: the bundled demo)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random learner")
    parser.add_argument("--sample-s", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup-min", type=float, default=5.0, help="minutes left out of the memory drift")
    args = parser.parse_args(argv)
    if not os.environ.get("QT_QPA_PLATFORM") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    __import__("torch")
    import pyqtgraph as pg
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    import attention_lab.ui  # noqa: F401 -- the PySide6 workaround first
    from attention_lab.ui import number_format
    from attention_lab.ui.launch import teardown
    from attention_lab.ui.learner_checks import FaultTrap, window_problems
    from attention_lab.ui.learner_driver import ACTIONS, LearnerDriver
    from attention_lab.ui.main_window import MainWindow
    from attention_lab.ui.perf_probe import Heartbeat

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")
    number_format.localize_axis_ticks()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    rng = random.Random(args.seed)
    tmp = tempfile.TemporaryDirectory(prefix="attention-lab-soak-")
    work = Path(tmp.name)
    models = soak_models(work, args.model)
    trap = FaultTrap().install()
    def open_window(model_spec: str | None = None) -> MainWindow:
        window = MainWindow(settings=QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat), model_spec=model_spec)
        window.resize(1400, 900)
        window.show()
        return window

    driver = LearnerDriver(open_window(args.model), models, work / "exports", open_window=open_window)
    driver.settle()
    beat = Heartbeat(5)
    samples: list[dict] = []
    problems: list[str] = []
    faults = problem_steps = 0
    done = Counter()
    slowest: list[tuple] = []  # (longest stall in ms, action, arguments): the worst actions
    names = sorted(ACTIONS)
    started = time.monotonic()
    end = started + args.minutes * 60
    next_sample = started + args.sample_s
    beat.start()
    try:
        while time.monotonic() < end:
            action = rng.choice(names)
            arguments = {name: rng.choice(choices) for name, choices in ACTIONS[action].items()}
            driver.dismiss_error()  # a learner closes the dialog before going on
            gap_before, beat.max_gap = beat.max_gap, 0.0  # this action's own longest stall
            beat.last = time.perf_counter()
            try:
                getattr(driver, action)(**arguments)
                driver.settle()
            except TimeoutError as exc:
                problems.append(f"{action}{arguments}: {exc}")
            found = trap.take()
            faults += len(found)
            found += window_problems(driver)
            if found:
                problem_steps += 1
                if len(problems) < MAX_PROBLEMS_KEPT:
                    problems.append(f"step {sum(done.values()) + 1} {action}{arguments}: " + " | ".join(found))
            done[action] += 1
            slowest.append((round(beat.max_gap * 1000, 1), action, arguments))
            slowest = sorted(slowest, key=lambda item: -item[0])[:SLOWEST_KEPT]
            beat.max_gap = max(beat.max_gap, gap_before)
            if len(driver.intent.log) > 200:
                del driver.intent.log[:100]
            now = time.monotonic()
            if now >= next_sample:
                samples.append({"t_s": round(now - started, 1), "rss_mb": round(resident_mb(), 1),
                                "max_stall_ms": round(beat.max_gap * 1000, 1), "steps": sum(done.values())})
                beat.reset()
                next_sample = now + args.sample_s
    finally:
        beat.stop()
        trap.uninstall()
        stopped = teardown(app, driver.window)
        tmp.cleanup()

    summary = summarise(samples, args.warmup_min * 60)
    summary.update(
        minutes=args.minutes, seed=args.seed, model=args.model, steps=sum(done.values()),
        exceptions_and_qt_warnings=faults, steps_with_problems=problem_steps, workers_stopped=stopped,
    )
    report = {"summary": summary, "actions": dict(sorted(done.items())), "problems": problems,
              "slowest_actions": [{"stall_ms": ms, "action": a, "arguments": args_} for ms, a, args_ in slowest],
              "samples": samples}
    (out / "soak.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if samples:
        plot(samples, out / "soak.png", f"soak: {summary['steps']} learner actions in {args.minutes:g} min ({args.model})")
    print(json.dumps(summary, ensure_ascii=False))
    for line in problems[:5]:
        print("problem:", line[:400], file=sys.stderr)
    return 0 if not (faults or problem_steps) and stopped else 1


if __name__ == "__main__":
    sys.exit(main())
