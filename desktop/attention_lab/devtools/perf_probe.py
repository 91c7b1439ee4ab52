"""How long the GUI thread stalls while the real window works (run by ``attention-lab bench``).

``python -m attention_lab.devtools.perf_probe [--model SPEC] [--reps N] [--kv-tokens N]`` opens
the main window offscreen, waits for its first analysis, then starts a heartbeat: a
``QTimer`` firing every few milliseconds on the GUI thread.  Any gap between two beats
longer than the interval is time the event loop could not run (input, paints, hover).
The probe records the longest gap while

- ``edit``: the leakage edit changes (debounce, worker computation, every panel redrawn);
- ``kvbench``: the KV-cache benchmark runs from its panel (live curve updated per token);
- ``generate``: the Generate panel steps a token at a time (the step computed on the worker,
  the map, cache strip and inside-the-head table drawn);
- ``long_text``: a text as long as the model's context (at most 1024 tokens) is analysed
  and drawn (the head grid at n × n);
- ``tabs``: each panel behind a tab is opened for the first time (built in idle time
  before, as in the app: :mod:`attention_lab.ui.idle_build`; the newest state drawn then);
- ``idle_build`` (always): the longest stall while those panels are built after start-up.

With each phase it reports the longest ``show_state`` of every panel (``show_state_ms``):
the GUI-thread work a new analysis costs, view by view; and ``stalls``: every stall over
``--trace-ms`` (33 ms: two frames at 60 Hz) with the handler that held the GUI thread and
where its time went (:mod:`attention_lab.devtools.stall_trace`), so a regression names its cause.

It prints one JSON line on stdout; exit 1 when the window never produced an analysis.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Sequence

LONG_TEXT_TOKENS = 1024
RANK_TOKENS = 32  # the head ranking's text (the bench's row: GPT-2 small's shapes, 32 tokens)
PASSAGE = (
    "The big dog bit the mailman yesterday. A transformer reads the whole sentence at once, "
    "and every head of every layer decides where each word should look. "
)


class Heartbeat:
    """Beats every ``interval_ms`` on the GUI thread and remembers the longest gap."""

    def __init__(self, interval_ms: int, on_gap: Callable[[float, float, float], None] | None = None):
        from PySide6.QtCore import Qt, QTimer

        self.interval_ms = interval_ms
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(interval_ms)
        self.timer.timeout.connect(self._beat)
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.max_gap = 0.0
        # the most GUI-thread CPU time in one gap (s): the work of the longest turn, which a busy
        # machine does not inflate the way it does the gap's wall time (the others' processes)
        self.max_gap_cpu = 0.0
        # (previous beat's time, gap in s, GUI thread's CPU seconds in the gap): the tracer's hook
        self.on_gap = on_gap

    def _beat(self) -> None:
        now, cpu = time.perf_counter(), time.thread_time()
        gap, before, cpu_used = now - self.last, self.last, cpu - self.last_cpu
        self.max_gap = max(self.max_gap, gap)
        self.max_gap_cpu = max(self.max_gap_cpu, cpu_used)
        self.last, self.last_cpu = now, cpu
        if self.on_gap is not None:
            self.on_gap(before, gap, cpu_used)

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.last_cpu = time.thread_time()
        self.max_gap = 0.0
        self.max_gap_cpu = 0.0

    def start(self) -> None:
        self.reset()
        self.timer.start()

    def stop(self) -> None:
        self.timer.stop()


class PanelTimer:
    """Times every panel's ``show_state`` and each of its redraw steps (GUI thread): which view
    makes the window wait.  A panel drawn in steps (``Panel.redraw_steps``) reports its
    longest step: the longest the event loop waited for it in one turn."""

    def __init__(self, panels: dict):
        self.worst: dict[str, float] = {}
        for panel_id, panel in panels.items():
            original, original_steps = panel.show_state, panel.redraw_steps

            def timed(state, _original=original, _id=panel_id) -> None:
                self._time(_id, lambda: _original(state))

            def steps(state, _original=original_steps, _id=panel_id) -> list:
                return [lambda _step=step: self._time(_id, _step) for step in _original(state)]

            # the window looks the methods up on each state
            panel.show_state, panel.redraw_steps = timed, steps

    def _time(self, panel_id: str, draw: Callable[[], None]) -> None:
        start = time.perf_counter()
        try:
            draw()
        finally:
            ms = (time.perf_counter() - start) * 1000.0
            self.worst[panel_id] = max(self.worst.get(panel_id, 0.0), ms)

    def take(self) -> dict[str, float]:
        """Longest ``show_state`` per panel (ms) since the last call, slowest first."""
        worst = dict(sorted(((k, round(v, 1)) for k, v in self.worst.items()), key=lambda kv: -kv[1]))
        self.worst.clear()
        return worst


def _run_until(signal, timeout_s: float, start: Callable[[], object] | None = None) -> bool:
    """Run the event loop until ``signal`` fires (True) or ``timeout_s`` passes (False)."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    fired = {"yes": False}

    def done(*_args) -> None:
        fired["yes"] = True
        loop.quit()

    signal.connect(done)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    started = start() if start is not None else None
    if not fired["yes"] and started is not False:  # False: the action refused to start
        loop.exec()
    signal.disconnect(done)
    return fired["yes"]


def _settle(ms: int) -> None:
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def _measure(beat: Heartbeat, signal, action: Callable[[], object], timeout_s: float, settle_ms: int) -> tuple[float, float, bool]:
    """(longest stall in ms, seconds until ``signal``, whether it fired); the settle time after
    the signal is included so the redraw it triggers is measured too."""
    beat.reset()
    start = time.perf_counter()
    ok = _run_until(signal, timeout_s, action)
    seconds = time.perf_counter() - start
    _settle(settle_ms)
    return beat.max_gap * 1000.0, seconds, ok


def _repeat(beat: Heartbeat, signal, action: Callable[[], object], args, failure: str) -> tuple[list, list, bool, list]:
    """:func:`_measure` ``args.reps`` times: (stalls in ms, seconds to ``signal``, all fired,
    the GUI thread's most CPU in one stall per run in ms)."""
    stalls, seconds, all_fired, cpu = [], [], True, []
    for _ in range(args.reps):
        stall, took, fired = _measure(beat, signal, action, args.timeout, 300)
        if not fired:
            print(f"perf probe: {failure}", file=sys.stderr)
            all_fired = False
        stalls.append(stall)
        seconds.append(took)
        cpu.append(round(beat.max_gap_cpu * 1000.0, 1))
    return stalls, seconds, all_fired, cpu


def _hover_stall(beat: Heartbeat, window, moves: int = 60, every_ms: int = 15) -> float | None:
    """Longest stall (ms) while the mouse sweeps across the head grid's maps: each move is a
    real mouse event through the view (hover → the cell under it → status text, tooltip)."""
    from PySide6.QtCore import QPoint
    from PySide6.QtTest import QTest

    grid = window.panels.get("panel.head_grid")
    if grid is None or not grid.isVisible():
        return None
    viewport = grid.grid_view.viewport()
    w, h = viewport.width(), viewport.height()
    points = [QPoint(int(w * (0.1 + 0.8 * i / moves)), int(h * (0.15 + 0.7 * ((i * 7) % moves) / moves)))
              for i in range(moves)]
    beat.reset()
    for point in points:
        QTest.mouseMove(viewport, point)
        _settle(every_ms)
    QTest.mouseMove(viewport, QPoint(1, 1))
    _settle(100)
    return beat.max_gap * 1000.0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="attention_lab.devtools.perf_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=None, help="model spec (default: the app's default)")
    parser.add_argument("--reps", type=int, default=3, help="edits / benchmark runs measured (default 3)")
    parser.add_argument("--kv-tokens", type=int, default=50, help="new tokens of the KV benchmark (default 50)")
    parser.add_argument("--heartbeat-ms", type=int, default=5)
    parser.add_argument("--no-long-text", action="store_true", help="skip the context-long text")
    parser.add_argument("--phases", default="edit,tabs,kvbench,long_text",
                        help="which phases to run, comma-separated (default: edit,tabs,kvbench,long_text; "
                             "also rank_heads: every head knocked out alone, from the knockout panel; generate: "
                             "Next token in the Generate panel)")
    parser.add_argument("--trace-ms", type=float, default=33.0,
                        help="name the handler of every stall longer than this (default 33 ms; 0: no trace)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds to wait for each step")

    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    phases = {p.strip() for p in args.phases.split(",") if p.strip()}
    unknown = phases - {"edit", "tabs", "kvbench", "long_text", "rank_heads", "generate", "idle_build"}  # (idle_build: always measured)
    if unknown:
        parser.error(f"unknown phase(s): {', '.join(sorted(unknown))}")
    if args.no_long_text:
        phases.discard("long_text")
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from attention_lab.ui import runtime
    from attention_lab.ui.launch import _configure_plots, _wait_for_first_result, teardown
    from attention_lab.ui.docks import FIRST_VIEW_PANELS
    from attention_lab.ui.idle_build import install_idle_build
    from attention_lab.ui.main_window import MainWindow

    _configure_plots()
    app = QApplication.instance() or QApplication(["attention-lab-perf-probe"])
    runtime.install_all()  # as the app does before its window (ui.launch)
    tmp = tempfile.TemporaryDirectory(prefix="attention-lab-probe-")
    settings = QSettings(str(Path(tmp.name) / "settings.ini"), QSettings.Format.IniFormat)
    window = None
    report: dict = {"heartbeat_ms": args.heartbeat_ms}
    code = 0
    try:
        window = MainWindow(settings=settings, model_spec=args.model)
        builder = install_idle_build(window)  # as the app does (ui.launch)
        window.resize(1600, 1000)
        window.show()
        ok, errors = _wait_for_first_result(window, args.timeout)
        if not ok:
            print("perf probe: no analysis: " + "; ".join(errors), file=sys.stderr)
            return 1
        _settle(500)
        session = window.session
        state = window.last_state
        model = state.model
        report["model"] = f"{model.name}, {state.n_tokens} tokens"
        beat = Heartbeat(args.heartbeat_ms)
        tracer = None
        if args.trace_ms > 0:
            from attention_lab.devtools.stall_trace import StallTracer

            tracer = StallTracer(last_beat=lambda: beat.last, threshold_ms=args.trace_ms)
            beat.on_gap = tracer.gap_ended
            tracer.start()
        beat.start()
        panels = PanelTimer(window.panels)

        def traced(phase: str) -> None:
            if tracer is not None and phase in report:
                report[phase]["stalls"] = [dataclasses.asdict(s) for s in tracer.take()[:12]]

        # 0) the panels behind tabs, built and drawn in idle time after the first analysis
        beat.reset()
        waited = time.perf_counter()
        while not builder.done and time.perf_counter() - waited < args.timeout:
            _settle(50)
        report["idle_build"] = {"max_stall_ms": [beat.max_gap * 1000.0], "done": builder.done,
                                "seconds": time.perf_counter() - waited}
        traced("idle_build")
        _settle(300)

        # 1) the leakage edit: a different replacement of the last token each time
        stalls, seconds, cpu = [], [], []
        last = state.n_tokens - 1
        for rep in range(args.reps if "edit" in phases else 0):
            token = (state.ids[last] + 1 + rep) % model.lens.config.vocab_size
            stall, took, fired = _measure(beat, window.state_shown, lambda: session.set_replacement(last, token),
                                          args.timeout, 300)
            if not fired:
                print("perf probe: an edit produced no analysis", file=sys.stderr)
                code = 1
            stalls.append(stall)
            seconds.append(took)
            cpu.append(round(beat.max_gap_cpu * 1000.0, 1))
        if "edit" in phases:
            report["edit"] = {"max_stall_ms": stalls, "max_stall_cpu_ms": cpu, "seconds_to_result": seconds}
            report["edit"]["show_state_ms"] = panels.take()
            traced("edit")

        # 1b) the first opening of every panel behind a tab (built in idle time, or when first shown)
        if "tabs" in phases:
            opened: dict[str, float] = {}
            opened_cpu: dict[str, float] = {}  # the GUI thread's CPU in its busiest turn: what load doesn't inflate
            for panel_id, dock in window.docks.items():
                if panel_id in FIRST_VIEW_PANELS:
                    continue
                beat.reset()
                dock.raise_()
                _settle(400)
                opened[str(panel_id)] = round(beat.max_gap * 1000.0, 1)
                opened_cpu[str(panel_id)] = round(beat.max_gap_cpu * 1000.0, 1)
            report["tabs"] = {"max_stall_ms": [max(opened.values())] if opened else [], "first_open_ms": opened,
                              "max_stall_cpu_ms": [max(opened_cpu.values())] if opened_cpu else [],
                              "first_open_cpu_ms": opened_cpu}
            traced("tabs")
            window.docks["panel.head_grid"].raise_()
            window.docks["panel.leakage"].raise_()
            _settle(300)
            if tracer is not None:
                tracer.take()  # raising the first view back is not a first opening
            panels.take()

        # 2) the KV benchmark from its panel
        panel = None
        opened_stall = None
        if "kvbench" in phases and "panel.kvbench" in window.docks:
            beat.reset()
            window.docks["panel.kvbench"].raise_()  # its tab opened, as a learner does (the panel is built then)
            _settle(300)
            opened_stall = beat.max_gap * 1000.0
            panel = window.panel("panel.kvbench")
        if "kvbench" not in phases:
            pass
        elif panel is None:
            report["kvbench"] = {"max_stall_ms": [], "error": "no KV benchmark panel"}
            code = 1
        else:
            panel.new_tokens.setValue(args.kv_tokens)
            stalls, seconds, all_fired, cpu = _repeat(beat, panel.benchmark_finished, panel.run_benchmark, args,
                                                      "the KV benchmark did not finish")
            code = code if all_fired else 1
            report["kvbench"] = {"max_stall_ms": stalls, "max_stall_cpu_ms": cpu, "seconds_to_result": seconds,
                                 "new_tokens": args.kv_tokens, "first_open_stall_ms": opened_stall}
            report["kvbench"]["show_state_ms"] = panels.take()
            traced("kvbench")

        # 2b) rank the heads from the knockout panel (L × H knockouts on the worker)
        if "rank_heads" in phases and "panel.knockout" in window.docks:
            ids = []
            while len(ids) < RANK_TOKENS:
                ids += model.tokenizer.encode(PASSAGE)
            text = model.tokenizer.decode(ids[:RANK_TOKENS])  # the 32-token text
            _run_until(window.state_shown, args.timeout, lambda: (window.text_panel_set(text), session.set_text(text)))
            window.docks["panel.knockout"].raise_()
            _settle(300)
            knock = window.panel("panel.knockout")
            stalls, seconds, all_fired, _cpu = _repeat(beat, session.ranking_ready, knock.rank, args,
                                                 "the head ranking did not finish")
            code = code if all_fired else 1
            report["rank_heads"] = {"max_stall_ms": stalls, "seconds_to_result": seconds,
                                    "heads": model.lens.config.n_layer * model.lens.config.n_head,
                                    "tokens": window.last_state.n_tokens if window.last_state else None}
            traced("rank_heads")

        # 2c) generation one token at a time: Next token in the Generate panel, each step's view drawn
        if "generate" in phases and "panel.generate" in window.docks:
            window.docks["panel.generate"].raise_()
            _settle(300)
            gen = window.panel("panel.generate")
            stalls, seconds, all_fired, cpu = _repeat(beat, gen.generation_shown, gen.next_token, args,
                                                      "the generated token's step did not arrive")
            code = code if all_fired else 1
            report["generate"] = {"max_stall_ms": stalls, "max_stall_cpu_ms": cpu, "seconds_to_result": seconds,
                                  "steps": gen.steps()}
            report["generate"]["show_state_ms"] = panels.take()
            traced("generate")

        # 3) a text as long as the context: analysis and the n × n head grid
        if "long_text" in phases:
            window.docks["panel.head_grid"].raise_()  # the grid in sight again (it shares the KV tab group)
            _settle(300)
            n = min(LONG_TEXT_TOKENS, model.lens.config.n_positions)
            ids: list[int] = []
            while len(ids) < n:
                ids += model.tokenizer.encode(PASSAGE)
            text = model.tokenizer.decode(ids[:n])

            def long_text() -> None:
                window.text_panel_set(text)
                session.set_text(text)  # in case the editor doesn't echo a programmatic change

            stall, took, fired = _measure(beat, window.state_shown, long_text, args.timeout, 1000)
            if not fired:
                print("perf probe: the long text produced no analysis", file=sys.stderr)
                code = 1
            report["long_text"] = {"max_stall_ms": [stall], "max_stall_cpu_ms": [round(beat.max_gap_cpu * 1000.0, 1)],
                                   "seconds_to_result": [took],
                                   "tokens": window.last_state.n_tokens if window.last_state else None}
            report["long_text"]["show_state_ms"] = panels.take()
            report["long_text"]["hover_max_stall_ms"] = _hover_stall(beat, window)
            traced("long_text")
        beat.stop()
        if tracer is not None:
            tracer.stop()
    finally:
        teardown(app, window)
        window = None
        tmp.cleanup()
    print(json.dumps(report))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
