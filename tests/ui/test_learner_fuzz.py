"""A stateful fuzzer on the real main window: random learner click-paths, checked after every step.

hypothesis' rule-based state machine draws sequences of learner actions from
``attention_lab.ui.learner_driver.ACTIONS`` (typing, pasting odd texts, chips, guesses,
layers, modes, docks, language, the mask mode, the KV benchmark, the tour, exports,
model switches including a broken folder, resizes); after each one the window settles and
``attention_lab.ui.learner_checks`` must find nothing wrong, and no exception or Qt
warning may have happened on any thread.  A failure is shrunk to a short sequence that
hypothesis prints; ``derandomize=True`` makes the same sequences run every time, so a
failure replays.

One window serves every sequence (a window per sequence would cost more than the
sequences): each starts from :meth:`LearnerDriver.reset`, which puts back only what the
sequence changed.  The random run starts on a 2-head GPT-2 and paints one sequence in
``PAINT_EVERY`` (the checks read what the panels hold, set before any paint).  A step
costs what the window costs: the worker's analysis and the panels' redraw (0.2-0.3 s per
step on the shared 2-core machine at load 5-7, measured; a download, a restart or a model
load costs seconds), so the default run is ``FUZZ_SEQUENCES`` × ``FUZZ_STEPS`` (10 × 30),
about 70 s there; the per-action times are printed.  ``ATTENTION_LAB_FUZZ_SEQUENCES`` /
``ATTENTION_LAB_FUZZ_STEPS`` ask for a longer one (200 × 30: 20-30 minutes there).  The
downloads go to two loopback hubs only.  The regression tests at the end replay
the shrunk sequences of the bugs the fuzzer found.
"""

from __future__ import annotations

import os
import time

import pytest
from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule, run_state_machine_as_test

from attention_lab.ui.learner_checks import FaultTrap, window_problems
from attention_lab.ui.learner_driver import ACTIONS, LearnerDriver
from hub_server import gpt2_files  # noqa: F401 -- a fixture (the repository the loopback hub serves)

FUZZ_SEQUENCES = int(os.environ.get("ATTENTION_LAB_FUZZ_SEQUENCES", "10"))
FUZZ_STEPS = int(os.environ.get("ATTENTION_LAB_FUZZ_STEPS", "30"))
#: one sequence in PAINT_EVERY is painted; the others only lay the window out (painting was
#: about half of a step's time, and what the checks read is drawn before any paint)
PAINT_EVERY = int(os.environ.get("ATTENTION_LAB_FUZZ_PAINT_EVERY", "5"))
HUB_REPO, STALLED_REPO = "someone/tiny-gpt2", "someone/stalling-gpt2"


@pytest.fixture(scope="module")
def fuzz_models(tmp_path_factory, tiny_checkpoint):
    from checkpoints import make_checkpoint

    other = make_checkpoint(tmp_path_factory.mktemp("other-gpt2"), seed=3, n_layer=3, n_head=4, n_embd=32, n_positions=40)
    broken = tmp_path_factory.mktemp("broken-model")
    (broken / "config.json").write_text('{"model_type": "gpt2", "n_layer": 2', encoding="utf-8")  # cut short
    return {"start": str(tiny_checkpoint), "demo": "demo", "other": str(other), "broken": str(broken)}


@pytest.fixture(scope="module")
def small_models(fuzz_models, tmp_path_factory):
    """The random run's models: it starts on a 2-head GPT-2 (a step redraws 2 maps, not 12)
    and switches to the 4-head one, the demo and the broken folder."""
    from checkpoints import make_checkpoint

    two_heads = make_checkpoint(tmp_path_factory.mktemp("two-head-gpt2"), seed=5, n_layer=2, n_head=2, n_embd=16,
                                n_positions=64)
    return {**fuzz_models, "start": str(two_heads)}


@pytest.fixture(scope="module")
def fuzz_hubs(tmp_path_factory, gpt2_files):  # noqa: F811 -- the fixture imported above
    """Two loopback hubs for File › Download: one serves HUB_REPO, one stalls half-way through
    its weights (cancelled by the learner); a repository neither has is the 404.  An empty
    download cache of the module's own; nothing reaches the network."""
    from hub_server import LOOPBACK_MISSING, HubServer, Repo

    if LOOPBACK_MISSING:
        yield {}
        return
    home = tmp_path_factory.mktemp("fuzz-hf-home")
    with pytest.MonkeyPatch.context() as env:
        for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
            env.delenv(var, raising=False)
        env.setenv("HF_HOME", str(home / "hf-home"))
        env.setenv("ATTENTION_LAB_MODELS", str(home / "downloads"))
        env.setenv("NO_PROXY", "127.0.0.1,localhost")
        env.setenv("no_proxy", "127.0.0.1,localhost")
        env.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # set per download by the driver
        # alive for the module (a hub stops itself after 120 s and 400 requests by default: a
        # long run's later downloads found it gone, "can't be reached")
        life = {"max_seconds": 6 * 3600.0, "max_requests": 1_000_000}
        served = HubServer({HUB_REPO: Repo(gpt2_files)}, **life).start()
        # a repository of its own: never complete in the cache, so it always stalls
        stalled = HubServer({STALLED_REPO: Repo(gpt2_files)}, faults={"model.safetensors": "stall"}, **life).start()
        try:
            yield {"served": (served.url, HUB_REPO), "missing": (served.url, "nobody/no-such-model"),
                   "stalled": (stalled.url, STALLED_REPO)}
        finally:
            served.stop()
            stalled.stop()


@pytest.fixture(scope="module")
def shared_window(qapp, fuzz_models, tmp_path_factory):
    """One window for the replayed sequences (each starts with ``driver.reset()``): a
    window's start-up is most of a short test's time."""
    from PySide6.QtCore import QSettings

    from attention_lab.ui.main_window import MainWindow
    from qt_windows import close_windows

    settings_file = str(tmp_path_factory.mktemp("fuzz-settings") / "settings.ini")
    window = MainWindow(settings=QSettings(settings_file, QSettings.Format.IniFormat), model_spec=fuzz_models["start"], debounce_ms=5)
    window.resize(1400, 900)
    window.show()
    yield window
    close_windows([window])


@pytest.fixture
def driver(shared_window, fuzz_models, fuzz_hubs, tmp_path):
    """A learner on the file's shared window (no restarts: a new window's threads would
    outlive the test)."""
    learner = LearnerDriver(shared_window, fuzz_models, tmp_path / "exports", hubs=fuzz_hubs)
    learner.settle()
    return learner


def _restarting_driver(make_window, models, hubs, workdir) -> LearnerDriver:
    learner = LearnerDriver(make_window(model_spec=models["start"], debounce_ms=5), models, workdir,
                            open_window=lambda: make_window(model_spec=None, debounce_ms=5), hubs=hubs)
    learner.settle()
    return learner


@pytest.fixture
def random_driver(make_window, small_models, fuzz_hubs, tmp_path):
    """The random run's learner: a window of the test's own (it may quit and start again)
    on the small models."""
    return _restarting_driver(make_window, small_models, fuzz_hubs, tmp_path / "exports")


@pytest.fixture
def restarting_driver(make_window, fuzz_models, fuzz_hubs, tmp_path):
    """A learner on a window of the test's own, who may quit and start again (the new
    windows, on the same settings file, are torn down with the test)."""
    return _restarting_driver(make_window, fuzz_models, fuzz_hubs, tmp_path / "exports")


def _rule_for(action: str, choices: dict[str, tuple]):
    def step(self, **arguments):
        started = time.perf_counter()
        self.driver.dismiss_error()  # a learner closes the dialog before going on
        getattr(self.driver, action)(**arguments)
        self.driver.settle()
        self.seconds[action] = self.seconds.get(action, 0.0) + time.perf_counter() - started
        self.calls[action] = self.calls.get(action, 0) + 1

    step.__name__ = action
    return rule(**{name: st.sampled_from(values) for name, values in choices.items()})(step)


def learner_machine(driver: LearnerDriver, trap: FaultTrap, counts: dict):
    """The state machine class for ``driver``'s window (one class per test: it holds the window)."""

    def __init__(self):
        RuleBasedStateMachine.__init__(self)
        self.driver = driver
        self.seconds, self.calls = counts["action_seconds"], counts["action_calls"]
        started = time.perf_counter()
        driver.set_paint(counts["sequences"] % PAINT_EVERY == 0)
        driver.reset()
        self.seconds["(reset)"] = self.seconds.get("(reset)", 0.0) + time.perf_counter() - started
        self.calls["(reset)"] = self.calls.get("(reset)", 0) + 1
        trap.take()  # what the reset did is not the sequence's
        counts["sequences"] += 1

    def check(self):
        counts["checks"] += 1
        problems = trap.take() + window_problems(self.driver)
        assert not problems, "\n".join(problems) + "\nactions: " + " → ".join(self.driver.intent.log)

    attrs = {"__init__": __init__, "check": invariant()(check)}
    for action, choices in ACTIONS.items():
        attrs[action] = _rule_for(action, choices)

    def teardown(self):
        counts["steps"] += self.driver.steps
        self.driver.steps = 0

    attrs["teardown"] = teardown
    return type("LearnerMachine", (RuleBasedStateMachine,), attrs)


def run_machine(driver, sequences: int, steps: int, tally=None) -> dict:
    counts = {"sequences": 0, "steps": 0, "checks": 0, "action_seconds": {}, "action_calls": {}}
    trap = FaultTrap().install()
    started = time.monotonic()
    try:
        machine = learner_machine(driver, trap, counts)
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=sequences,
                stateful_step_count=steps,
                derandomize=True,  # the same sequences every run: a failure replays
                database=None,
                deadline=None,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
            ),
        )
    finally:
        trap.uninstall()
        counts["seconds"] = time.monotonic() - started
        print(f"\nlearner fuzz: {counts['sequences']} sequences, {counts['steps']} steps, "
              f"{counts['checks']} checks in {counts['seconds']:.1f} s")
        slowest = sorted(counts["action_seconds"].items(), key=lambda kv: -kv[1])[:40]
        print("  the actions' time (s, calls): " + ", ".join(
            f"{name} {secs:.1f} ({counts['action_calls'][name]})" for name, secs in slowest))
        if tally is not None:
            tally[("learner", "click-path sequences on the real window")] += counts["sequences"]
            tally[("learner", "click-path steps on the real window")] += counts["steps"]
    return counts


def test_random_learner_click_paths_keep_the_window_consistent(random_driver, tally):
    counts = run_machine(random_driver, FUZZ_SEQUENCES, FUZZ_STEPS, tally)
    assert counts["sequences"] >= FUZZ_SEQUENCES


# ---------------------------------------------------------------------------- shrunk sequences, replayed
def replay(driver: LearnerDriver, steps) -> None:
    """Run (action, arguments) steps from a fresh start, checking the window after each."""
    with FaultTrap() as trap:
        driver.reset()
        trap.take()
        for action, arguments in steps:
            driver.dismiss_error()
            getattr(driver, action)(**arguments)
            driver.settle()
            problems = trap.take() + window_problems(driver)
            assert not problems, f"after {action}{arguments}: " + "\n".join(problems)


def test_a_shortened_text_gives_the_kv_panel_its_room_back(driver):
    """Found by hand, caught by the fuzzer: after a context-long text was shortened, "New
    tokens" stayed at 1 and "the text fills the context" stayed."""
    replay(driver, [
        ("open_tab", {"panel_id": "panel.kvbench"}),
        ("paste_text", {"name": "context_long"}),
        ("kv_run", {}),
        ("paste_text", {"name": "short"}),
    ])
    kv = driver.window.panel("panel.kvbench")
    assert kv.new_tokens.value() == 50 and kv.message.text() != ""
    assert "fills" not in kv.message.text()


def test_the_tour_gives_back_the_learners_edit_and_mask_mode(driver):
    """Found by hand: the tour replaced the learner's own edit and left the Mask mode changed."""
    replay(driver, [
        ("click_chip", {"fraction": 0.5}),
        ("pick_guess", {"index": 2}),
        ("set_mask_mode", {"mode": "zero-after-softmax"}),
        ("tour_open", {}),
        ("tour_next", {}),
        ("tour_next", {}),
        ("tour_close", {}),
    ])
    session = driver.window.session
    assert session.position is not None and session.replacement_id is not None
    assert driver.window.panel("panel.mask").selected_mode() == "zero-after-softmax"


def test_switching_to_a_model_with_fewer_heads_with_the_portrait_open(driver):
    """Found by the fuzzer: after a switch of model the portrait read the previous model's
    induction scores ([layers, 4 heads]) for the new model's 12 heads: IndexError in
    show_state (an error dialog) and in retranslate (uncaught)."""
    replay(driver, [
        ("open_tab", {"panel_id": "panel.portrait"}),
        ("load_model", {"name": "other"}),
        ("load_model", {"name": "start"}),
        ("set_language", {"code": "pt_BR"}),
    ])


def test_a_one_token_text_is_analysed(driver):
    """Found by the soak: a text of one token (the first key typed into an empty field)
    made the analysis fail with an error dialog (a head portrait needs two tokens)."""
    replay(driver, [
        ("clear_text", {}),
        ("type_text", {"typed": " x"}),
        ("open_tab", {"panel_id": "panel.portrait"}),
        ("open_tab", {"panel_id": "panel.mask"}),
        ("open_tab", {"panel_id": "panel.kvbench"}),
        ("tour_open", {}),
        ("head_grid_tab", {"index": 2}),
    ])
    assert driver.window.last_state.n_tokens == 1


def test_quitting_and_starting_again_brings_the_session_back(restarting_driver):
    driver = restarting_driver
    replay(driver, [
        ("load_model", {"name": "other"}),
        ("paste_text", {"name": "pt"}),
        ("set_language", {"code": "pt_BR"}),
        ("quit_and_start_again", {}),
    ])
    window = driver.window
    assert driver.restarts == 1
    assert window.session.model.spec == driver.models["other"]
    assert window.panel("panel.token_editor").text().startswith("O Brasil")


def test_an_emptied_text_keeps_its_notice(driver):
    """Found by the soak: after the text was cleared, anything that redrew the last analysis
    (the mask switch, a language change, opening the tour) took "type some text" away."""
    replay(driver, [
        ("clear_text", {}),
        ("set_causal", {"causal": False}),
        ("set_language", {"code": "pt_BR"}),
        ("tour_open", {}),
    ])
    assert not driver.window.panel("panel.token_editor").message.isHidden()


def test_downloads_from_the_menu_served_missing_and_cancelled(driver):
    """File › Download a model… is one of the fuzzer's actions: a served repository becomes
    the model in use, a missing one says so in an error dialog and keeps the model, a
    stalled one is cancelled and keeps the model (all on loopback hubs)."""
    if not driver.hubs:
        pytest.skip("no loopback hub here")
    replay(driver, [
        ("download", {"which": "missing"}),
        ("download", {"which": "stalled"}),
        ("paste_text", {"name": "short"}),
        ("download", {"which": "served"}),
        ("download", {"which": "stalled"}),
    ])
    assert driver.window.session.model.spec == HUB_REPO
    assert driver.window.downloads.dialog is None
