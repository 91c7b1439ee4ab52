"""The one protocol every job follows, and the keys its results are matched by.

* a job function takes its inputs positionally plus two keywords, always passed:
  ``cancel`` — a :class:`threading.Event` (or ``None``: never cancelled) — and
  ``progress`` — a callable taking one payload (or ``None``: nobody listens);
* it stops early by raising :class:`Cancelled` (or a subclass: ``BenchmarkCancelled``,
  ``FactCancelled``, ``DownloadCancelled``) once ``cancel`` is set; a cancelled job has
  no result;
* a long job reports ``progress`` between its steps, never inside a timed part: the worker
  runs an interactive job (:data:`INTERACTIVE_KINDS`, the learner's edit) there, so an edit
  never waits for the long job's end and no measured interval contains it;
* its result is matched to the request that asked for it by a key: the model's serial
  plus the inputs the result depends on.

This module imports none of the job modules, so each of them can import :class:`Cancelled`
and the keys from here without an import circle; :mod:`attention_lab.core.jobs` holds the
job functions themselves.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Union

Progress = Callable[[Any], None]

# the kinds of job (latest wins within a kind)
ANALYSIS, MODEL, DOWNLOAD = "analysis", "model", "download"
MASK_MODES, INDUCTION, KV_BENCH, KV_STABILITY, TOUR_FACT = "mask-modes", "induction", "kvbench", "kv-stability", "tour-fact"
MASK_REPORT, KNOCKOUT, RANK_HEADS = "mask-report", "knockout", "rank-heads"
GENERATION = "generation"
EXPORT_FILE = "export-file"  # one kind per file (``file_export_kind``): a second export never drops the first
#: the learner's edits: a job of these kinds waiting behind a long job runs at the long job's next
#: progress report (between two of its steps) instead of after it
INTERACTIVE_KINDS = frozenset({ANALYSIS})


class Cancelled(Exception):
    """A job noticed its cancel event and stopped (it has no result)."""


#: what the core's long computations accept as ``cancel``: an event, or a callable saying "stop"
Cancel = Union[Callable[[], bool], threading.Event, None]


def cancel_check(cancel: Cancel) -> Callable[[], bool]:
    """``cancel`` as a callable that says whether to stop."""
    if cancel is None:
        return lambda: False
    if isinstance(cancel, threading.Event) or hasattr(cancel, "is_set"):
        return cancel.is_set  # type: ignore[union-attr]
    if callable(cancel):
        return cancel
    raise TypeError("cancel must be a callable returning bool or a threading.Event")


def raise_if_cancelled(cancel: threading.Event | None) -> None:
    if cancel is not None and cancel.is_set():
        raise Cancelled()


def model_serial(model: Any) -> int:
    """The loaded model's serial (``LoadedModel.serial``): unlike ``id()``, never reused by a
    later model, so a result can't be mistaken for a newer model's."""
    return int(getattr(model, "serial", 0))


def text_key(state: Any) -> tuple:
    """(model serial, token ids): what every result computed from a state's text depends on."""
    return (model_serial(state.model), tuple(state.ids))


def edit_key(state: Any) -> tuple:
    """:func:`text_key` plus the shown layer and the leakage edit (position, replacement)."""
    return text_key(state) + (state.layer, state.position, state.replacement_id)


def file_export_kind(path: Any) -> str:
    """The worker's kind for writing ``path`` (a table or a picture): exports to two files both get
    written; a newer export to the same file replaces the older one's."""
    return f"{EXPORT_FILE}:{os.fspath(path)}"


def throttled(progress: Progress | None, interval: float = 0.1) -> Callable[[int, int], None] | None:
    """``progress((done, total))`` at most every ``interval`` seconds, and always at the end: a
    long job's reports each cost the GUI thread a queued call and a redraw."""
    if progress is None:
        return None
    last = [float("-inf")]

    def report(done: int, total: int) -> None:
        now = time.monotonic()
        if done >= total or now - last[0] >= interval:
            last[0] = now
            progress((int(done), int(total)))

    return report


def generation_key(state: Any, settings: Any, steps: int, layer: int, head: int) -> tuple:
    """The key of a generation view: the text (:func:`text_key`), the settings (a frozen
    core.generation.GenerationSettings), the number of steps and the head it is seen through."""
    return text_key(state) + (settings, int(steps), int(layer), int(head))


# ---------------------------------------------------------------------------- keys of the mask designer's results
def mask_key(spec: Any) -> tuple:
    """What a result computed under ``spec`` (a core.masks.MaskSpec) depends on: its
    description, and for a custom grid its cells."""
    cells = None if getattr(spec, "matrix", None) is None else spec.matrix.bool().numpy().tobytes()
    return (str(spec), cells)


def mask_report_key(state: Any, spec: Any) -> tuple:
    """The key of the designer's verdicts for ``spec`` on ``state``'s text."""
    return text_key(state) + (mask_key(spec),)


def state_mask_key(state: Any) -> tuple:
    """The mask a state's analysis ran under: its description and its allowed cells."""
    allowed = state.extras.get("allowed")
    cells = None if allowed is None else allowed.numpy().tobytes()
    return (state.extras.get("mask_spec", "causal"), cells)
