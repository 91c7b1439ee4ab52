"""Every kind of work the app hands its worker thread.

Each function follows the protocol of :mod:`attention_lab.core.job_protocol` (keywords
``cancel`` and ``progress``; :class:`~attention_lab.core.job_protocol.Cancelled` to stop).
The app's worker thread is their only caller in the app; ``lab``, the bench and the tests
call the same functions directly.

Results are plain data (tensors, numpy arrays, core dataclasses): they cross to the GUI
thread and are never mutated there.  Nothing here imports Qt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .job_protocol import Cancelled, raise_if_cancelled, throttled

# ---------------------------------------------------------------------------- models
def load_model_job(spec: str, *, cancel=None, progress=None):
    from attention_lab.core.models import load_model

    return load_model(spec)


def load_and_analyse_job(spec: str, request, *, cancel=None, progress=None):
    """(model, (request, its state) or None): at start-up the first analysis runs on the
    worker right after the model, while the GUI thread is still building the panels (the
    window would otherwise ask for it only once built: ~0.1 s of every launch)."""
    from attention_lab.core.pipeline import compute_analysis

    model = load_model_job(spec)
    try:
        state = compute_analysis(model, request, cancel=cancel)
    except Cancelled:
        raise
    except Exception:  # e.g. an empty text: analysed again, and reported, the usual way
        return model, None
    return model, (request, state)


def download_job(repo_id: str, *, cancel=None, progress=None):
    """Download ``repo_id`` into the Hugging Face cache (an explicit user action);
    ``progress((done, total, file))`` as the download process reports it (at most every
    0.1 s, at each file's start and end: :mod:`attention_lab.core.hub_fetch` throttles it)."""
    from attention_lab.core.hub_download import download_model

    report = None if progress is None else (lambda done, total, name: progress((done, total, name)))
    return download_model(repo_id, progress=report, cancel=cancel)


# ---------------------------------------------------------------------------- mask modes
@dataclass
class ModeDetail:
    """One mask mode on the current text: the report row plus what the plots draw."""

    row: object  # core.analysis.MaskModeRow
    row_sums: np.ndarray  # [H, n]: Σⱼ A[i, j] of every head and query row of the layer
    leak: np.ndarray  # [n]: relative change of the final state at every position


@dataclass(frozen=True)
class MaskModes:
    """The five mask modes measured on one state (``key``: :func:`~attention_lab.core.job_protocol.edit_key` of it)."""

    key: tuple
    layer: int
    position: int
    replacement_id: int
    details: dict  # mode name -> ModeDetail


def mask_modes_job(lens, ids: list[int], layer: int, position: int, replacement_id: int, *, cancel=None, progress=None):
    """For each mode its report row, the per-row sums and per-position leak, from one batched
    forward of [original, edited] per mode (core.analysis.mask_mode_passes); the cancel
    flag is checked between modes."""
    from attention_lab.core.analysis import mask_mode_passes

    def stop() -> bool:
        return cancel is not None and cancel.is_set()

    details: dict[str, ModeDetail] = {}
    for row, attn, leak in mask_mode_passes(lens, ids, layer, position, replacement_id, should_stop=stop):
        details[row.mode] = ModeDetail(row, attn.sum(-1).double().numpy(), leak.double().numpy())
    raise_if_cancelled(cancel)
    return details


# ---------------------------------------------------------------------------- head portrait
@dataclass(frozen=True)
class InductionScores:
    model_serial: int
    scores: Any  # torch.Tensor [L, H]
    ids: tuple = ()  # the sequence they were measured on (core.roles.induction_ids)


def induction_job(lens, tokenizer, *, cancel=None, progress=None):
    """The model's induction scores ``[L, H]`` (core.roles.model_induction: the one measurement the
    portrait and the tour quote) and the sequence they were measured on."""
    import torch

    from attention_lab.core.roles import model_induction

    scores, ids = model_induction(lens, tokenizer)
    return scores.to(torch.float32), ids


# ---------------------------------------------------------------------------- KV cache
def kv_benchmark_job(lens, ids: list[int], new_tokens: int, repetitions: int, *, cancel=None, progress=None):
    """Drain core.kvbench.kv_benchmark, forwarding each KVStep as progress; its
    ``BenchmarkCancelled`` is a :class:`Cancelled`."""
    from attention_lab.core.kvbench import KVResult, kv_benchmark

    for item in kv_benchmark(lens, ids, new_tokens, cancel=cancel, repetitions=repetitions):
        if isinstance(item, KVResult):
            return item
        if progress is not None:
            progress(item)
    raise Cancelled()  # the generator ended without a result: only cancellation does that


@dataclass
class TargetKVRun:
    """A benchmark timed on another model than the loaded one (:func:`kvbench.benchmark_model`),
    with what its result is read with: the prompt's ids, the tokenizer and config of that model."""

    result: Any  # core.kvbench.KVResult
    model_name: str
    prompt_ids: list[int]
    tokenizer: Any  # core.tokens.Tokenizer
    config: Any  # core.lens.GPT2Config
    random_weights: bool


def kv_benchmark_target_job(choice: str, text: str, new_tokens: int, repetitions: int, *, cancel=None, progress=None):
    """Build the benchmark's model ``choice`` here on the worker (GPT-2 small's shapes with random
    weights: a second or two, never downloaded), tokenize ``text`` with its tokenizer and time it.
    The text is cut to leave room for at least one new token; ``new_tokens`` to what fits."""
    from attention_lab.core.kvbench import benchmark_model

    target = benchmark_model(choice)
    ctx = target.lens.config.n_positions
    ids = target.tokenizer.encode(text)[: ctx - 1] or [target.tokenizer.eos_id]
    result = kv_benchmark_job(target.lens, ids, max(1, min(int(new_tokens), ctx - len(ids))), repetitions,
                              cancel=cancel, progress=progress)
    return TargetKVRun(result, target.name, ids, target.tokenizer, target.lens.config, target.random_weights)


def kv_stability_job(lens, ids: list[int], *, cancel=None, progress=None):
    from attention_lab.core.analysis import kv_stability

    return kv_stability(lens, ids)


def generation_job(current, lens, tokenizer, ids: list[int], settings, count: int, layer: int, head: int, *,
                   cancel=None, progress=None):
    """core.generation.generation_view: ``current`` (the last view's Generation, or None) brought to
    ``count`` steps on the worker, seen through ``layer`` and ``head``; ``progress((done, total))``
    after each step forward, ``Cancelled`` between two steps."""
    from attention_lab.core.generation import generation_view

    report = None if progress is None else (lambda done, total: progress((done, total)))
    return generation_view(current, lens, tokenizer, ids, settings, count, layer, head, cancel=cancel, progress=report)


def export_csv_job(path: Any, header: list, rows: Any, *, cancel=None, progress=None):
    """Write a panel's table (``header``, ``rows``: plain numbers and texts, or a
    :class:`~attention_lab.core.csv_table.ColumnRows`) to ``path`` as CSV; returns the path written."""
    from attention_lab.core.csv_table import export_csv

    return export_csv(path, header, rows, check=lambda: raise_if_cancelled(cancel))


def export_png_job(path: Any, rgba: Any, *, cancel=None, progress=None):
    """Write a plot's painted pixels (height × width × 4 RGBA bytes) to ``path`` as a PNG; returns the path."""
    from attention_lab.core.png_file import write_png

    return write_png(path, rgba, check=lambda: raise_if_cancelled(cancel))


# ---------------------------------------------------------------------------- mask designer
def mask_report_job(lens, tokenizer, ids: list[int], spec, *, cancel=None, progress=None):
    """core.masks.mask_report of ``spec`` on ``ids`` (a custom grid fitted to the text, a
    documents separator resolved with ``tokenizer``); ``progress((done, total))`` per batch
    of the influence grid's edits."""
    from attention_lab.core.masks import allowed_for_text, custom_mask, mask_report

    if spec.kind in ("custom", "documents"):  # the report builds the mask itself: hand it a ready one
        allowed = allowed_for_text(spec, ids, tokenizer)
        spec = custom_mask(allowed) if spec.kind == "custom" else _resolved_documents(spec, tokenizer)
    return mask_report(lens, ids, spec, cancel=cancel, progress=throttled(progress))


def _resolved_documents(spec, tokenizer):
    from attention_lab.core.masks import parse_mask_spec

    return spec if spec.separator_id is not None else parse_mask_spec(str(spec), tokenizer)


# ---------------------------------------------------------------------------- head knockout
def knockout_job(lens, ids: list[int], heads: tuple, mode: str, position: int, allowed, *, cancel=None, progress=None):
    """core.ablation.knockout: next-token top-5 at ``position`` and the text's loss, before/after."""
    from attention_lab.core.ablation import knockout

    return knockout(lens, ids, heads, mode, position, allowed=allowed)


def rank_heads_job(lens, ids: list[int], mode: str, allowed, *, cancel=None, progress=None):
    """core.ablation.run_rank_heads (every head alone, Δ loss); ``progress((done, total))``
    after a batch of knockouts, at most every 0.1 s (:func:`throttled`)."""
    from attention_lab.core.ablation import run_rank_heads

    step = throttled(progress)
    report = None if step is None else (lambda item: step(item.done, item.total))
    return run_rank_heads(lens, ids, mode, cancel=cancel, progress=report, allowed=allowed)


# ---------------------------------------------------------------------------- the tour
def tour_fact_job(step, ctx, *, cancel=None, progress=None):
    """core.tour.compute_fact, stopping when the job is cancelled or superseded."""
    from attention_lab.core.tour import compute_fact

    if cancel is not None:
        ctx.cancel = cancel.is_set
    return compute_fact(step, ctx)
