"""The perf probe's event-loop trace: a long stall is put down to the handler that caused it."""

from __future__ import annotations

import time

from attention_lab.ui.stall_trace import QT_ONLY, StallTracer, attribute

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
    exec(compile(SLOT_SOURCE, "fake_panel.py", "exec"), namespace)
    return namespace


def test_a_stall_is_put_down_to_its_handler_and_hot_spot():
    panel = _fake_panel_module()
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
        import sys

        return sys._getframe()

    # this test module is neither the app nor pyqtgraph
    assert attribute(outside()) == (QT_ONLY, QT_ONLY)
