"""Soak run: a learner clicking around the real window for N minutes, memory and stalls sampled.

    python -m attention_lab.devtools.soak --minutes 30 --out soak-report/

Opens the main window (offscreen when there is no display) on the bundled demo model and
performs random learner actions from :data:`attention_lab.devtools.learner_driver.ACTIONS`
(the ones the stateful test draws from, with a seeded ``random.Random``), letting the
window settle after each and checking it with :mod:`attention_lab.devtools.learner_checks`.
Every ``--sample-s`` seconds it records the resident memory (``VmRSS``; with glibc also what
the C heap holds: in use, freed but kept, large blocks mapped: ``core.heap.heap_usage_mb``,
to tell a leak from memory glibc keeps) and the longest
stall of the GUI thread since the last sample (the longest gap between the beats of a
5 ms timer: :class:`attention_lab.devtools.perf_probe.Heartbeat`).

Each window is opened as the app opens one (its tabs' panels built in idle time:
:mod:`attention_lab.ui.idle_build`).  A new window's construction ("quit and start again")
is start-up, which the bench's start-up row measures: its stalls are recorded apart
(``startup_actions``, ``max_startup_stall_ms``), never hidden and never mixed with the stalls
of a running window (``slowest_actions``, ``max_stall_ms``: the goal is none over
100 ms).  Every action's longest stall over ``TRACE_MS`` is put down to the handler that held
the GUI thread and where its time went (:mod:`attention_lab.devtools.stall_trace`), with the GUI
thread's CPU time in it: a stall mostly off the CPU is a busy machine, not the app.

It writes ``soak.json`` (samples, summary, the first problems found) and ``soak.png``
(memory and longest stall over time) to ``--out``, prints the summary, and exits 1 when
an exception, a Qt warning or an inconsistent window was seen.  "Memory drift" is the
median resident size of the last ``DRIFT_WINDOW`` samples minus that of the samples just
after the warm-up (the first ``--warmup-min`` minutes: caches, fonts and lazily built
panels fill up then).  The resident size swings ±15-25 MB over minutes (glibc's kept heap, the
workers' tensors), so the two ends can land on a crest and a trough: ``drift_trend_after_warmup_mb``
is the trend through every sample after the warm-up instead (the Theil-Sen slope, the median of
every pair of samples' slopes, times the span: a swing or one outlier does not move it, a steady
growth does).  ``live_heap_drift_after_warmup_mb`` is the same of glibc's bytes in use,
what the app holds live, apart from what glibc keeps freed; ``main_arena_drift_after_warmup_mb`` and
``thread_arenas_drift_after_warmup_mb`` split it between the GUI thread's arena and the workers'
(``core.heap.arenas_in_use_mb``).  At the end, before the window closes, ``pixmap_cache_mb`` is what
Qt's QPixmapCache held (its styles' pixmaps, one per size drawn; Qt's own, up to
``pixmap_cache_limit_mb``): part of a live drift that is Qt's bounded cache filling, not the app's.

To find where memory goes, ``--actions`` draws from some actions only (``-a,b``: all but
those) and ``--log`` writes every action with its arguments, the resident size after it, its longest
stall with the GUI thread's CPU time in it and, over ``TRACE_MS``, its handler and hot spot, one
JSON line each (the growth or the stalls per action kind or handler are a sum over the log).
The summary counts the over-goal actions per hot spot and per action (the top few).

To find what holds memory that grows (``heap_in_use_mb``: live blocks, not what glibc keeps),
repeat one action in a window and count what stays alive (``gc.get_objects()``: models, plots,
top-level widgets such as pyqtgraph's parentless menus).  Thaw first (``gc.unfreeze()``): the
app freezes every object the imports made (:mod:`attention_lab.ui.gc_pause`), and frozen objects
are invisible to ``gc.get_objects()`` and ``gc.get_referrers()``: a model held by a module's dict
or a class made before the freeze shows no holder at all.  The soak's memory drift was found this way:
every panel out of sight held its last state, and that state's model, after each model switch.
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
import weakref
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from attention_lab.core import machine
from attention_lab.core.heap import arenas_in_use_mb, heap_usage_mb

#: the screens the soak's offscreen window can be on (``--screen``), each with the window sizes its
#: learner resizes to (``learner_driver``): the 1366×768 laptop learners have (the default: issue
#: 18's goals are theirs), and a desktop monitor that holds sizes up to 1900×1150.  Qt's offscreen
#: platform has an 800×800 screen by default: each Reset layout then shrank the window to it
#: (``fit_to_screen``, as on a laptop a larger window was saved on), a relayout and repaint of every
#: dock no learner sees (the window of a real screen is never larger than it), and the soak's next
#: resize laid it all out again
SCREENS = {"laptop": (1366, 768), "desktop": (1920, 1200)}  # their sizes: screen_sizes()
DEFAULT_SCREEN = "laptop"
SOAK_SCREEN = SCREENS["desktop"]  # the largest


def screen_sizes(screen: str) -> tuple[tuple[int, int], ...]:
    """The window sizes the learner resizes to on ``screen`` (a key of :data:`SCREENS`), the first the
    start size (``learner_driver``: imported here, after torch, as :func:`main` imports the app)."""
    from attention_lab.devtools.learner_driver import LAPTOP_SIZES, SIZES

    return {"laptop": LAPTOP_SIZES, "desktop": SIZES}[screen]
DRIFT_WINDOW = 5  # samples averaged (median) at each end of the drift
MAX_PROBLEMS_KEPT = 20
SLOWEST_KEPT = 15
STARTUPS_KEPT = 15
TRACE_MS = 50.0  # stalls longer than this are put down to their handler
STALL_GOAL_MS = 100.0  # no stall of a running window over this: a learner would see it
HOT_SPOTS_KEPT = 8  # the summary's count of over-goal actions per hot spot / per action: the top few
NOT_TRACED = "not traced"  # an over-goal stall the tracer did not sample (shorter than its step)


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


def offscreen_platform(platform: str, folder: Path, screen: tuple[int, int] = SOAK_SCREEN) -> str:
    """``QT_QPA_PLATFORM`` for the soak: Qt's plain offscreen platform gets a screen of ``screen``
    (a configuration file written in ``folder``); any other platform, or an offscreen one given its
    own options, is left as it is."""
    if platform != "offscreen":
        return platform
    width, height = screen
    config = folder / "offscreen-screen.json"
    screen = {"name": "soak", "x": 0, "y": 0, "width": width, "height": height, "logicalDpi": 96, "logicalBase": 96, "dpr": 1}
    config.write_text(json.dumps({"screens": [screen]}), encoding="utf-8")
    return f"offscreen:configfile={config}"


def full_window_paint_ms(window, repeats: int = 5) -> float:
    """The fastest of ``repeats`` paints of the whole ``window`` into a pixmap (ms), after one to warm
    up: how fast this machine paints this window at its start size, the yardstick a report's stalls
    are read against (the same soak measured 280 and 1 stalls over 100 ms on two machines)."""
    window.grab()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        window.grab()
        times.append((time.perf_counter() - start) * 1000)
    return round(min(times), 1)


def summarise(samples: list[dict], warmup_s: float) -> dict:
    """Memory and stalls over the run.  ``max_stall_ms`` is the running window's (each
    sample's ``max_stall_ms``); a new window's construction is in ``max_startup_stall_ms``."""
    after = [s for s in samples if s["t_s"] >= warmup_s]

    def drift_of(key: str) -> float | None:
        if len(after) < 2 or any(key not in s for s in after):
            return None
        head = statistics.median(s[key] for s in after[:DRIFT_WINDOW])
        tail = statistics.median(s[key] for s in after[-DRIFT_WINDOW:])
        return round(tail - head, 1)

    def trend_of(key: str) -> float | None:
        points = [(s["t_s"], s[key]) for s in after if key in s]
        if len(points) < 2 or len(points) < len(after):
            return None
        slopes = [(y2 - y1) / (t2 - t1) for i, (t1, y1) in enumerate(points) for t2, y2 in points[i + 1:] if t2 > t1]
        return round(statistics.median(slopes) * (points[-1][0] - points[0][0]), 1) if slopes else None

    drift = drift_of("rss_mb")
    return {
        "samples": len(samples),
        "rss_start_mb": round(samples[0]["rss_mb"], 1) if samples else None,
        "rss_end_mb": round(samples[-1]["rss_mb"], 1) if samples else None,
        "rss_max_mb": round(max(s["rss_mb"] for s in samples), 1) if samples else None,
        "drift_after_warmup_mb": drift,
        "drift_trend_after_warmup_mb": trend_of("rss_mb"),
        "live_heap_drift_trend_after_warmup_mb": trend_of("heap_in_use_mb"),
        # a closed window kept alive would show as more than one (the soak opens its windows one at a time)
        "closed_windows_alive_max": max((s["windows_alive"] - 1 for s in samples if "windows_alive" in s), default=None),
        # the same drift of glibc's bytes in use (what the app holds live): a resident drift without
        # it is memory glibc keeps freed (up to core.heap's bound), which swung the resident size
        # ±40-60 MB between 4-minute runs of the same actions
        "live_heap_drift_after_warmup_mb": drift_of("heap_in_use_mb"),
        # the same of the main arena (the GUI thread: Qt, Python's larger objects) and of the other
        # threads' arenas (the workers: torch, the tokenizers): which side a live drift is on
        "main_arena_drift_after_warmup_mb": drift_of("main_arena_in_use_mb"),
        "thread_arenas_drift_after_warmup_mb": drift_of("thread_arenas_in_use_mb"),
        "max_stall_ms": round(max(s["max_stall_ms"] for s in samples), 1) if samples else None,
        "max_stall_after_warmup_ms": round(max(s["max_stall_ms"] for s in after), 1) if after else None,
        "max_startup_stall_ms": round(max(s.get("max_startup_stall_ms", 0.0) for s in samples), 1) if samples else None,
    }


class StallLedger:
    """Each action's longest stall, filed as start-up (a new window was built) or as a stall of
    the running window: the slowest of each kept for the report, and each sample's maxima."""

    def __init__(self) -> None:
        self.slowest: list[dict] = []  # the running window's worst actions, slowest first
        self.startups: list[dict] = []  # new windows' constructions, slowest first
        self.running_over_goal = 0  # actions of a running window that stalled over STALL_GOAL_MS
        self.startup_count = 0
        self.sample_running_ms = 0.0  # since the last sample
        self.sample_startup_ms = 0.0
        # the running window's over-goal actions counted by where the time went, and by action
        self.over_goal_hot_spots: Counter[str] = Counter()
        self.over_goal_actions: Counter[str] = Counter()

    def add(self, ms: float, action: str, arguments: dict, *, startup: bool, stall=None) -> dict:
        """File one action's longest stall (``ms``); ``stall``: its trace (a ``stall_trace.Stall``), if any.
        Returns the entry filed (what ``--log`` writes of the stall)."""
        entry = {"stall_ms": round(ms, 1), "action": action, "arguments": arguments}
        if stall is not None:
            entry.update(cpu_ms=stall.cpu_ms, off_cpu=stall.off_cpu, handler=stall.handler, hot_spot=stall.hot_spot)
        if startup:
            self.startup_count += 1
            self.sample_startup_ms = max(self.sample_startup_ms, ms)
            self.startups = sorted(self.startups + [entry], key=lambda e: -e["stall_ms"])[:STARTUPS_KEPT]
            return entry
        self.sample_running_ms = max(self.sample_running_ms, ms)
        if ms > STALL_GOAL_MS:
            self.running_over_goal += 1
            self.over_goal_hot_spots[entry.get("hot_spot") or NOT_TRACED] += 1
            self.over_goal_actions[action] += 1
        self.slowest = sorted(self.slowest + [entry], key=lambda e: -e["stall_ms"])[:SLOWEST_KEPT]
        return entry

    def over_goal_breakdown(self) -> dict:
        """The over-goal actions of the running window counted per hot spot and per action, the
        most frequent first (the top ``HOT_SPOTS_KEPT`` of each): what to fix first."""
        return {"over_goal_by_hot_spot": dict(self.over_goal_hot_spots.most_common(HOT_SPOTS_KEPT)),
                "over_goal_by_action": dict(self.over_goal_actions.most_common(HOT_SPOTS_KEPT))}

    def take_sample(self) -> dict:
        """This sample's longest stalls (ms): the running window's, and start-up's; then zero."""
        sample = {"max_stall_ms": round(self.sample_running_ms, 1), "max_startup_stall_ms": round(self.sample_startup_ms, 1)}
        self.sample_running_ms = self.sample_startup_ms = 0.0
        return sample


def arena_sample() -> dict[str, float]:
    """A sample's split of the live heap: the main arena's bytes in use and the other arenas' (MB);
    empty without glibc."""
    arenas = arenas_in_use_mb()
    if not arenas:
        return {}
    return {"main_arena_in_use_mb": arenas[0], "thread_arenas_in_use_mb": round(sum(arenas[1:]), 1)}


def pixmap_cache_mb() -> dict[str, float]:
    """What Qt's QPixmapCache holds, measured by emptying it (so at the end of a run only): the live
    heap it frees, and its limit.  Qt's styles fill it with pixmaps drawn once per size of a frame,
    tab or button; it is Qt's, bounded by its limit (10 MB by default), and grows over a soak as the
    learner resizes the window and its docks."""
    from PySide6.QtGui import QPixmapCache

    def live_mb() -> float | None:  # a large pixmap is in the heap or, while glibc's threshold is low, mapped
        usage = heap_usage_mb()
        return usage["heap_in_use_mb"] + usage["mapped_blocks_mb"] if usage else None

    before = live_mb()
    QPixmapCache.clear()
    after = live_mb()
    held = {"pixmap_cache_limit_mb": round(QPixmapCache.cacheLimit() / 1024, 1)}
    if before is not None and after is not None:
        held["pixmap_cache_mb"] = round(before - after, 1)
    return held


def log_line(step: int, t_s: float, filed: dict, beat_cpu_ms: float, *, startup: bool) -> dict:
    """One ``--log`` line: the action (``filed``: the ledger's entry, with its arguments), the resident
    size after it, its longest stall and the GUI thread's CPU time in it, and, when the stall was over
    ``TRACE_MS``, the handler and hot spot it is put down to (the over-goal actions summed by action and
    handler are a sum over the log).  ``cpu_ms`` is the trace's when traced, else the heartbeat's
    (``beat_cpu_ms``: the most CPU time the thread used between two beats)."""
    line = {"step": step, "t_s": round(t_s, 2), "action": filed["action"], "arguments": filed["arguments"],
            "rss_mb": round(resident_mb(), 1), "stall_ms": filed["stall_ms"],
            "cpu_ms": filed.get("cpu_ms", round(beat_cpu_ms, 1)), "startup": startup}
    if "handler" in filed:
        line.update(handler=filed["handler"], hot_spot=filed["hot_spot"], off_cpu=filed["off_cpu"])
    return line


def chosen_actions(spec: str, actions: dict) -> list[str]:
    """The action names ``--actions`` asks for, sorted: all when empty, only the listed ones, or,
    with a leading '-', all but the listed ones.  An unknown name is an error (a typo would
    otherwise bisect nothing)."""
    spec = spec.strip()
    leave_out = spec.startswith("-")
    listed = {name.strip() for name in spec.lstrip("-").split(",") if name.strip()}
    unknown = sorted(listed - set(actions))
    if unknown:
        raise SystemExit(f"unknown actions: {', '.join(unknown)} (known: {', '.join(sorted(actions))})")
    if not listed:
        return sorted(actions)
    names = sorted(set(actions) - listed if leave_out else listed)
    if not names:
        raise SystemExit("--actions leaves no action to draw")
    return names


def plot(samples: list[dict], path: Path, title: str) -> None:
    """Memory and the longest stall over time, one above the other, as a PNG."""
    import numpy as np
    import pyqtgraph as pg
    from pyqtgraph.exporters import ImageExporter

    view = pg.GraphicsLayoutWidget()
    view.setBackground("w")
    view.resize(900, 600)
    t = np.array([s["t_s"] / 60 for s in samples], dtype=float)
    rows = (("rss_mb", "resident memory (MB)", (31, 95, 168)), ("max_stall_ms", "longest GUI stall (ms, log; x: start-up)", (200, 60, 30)))
    for row, (key, label, colour) in enumerate(rows):
        item = view.addPlot(row=row, col=0)
        item.plot(t, np.array([max(s[key], 1.0) for s in samples], dtype=float), pen=pg.mkPen(colour, width=2), symbol="o",
                  symbolSize=4, symbolBrush=colour, symbolPen=None)
        if key == "max_stall_ms":  # a new window's construction (start-up): grey crosses, not a stall
            startup = [(x, s["max_startup_stall_ms"]) for x, s in zip(t, samples) if s.get("max_startup_stall_ms")]
            if startup:
                item.plot([x for x, _ in startup], [ms for _, ms in startup], pen=None, symbol="x", symbolSize=8,
                          symbolBrush=(110, 110, 110), symbolPen=pg.mkPen((110, 110, 110)))
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
    parser = argparse.ArgumentParser(prog="python -m attention_lab.devtools.soak", description=__doc__.split("\n")[0])
    parser.add_argument("--minutes", type=float, required=True, help="how long to click around")
    parser.add_argument("--out", default="soak-report", help="folder for soak.json and soak.png")
    parser.add_argument("--model", default="demo", help="the model to start with (default: the bundled demo)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random learner")
    parser.add_argument("--sample-s", type=float, default=10.0, help="seconds between samples")
    parser.add_argument("--warmup-min", type=float, default=5.0, help="minutes left out of the memory drift")
    parser.add_argument("--actions", default="", help="comma-separated learner actions to draw from (default: all); "
                        "a leading '-' leaves the listed ones out instead (to bisect memory growth by action)")
    parser.add_argument("--screen", choices=sorted(SCREENS), default=DEFAULT_SCREEN,
                        help="the offscreen screen and the window sizes the learner resizes to: a 1366x768 laptop "
                        "(default) or a 1920x1200 desktop monitor (windows up to 1900x1150)")
    parser.add_argument("--log", default="", help="file to write every action to, one JSON line each "
                        "(step, seconds, action, arguments, resident MB after it, longest stall ms, its GUI-thread CPU ms and, "
                        "over the trace threshold, its handler and hot spot): replay or bisect a run from it")
    args = parser.parse_args(argv)
    if not os.environ.get("QT_QPA_PLATFORM") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.TemporaryDirectory(prefix="attention-lab-soak-")
    work = Path(tmp.name)
    screen_size = SCREENS[args.screen]
    if os.environ.get("QT_QPA_PLATFORM") == "offscreen":
        os.environ["QT_QPA_PLATFORM"] = offscreen_platform("offscreen", work, screen_size)

    from attention_lab.core.heap import KEPT_HEAP

    __import__("torch")
    import pyqtgraph as pg
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    import attention_lab.ui  # noqa: F401 -- the PySide6 workaround first
    from attention_lab.ui import gc_pause, number_format
    from attention_lab.ui.idle_build import install_idle_build
    from attention_lab.ui.launch import teardown
    from attention_lab.devtools.learner_checks import FaultTrap, window_problems
    from attention_lab.devtools.learner_driver import ACTIONS, LearnerDriver, resize_choices
    from attention_lab.ui.main_window import MainWindow
    from attention_lab.devtools.perf_probe import Heartbeat
    from attention_lab.devtools.stall_trace import StallTracer

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")
    number_format.localize_axis_ticks()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    rng = random.Random(args.seed)
    sizes = screen_sizes(args.screen)
    # the same number of choices as ACTIONS' resize: a seeded run draws the same actions on either screen
    choices_by_action = {**ACTIONS, "resize": resize_choices(sizes)}
    models = soak_models(work, args.model)
    trap = FaultTrap().install()
    gc_pause.freeze_imports()  # as the app does before its window (ui.launch)
    opened: weakref.WeakSet = weakref.WeakSet()  # every window opened, while it lives (a closed one should not)

    def open_window(model_spec: str | None = None) -> MainWindow:
        window = MainWindow(settings=QSettings(str(work / "settings.ini"), QSettings.Format.IniFormat), model_spec=model_spec)
        install_idle_build(window)  # as the app opens a learner's window (ui.launch)
        window.resize(*sizes[0])
        window.move(0, 0)  # where a laptop's largest window fits (a Reset layout fits the window to the screen)
        window.show()
        opened.add(window)
        return window

    driver = LearnerDriver(open_window(args.model), models, work / "exports", open_window=open_window, sizes=sizes)
    driver.settle()
    paint_ms = full_window_paint_ms(driver.window)
    beat = Heartbeat(5)
    tracer = StallTracer(last_beat=lambda: beat.last, threshold_ms=TRACE_MS)
    beat.on_gap = tracer.gap_ended
    ledger = StallLedger()
    samples: list[dict] = []
    problems: list[str] = []
    faults = problem_steps = 0
    done = Counter()
    names = chosen_actions(args.actions, ACTIONS)
    log = open(args.log, "w", encoding="utf-8") if args.log else None  # noqa: SIM115 -- closed in finally
    started = time.monotonic()
    end = started + args.minutes * 60
    next_sample = started + args.sample_s
    tracer.start()
    beat.start()
    try:
        while time.monotonic() < end:
            action = rng.choice(names)
            arguments = {name: rng.choice(choices) for name, choices in choices_by_action[action].items()}
            driver.dismiss_error()  # a learner closes the dialog before going on
            beat.reset()  # this action's own longest stall
            tracer.take()
            # the count, not the window: a closed window held here until the next step was not freed
            # by the new window's first collection but by the next model switch's (the soak's
            # load_model stalls: 8,000 objects of a closed window freed in a running window's turn)
            restarts_before = driver.restarts
            try:
                getattr(driver, action)(**arguments)
                driver.settle()
            except TimeoutError as exc:
                problems.append(f"{action}{arguments}: {exc}")
            traced = tracer.take()
            # a new window (quit and start again) is start-up: the bench's start-up row, not a stall
            filed = ledger.add(beat.max_gap * 1000, action, arguments, startup=driver.restarts != restarts_before,
                               stall=traced[0] if traced else None)
            found = trap.take()
            faults += len(found)
            found += window_problems(driver)
            if found:
                problem_steps += 1
                if len(problems) < MAX_PROBLEMS_KEPT:
                    problems.append(f"step {sum(done.values()) + 1} {action}{arguments}: " + " | ".join(found))
            done[action] += 1
            if log is not None:
                log.write(json.dumps(log_line(sum(done.values()), time.monotonic() - started, filed,
                                              beat.max_gap_cpu * 1000, startup=driver.restarts != restarts_before),
                                     ensure_ascii=False) + "\n")
            if len(driver.intent.log) > 200:
                del driver.intent.log[:100]
            now = time.monotonic()
            if now >= next_sample:
                samples.append({"t_s": round(now - started, 1), "rss_mb": round(resident_mb(), 1),
                                **heap_usage_mb(), **arena_sample(), "heap_trims": KEPT_HEAP.trims, **ledger.take_sample(), "steps": sum(done.values()),
                                "windows_alive": len(opened)})
                next_sample = now + args.sample_s
    finally:
        if log is not None:
            log.close()
        held_by_qt = pixmap_cache_mb()  # before the window goes: what Qt's style cached for it
        beat.stop()
        tracer.stop()
        trap.uninstall()
        stopped = teardown(app, driver.window)
        tmp.cleanup()

    summary = summarise(samples, args.warmup_min * 60)
    summary.update(
        minutes=args.minutes, seed=args.seed, model=args.model, steps=sum(done.values()),
        exceptions_and_qt_warnings=faults, steps_with_problems=problem_steps, workers_stopped=stopped,
        stalls_over_goal=ledger.running_over_goal, stall_goal_ms=STALL_GOAL_MS, **ledger.over_goal_breakdown(),
        startups=ledger.startup_count, **held_by_qt,
        **machine.describe(), full_window_paint_ms=paint_ms, actions_drawn=names, screen_choice=args.screen,
        screen=list(app.primaryScreen().availableGeometry().size().toTuple()) if app.primaryScreen() else None,
    )
    report = {"summary": summary, "actions": dict(sorted(done.items())), "problems": problems,
              "slowest_actions": ledger.slowest, "startup_actions": ledger.startups, "samples": samples}
    (out / "soak.json").write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    if samples:
        plot(samples, out / "soak.png", f"soak: {summary['steps']} learner actions in {args.minutes:g} min ({args.model})")
    print(json.dumps(summary, ensure_ascii=False))
    for line in problems[:5]:
        print("problem:", line[:400], file=sys.stderr)
    return 0 if not (faults or problem_steps) and stopped else 1


if __name__ == "__main__":
    sys.exit(main())
