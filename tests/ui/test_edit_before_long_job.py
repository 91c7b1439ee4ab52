"""The learner's edit never waits behind a long job: the worker runs an interactive job (the
analysis) at the long job's next progress report, between two of its steps; and the KV
benchmark's timings don't contain it (its steps are reported after each timed forward).

Seen by a learner: during a 2.5-minute KV run on GPT-2 small's shapes, a language switch put the
Portuguese sentence in the editor while the chips, the leakage chart and the guesses kept the
English one until the run ended."""

from __future__ import annotations

import os
import threading
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.core import jobs  # noqa: E402
from attention_lab.core.job_protocol import ANALYSIS, KV_BENCH, Cancelled  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import load  # noqa: E402

LONG = 60_000


@pytest.fixture
def worker(qtbot):
    w = InferenceWorker(name="test-interactive")
    yield w
    assert w.shutdown(5.0)


def _stepping(release: threading.Event, steps: list):
    """A long job of many steps, reporting progress after each, until released or cancelled."""

    def fn(*, cancel, progress):
        while not release.is_set():
            if cancel.wait(0.01):
                raise Cancelled()
            steps.append(time.monotonic())
            progress(len(steps))
        return len(steps)

    return fn


def test_an_analysis_runs_between_a_long_jobs_steps(qtbot, worker):
    release, steps = threading.Event(), []
    long_done = []
    worker.submit(KV_BENCH, _stepping(release, steps), on_result=long_done.append)
    qtbot.waitUntil(lambda: len(steps) >= 3, timeout=LONG)
    ran_on = []
    worker.submit(ANALYSIS, lambda *, cancel, progress: ran_on.append(threading.current_thread().name) or "new text",
                  on_result=ran_on.append)
    qtbot.waitUntil(lambda: "new text" in ran_on, timeout=5_000)  # was: only after the long job's end
    assert not long_done and ran_on[0] == worker.thread.name  # the same one thread, the long job still going
    release.set()
    qtbot.waitUntil(lambda: bool(long_done), timeout=LONG)


def test_a_job_that_is_not_interactive_still_waits_its_turn(qtbot, worker):
    release, steps = threading.Event(), []
    worker.submit(KV_BENCH, _stepping(release, steps))
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=LONG)
    other = []
    worker.submit("mask-modes", lambda *, cancel, progress: "modes", on_result=other.append)
    qtbot.wait(100)
    assert other == []  # in order behind the long job, as before
    release.set()
    qtbot.waitUntil(lambda: other == ["modes"], timeout=LONG)


def test_shutdown_stops_the_long_job_while_an_analysis_runs_inside_it(qtbot):
    worker = InferenceWorker(name="test-interactive-close")
    release, steps = threading.Event(), []
    worker.submit(KV_BENCH, _stepping(release, steps))
    qtbot.waitUntil(lambda: len(steps) >= 2, timeout=LONG)
    inside = threading.Event()

    def analysis(*, cancel, progress):
        inside.set()
        cancel.wait(5)
        raise Cancelled()

    worker.submit(ANALYSIS, analysis)
    assert inside.wait(5)
    assert worker.shutdown(2.0)  # both the analysis and the long job around it stopped


def test_the_kv_benchmarks_step_times_never_contain_what_runs_between_steps(tiny_checkpoint):
    """What the worker runs inside a progress report (here: a 50 ms pause per step) is in no timed interval."""
    model = load(tiny_checkpoint)
    ids = model.tokenizer.encode("The cat sat on the mat")
    pause = 0.05
    result = jobs.kv_benchmark_job(model.lens, ids, 6, 1, progress=lambda _step: time.sleep(pause))
    assert max(result.per_token_with + result.per_token_without) < pause
    assert result.seconds_with_cache < pause * len(result.per_token_with)


def test_a_new_text_is_analysed_while_a_kv_run_goes_on(qtbot, worker, tiny_checkpoint):
    model = load(tiny_checkpoint)
    session = Session(worker, debounce_ms=0)
    session.set_model(model)
    session.set_text("The cat sat on the mat because it was warm and quiet")
    with qtbot.waitSignal(session.state_ready, timeout=LONG):
        session.analyse_now()
    finished, states = [], []
    session.kv_bench_finished.connect(finished.append)
    session.state_ready.connect(states.append)
    with qtbot.waitSignal(session.kv_bench_step, timeout=LONG):
        room = model.lens.config.n_positions - session.state.n_tokens
        session.run_kv_benchmark(session.state, room, 20)  # a long run: the context filled, 20 times each way
    session.set_text("O gato sentou no tapete")
    session.analyse_now()
    qtbot.waitUntil(lambda: any(s.text == "O gato sentou no tapete" for s in states), timeout=LONG)
    assert not finished and session.kv_benchmark_running  # the edit did not wait for the run's end
    session.cancel_kv_benchmark()
    qtbot.waitUntil(lambda: not session.kv_benchmark_running, timeout=LONG)
