"""``python -m attention_lab.devtools.bench``: how fast the app is, next to what a learner would otherwise use.

Every figure is measured side by side in one run: the two contenders alternate (A B, then
B A, …), each is timed at least ``--reps`` times after a warm-up (fast pairs more often, up
to 25 runs or ~4 s), and the table quotes the ratio of the medians with a verdict against
the app's speed goal.  Absolute times are in
the JSON (``--json``) but mean little: machines differ and are noisy; ratios travel.

Rows (``id`` in the JSON):

- ``forward_attentions``: one lens forward returning logits and every layer's attention, vs
  transformers' ``GPT2LMHeadModel`` (eager attention) with ``output_attentions=True``;
- ``edit_update`` (+ ``edit_update_middle``, ``edit_scaling``): what the panels need after a
  token is changed (:func:`attention_lab.core.fast_paths.edit_update`) vs one transformers
  forward of the [original, edited] batch (eager);
- ``generate_50``: greedy generation with the KV cache vs ``generate(use_cache=True)``;
- ``kv_speedup_50`` / ``kv_speedup_200``: cache vs no cache (:mod:`attention_lab.core.kvbench`, timed
  as the app times it); GPT-2 small's shapes must reach ≥ 2× and ≥ 4×;
- ``startup``: ``attention-lab --smoke-test`` (the first view) vs importing torch and Qt's widgets;
  ``startup_all_panels`` (reported): the same with ``--all-panels``;
- ``gui_stall_edit`` / ``gui_stall_first_open`` / ``gui_stall_kvbench`` / ``gui_stall_long_text``:
  the longest event-loop stall of the real window (:mod:`attention_lab.devtools.perf_probe`, run as a
  separate process three times: the median of each run's worst, with min and max, and the
  handlers that held the GUI thread in stalls over 33 ms);
- ``peak_memory_32`` / ``peak_memory_1024``: peak RSS of one analysis vs the weights' size.

transformers is imported here only (it is the comparison), never by the app at start-up.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import torch

from attention_lab.core import fast_paths, kvbench, machine
from attention_lab.core.checkpoints import GPT2_SMALL_SHAPES, make_random_checkpoint
from attention_lab.core.kvbench import run_kv_benchmark
from attention_lab.core.lens import GPT2Lens

DESKTOP_ROOT = Path(__file__).resolve().parents[2]  # the folder that holds the attention_lab package
GPT2_SMALL_LABEL = "gpt2-small-shaped (random weights)"
# Any English prose: the timings don't depend on the words, only on how many tokens there are.
PASSAGE = (
    "The big dog bit the mailman yesterday. A transformer reads the whole sentence at once, "
    "and every head of every layer decides where each word should look. With the causal mask, "
    "a word may look only at the words before it, which is what lets the model write text one "
    "token at a time and keep the keys and values of the past in a cache. "
)
PROMPT = "The big dog bit the mailman yesterday"

MB = 1024 * 1024
EDIT_SCALING_LENGTHS = (32, 128, 512, 1024)
MEMORY_LENGTHS = (32, 1024)
MEMORY_BUDGET_MB = {32: 600, 1024: 1500}  # the goal: peak ≤ weights + this, dropping what no panel shows


class BenchError(Exception):
    """A setting the bench can't work with; ``str(err)`` is one line for the user."""


@dataclass
class Row:
    """One line of the table.  ``ours``/``theirs`` are medians (seconds, unless ``unit`` says)."""

    id: str
    model: str
    figure: str
    compared_with: str
    goal: str
    unit: str = "s"
    tokens: int | None = None
    ours: float | None = None
    theirs: float | None = None
    ratio: float | None = None
    verdict: str = "skipped"  # met | not met | reported | skipped | failed
    note: str = ""
    ours_samples: list[float] = field(default_factory=list)
    theirs_samples: list[float] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Settings:
    reps: int = 5
    quick: bool = False
    threads: int | None = None
    skip: frozenset[str] = frozenset()
    progress: Callable[[str], None] | None = None

    @property
    def budget_s(self) -> float:
        """Seconds of timing a fast row may take (more runs than ``reps``); none with --quick."""
        return 0.0 if self.quick else TIME_BUDGET_S

    def say(self, message: str) -> None:
        if self.progress is not None:
            self.progress(message)


@dataclass
class BenchModel:
    label: str
    spec: str  # what load_model was given
    folder: Path
    model: Any  # LoadedModel
    measure_memory: bool


# ---------------------------------------------------------------------------- timing
def _median(samples: Sequence[float]) -> float:
    return float(statistics.median(samples))


# fast rows get more runs than --reps (a median of 5 runs of 40 ms swings with the neighbours'
# load), up to MAX_REPS or about TIME_BUDGET_S of timing per row
MAX_REPS = 25
TIME_BUDGET_S = 4.0


def alternate(a: Callable[[], object], b: Callable[[], object], reps: int, warmup: int = 1,
              budget_s: float = TIME_BUDGET_S) -> tuple[list[float], list[float]]:
    """Time ``a`` and ``b`` at least ``reps`` times each, interleaved A B B A A B …, after
    ``warmup`` untimed runs (which also size the number of runs of a fast pair)."""
    start = time.perf_counter()
    for _ in range(warmup):
        a()
        b()
    if warmup and budget_s > 0:
        pair = (time.perf_counter() - start) / warmup
        reps = max(reps, min(MAX_REPS, int(budget_s / max(pair, 1e-6))))
    times: dict[int, list[float]] = {0: [], 1: []}
    funcs = (a, b)
    for rep in range(reps):
        order = (0, 1) if rep % 2 == 0 else (1, 0)  # alternate who goes first: drift hits both
        for which in order:
            gc.collect()
            start = time.perf_counter()
            funcs[which]()
            times[which].append(time.perf_counter() - start)
    return times[0], times[1]


def _verdict(ratio: float | None, goal_max: float | None = None, goal_min: float | None = None) -> str:
    if ratio is None:
        return "failed"
    if goal_max is not None:
        return "met" if ratio <= goal_max else "not met"
    if goal_min is not None:
        return "met" if ratio >= goal_min else "not met"
    return "reported"


def _timed_row(row: Row, ours: Callable[[], object], theirs: Callable[[], object], reps: int,
               *, goal_max: float | None = None, goal_min: float | None = None, throughput: bool = False,
               warmup: int = 1, budget_s: float = TIME_BUDGET_S) -> Row:
    """Fill ``row`` with alternating timings; ``throughput``: ratio = theirs/ours (a tokens/s ratio)."""
    a, b = alternate(ours, theirs, reps, warmup, budget_s)
    row.ours_samples, row.theirs_samples = a, b
    row.ours, row.theirs = _median(a), _median(b)
    row.ratio = (row.theirs / row.ours) if throughput else (row.ours / row.theirs)
    row.verdict = _verdict(row.ratio, goal_max, goal_min)
    return row


# ---------------------------------------------------------------------------- inputs
def text_ids(model, n: int) -> list[int]:
    """``n`` token ids of English prose (the passage repeated)."""
    ids: list[int] = []
    while len(ids) < n:
        ids += model.tokenizer.encode(PASSAGE)
    return ids[:n]


def _lengths(model, wanted: Sequence[int]) -> list[int]:
    ctx = model.lens.config.n_positions
    return sorted({min(n, ctx) for n in wanted})


def _transformers_model(folder: Path):
    """GPT2LMHeadModel in float32 with eager attention (SDPA returns no attention maps)."""
    import transformers
    from transformers import GPT2LMHeadModel

    transformers.utils.logging.set_verbosity_error()
    transformers.utils.logging.disable_progress_bar()
    model = GPT2LMHeadModel.from_pretrained(
        str(folder), attn_implementation="eager", dtype=torch.float32, use_safetensors=True  # never a pickle
    ).eval()
    model.generation_config.eos_token_id = None  # generate exactly N tokens, as the lens does
    model.generation_config.pad_token_id = 50256 if model.config.vocab_size > 50256 else 0
    return model


def lens_greedy(lens: GPT2Lens, prompt: Sequence[int], new_tokens: int) -> list[int]:
    """Greedy generation with the KV cache (the KV panel's "with cache" run)."""
    ids = list(prompt)
    past = None
    for _ in range(new_tokens):
        logits, past = lens.next_token_logits(ids, past)
        ids.append(int(torch.argmax(logits)))
    return ids[len(prompt):]


# ---------------------------------------------------------------------------- in-process rows
def bench_forward(bm: BenchModel, ref, s: Settings) -> Row:
    lens = bm.model.lens
    n = _lengths(bm.model, [32 if s.quick else 128])[0]
    ids = torch.tensor([text_ids(bm.model, n)])
    row = Row("forward_attentions", bm.label, "lens forward returning all attentions",
              "transformers eager forward, output_attentions=True", "ratio ≤ 1.0", tokens=n)

    def theirs():
        with torch.inference_mode():
            return ref(input_ids=ids, output_attentions=True)

    _timed_row(row, lambda: lens(ids, keep_attentions=True, keep_hidden=False), theirs, s.reps, goal_max=1.0,
               budget_s=s.budget_s)
    row.note = "both return logits for every position and every layer's attention"
    return row


def _edit_case(bm: BenchModel, ref, n: int, position: int, s: Settings, row: Row, goal_max: float | None) -> Row:
    lens = bm.model.lens
    ids = text_ids(bm.model, n)
    layer = 0
    replacement = (ids[position] + 1) % lens.config.vocab_size
    edited = list(ids)
    edited[position] = replacement
    pair = torch.tensor([ids, edited])
    base = fast_paths.prepare_edit_base(lens, ids, layer)  # shown before the edit: reused

    def theirs():
        with torch.inference_mode():
            return ref(input_ids=pair)  # the yardstick: one plain forward of the pair

    _timed_row(row, lambda: fast_paths.edit_update(lens, ids, position, replacement, layer, base=base), theirs,
               s.reps, goal_max=goal_max, budget_s=s.budget_s)
    # what the edit costs when the unedited text's results aren't there yet (once, for reference)
    start = time.perf_counter()
    fast_paths.edit_update(lens, ids, position, replacement, layer)
    row.details["cold_seconds"] = time.perf_counter() - start
    row.details["position"] = position
    return row


def bench_edit(bm: BenchModel, ref, s: Settings) -> list[Row]:
    n = _lengths(bm.model, [32 if s.quick else 128])[0]
    compared = "one transformers forward of [original, edited] (batch of 2, eager)"
    late = Row("edit_update", bm.label, "edit update, last token changed: shown layer's maps + leakage, both modes",
               compared, "ratio ≤ 1.0", tokens=n)
    _edit_case(bm, ref, n, n - 1, s, late, 1.0)
    late.note = (f"reuses the unedited text's passes; the first edit of a new text costs "
                 f"{late.details['cold_seconds'] / late.theirs:.2f}× the comparison (measured once)")
    middle = Row("edit_update_middle", bm.label, "edit update, middle token changed (less prefix to reuse)",
                 compared, "reported", tokens=n)
    _edit_case(bm, ref, n, n // 2, s, middle, None)
    return [late, middle]


def bench_edit_scaling(bm: BenchModel, ref, s: Settings) -> list[Row]:
    rows = []
    wanted = (8, 16, 32) if s.quick else EDIT_SCALING_LENGTHS
    for n in _lengths(bm.model, wanted):
        s.say(f"{bm.label}: edit update at {n} tokens")
        row = Row("edit_scaling", bm.label, f"edit update at {n} tokens (last token changed)",
                  "transformers batch-of-2 forward, same length", "reported", tokens=n)
        rows.append(_edit_case(bm, ref, n, n - 1, s, row, None))
    first = rows[0].ours if rows else None
    for row in rows:
        if first and row.ours:
            row.details["growth_vs_shortest"] = row.ours / first
            row.note = f"{row.ours / first:.1f}× the {rows[0].tokens}-token time"
    return rows


def bench_generate(bm: BenchModel, ref, s: Settings) -> Row:
    lens = bm.model.lens
    prompt = bm.model.tokenizer.encode(PROMPT)
    new = min(50, lens.config.n_positions - len(prompt))
    row = Row("generate_50", bm.label, f"cached greedy generation, {new} new tokens (tokens/s)",
              "transformers generate(use_cache=True, do_sample=False)", "ratio ≥ 1.2", tokens=new)
    ours_ids: list[int] = []
    theirs_ids: list[int] = []
    prompt_t = torch.tensor([prompt])

    def ours():
        ours_ids[:] = lens_greedy(lens, prompt, new)

    def theirs():
        with torch.inference_mode():
            out = ref.generate(prompt_t, attention_mask=torch.ones_like(prompt_t), max_new_tokens=new,
                               do_sample=False, use_cache=True)
        theirs_ids[:] = out[0, len(prompt):].tolist()

    _timed_row(row, ours, theirs, s.reps, goal_min=1.2, throughput=True, budget_s=s.budget_s)
    row.details["identical_to_transformers"] = ours_ids == theirs_ids
    row.details["tokens_per_second_ours"] = new / row.ours if row.ours else None
    row.details["tokens_per_second_theirs"] = new / row.theirs if row.theirs else None
    floor = _weight_read_floor(lens, new, s.reps)
    row.details["weights_only_ms_per_token"] = floor / new * 1000
    row.note = "ratio = our tokens/s ÷ theirs; " + (
        "same tokens as transformers" if ours_ids == theirs_ids else "tokens DIFFER from transformers")
    if row.ours and row.theirs:
        per = lambda t: (t - floor) / new * 1000  # noqa: E731 -- ms per token beyond the weights
        row.note += (f"; the weights' matrix products alone take {floor / new * 1000:.1f} ms/token, "
                     f"ours adds {per(row.ours):.1f}, theirs {per(row.theirs):.1f}")
    return row


def _weight_read_floor(lens: GPT2Lens, tokens: int, reps: int) -> float:
    """Seconds for only the matrix-vector products of ``tokens`` cached steps (each layer's
    four weight matrices and the vocabulary projection, one position each): reading every
    weight once per token, with nothing else.  Both implementations must do at least this;
    what a step adds beyond it is all either can save."""
    w = lens.weights
    x = torch.zeros(1, lens.config.n_embd)
    wide = torch.zeros(1, w.layers[0].c_fc_w.shape[1])
    head = lens.output_embedding.T

    def steps() -> None:
        with torch.inference_mode():
            for _ in range(tokens):
                for lw in w.layers:
                    torch.addmm(lw.c_attn_b, x, lw.c_attn_w)
                    torch.addmm(lw.c_proj_b, x, lw.c_proj_w)
                    torch.addmm(lw.c_fc_b, x, lw.c_fc_w)
                    torch.addmm(lw.mlp_proj_b, wide, lw.mlp_proj_w)
                torch.matmul(x, head)

    times = []
    for _ in range(max(1, reps)):
        start = time.perf_counter()
        steps()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


KV_GOALS = {50: 2.0, 200: 4.0}  # speedup goals on GPT-2 small's shapes, cache vs none, on a 2-core laptop-class CPU


def bench_kv(bm: BenchModel, s: Settings) -> list[Row]:
    """Cache vs none at 50 and 200 new tokens, timed as the app times it (:mod:`.kvbench`: warm-up,
    3 interleaved runs a side, one thread, each position's minimum); GPT-2 small's shapes have goals."""
    lens = bm.model.lens
    prompt = bm.model.tokenizer.encode(PROMPT)
    repetitions = 1 if s.quick else kvbench.DEFAULT_REPETITIONS
    rows = []
    for wanted in (50, 200):
        new = min(wanted, lens.config.n_positions - len(prompt))
        goal = KV_GOALS[wanted] if bm.label == GPT2_SMALL_LABEL else None
        s.say(f"{bm.label}: KV cache vs none, {new} new tokens")
        row = Row(f"kv_speedup_{wanted}", bm.label, f"KV-cache speedup, {new} new tokens (cache vs none)",
                  "the same greedy generation without the cache",
                  f"≥ {goal:g}, identical outputs" if goal else "reported, identical outputs", tokens=new)
        result = run_kv_benchmark(lens, prompt, new, repetitions=repetitions)
        row.ours, row.theirs = result.seconds_with_cache, result.seconds_without_cache
        row.ours_samples, row.theirs_samples = result.totals_with, result.totals_without
        row.ratio = result.speedup
        row.verdict = _verdict(result.speedup, goal_min=goal) if result.identical else "not met"
        row.note = "identical outputs" if result.identical else "outputs DIFFER between cache and no cache"
        row.note += f"; {kvbench.growth_sentence(result)}"
        row.details = {"identical": result.identical, "cache_bytes": result.cache_bytes,
                       "repetitions": result.repetitions, "threads": result.threads,
                       "slope_ms_with": result.slope_ms_with, "slope_ms_without": result.slope_ms_without}
        if new != wanted:
            row.note += f"; {new} tokens: the model's context is {lens.config.n_positions}"
        rows.append(row)
    return rows


# ---------------------------------------------------------------------------- subprocess rows
def bench_head_ranking(bm: BenchModel, s: Settings) -> Row:
    """Row ``rank_heads_32``: knock every head out alone on a 32-token text
    (:func:`attention_lab.core.ablation.run_rank_heads`, L × H knockouts, Δ loss) vs one full
    analysis of that text per head -- the analysis's own pass, one lens forward returning the
    logits and every layer's attention, timed alternately with the ranking and multiplied by
    L × H (the app's analysis does more than this pass, so the ratio errs on our side)."""
    from attention_lab.core.ablation import run_rank_heads  # the knockout module, only for this row

    lens = bm.model.lens
    cfg = lens.config
    n = _lengths(bm.model, [32])[0]
    ids = text_ids(bm.model, n)
    heads = cfg.n_layer * cfg.n_head
    row = Row("rank_heads_32", bm.label, f"rank all {heads} heads by knockout (zero, Δ loss)",
              f"one analysis forward (logits + all attentions) × {heads} heads", "ratio ≤ 3.0", tokens=n)
    _timed_row(row, lambda: run_rank_heads(lens, ids, "zero"),
               lambda: lens(ids, keep_attentions=True, keep_hidden=False), s.reps, budget_s=0.0)
    row.theirs_samples = [t * heads for t in row.theirs_samples]
    row.theirs = _median(row.theirs_samples)
    row.ratio = row.ours / row.theirs
    row.verdict = _verdict(row.ratio, goal_max=3.0)
    row.note = f"{row.ours / heads * 1000:.1f} ms per head knocked out (batched by layer)"
    return row


def _python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(DESKTOP_ROOT)] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    env.setdefault("QT_QPA_PLATFORM", "offscreen")
    return env


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=_python_env(), cwd=str(DESKTOP_ROOT))


def _gui_available() -> str | None:
    """None when the desktop app can start here, else why not (one line)."""
    if getattr(sys, "frozen", False):
        return "not measured from a frozen build (run the bench from the sources)"
    ui = DESKTOP_ROOT / "attention_lab" / "ui"
    for needed in ("launch.py", "main_window.py"):
        if not (ui / needed).is_file():
            return f"the desktop app isn't there yet (attention_lab/ui/{needed} is missing)"
    return None


def bench_startup(spec: str | None, label: str, s: Settings) -> list[Row]:
    """The launch (``--smoke-test``: the first view drawn with data, then exit) against
    importing torch and Qt's widgets; and, reported, ``--smoke-test --all-panels``, which also
    builds and draws the four panels behind tabs (what opening each tab adds)."""
    first = Row("startup", label, "startup: attention-lab --smoke-test (wall time; first view)",
                "python importing torch and Qt widgets", "ratio ≤ 1.5")
    every = Row("startup_all_panels", label, "attention-lab --smoke-test --all-panels (all seven panels built and drawn)",
                "python importing torch and Qt widgets", "reported")
    why = _gui_available()
    if why:
        first.note = every.note = why
        return [first, every]
    smoke = [sys.executable, "-m", "attention_lab", "--smoke-test"] + (["--model", spec] if spec else [])
    # the yardstick: a script whose only lines import torch and Qt's widgets
    baseline = [sys.executable, str(Path(__file__).with_name("import_baseline.py"))]
    for row, cmd, goal_max, note in (
        (first, smoke, 1.5, "window, model, one full analysis, the panels in sight drawn, painted and checked"),
        (every, smoke + ["--all-panels"], None, "the same, plus the four panels behind tabs built, drawn and checked"),
    ):
        failures: list[str] = []

        def run(command):
            def go():
                out = _run(command, timeout=600)
                if out.returncode != 0:
                    failures.append(" ".join((out.stderr or out.stdout).split())[-300:] or f"exit {out.returncode}")
            return go

        # the warm-up fills the OS file cache (a first launch after boot reads ~1 GB of libraries)
        _timed_row(row, run(cmd), run(baseline), s.reps, goal_max=goal_max, warmup=0 if s.quick else 1, budget_s=0)
        if failures:
            row.verdict = "failed"
            row.note = f"the smoke test or the import failed: {failures[0]}"
        else:
            row.note = note
    return [first, every]


#: (row id, probe phase, figure, goal in ms): a frame at 60 Hz is 16.7 ms, so 33 ms is two
#: missed frames, which still feels instant; a context-long text and a tab's first opening get more
STALL_ROWS = (
    ("gui_stall_edit", "edit", "GUI thread: longest stall while an edit update runs", 33.0),
    ("gui_stall_first_open", "tabs", "GUI thread: longest stall opening a tab for the first time", 100.0),
    ("gui_stall_kvbench", "kvbench", "GUI thread: longest stall while the KV benchmark runs", 33.0),
    ("gui_stall_long_text", "long_text", "GUI thread: longest stall analysing and drawing a context-long text", 50.0),
    # the tabs' panels are built in idle time after start-up (ui/idle_build.py): the work a first
    # opening no longer does happens there, once, and is held to a first opening's budget
    ("gui_stall_idle_build", "idle_build", "GUI thread: longest stall building the tabs' panels in idle time after start-up", 100.0),
    # ranking every head by knockout runs L × H forwards on the worker; the window
    # must stay responsive meanwhile (progress throttled, the map drawn once at the end)
    ("gui_stall_rank_heads", "rank_heads", "GUI thread: longest stall while every head is ranked by knockout (32 tokens)", 50.0),
    # generation one token at a time: each Next token's step computed on the worker, drawn here
    ("gui_stall_generate", "generate", "GUI thread: longest stall while the Generate panel steps a token", 50.0),
)
#: probe runs per stall row: each run's worst stall is one sample, the row reports their median
STALL_PROBE_RUNS = 3


def _probe_once(cmd: list[str]) -> tuple[dict, str]:
    """One probe process: (its JSON report, what went wrong or "")."""
    try:
        out = _run(cmd, timeout=1800)
    except subprocess.TimeoutExpired:
        return {}, "the probe timed out"
    lines = out.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        return {}, "the probe failed: " + " ".join((out.stderr or "").split())[-300:]
    if out.returncode != 0:
        return result, "the probe reported a problem: " + " ".join((out.stderr or "").split())[-300:]
    return result, ""


def top_handlers(stalls: list[dict], n: int = 3) -> list[tuple[str, float, int]]:
    """The ``n`` handlers that held the GUI thread longest over the probe's ``stalls`` it spent
    working (not those mostly off the CPU): (handler, total ms, how many stalls)."""
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for stall in stalls:
        if stall.get("off_cpu"):
            continue
        total[stall["handler"]] = total.get(stall["handler"], 0.0) + stall["ms"]
        count[stall["handler"]] = count.get(stall["handler"], 0) + 1
    ranked = sorted(total.items(), key=lambda hm: -hm[1])[:n]
    return [(h, round(ms, 1), count[h]) for h, ms in ranked]


def bench_gui_stalls(spec: str | None, label: str, s: Settings, phases: Sequence[str] | None = None) -> list[Row]:
    """The stall rows of ``phases`` (default: all) for the window running ``spec``: the probe
    runs :data:`STALL_PROBE_RUNS` times (once with --quick); a row is the median over runs of
    each run's worst stall, with min and max, and names the three handlers that held the GUI
    thread longest in stalls over 33 ms."""
    wanted = [w for w in STALL_ROWS if phases is None or w[1] in phases]
    rows = [Row(row_id, label, figure, "—", f"≤ {goal:.0f} ms", unit="ms") for row_id, _, figure, goal in wanted]
    why = _gui_available()
    if why:
        for row in rows:
            row.note = why
        return rows
    cmd = [sys.executable, "-m", "attention_lab.devtools.perf_probe", "--reps", str(min(s.reps, 5)),
           "--phases", ",".join(key for _, key, _, _ in wanted)]
    if spec:
        cmd += ["--model", spec]
    if s.quick:
        cmd += ["--kv-tokens", "10"]
    runs = [_probe_once(cmd) for _ in range(1 if s.quick else STALL_PROBE_RUNS)]
    reasons = sorted({reason for _, reason in runs if reason})
    for row, (_, key, _, goal) in zip(rows, wanted):
        phases_run = [result[key] for result, _ in runs if (result.get(key) or {}).get("max_stall_ms")]
        if not phases_run:
            row.verdict, row.note = "failed", "; ".join(reasons) or f"the probe measured no {key} stall"
            continue
        worst_per_run = [max(p["max_stall_ms"]) for p in phases_run]
        row.ours_samples = worst_per_run
        row.ours = statistics.median(worst_per_run)
        row.ratio = row.ours / goal
        row.verdict = "met" if row.ours <= goal else "not met"
        last = phases_run[-1]
        row.details = {k: v for k, v in last.items() if k not in ("max_stall_ms", "stalls")}
        row.details["per_run_max_ms"] = worst_per_run
        stalls = [stall for p in phases_run for stall in p.get("stalls", [])]
        row.details["top_handlers"] = top_handlers(stalls)
        row.tokens = row.details.get("tokens")
        model = next((r.get("model") for r, _ in runs if r.get("model")), "")
        row.note = (f"median of {len(worst_per_run)} probe run(s)' worst stall (min {min(worst_per_run):.0f}, "
                    f"max {max(worst_per_run):.0f} ms); {model}")
        if row.tokens:  # (the model's line above counts the default text's tokens)
            row.note += f"; the long text: {row.tokens} tokens"
        busiest = [max(p["max_stall_cpu_ms"]) for p in phases_run if p.get("max_stall_cpu_ms")]
        if busiest:  # the GUI thread's own work in its busiest turn: what other processes don't inflate
            row.details["per_run_max_cpu_ms"] = busiest
            row.note += f"; the GUI thread's CPU in its busiest turn: median {statistics.median(busiest):.0f} ms"
        hover = row.details.get("hover_max_stall_ms")
        if hover is not None:
            row.note += f"; mouse sweeping the grid's maps: longest stall {hover:.0f} ms"
        opened = row.details.get("first_open_ms")
        if opened:
            row.note += "; first opening: " + ", ".join(f"{k.removeprefix('panel.')} {v:.0f} ms" for k, v in opened.items())
        if row.details["top_handlers"]:
            row.note += "; stalls over 33 ms held by: " + ", ".join(
                f"{h} ({ms:.0f} ms in {n})" for h, ms, n in row.details["top_handlers"])
        waiting = sum(1 for stall in stalls if stall.get("off_cpu"))
        if waiting:
            row.note += (f"; {waiting} of {len(stalls)} such stalls mostly off the CPU (a busy machine, "
                         "or the worker holding the GIL)")
        if reasons:
            row.note += "; " + "; ".join(reasons)
    return rows


_MEMORY_PROBE = r"""
import json, resource, sys
def rss_mb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
folder, n = sys.argv[1], int(sys.argv[2])
import torch
from attention_lab.core.models import load_model
from attention_lab.core import fast_paths
after_import = rss_mb("VmRSS")
model = load_model(folder)
after_load = rss_mb("VmRSS")
text = sys.argv[3]
from attention_lab.core.pipeline import AnalysisRequest, compute_analysis
state = compute_analysis(model, AnalysisRequest(request_id=1, text=text, layer=0))
ids = list(state.ids)
path = "the app's analysis (core.pipeline.compute_analysis) + the fast edit update"
del state
base = fast_paths.prepare_edit_base(model.lens, ids, 0)
update = fast_paths.edit_update(model.lens, ids, len(ids) - 1, (ids[-1] + 1) % model.lens.config.vocab_size, 0, base=base)
print(json.dumps({"tokens": len(ids), "after_import_mb": after_import, "after_load_mb": after_load,
                  "peak_mb": rss_mb("VmHWM"), "weights_mb": model.n_bytes / 2**20, "path": path}))
"""


def bench_memory(bm: BenchModel, s: Settings) -> list[Row]:
    rows = []
    for wanted in MEMORY_LENGTHS:
        n = min(wanted, bm.model.lens.config.n_positions)
        budget = MEMORY_BUDGET_MB[wanted]
        row = Row(f"peak_memory_{wanted}", bm.label, f"peak memory (RSS) analysing {n} tokens",
                  "the weights' size", f"≤ weights + {budget} MB", unit="MB", tokens=n)
        rows.append(row)
        if getattr(sys, "frozen", False):
            row.note = "not measured from a frozen build"
            continue
        s.say(f"{bm.label}: peak memory at {n} tokens")
        text = bm.model.tokenizer.decode(text_ids(bm.model, n))
        try:
            out = _run([sys.executable, "-c", _MEMORY_PROBE, str(bm.folder), str(n), text], timeout=1200)
        except subprocess.TimeoutExpired:
            row.verdict, row.note = "failed", "the memory probe timed out"
            continue
        try:
            probe = json.loads(out.stdout.strip().splitlines()[-1])
        except (json.JSONDecodeError, IndexError):
            row.verdict = "failed"
            row.note = "the memory probe failed: " + " ".join((out.stderr or "").split())[-300:]
            continue
        row.ours, row.theirs = probe["peak_mb"], probe["weights_mb"]
        row.ratio = row.ours / row.theirs
        over = row.ours - row.theirs
        row.verdict = "met" if over <= budget else "not met"
        row.tokens = probe["tokens"]
        row.details = probe
        row.note = (f"{over:.0f} MB above the weights (budget {budget}); the interpreter with torch alone "
                    f"holds {probe['after_import_mb']:.0f} MB; {probe['path']}")
    return rows


# ---------------------------------------------------------------------------- models
def _load_models(specs: Sequence[str] | None, workdir: Path, s: Settings) -> tuple[list[BenchModel], list[str]]:
    from attention_lab.core.models import ModelLoadError, load_model

    models: list[BenchModel] = []
    notes: list[str] = []
    if specs:
        for spec in specs:
            model = load_model(spec)  # a bad --model is the user's mistake: ModelLoadError goes up
            models.append(BenchModel(model.name, spec, Path(model.path).resolve(), model, measure_memory=True))
        return models, notes
    try:
        demo = load_model("demo")
        models.append(BenchModel(demo.name, "demo", Path(demo.path), demo, measure_memory=False))
    except ModelLoadError as exc:
        notes.append(f"demo model skipped: {exc}")
    s.say("writing a GPT-2-small-shaped checkpoint with random weights")
    folder = make_random_checkpoint(workdir / "gpt2-small-shaped", seed=1, **GPT2_SMALL_SHAPES)
    model = load_model(folder)
    models.append(BenchModel(GPT2_SMALL_LABEL, str(folder), folder, model, measure_memory=True))
    return models, notes


# ---------------------------------------------------------------------------- the run
ROW_GROUPS = ("forward", "edit", "scaling", "generate", "kv", "startup", "gui", "memory")


def run_bench(specs: Sequence[str] | None = None, settings: Settings | None = None) -> dict:
    """Measure every row; returns the JSON-able report (``rows``, ``notes``, ``machine``, ``settings``)."""
    s = settings or Settings()
    if s.threads:
        torch.set_num_threads(s.threads)
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="attention-lab-bench-") as tmp:
        models, notes = _load_models(specs, Path(tmp), s)
        for bm in models:
            ref = None
            if {"forward", "edit", "scaling", "generate"} - s.skip:
                ref = _transformers_model(bm.folder)
            if "forward" not in s.skip:
                s.say(f"{bm.label}: forward with attentions")
                rows.append(bench_forward(bm, ref, s))
                rows.append(bench_head_ranking(bm, s))
            if "edit" not in s.skip:
                s.say(f"{bm.label}: edit update")
                rows.extend(bench_edit(bm, ref, s))
            if "generate" not in s.skip:
                s.say(f"{bm.label}: greedy generation")
                rows.append(bench_generate(bm, ref, s))
            if "kv" not in s.skip:
                rows.extend(bench_kv(bm, s))
            if "scaling" not in s.skip:
                rows.extend(bench_edit_scaling(bm, ref, s))
            del ref
            gc.collect()
            if "memory" not in s.skip and bm.measure_memory:
                rows.extend(bench_memory(bm, s))
        # start-up and GUI rows: the first model (the demo model unless --model says otherwise)
        app_spec = models[0].spec if models else None
        if not specs and app_spec and app_spec != "demo":
            notes.append("start-up and GUI stalls measured with the GPT-2-small-shaped checkpoint "
                         "(the demo model is missing)")
        app_label = models[0].label if models else "app"
        if "startup" not in s.skip:
            s.say("startup")
            rows.extend(bench_startup(app_spec, app_label, s))
        if "gui" not in s.skip:
            s.say("GUI stalls")
            rows.extend(bench_gui_stalls(app_spec, app_label, s))
            # GPT-2 small's context: the grid and every panel at ~1000 tokens (the KV
            # benchmark's stall is the demo's: the same panel code, only slower steps)
            for bm in models[1:]:
                if bm.label == GPT2_SMALL_LABEL:
                    s.say("GUI stalls, GPT-2-small shapes")
                    # and a generated token's step at GPT-2's shapes (the panel draws 12 × 12 heads' numbers)
                    rows.extend(bench_gui_stalls(bm.spec, bm.label, s, phases=("edit", "long_text", "generate")))
    return {
        "command": "attention-lab bench " + " ".join(_argv_echo(specs, s)),
        "machine": {**machine.describe(), "torch_threads": torch.get_num_threads(), "torch": torch.__version__},
        "settings": {"reps": s.reps, "quick": s.quick, "threads": s.threads, "skip": sorted(s.skip)},
        "notes": notes,
        "rows": [asdict(r) for r in rows],
    }


def _argv_echo(specs: Sequence[str] | None, s: Settings) -> list[str]:
    out = [f"--model {m}" for m in specs or []]
    out += [f"--reps {s.reps}"] + (["--quick"] if s.quick else []) + ([f"--threads {s.threads}"] if s.threads else [])
    return out + [f"--skip {g}" for g in sorted(s.skip)]


# ---------------------------------------------------------------------------- text output
def _fmt(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit == "s":
        return f"{value * 1000:.1f} ms" if value < 10 else f"{value:.1f} s"
    return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"


def render_text(report: dict) -> str:
    header = ("figure", "model", "tokens", "ours", "compared with", "theirs", "ratio", "goal", "verdict")
    lines = []
    table = [header]
    for r in report["rows"]:
        table.append((
            r["figure"], r["model"], "" if r["tokens"] is None else str(r["tokens"]),
            _fmt(r["ours"], r["unit"]), r["compared_with"], _fmt(r["theirs"], r["unit"]),
            "—" if r["ratio"] is None else f"{r['ratio']:.2f}", r["goal"], r["verdict"],
        ))
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for cells in table[1:]:
        lines.append("| " + " | ".join(c.replace("|", "/") for c in cells) + " |")
    m = report["machine"]
    lines.append("")
    lines.append(f"{report['command']} — {m['cpu_count']} CPUs, torch {m['torch']} with {m['torch_threads']} threads, "
                 f"load average {', '.join(f'{x:.1f}' for x in m['load_average'] or [])}; "
                 f"medians of at least {report['settings']['reps']} alternating runs per contender "
                 f"(fast rows: up to {MAX_REPS}; every sample is in --json)")
    for note in report["notes"]:
        lines.append(f"note: {note}")
    for r in report["rows"]:
        if r["note"]:
            lines.append(f"- {r['id']} ({r['model']}): {r['note']}")
    return "\n".join(lines)


# ---------------------------------------------------------------------------- command line
def settings_from_args(args: argparse.Namespace) -> Settings:
    reps = args.reps if args.reps is not None else (2 if args.quick else 5)
    if reps < 1:
        raise BenchError(f"--reps must be at least 1, got {reps}")
    unknown = sorted(set(args.skip) - set(ROW_GROUPS))
    if unknown:
        raise BenchError(f"unknown row group {unknown[0]!r}; choose from: {', '.join(ROW_GROUPS)}")
    if args.threads is not None and args.threads < 1:
        raise BenchError(f"--threads must be at least 1, got {args.threads}")
    started = time.perf_counter()
    # the run takes minutes: say what it is doing (stderr, so --json output stays one line)
    progress = lambda msg: print(f"… [{time.perf_counter() - started:5.0f} s] {msg}", file=sys.stderr, flush=True)  # noqa: E731
    return Settings(reps=reps, quick=args.quick, threads=args.threads, skip=frozenset(args.skip), progress=progress)


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistake is one line on stderr and exit code 2 (argparse adds the usage)."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m attention_lab.devtools.bench",
        description="Side-by-side timings (alternating runs, medians), ratios and verdicts: forward with "
        "attentions, the edit update, cached generation, the KV cache, start-up, GUI stalls, peak memory.",
    )
    parser.add_argument("--model", metavar="SPEC", action="append", default=None,
                        help="bench this model (repeatable) instead of the demo model and a "
                             "GPT-2-small-shaped checkpoint with random weights")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of the table")
    parser.add_argument("--reps", type=int, default=None, help="timed runs per contender (default 5; --quick: 2)")
    parser.add_argument("--quick", action="store_true", help="short inputs, few runs: a check that it works")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    parser.add_argument("--skip", action="append", default=[], choices=ROW_GROUPS, metavar="GROUP",
                        help=f"leave out a group of rows (repeatable): {', '.join(ROW_GROUPS)}")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the bench: the table, or one JSON object with ``--json``.
    Exit codes: 0 done; 2 a bad option (one line on stderr)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    from attention_lab.core.models import ModelLoadError

    try:
        settings = settings_from_args(args)
        report = run_bench(args.model, settings)
    except (BenchError, ModelLoadError) as exc:
        print(f"{parser.prog}: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render_text(report) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
