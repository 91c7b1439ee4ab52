"""A stateful fuzzer on the real main window: random learner click-paths, checked after every step.

hypothesis' rule-based state machine draws sequences of learner actions from
``attention_lab.devtools.learner_driver.ACTIONS`` (typing, pasting odd texts, chips, guesses,
layers, modes, docks, language, the mask mode, the KV benchmark, the tour, exports,
model switches including a broken folder, downloads, restarts, resizes); after each one the
window settles and ``attention_lab.devtools.learner_checks`` must find nothing wrong, and no
exception or Qt warning may have happened on any thread.  A failure is shrunk and printed
(with its chunk to rerun); each chunk draws from a fixed seed, so the same sequences run
every time and a failure replays (``ATTENTION_LAB_FUZZ_CHUNKS=light-3`` runs that chunk alone).

The budget, to stay within 3 minutes of CI: FUZZ_SEQUENCES (200) sequences of FUZZ_STEPS (30) steps or more,
in two processes (this one and a child running this test: the machine has 2 cores, and
one window keeps about one busy).  What makes it fit:

- the sequences come in chunks (LIGHT_CHUNK, HEAVY_CHUNK) that the processes take from
  one pool until none is left, so they end together whatever each chunk costs; the child
  starts before this process's fixtures, so both start up side by side;
- one window per process serves every sequence: each starts from
  :meth:`LearnerDriver.reset`, which puts back only what the sequence changed (and rewinds
  the tour, whose position lives in the settings);
- the actions that cost half a second or more (HEAVY: a restart builds a new window, a
  download starts a download process, a model load reads and analyses a model) run in
  HEAVY_SEQUENCES of the 200 sequences, at most HEAVY_STEPS each; the others take every
  other action.  The end of the test requires every action to have run;
- the KV benchmark generates FUZZ_KV_TOKENS tokens once (the panel's consistency is
  checked, not the cache's speed);
- the window is a 2-head GPT-2, painted one sequence in PAINT_EVERY (what the checks read
  is set before any paint), and edits are not debounced (FUZZ_DEBOUNCE_MS);
- ``settle()`` sleeps until the next event instead of polling.

``ATTENTION_LAB_FUZZ_SEQUENCES`` / ``_STEPS`` / ``_PROCESSES`` / ``_HEAVY_SEQUENCES`` change
the run; the per-action times are printed (wall and CPU).  The downloads go to two loopback
hubs only.  The regression tests at the end replay the shrunk sequences of the bugs the
fuzzer found.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from attention_lab.devtools.learner_checks import FaultTrap, window_problems
from attention_lab.devtools.learner_driver import ACTIONS, LearnerDriver
from hub_server import gpt2_files  # noqa: F401 -- a fixture (the repository the loopback hub serves)



def _argument_choices(action: str) -> list[dict]:
    """Every combination of ``action``'s argument choices (ACTIONS)."""
    combos: list[dict] = [{}]
    for name, values in ACTIONS[action].items():
        combos = [{**c, name: v} for c in combos for v in values]
    return combos


FUZZ_SEQUENCES = int(os.environ.get("ATTENTION_LAB_FUZZ_SEQUENCES", "200"))
FUZZ_STEPS = int(os.environ.get("ATTENTION_LAB_FUZZ_STEPS", "30"))
#: processes sharing the sequences (this one and children); they take chunks from one pool
FUZZ_PROCESSES = int(os.environ.get("ATTENTION_LAB_FUZZ_PROCESSES", "2"))
FUZZ_SEED = 20261201  # light chunk j draws from FUZZ_SEED + j, heavy chunk j from FUZZ_SEED + 1000 + j
#: sequences a chunk (one hypothesis run, one seed) holds.  The processes share the run by
#: taking the next chunk not yet taken, heavy ones first, until none is left: a fixed split
#: left one process ~30 % more work than the other (the sequences' costs differ: 116 s
#: against 85 s of CPU), and the run's time is the slower process's.  Each chunk also runs
#: hypothesis' simplest sequence first (its first rule, every step: cheap), one more than
#: its share, so the run still has FUZZ_SEQUENCES drawn ones.
LIGHT_CHUNK, HEAVY_CHUNK = 10, 5
#: the last LIGHT_TAIL light sequences come in chunks of half the size: the processes end at
#: most a small chunk apart (a chunk of 10 costs ~10 s of a core)
LIGHT_TAIL = 20
#: the actions that cost half a second to seconds a step (a new window; a download process;
#: a model read from disk, then analysed).  They run in HEAVY_SEQUENCES of the sequences
#: (hypothesis runs of their own, so a shrunk failure replays with the same rules), at most
#: HEAVY_STEPS of them a sequence, drawn through one rule (``heavy``: hypothesis draws its
#: rules far from evenly, and one rule with the three actions as choices reaches all three);
#: the other sequences take every other action.  Every action must run in the CI run
#: (asserted at the end).
HEAVY = ("quit_and_start_again", "download", "load_model")
HEAVY_CHOICES = tuple((action, arguments) for action in HEAVY for arguments in _argument_choices(action))
HEAVY_SEQUENCES = int(os.environ.get("ATTENTION_LAB_FUZZ_HEAVY_SEQUENCES", "20"))
HEAVY_STEPS = 2
#: one sequence in PAINT_EVERY is painted; the others only lay the window out (painting was
#: about half of a step's time, and what the checks read is drawn before any paint)
PAINT_EVERY = int(os.environ.get("ATTENTION_LAB_FUZZ_PAINT_EVERY", "5"))
#: the random run's KV benchmark: 2 new tokens, 1 repetition (the fuzzer checks the panel's
#: consistency, not the cache's speed; 2, not 1, so "New tokens" clamped to 1 by a full
#: context and given back after is still told apart)
FUZZ_KV_TOKENS = 2
#: the random run's edit debounce: none.  Each action ends with ``settle()``, so edits made
#: within one action (a word typed key by key) still coalesce into one request, as with any
#: debounce; a debounce of 5 ms only added 5 ms of sleep to every step that edits an input
#: (most of them), thousands of steps in a run.  The replayed sequences keep 5 ms.
FUZZ_DEBOUNCE_MS = 0
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


def _restarting_driver(make_window, models, hubs, workdir, debounce_ms: int = 5, **options) -> LearnerDriver:
    learner = LearnerDriver(make_window(model_spec=models["start"], debounce_ms=debounce_ms), models, workdir,
                            open_window=lambda: make_window(model_spec=None, debounce_ms=debounce_ms), hubs=hubs,
                            **options)
    learner.settle()
    return learner


@pytest.fixture
def imports_frozen():
    """What exists before the random run's window out of the collector's sight, as the app does
    before its first window (``gc_pause.freeze_imports``), and in sight again after the test.

    Unfrozen, every full collection walked the test process's ~440 000 objects (torch, Qt,
    pytest, hypothesis): 0.4-0.8 s each, and the app makes one at every switch of window or
    model (``gc_pause.collect_on_switch``: the heavy chunks' model loads, restarts and the
    resets back to the start model), where the app's own walks its window and model only.
    Frozen for the test alone (not for good, as ``freeze_imports`` does): in the suite's one
    process, an earlier test's window left in a reference cycle later would stay in memory."""
    import gc

    gc.collect()  # the earlier tests' garbage freed, not frozen with the rest
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture
def random_driver(imports_frozen, make_window, small_models, fuzz_hubs, tmp_path):
    """The random run's learner: a window of the test's own (it may quit and start again)
    on the small models, the objects from before it frozen (``imports_frozen``)."""
    return _restarting_driver(make_window, small_models, fuzz_hubs, tmp_path / "exports", debounce_ms=FUZZ_DEBOUNCE_MS,
                              kv_new_tokens=FUZZ_KV_TOKENS, kv_repetitions=1)


@pytest.fixture
def restarting_driver(make_window, fuzz_models, fuzz_hubs, tmp_path):
    """A learner on a window of the test's own, who may quit and start again (the new
    windows, on the same settings file, are torn down with the test)."""
    return _restarting_driver(make_window, fuzz_models, fuzz_hubs, tmp_path / "exports")


def _count(counts: dict, action: str, started: float, cpu_started: float) -> None:
    """Add a call of ``action`` begun at (perf_counter, process_time) ``started``, ``cpu_started``:
    the wall time, and the CPU time of every thread of this process (the window's and the
    worker's: what a loaded machine doesn't inflate)."""
    for key, now, then in (("action_seconds", time.perf_counter(), started), ("action_cpu", time.process_time(), cpu_started)):
        counts[key][action] = counts[key].get(action, 0.0) + now - then
    counts["action_calls"][action] = counts["action_calls"].get(action, 0) + 1


def _timed(machine, action: str, arguments: dict) -> None:
    started, cpu_started = time.perf_counter(), time.process_time()
    machine.driver.dismiss_error()  # a learner closes the dialog before going on
    getattr(machine.driver, action)(**arguments)
    machine.driver.settle()
    _count(machine.counts, action, started, cpu_started)


def _rule_for(action: str, choices: dict[str, tuple]):
    def step(self, **arguments):
        _timed(self, action, arguments)

    step.__name__ = action
    return rule(**{name: st.sampled_from(values) for name, values in choices.items()})(step)


def learner_machine(driver: LearnerDriver, trap: FaultTrap, counts: dict, heavy: bool):
    """The state machine class for ``driver``'s window (one class per test: it holds the
    window); ``heavy``: with the HEAVY actions (at most HEAVY_STEPS a sequence), else without."""

    def __init__(self):
        RuleBasedStateMachine.__init__(self)
        self.driver = driver
        self.counts = counts
        self.heavy_left = HEAVY_STEPS
        started, cpu_started = time.perf_counter(), time.process_time()
        # the reset unpainted (it isn't the sequence's; a painted one painted the window once
        # after the text, again after the layout); painting on again repaints the whole window
        # at the sequence's first step
        driver.set_paint(False)
        driver.reset()
        driver.set_paint(counts["sequences"] % PAINT_EVERY == 0)
        _count(counts, "(reset)", started, cpu_started)
        trap.take()  # what the reset did is not the sequence's
        counts["sequences"] += 1

    def check(self):
        counts["checks"] += 1
        problems = trap.take() + window_problems(self.driver)
        assert not problems, "\n".join(problems) + "\nactions: " + " → ".join(self.driver.intent.log)

    attrs = {"__init__": __init__, "check": invariant()(check)}
    for action, choices in ACTIONS.items():
        if action not in HEAVY:
            attrs[action] = _rule_for(action, choices)
    if heavy:
        def heavy_step(self, step):
            self.heavy_left -= 1
            _timed(self, *step)

        heavy_step.__name__ = "heavy"
        attrs["heavy"] = precondition(lambda self: self.heavy_left > 0)(rule(step=st.sampled_from(HEAVY_CHOICES))(heavy_step))

    def teardown(self):
        counts["steps"] += self.driver.steps
        counts["full"] += self.driver.steps >= counts["steps_asked"]
        self.driver.steps = 0

    attrs["teardown"] = teardown
    return type("LearnerMachine", (RuleBasedStateMachine,), attrs)


def run_machine(driver, sequences: int, steps: int, seed_value: int, heavy: bool = False) -> dict:
    """``sequences`` of ``steps`` learner actions (at least) on ``driver``'s window, drawn
    from ``seed_value`` (the same sequences every run: a failure replays with its chunk).
    hypothesis also runs a few sequences it cuts short (it overran its buffer): counted in
    "sequences", not in "full"."""
    counts = {"sequences": 0, "full": 0, "steps": 0, "steps_asked": steps, "checks": 0,
              "action_seconds": {}, "action_cpu": {}, "action_calls": {}}
    trap = FaultTrap().install()
    started, cpu_started = time.monotonic(), time.process_time()
    try:
        machine = seed(seed_value)(learner_machine(driver, trap, counts, heavy))
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=sequences,
                stateful_step_count=steps,
                derandomize=False,  # the chunk's seed instead: the same sequences every run
                database=None,
                print_blob=True,
                deadline=None,
                phases=(Phase.generate, Phase.shrink),
                suppress_health_check=list(HealthCheck),
                report_multiple_bugs=False,
            ),
            # every sequence runs its ``steps`` (hypothesis stops some early otherwise); a
            # failure still shrinks to the simplest actions, at this length
            _min_steps=steps,
        )
    finally:
        trap.uninstall()
        counts["seconds"] = time.monotonic() - started
        counts["cpu_seconds"] = time.process_time() - cpu_started
    return counts


def summary(counts: dict) -> str:
    slowest = sorted(counts["action_seconds"].items(), key=lambda kv: -kv[1])[:40]
    return (f"{len(counts['chunks'])} chunks, "
            f"{counts['full']} sequences of {counts['steps_asked']}+ steps ({counts['sequences']} run), "
            f"{counts['steps']} steps, {counts['checks']} checks in {counts['seconds']:.1f} s "
            f"({counts['cpu_seconds']:.1f} s of CPU while fuzzing)\n"
            "  the actions' time (s wall / s CPU, calls): " + ", ".join(
                f"{name} {secs:.1f} / {counts['action_cpu'][name]:.1f} ({counts['action_calls'][name]})"
                for name, secs in slowest))


def merged(runs: list[dict], seconds: float) -> dict:
    total = {"sequences": 0, "full": 0, "steps": 0, "checks": 0, "cpu_seconds": 0.0, "chunks": [],
             "action_seconds": {}, "action_cpu": {}, "action_calls": {},
             "steps_asked": min(c["steps_asked"] for c in runs), "seconds": seconds}
    for c in runs:
        for key in ("sequences", "full", "steps", "checks", "cpu_seconds", "chunks"):
            total[key] += c[key]
        for key in ("action_seconds", "action_cpu", "action_calls"):
            for name, value in c[key].items():
                total[key][name] = total[key].get(name, 0) + value
    return total


#: the machine's load when this module was imported (before any of its processes worked)
LOAD_AT_START = os.getloadavg()[0]


def load_note(own_processes: int) -> str:
    """The load average before the run and at its end.  Other work on the machine inflates the
    run's CPU seconds as well as its wall time (a5590c1's run: 165 s of CPU idle, 271 s at a load
    of 3-4, 386 s at 10, the same sequences), so two runs compare only at a similar load, or run
    side by side; at the end, this run's own processes count about ``own_processes``."""
    return (f"load average {LOAD_AT_START:.1f} before, {os.getloadavg()[0]:.1f} at the end "
            f"(this run's own processes: about {own_processes})")


def fuzz_chunks() -> list[tuple[str, int, int, bool]]:
    """(name, seed, sequences, heavy) of every chunk of the run, the heavy ones first (the
    costliest first: the processes end closer together)."""
    chunks = []
    for heavy, total, size, tail, base in (
            (True, HEAVY_SEQUENCES, HEAVY_CHUNK, 0, FUZZ_SEED + 1000),
            (False, max(0, FUZZ_SEQUENCES - HEAVY_SEQUENCES), LIGHT_CHUNK, LIGHT_TAIL, FUZZ_SEED)):
        first = j = 0
        while first < total:
            left = total - first
            n = min(left, size if left > tail else max(1, size // 2))
            chunks.append((f"{'heavy' if heavy else 'light'}-{j}", base + j, n, heavy))
            first, j = first + n, j + 1
    return chunks


def _take(pool: Path, name: str) -> bool:
    """Take chunk ``name`` from the pool the processes share; False if another took it."""
    try:
        os.close(os.open(pool / name, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return False
    return True


def run_shard(driver, label: str, pool: Path | None, only: set[str] | None = None) -> list[dict]:
    """This process's part: every chunk it takes from ``pool`` before the others do (None:
    every chunk, or those named in ``only``).  A failing chunk says how to replay it."""
    runs = []
    for name, seed_value, sequences, heavy in fuzz_chunks():
        if (only is not None and name not in only) or (pool is not None and not _take(pool, name)):
            continue
        try:
            # + 1: hypothesis' simplest sequence comes first (see LIGHT_CHUNK)
            runs.append(run_machine(driver, sequences + 1, FUZZ_STEPS, seed_value, heavy=heavy))
        except BaseException:
            print(f"\nlearner fuzz: chunk {name} (seed {seed_value}) failed in {label}; "
                  f"replay it alone with ATTENTION_LAB_FUZZ_CHUNKS={name}")
            raise
        runs[-1]["chunks"] = [name]
        # each chunk's own time: the same seed gives the same sequences in any tree, so two trees
        # compare chunk by chunk (best run side by side, at the same load: see load_note)
        print(f"\nlearner fuzz: chunk {name} in {label}: {runs[-1]['seconds']:.1f} s, "
              f"{runs[-1]['cpu_seconds']:.1f} s of CPU", flush=True)
    if runs:
        print(f"\nlearner fuzz, {label}: " + summary(merged(runs, sum(r["seconds"] for r in runs))))
    return runs


def start_shard(shard: int, report: Path, pool: Path) -> subprocess.Popen:
    """This test in a child process taking chunks from ``pool``; it writes its counts to ``report``."""
    env = dict(os.environ, ATTENTION_LAB_FUZZ_SHARD=str(shard), ATTENTION_LAB_FUZZ_REPORT=str(report),
               ATTENTION_LAB_FUZZ_POOL=str(pool))
    command = [sys.executable, "-m", "pytest", __file__, "-q", "-s", "-p", "no:cacheprovider",
               "-k", "test_random_learner_click_paths_keep_the_window_consistent"]
    return subprocess.Popen(command, env=env, cwd=Path(__file__).resolve().parents[2],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


#: ATTENTION_LAB_FUZZ_CHUNKS=light-3,heavy-0: run only these chunks, in this process (a replay)
REPLAY_CHUNKS = {c for c in os.environ.get("ATTENTION_LAB_FUZZ_CHUNKS", "").split(",") if c} or None


@pytest.fixture(scope="session")
def fuzz_children(tmp_path_factory):
    """The random run's other processes, started before any other fixture of the test: a
    child spends its first ~20 s of CPU on start-up (pytest, torch, transformers, its
    checkpoints, its window); started from the test's body, that ran while this process
    was already fuzzing.  Started first, both processes start up side by side.  A child, a
    replay (REPLAY_CHUNKS) or a deselected random test starts none.  Yields (started
    monotonic time, the chunk pool, [(process, report path)]); the children are killed at
    the end if the test never collected them (its setup failed)."""
    started = time.monotonic()
    if os.environ.get("ATTENTION_LAB_FUZZ_SHARD") is not None or REPLAY_CHUNKS is not None:
        pool = os.environ.get("ATTENTION_LAB_FUZZ_POOL")
        yield started, Path(pool) if pool else None, []
        return
    folder = tmp_path_factory.mktemp("fuzz-shards")
    pool = folder / "pool"
    pool.mkdir()
    children = [(start_shard(i, folder / f"shard-{i}.json", pool), folder / f"shard-{i}.json")
                for i in range(1, FUZZ_PROCESSES)]
    yield started, pool, children
    for child, _report in children:
        if child.poll() is None:
            child.kill()
            child.communicate()


def test_random_learner_click_paths_keep_the_window_consistent(fuzz_children, random_driver, tally):
    """FUZZ_SEQUENCES × FUZZ_STEPS in chunks shared by FUZZ_PROCESSES processes (this one
    and children running this test: the machine has 2 cores, and a window keeps about one
    busy).  A child's failure fails this test with the child's output: the shrunk sequence,
    and the chunk to replay it with.  The time printed runs from the children's start
    (before this process's own fixtures) to the last process's end."""
    started, pool, children = fuzz_children
    shard = os.environ.get("ATTENTION_LAB_FUZZ_SHARD")
    if shard is not None:  # a child: the chunks it takes, its counts to the parent
        runs = run_shard(random_driver, f"process {shard}", pool)
        report = {"runs": runs, "ended": time.time()}  # (wall clock: compared with the parent's)
        Path(os.environ["ATTENTION_LAB_FUZZ_REPORT"]).write_text(json.dumps(report), encoding="utf-8")
        return
    if REPLAY_CHUNKS is not None:
        run_shard(random_driver, "the replay", None, only=REPLAY_CHUNKS)
        print(f"\nlearner fuzz, the replay: {load_note(1)}")
        return
    failed = True
    try:
        runs = run_shard(random_driver, "process 0", pool)
        failed = False
    finally:
        ended = time.time()
        outputs = []
        for child, _report in children:
            if failed:
                child.kill()  # this process's failure is the report
            outputs.append(child.communicate()[0])
    ends = {"process 0": ended}  # wall clock, comparable across the processes
    for i, ((child, report), output) in enumerate(zip(children, outputs), start=1):
        assert child.returncode == 0, f"a fuzz process failed (its output names the chunk to replay):\n{output[-12000:]}"
        child_report = json.loads(report.read_text(encoding="utf-8"))
        runs += child_report["runs"]
        ends[f"process {i}"] = child_report["ended"]
    # how far apart the processes ended (a core doing nothing meanwhile): the chunks' balance
    print(f"\nlearner fuzz: the processes ended {max(ends.values()) - min(ends.values()):.1f} s apart "
          f"(the last: {max(ends, key=ends.get)})")
    assert sorted(name for r in runs for name in r["chunks"]) == sorted(c[0] for c in fuzz_chunks())
    counts = merged(runs, time.monotonic() - started)
    print(f"\nlearner fuzz, {FUZZ_PROCESSES} processes: " + summary(counts) + f"\n  {load_note(FUZZ_PROCESSES)}")
    tally[("learner", "click-path sequences on the real window")] += counts["full"]
    tally[("learner", "click-path steps on the real window")] += counts["steps"]
    assert counts["full"] >= FUZZ_SEQUENCES + len(fuzz_chunks())  # + each chunk's simplest sequence
    # every action, the heavy ones included, runs somewhere in the run: one the seeds' draws
    # missed this time (a heavy action is one of several choices of a rule drawn at most twice a
    # sequence) runs once here with each of its arguments, checked as a sequence's steps are
    missing = sorted(set(ACTIONS) - set(counts["action_calls"]))
    if missing:
        print(f"  not drawn in the run, run once each: {', '.join(missing)}")
    with FaultTrap() as trap:
        for action in missing:
            for arguments in _argument_choices(action):
                random_driver.reset()
                trap.take()
                random_driver.dismiss_error()
                getattr(random_driver, action)(**arguments)
                random_driver.settle()
                problems = trap.take() + window_problems(random_driver)
                assert not problems, f"{action}({arguments}): " + "\n".join(problems)


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
        ("tour_predict", {"choice": "skip"}),  # the step asks first; its set-up edits the last token
        ("tour_close", {}),
    ])
    session = driver.window.session
    assert session.position is not None and session.replacement_id is not None
    assert driver.window.panel("panel.mask").selected_mode() == "zero-after-softmax"


def test_the_tour_gives_back_the_mask_mode_the_learner_picked_during_it(driver):
    """Found by the fuzzer (a 200-sequence run, cut by hand from its 17 steps): a
    mask mode picked during the tour, then overridden by a later step of the tour (the mask
    step selects -inf), came back at the end as the mode from before the tour, not the
    learner's own pick."""
    replay(driver, [
        ("tour_open", {}),  # the first step (the reset rewinds the tour)
        ("set_mask_mode", {"mode": "finfo.min"}),
        ("tour_next", {}),  # the mask step: -inf
        ("tour_close", {}),
    ])
    assert driver.window.panel("panel.mask").selected_mode() == "finfo.min"


def test_the_grids_no_mask_and_the_designer_show_one_mask_after_the_tour(driver):
    """Seen by a learner: "Bidirectional (no mask)" in the head grid (also right after the tour)
    while the Mask designer still said "causal" and "no leak"; the checks after every step
    now compare every control that shows the mask."""
    replay(driver, [
        ("set_causal", {"causal": False}),
        ("open_tab", {"panel_id": "panel.mask_designer"}),
        ("tour_open", {}),
        ("tour_next", {}),
        ("tour_close", {}),
        ("open_tab", {"panel_id": "panel.mask_designer"}),
    ])
    assert driver.window.panel("panel.mask_designer").kind() == "bidirectional"


def test_a_designed_mask_is_said_in_words_everywhere(driver):
    """Seen by a learner: "With the mask documents:." in the head grid and the status bar; and
    bidirectional chosen in the designer made the grid offer "With the mask bidirectional"."""
    replay(driver, [
        ("open_tab", {"panel_id": "panel.mask_designer"}),
        ("designer_kind", {"kind": "documents"}),
        ("open_tab", {"panel_id": "panel.head_grid"}),
        ("set_language", {"code": "pt_BR"}),
        ("open_tab", {"panel_id": "panel.mask_designer"}),
        ("designer_kind", {"kind": "bidirectional"}),
        ("open_tab", {"panel_id": "panel.head_grid"}),
    ])
    grid = driver.window.panel("panel.head_grid")
    assert grid.bidirectional.isChecked() and "bidirecional" not in grid.causal.text().lower()


def test_the_designer_and_knockout_actions_reach_their_panels(driver):
    """The learner driver visits the two lessons added last: a custom grid edited cell by cell,
    a head knocked out and a ranking cancelled, every step checked."""
    replay(driver, [
        ("designer_kind", {"kind": "window"}),
        ("designer_size", {"size": 3}),
        ("designer_edit_as_custom", {}),
        ("designer_click_cell", {"row": 0.6, "column": 0.3}),
        ("designer_kind", {"kind": "documents"}),
        ("designer_separator", {"text": "xyzzy plugh"}),
        ("knockout_head", {"layer": 0.0, "head": 0.99}),
        ("knockout_mode", {"mode": "mean"}),
        ("knockout_rank_then_cancel", {"turns": 2}),
        ("knockout_rank", {}),
        ("knockout_clear", {}),
    ])
    session = driver.window.session
    assert session.knockout == () and session.knockout_mode == "mean"


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


def test_generating_then_switching_text_mask_or_model_mid_way_starts_again(driver):
    """The Generate tab's buttons and switches amid edits, a model switch and Play: the window stays
    consistent, and the panel ends up following the text and model on display, from the text."""
    replay(driver, [
        ("generate_press", {"button": "next"}),
        ("generate_press", {"button": "next"}),
        ("generate_press", {"button": "back"}),
        ("type_text", {"typed": " and more"}),
        ("generate_press", {"button": "next"}),
        ("generate_switch", {"what": "stale"}),
        ("generate_press", {"button": "next"}),
        ("generate_press", {"button": "play"}),
        ("load_model", {"name": "other"}),
        ("generate_press", {"button": "play"}),
        ("generate_switch", {"what": "sample"}),
        ("generate_press", {"button": "next"}),
        ("generate_press", {"button": "reset"}),
        ("set_language", {"code": "pt_BR"}),
        ("generate_press", {"button": "next"}),
    ])
    panel = driver.panel("panel.generate")
    state = driver.window.last_state
    view = panel.view()
    assert not panel._playing and view is not None and panel.steps() == len(view.steps) == 1
    assert view.ids[: len(state.ids)] == tuple(state.ids) and view.config == state.model.lens.config
    assert not view.settings.causal and not view.settings.greedy  # the two switches, each ticked once


def test_csv_exports_are_on_disk_once_the_window_settles(driver):
    """The head grid's CSV is written on the worker (off the GUI thread): the driver waits for it through
    the worker, the check finds each file written, and an edit right after an export still shows."""
    replay(driver, [
        ("export", {"kind": "csv", "panel_id": "panel.head_grid"}),
        ("type_text", {"typed": " and more"}),
        ("export", {"kind": "csv", "panel_id": "panel.leakage"}),
        ("export", {"kind": "csv", "panel_id": "panel.head_grid"}),
    ])
    assert driver.file_asked is not None and driver.file_asked.read_bytes().startswith("\ufefflayer,".encode())
    assert driver.window.exports.writing == []


def test_png_exports_are_on_disk_once_the_window_settles(driver):
    """A PNG is painted on the GUI thread and encoded on the worker: as for a CSV, the
    driver waits for it through the worker and the check finds each file written."""
    replay(driver, [
        ("export", {"kind": "png", "panel_id": "panel.head_grid"}),
        ("type_text", {"typed": " and more"}),
        ("export", {"kind": "png", "panel_id": "panel.leakage"}),
    ])
    assert driver.file_asked is not None and driver.file_asked.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert driver.window.exports.writing == []


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
