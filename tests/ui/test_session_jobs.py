"""The session against mock panels, no window: every panel job goes through the session and
comes back on its typed signal with the key it was asked with; latest wins; a failure
reaches the panel that asked, with the key.

The panels are ``MagicMock(spec=…)``: the test sees exactly which slot the session's
result reached, through the same wiring the main window uses.
"""

from __future__ import annotations

import dataclasses
import os
from unittest.mock import MagicMock

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
import torch  # noqa: E402

from attention_lab.core.analysis import kv_stability, mask_mode_report  # noqa: E402
from attention_lab.core.job_protocol import INDUCTION, MASK_MODES, edit_key, model_serial, text_key  # noqa: E402
from attention_lab.ui.panels.kv_bench import KVBenchPanel  # noqa: E402
from attention_lab.ui.panels.mask import MaskPanel  # noqa: E402
from attention_lab.ui.panels.portrait import PortraitPanel  # noqa: E402
from attention_lab.ui.session import KVRun, Session  # noqa: E402
from attention_lab.ui.wiring import connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import build_state, load  # noqa: E402

LONG = 60_000


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load(tiny_checkpoint)


@pytest.fixture(scope="module")
def state(model):
    return build_state(model)


@pytest.fixture
def session(qtbot):
    worker = InferenceWorker(name="test-session-jobs")
    s = Session(worker)
    yield s
    assert s.shutdown(5.0)


def mock_panel(cls):
    panel = MagicMock(spec=cls)
    panel.panel_id = cls.panel_id
    return panel


def test_the_wiring_connects_intents_to_session_methods(session):
    mask = mock_panel(MaskPanel)
    connect_panel(session, mask)
    mask.modes_wanted.connect.assert_called_once_with(session.measure_mask_modes)
    mask.session_ready.assert_called_once_with()
    kv = mock_panel(KVBenchPanel)
    connect_panel(session, kv)
    kv.benchmark_wanted.connect.assert_called_once_with(session.run_kv_benchmark)
    kv.benchmark_cancel_wanted.connect.assert_called_once_with(session.cancel_kv_benchmark)
    kv.stability_wanted.connect.assert_called_once_with(session.measure_kv_stability)


def test_mask_modes_come_back_keyed_and_only_the_latest(qtbot, session, state, model):
    panel = mock_panel(MaskPanel)
    connect_panel(session, panel)
    other = build_state(model, "A second text, asked for right after the first")
    session.measure_mask_modes(state)
    key = session.measure_mask_modes(other)  # supersedes the first: only this one is delivered
    assert key == edit_key(other)
    qtbot.waitUntil(lambda: panel.show_mask_modes.called, timeout=LONG)
    qtbot.waitUntil(lambda: not session.worker.busy, timeout=LONG)
    assert panel.show_mask_modes.call_count == 1
    result = panel.show_mask_modes.call_args.args[0]
    assert result.key == key and result.layer == other.layer and result.position == other.position
    report = {r.mode: r for r in mask_mode_report(model.lens, other.ids, other.layer, other.position, other.replacement_id)}
    assert {m: d.row.max_leak_before for m, d in result.details.items()} == {m: r.max_leak_before for m, r in report.items()}
    panel.show_job_failure.assert_not_called()


def test_a_failed_job_reaches_the_panel_with_its_kind_and_key(qtbot, session, state):
    panel = mock_panel(MaskPanel)
    connect_panel(session, panel)
    broken = dataclasses.replace(state, layer=99)  # no such layer: the job raises on the worker
    key = session.measure_mask_modes(broken)
    qtbot.waitUntil(lambda: panel.show_job_failure.called, timeout=LONG)
    kind, failed_key, message, details = panel.show_job_failure.call_args.args
    assert (kind, failed_key) == (MASK_MODES, key) and message and "Traceback" in details
    panel.show_mask_modes.assert_not_called()


def test_induction_is_keyed_by_the_model_serial_not_its_id(qtbot, session, model, tiny_checkpoint):
    panel = mock_panel(PortraitPanel)
    connect_panel(session, panel)
    again = load(tiny_checkpoint)  # the same files loaded twice: two models, two serials
    assert model_serial(again) != model_serial(model) > 0
    assert session.measure_induction(model) == model_serial(model)
    qtbot.waitUntil(lambda: panel.show_induction.called, timeout=LONG)
    result = panel.show_induction.call_args.args[0]
    assert result.model_serial == model_serial(model)
    assert result.scores.shape == (model.lens.config.n_layer, model.lens.config.n_head)
    assert INDUCTION == "induction"


def test_kv_benchmark_reports_steps_and_the_text_it_ran_on(qtbot, session, state, model):
    panel = mock_panel(KVBenchPanel)
    connect_panel(session, panel)
    runs = []
    session.kv_bench_finished.connect(runs.append)
    key = session.run_kv_benchmark(state, 3, 1)
    assert session.kv_benchmark_running
    qtbot.waitUntil(lambda: bool(runs), timeout=LONG)
    run = runs[0]
    assert isinstance(run, KVRun) and run.key == key == text_key(state)
    assert run.ids == tuple(state.ids) and run.model_name == model.name
    assert run.result.new_tokens == 3 and run.result.identical
    assert panel.show_benchmark_step.call_count == 2 * 3  # with and without the cache, per token
    panel.show_benchmark_result.assert_called_once_with(run)
    assert not session.kv_benchmark_running


def test_kv_benchmark_cancel_says_cancelled_and_delivers_nothing(qtbot, session, state):
    panel = mock_panel(KVBenchPanel)
    connect_panel(session, panel)
    with qtbot.waitSignal(session.kv_bench_step, timeout=LONG):
        session.run_kv_benchmark(state, 40, 20)
    with qtbot.waitSignal(session.kv_bench_cancelled, timeout=LONG):
        session.cancel_kv_benchmark()
    qtbot.waitUntil(lambda: not session.worker.busy, timeout=LONG)
    panel.show_benchmark_cancelled.assert_called_once_with()
    panel.show_benchmark_result.assert_not_called()


def test_kv_stability_comes_back_with_its_text_key(qtbot, session, state, model):
    panel = mock_panel(KVBenchPanel)
    connect_panel(session, panel)
    key = session.measure_kv_stability(state)
    qtbot.waitUntil(lambda: panel.show_kv_stability.called, timeout=LONG)
    got_key, result = panel.show_kv_stability.call_args.args
    assert got_key == key == text_key(state)
    assert torch.equal(result.bidirectional_keys, kv_stability(model.lens, state.ids).bidirectional_keys)


def test_results_after_shutdown_reach_nobody(qtbot, state):
    worker = InferenceWorker(name="test-session-jobs-closed")
    session = Session(worker)
    panel = mock_panel(MaskPanel)
    connect_panel(session, panel)
    session.measure_mask_modes(state)
    assert session.shutdown(5.0)
    qtbot.wait(100)
    panel.show_mask_modes.assert_not_called()
    session.measure_mask_modes(state)  # after shutdown: nothing runs, nothing breaks
    qtbot.wait(50)
    panel.show_mask_modes.assert_not_called()
