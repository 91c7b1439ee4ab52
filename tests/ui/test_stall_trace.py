"""The perf probe's event-loop trace: a long stall is put down to the handler that caused it."""

from __future__ import annotations

import sys
import tempfile
import threading
import time

from attention_lab.devtools.stall_trace import QT_ONLY, StallTracer, attribute, gui_thread_stack, module_of

# A "slot" that lives in a module of the app, as the event loop would call it: the tracer
# must name it (the outermost app frame) and its inner helper (where the time went).
SLOT_SOURCE = '''
import time

def hot_loop(seconds):
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        sum(range(200))

def show_state(seconds):
    hot_loop(seconds)
'''


def _fake_panel_module() -> dict:
    namespace = {"__name__": "attention_lab.ui.panels.fake_panel"}
    # the tracer knows a module by its file (as faulthandler names it), so the fake has one in the app
    exec(compile(SLOT_SOURCE, "/somewhere/attention_lab/ui/panels/fake_panel.py", "exec"), namespace)
    return namespace


def test_a_stall_is_put_down_to_its_handler_and_hot_spot(monkeypatch):
    panel = _fake_panel_module()

    def crashy(*_):  # walking another thread's frame objects crashes CPython 3.11 at times
        raise AssertionError("the tracer must not read frames through sys._current_frames()")

    monkeypatch.setattr(sys, "_current_frames", crashy)
    beats = {"last": time.perf_counter()}
    tracer = StallTracer(last_beat=lambda: beats["last"], threshold_ms=33.0, every_ms=2.0)
    tracer.start()
    try:
        # a short gap: under the threshold, not a stall
        before, cpu = beats["last"], time.thread_time()
        panel["show_state"](0.005)
        beats["last"] = time.perf_counter()
        tracer.gap_ended(before, beats["last"] - before, time.thread_time() - cpu)
        # a long one: 120 ms in the fake panel without a beat
        before, cpu = beats["last"], time.thread_time()
        panel["show_state"](0.12)
        beats["last"] = time.perf_counter()
        cpu_used = time.thread_time() - cpu
        tracer.gap_ended(before, beats["last"] - before, cpu_used)
        # a long one spent waiting (sleeping): not the app's work
        before, cpu = beats["last"], time.thread_time()
        time.sleep(0.08)
        beats["last"] = time.perf_counter()
        tracer.gap_ended(before, beats["last"] - before, time.thread_time() - cpu)
    finally:
        tracer.stop()
    stalls = tracer.take()
    assert len(stalls) == 2
    stall, waiting = stalls  # longest first
    assert waiting.off_cpu and waiting.cpu_ms < waiting.ms / 2
    assert stall.ms >= 120
    assert stall.samples >= 3
    assert stall.handler == "attention_lab.ui.panels.fake_panel.show_state"
    assert stall.hot_spot == "attention_lab.ui.panels.fake_panel.hot_loop"
    assert tracer.take() == []  # taken once


def test_a_stack_with_no_app_frame_is_qt_s_own_work():
    def outside():
        with tempfile.TemporaryFile() as dump:
            return gui_thread_stack(dump.fileno(), threading.get_ident())

    stack = outside()
    # innermost first: the dump itself, then the function that asked, then this test
    assert stack[0] == "attention_lab.devtools.stall_trace.gui_thread_stack"
    assert stack[1].endswith(".outside") and stack[2].endswith(".test_a_stack_with_no_app_frame_is_qt_s_own_work")
    # this test module is neither the app nor pyqtgraph
    assert attribute(stack) == (QT_ONLY, QT_ONLY)


def test_a_dumped_path_names_its_module():
    assert module_of("/opt/x/site-packages/attention_lab/devtools/soak.py") == "attention_lab.devtools.soak"
    assert module_of("C:\\app\\_internal\\pyqtgraph\\graphicsItems\\PlotItem\\__init__.py") == "pyqtgraph.graphicsItems.PlotItem"
    assert module_of("/usr/lib/python3.11/threading.py") == "/usr/lib/python3.11/threading.py"
    # the probe's frames are cut off, the first app frame under them is the handler
    stack = ["attention_lab.ui.panels.kv_bench.hot", "pyqtgraph.widgets.GraphicsView.paintEvent",
             "attention_lab.devtools.soak.main", "runpy._run_code"]
    assert attribute(stack) == ("pyqtgraph.widgets.GraphicsView.paintEvent", "attention_lab.ui.panels.kv_bench.hot")


def test_the_heartbeat_keeps_the_busiest_turn_s_cpu_apart_from_its_wall_time(qtbot, monkeypatch):
    """A gap the GUI thread spent waiting (other processes on the cores) is long but not busy;
    the probe reports both: the longest gap, and the most CPU the GUI thread used in one gap
    (``max_stall_cpu_ms``), the figure a loaded machine does not inflate."""
    from attention_lab.devtools import perf_probe

    clock = {"wall": 100.0, "cpu": 10.0}
    monkeypatch.setattr(perf_probe.time, "perf_counter", lambda: clock["wall"])
    monkeypatch.setattr(perf_probe.time, "thread_time", lambda: clock["cpu"])
    beat = perf_probe.Heartbeat(5)
    for wall, cpu in ((0.120, 0.002), (0.030, 0.025), (0.005, 0.004)):  # waiting, working, idle
        clock["wall"] += wall
        clock["cpu"] += cpu
        beat._beat()
    assert round(beat.max_gap * 1000) == 120
    assert round(beat.max_gap_cpu * 1000) == 25
    beat.reset()
    assert beat.max_gap == 0.0 and beat.max_gap_cpu == 0.0
