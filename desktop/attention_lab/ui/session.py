"""The controller between the window and the worker, and the worker's only client.

It owns the current :class:`~attention_lab.core.models.LoadedModel` and the learner's inputs,
one :class:`~attention_lab.core.inputs.LearnerInputs` value (text, BOS, layer, mask, leakage
edit, knockouts…); every change is a new value announced on :attr:`inputs_changed`.
Edits are debounced (150 ms) and become "analysis" jobs on the worker; the finished
:class:`~attention_lab.core.analysis_state.AnalysisState` comes back through
:attr:`state_ready`.  Model switches are "model" jobs on the same worker; a failed load
keeps the previous model.  Explicit downloads run on a second, download-only worker so a
slow network never blocks the analysis.

Every other kind of work (mask modes, induction scores, the KV benchmark, K/V stability,
tour facts) is a method here too: a panel emits an intent, :mod:`attention_lab.ui.wiring`
calls the method, the job function from :mod:`attention_lab.core.jobs` runs on the
worker, and the result comes back on a typed signal with the key it was asked for
(:func:`~attention_lab.core.job_protocol.text_key` / :func:`~attention_lab.core.job_protocol.edit_key`:
the model's serial plus the inputs), so a view can tell a stale result from its own.
Latest wins per kind (the worker drops or cancels a superseded job); failures of these
jobs arrive on :attr:`job_failed` as (kind, key, message, details).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

from PySide6.QtCore import QObject, QTimer, Signal

from attention_lab.core import job_protocol, jobs
from attention_lab.core.job_protocol import (
    ANALYSIS, DOWNLOAD, INDUCTION, KNOCKOUT, KV_BENCH, KV_STABILITY, MASK_MODES, MASK_REPORT, MODEL, RANK_HEADS,
    TOUR_FACT, edit_key, model_serial, text_key,
)
from attention_lab.core.inputs import LearnerInputs
from attention_lab.core.models import ModelLoadError
from attention_lab.core.pipeline import AnalysisRequest, EmptyTextError, compute_analysis
from attention_lab.core.pooling import PREVIEW_PIXELS
from attention_lab.ui.i18n import tr
from attention_lab.ui.model_label import model_label
from attention_lab.ui.strings.core_messages import core_message, then, with_details  # (registers the texts too)
from attention_lab.ui.strings import session as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.worker import InferenceWorker, Job


DEBOUNCE_MS = 150


@dataclasses.dataclass(frozen=True)
class KVRun:
    """A finished KV benchmark and what it ran on (``key``: :func:`text_key` of the state)."""

    key: tuple
    ids: tuple
    model_name: str
    result: Any  # core.kvbench.KVResult
    # what the result is read with: the loaded model's, or the benchmark model's (another
    # tokenizer and config when GPT-2 small's shapes were timed); None: the loaded model's
    tokenizer: Any = None
    config: Any = None
    random_weights: bool = False


# the inputs an analysis depends on (the head grid's mode, the Mask panel's mode and the KV
# benchmark's count are only shown or used by a job of their own)
ANALYSED_INPUTS = frozenset({"text", "bos", "layer", "mask", "position", "replacement_id", "knockout", "knockout_mode"})


class Session(QObject):
    inputs_changed = Signal(object, object)  # the old and the new core.inputs.LearnerInputs
    mask_mode_picked = Signal(str)  # a Mask panel mode set, even the one already set
    state_ready = Signal(object)  # AnalysisState
    busy = Signal(bool)
    error = Signal(str, str)  # message, details
    notice = Signal(str)  # an input problem that needs no dialog (empty text…)
    model_changed = Signal(object)  # LoadedModel
    model_loading = Signal(str)  # spec
    model_failed = Signal(str, str)  # spec, reason
    download_progress = Signal(int, int, str)  # bytes done, bytes total (0 = unknown), file
    download_finished = Signal(bool, str)  # ok, message
    # the other jobs' typed results (see the module docstring)
    mask_modes_ready = Signal(object)  # core.jobs.MaskModes
    induction_ready = Signal(object)  # core.jobs.InductionScores
    kv_stability_ready = Signal(object, object)  # key, core.analysis.KVStability
    kv_bench_step = Signal(object)  # core.kvbench.KVStep
    kv_bench_finished = Signal(object)  # KVRun
    kv_bench_cancelled = Signal()
    fact_ready = Signal(object, object)  # key, core.tour.Fact
    mask_report_ready = Signal(object, object)  # key, core.masks.MaskReport
    mask_report_progress = Signal(int, int)  # edits measured, edits in all
    knockout_ready = Signal(object, object)  # key, core.ablation.KnockoutResult
    ranking_progress = Signal(int, int)  # heads knocked out so far, L × H
    ranking_ready = Signal(object, object)  # key, core.ablation.HeadRanking
    ranking_cancelled = Signal()
    analysis_mask_changed = Signal(object, object)  # the analysis's MaskSpec (None: causal), knocked heads
    job_failed = Signal(str, object, str, str)  # kind, key, message, details
    file_exported = Signal(object)  # the Path of an exported table or picture, written
    file_export_failed = Signal(object, str, str)  # the Path, message, details

    def __init__(
        self,
        worker: InferenceWorker,
        *,
        download_worker: InferenceWorker | None = None,
        debounce_ms: int = DEBOUNCE_MS,
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.worker = worker
        self.download_worker = download_worker
        self.model: Any = None
        self._inputs = LearnerInputs()
        self._rank_job: Job | None = None
        self.grid_pixels = PREVIEW_PIXELS  # the head grid's map width: the worker pools long texts to it
        self.state = None  # the AnalysisState on display
        self._next_id = 0
        self._analysis_job: Job | None = None
        self._download_job: Job | None = None
        self._kv_job: Job | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.analyse_now)
        worker.busy_changed.connect(self.busy)

    # ------------------------------------------------------------------ inputs
    @property
    def inputs(self) -> LearnerInputs:
        """Every input the learner has set (a new value at each change: :attr:`inputs_changed`)."""
        return self._inputs

    def set_inputs(self, new: LearnerInputs, *, analyse: bool = True) -> bool:
        """Make ``new`` the inputs (the tour gives a snapshot back this way): every control follows
        through :attr:`inputs_changed`; an analysis is asked for when an analysed input changed
        (``analyse``), a head grid mode alone redraws the state on display.  True if anything changed."""
        old = self._inputs
        changed = new.changed_fields(old)
        if not changed:
            return False
        self._inputs = new
        self.inputs_changed.emit(old, new)
        if changed & {"mask", "knockout", "knockout_mode"}:
            self.analysis_mask_changed.emit(new.mask, new.knockout)
        if changed & ANALYSED_INPUTS:
            if analyse:
                self._schedule()
        elif "causal" in changed and self.state is not None:
            # both modes are in every state: no recomputation
            self.state = dataclasses.replace(self.state, causal=new.causal)
            self.state_ready.emit(self.state)
        return True

    def _change(self, **changes: Any) -> bool:
        return self.set_inputs(self._inputs.replace(**changes))

    # the inputs one by one (read, and set without an analysis: the settings file, the start-up text)
    text = property(lambda self: self._inputs.text,
                    lambda self, value: self.set_inputs(self._inputs.replace(text=str(value)), analyse=False))
    layer = property(lambda self: self._inputs.layer,
                     lambda self, value: self.set_inputs(self._inputs.replace(layer=int(value)), analyse=False))
    causal = property(lambda self: self._inputs.causal,
                      lambda self, value: self.set_inputs(self._inputs.replace(causal=bool(value)), analyse=False))
    bos = property(lambda self: self._inputs.bos,
                   lambda self, value: self.set_inputs(self._inputs.replace(bos=bool(value)), analyse=False))
    position = property(lambda self: self._inputs.position)
    replacement_id = property(lambda self: self._inputs.replacement_id)
    mask = property(lambda self: self._inputs.mask)  # core.masks.MaskSpec of the analysis; None: causal
    knockout = property(lambda self: self._inputs.knockout)
    knockout_mode = property(lambda self: self._inputs.knockout_mode)

    def set_text(self, text: str) -> None:
        self._change(text=str(text))

    def set_layer(self, layer: int) -> None:
        layer = int(layer)
        if self.model is not None:
            layer = min(max(0, layer), self.model.lens.config.n_layer - 1)
        self._change(layer=layer)

    def set_grid_pixels(self, pixels: int) -> None:
        """The head grid's maps are ``pixels`` wide now: the next analyses pool long texts to
        that on the worker (the one on display is not recomputed: the grid pools it itself)."""
        self.grid_pixels = max(32, int(pixels))

    def set_causal(self, causal: bool) -> None:
        """The head grid's choice, the maps with the mask or without any (both are in every
        state, so no recomputation unless it turns the designer's "no mask" back to GPT-2's)."""
        self.set_inputs(self._inputs.with_mask_shown(bool(causal)))

    def _last_token(self, position: int | None) -> int | None:
        if self.state is not None and position is not None and position >= self.state.n_tokens - 1:
            return None  # the last token: keep following it as the text grows
        return position

    def set_position(self, position: int | None) -> None:
        """The edited position of the leakage diff (None: the last token)."""
        position = self._last_token(position)
        if position != self.position:
            self._change(position=position, replacement_id=None)

    def set_replacement(self, position: int | None, token_id: int) -> None:
        self._change(position=self._last_token(position), replacement_id=int(token_id))

    def set_bos(self, bos: bool) -> None:
        bos = bool(bos)
        if bos == self.bos:
            return
        shift = 1 if bos else -1  # keep pointing at the same token
        position = None if self.position is None else max(0, self.position + shift)
        self._change(bos=bos, position=position)

    def set_mask(self, spec) -> None:
        """The mask the analysis runs under (a core.masks.MaskSpec; None or causal: GPT-2's),
        chosen in the designer: the head grid shows it on."""
        self.set_inputs(self._inputs.with_mask(spec))

    def set_mask_mode(self, mode: str) -> None:
        """The Mask panel's way of hiding the future (a core.lens.MaskMode value); a pick that
        changes nothing is still announced (:attr:`mask_mode_picked`: the tour gives back the last pick)."""
        self._change(mask_mode=str(mode))
        self.mask_mode_picked.emit(str(mode))

    def set_kv_new_tokens(self, count: int) -> None:
        """How many tokens the KV benchmark generates per run."""
        self._change(kv_new_tokens=int(count))

    def set_knockout(self, heads, mode: str = "zero") -> None:
        """Heads (layer, head) knocked out in the analysis (``mode``: zero or mean); () for none."""
        self._change(knockout=tuple(heads), knockout_mode=str(mode))

    def toggle_knockout(self, layer: int, head: int) -> None:
        """Knock one more head out, or bring it back (the head grid's Shift+click)."""
        self.set_knockout(set(self.knockout) ^ {(int(layer), int(head))}, self.knockout_mode)

    def replacement_from_word(self, word: str, position: int | None = None) -> tuple[int | None, str]:
        """The single token for a typed word (id, "") or (None, why not).

        A leading space is added when the replaced token has one (GPT-2 spells " dog" and
        "dog" differently), unless the learner typed one.
        """
        if self.model is None:
            return None, tr("session.no_model")
        if not word.strip():
            return None, tr("session.replacement_empty")
        tok = self.model.tokenizer
        state = self.state
        if state is not None and not word.startswith(" "):
            pos = state.position if position is None else position
            if 0 <= pos < len(state.tokens) and state.tokens[pos].startswith("␣"):
                word = " " + word
        ids = tok.encode(word)
        if len(ids) != 1:
            pieces = " + ".join(tok.token_texts(ids))
            return None, tr("session.replacement_many", word=word.strip(), count=len(ids), pieces=pieces)
        return ids[0], ""

    def apply_replacement(self) -> None:
        """Write the leakage edit into the text: the replaced token becomes part of it."""
        state = self.state
        if state is None or self.model is None:
            return
        ids = list(state.ids)
        ids[state.position] = state.replacement_id
        if state.extras.get("bos"):
            ids = ids[1:]
        kept = state.extras.get("kept_chars", len(state.text))
        self.set_inputs(self._inputs.replace(text=self.model.tokenizer.decode(ids) + state.text[kept:],
                                             replacement_id=None), analyse=False)
        self.analyse_now()

    # ------------------------------------------------------------------ analysis
    def _schedule(self) -> None:
        self._timer.start()  # restarts: rapid edits coalesce into one request

    @property
    def pending(self) -> bool:
        """An edit is waiting for its debounce or its result."""
        job = self._analysis_job
        return self._timer.isActive() or (job is not None and not job.done)

    def _request(self, request_id: int) -> AnalysisRequest:
        return AnalysisRequest(
            request_id=request_id,
            text=self.text,
            layer=self.layer,
            causal=self.causal,
            position=self.position,
            replacement_id=self.replacement_id,
            bos=self.bos,
            mask=self.mask,
            knockout=self.knockout,
            knockout_mode=self.knockout_mode,
            grid_pixels=self.grid_pixels,
        )

    def analyse_now(self, prefetched=None) -> Job | None:
        """Ask the worker for the current inputs' analysis; ``prefetched`` (a state computed
        with the model's loading, as ``(request, state)``) is shown instead when it was made
        for these very inputs."""
        self._timer.stop()
        if self.model is None or self.worker.is_shut_down:
            return None
        if not self.text:
            self.worker.cancel(ANALYSIS)
            self.notice.emit(tr("session.empty_text"))
            return None
        self._next_id += 1
        request = self._request(self._next_id)
        if prefetched is not None and dataclasses.replace(prefetched[0], request_id=request.request_id) == request:
            self.worker.cancel(ANALYSIS)  # an older request still running would replace it
            self._on_state(dataclasses.replace(prefetched[1], request_id=request.request_id))
            return None
        self._analysis_job = self.worker.submit(
            ANALYSIS, compute_analysis, self.model, request, on_result=self._on_state, on_error=self._on_analysis_error
        )
        return self._analysis_job

    def _on_state(self, state) -> None:
        if state.request_id != self._next_id:
            return  # a newer request was made after this one started: it is on its way
        if state.causal != self.causal:
            state = dataclasses.replace(state, causal=self.causal)
        self.set_inputs(self._inputs.replace(layer=state.layer), analyse=False)  # (clamped to the model's layers)
        self.state = state
        self.state_ready.emit(state)

    def _on_analysis_error(self, exc: BaseException, details: str) -> None:
        if isinstance(exc, EmptyTextError):
            self.notice.emit(tr("session.empty_text"))
            return
        self.error.emit(tr("session.analysis_failed", reason=_one_line(exc)), details)

    # ------------------------------------------------------------------ models
    def load_model(self, spec: str, *, analyse_along: bool = False) -> Job | None:
        """Load ``spec`` on the worker; on success it becomes the model and the text is re-analysed.

        ``analyse_along``: the worker analyses the current inputs right after loading (the
        start-up case); the state is used if the inputs haven't changed meanwhile."""
        if self.worker.is_shut_down:
            return None
        spec = str(spec)
        self.model_loading.emit(spec)
        on_error = lambda exc, details: self._on_model_error(spec, exc, details)  # noqa: E731
        if analyse_along and self.text:
            return self.worker.submit(
                MODEL, jobs.load_and_analyse_job, spec, self._request(0),
                on_result=lambda pair: self._on_model_loaded(*pair), on_error=on_error,
            )
        return self.worker.submit(MODEL, jobs.load_model_job, spec, on_result=self._on_model_loaded, on_error=on_error)

    def set_model(self, model) -> None:
        """Make an already loaded model current (also used by tests)."""
        self._on_model_loaded(model)

    def _on_model_loaded(self, model, prefetched=None) -> None:
        previous = self.model
        self.model = model
        changes: dict[str, Any] = {"layer": min(self.layer, model.lens.config.n_layer - 1)}
        if previous is None or previous.tokenizer.vocab_size != model.tokenizer.vocab_size:
            changes["replacement_id"] = None
        self.set_inputs(self._inputs.replace(**changes), analyse=False)  # (analysed just below)
        self.model_changed.emit(model)
        self.analyse_now(prefetched)

    def _on_model_error(self, spec: str, exc: BaseException, details: str) -> None:
        reason, detail = _reason_parts(exc)
        message = tr("session.model_failed", spec=spec, reason=reason)
        if self.model is not None:
            message = then(message, tr("session.model_kept", name=model_label(self.model)))  # the demo's name in the language
        self.model_failed.emit(spec, with_details(reason, detail))
        self.error.emit(with_details(message, detail), details)

    def download(self, repo_id: str) -> Job | None:
        """Download ``repo_id`` into the Hugging Face cache (explicit user action), then load it."""
        worker = self.download_worker or self.worker
        if worker.is_shut_down:
            return None
        self._download_job = worker.submit(
            DOWNLOAD,
            jobs.download_job,
            repo_id,
            on_result=lambda path: self._on_downloaded(repo_id, path),
            on_error=lambda exc, details: self._on_download_error(repo_id, exc, details),
            on_progress=lambda p: self.download_progress.emit(int(p[0]), int(p[1]), str(p[2])),
            on_cancelled=lambda: self.download_finished.emit(False, tr("session.download_cancelled", repo=repo_id)),
        )
        return self._download_job

    def cancel_download(self) -> None:
        if self._download_job is not None:
            self._download_job.cancel()

    def _on_downloaded(self, repo_id: str, path) -> None:
        self.download_finished.emit(True, str(path))
        self.load_model(repo_id)  # by its id: found in the cache, and remembered as "gpt2" for next time

    def _on_download_error(self, repo_id: str, exc: BaseException, details: str) -> None:
        reason, detail = _reason_parts(exc)
        message = with_details(tr("session.download_failed", repo=repo_id, reason=reason), detail)
        self.download_finished.emit(False, message)
        self.error.emit(message, details)

    # ------------------------------------------------------------------ the panels' and the tour's jobs
    def _submit(self, kind: str, key: Any, fn: Callable, *args: Any, on_result: Callable[[Any], None], **callbacks) -> Job | None:
        """Run ``fn`` as the latest job of ``kind``; its failure goes to :attr:`job_failed` with ``key``."""
        if self.worker.is_shut_down:
            return None

        def failed(exc: BaseException, details: str) -> None:
            self.job_failed.emit(kind, key, _one_line(exc), details)

        return self.worker.submit(kind, fn, *args, on_result=on_result, on_error=failed, **callbacks)

    def measure_mask_modes(self, state) -> tuple:
        """The five mask modes on ``state`` → :attr:`mask_modes_ready`; returns the key."""
        key = edit_key(state)
        ids, layer, position, replacement = list(state.ids), state.layer, state.position, state.replacement_id
        self._submit(
            MASK_MODES, key, jobs.mask_modes_job, state.model.lens, ids, layer, position, replacement,
            on_result=lambda details: self.mask_modes_ready.emit(jobs.MaskModes(key, layer, position, replacement, details)),
        )
        return key

    def measure_induction(self, model) -> int:
        """The model's induction scores (once per model) → :attr:`induction_ready`; returns its serial."""
        serial = model_serial(model)
        self._submit(
            INDUCTION, serial, jobs.induction_job, model.lens, model.tokenizer,
            on_result=lambda pair: self.induction_ready.emit(jobs.InductionScores(serial, pair[0], tuple(pair[1]))),
        )
        return serial

    def measure_kv_stability(self, state) -> tuple:
        """K and V of earlier positions when a token is appended → :attr:`kv_stability_ready`."""
        key = text_key(state)
        self._submit(KV_STABILITY, key, jobs.kv_stability_job, state.model.lens, list(state.ids),
                     on_result=lambda result: self.kv_stability_ready.emit(key, result))
        return key

    def run_kv_benchmark(self, state, new_tokens: int, repetitions: int, model_choice: str = "loaded") -> tuple:
        """Generate with and without the cache on ``state``'s text: :attr:`kv_bench_step` per
        token, then :attr:`kv_bench_finished` (or :attr:`kv_bench_cancelled`).

        ``model_choice``: ``"loaded"``, or one of :data:`core.kvbench.KV_MODELS` built on the
        worker for the run (GPT-2 small's shapes with random weights)."""
        key = text_key(state)
        common = dict(on_progress=self.kv_bench_step.emit, on_cancelled=self.kv_bench_cancelled.emit)
        if model_choice != "loaded":
            self._kv_job = self._submit(
                KV_BENCH, key, jobs.kv_benchmark_target_job, model_choice, state.text, int(new_tokens),
                int(repetitions),
                on_result=lambda run: self.kv_bench_finished.emit(
                    KVRun(key, tuple(run.prompt_ids), run.model_name, run.result, run.tokenizer, run.config,
                          run.random_weights)),
                **common,
            )
            return key
        ids, name = tuple(state.ids), state.model.name
        tokenizer, config = state.model.tokenizer, state.model.lens.config
        self._kv_job = self._submit(
            KV_BENCH, key, jobs.kv_benchmark_job, state.model.lens, list(ids), int(new_tokens), int(repetitions),
            on_result=lambda result: self.kv_bench_finished.emit(KVRun(key, ids, name, result, tokenizer, config)),
            **common,
        )
        return key

    def cancel_kv_benchmark(self) -> None:
        if self._kv_job is not None:
            self._kv_job.cancel()

    @property
    def kv_benchmark_running(self) -> bool:
        return self._kv_job is not None and not self._kv_job.done

    def measure_mask_report(self, state, spec) -> tuple:
        """The designer's verdicts for ``spec`` on ``state``'s text (reach, measured influence,
        K/V stability) → :attr:`mask_report_ready`; returns the key."""
        key = job_protocol.mask_report_key(state, spec)
        self._submit(MASK_REPORT, key, jobs.mask_report_job, state.model.lens, state.model.tokenizer,
                     list(state.ids), spec, on_result=lambda report: self.mask_report_ready.emit(key, report),
                     on_progress=lambda p: self.mask_report_progress.emit(*p))
        return key

    def run_knockout(self, state, heads, mode: str, position: int) -> tuple:
        """Next-token top-5 at ``position`` and the text's loss with ``heads`` knocked out →
        :attr:`knockout_ready`; under the analysis's mask."""
        heads = tuple(sorted((int(a), int(b)) for a, b in heads))
        key = text_key(state) + (heads, str(mode), int(position), job_protocol.state_mask_key(state))
        self._submit(KNOCKOUT, key, jobs.knockout_job, state.model.lens, list(state.ids), heads, str(mode),
                     int(position), state.extras.get("allowed"),
                     on_result=lambda result: self.knockout_ready.emit(key, result))
        return key

    def rank_heads(self, state, mode: str) -> tuple:
        """Knock every head out alone on ``state``'s text: :attr:`ranking_progress` while it runs,
        then :attr:`ranking_ready` (or :attr:`ranking_cancelled`)."""
        key = text_key(state) + (str(mode), job_protocol.state_mask_key(state))
        self._rank_job = self._submit(
            RANK_HEADS, key, jobs.rank_heads_job, state.model.lens, list(state.ids), str(mode),
            state.extras.get("allowed"),
            on_result=lambda ranking: self.ranking_ready.emit(key, ranking),
            on_progress=lambda p: self.ranking_progress.emit(*p),
            on_cancelled=self.ranking_cancelled.emit,
        )
        return key

    def cancel_ranking(self) -> None:
        if self._rank_job is not None:
            self._rank_job.cancel()

    # ------------------------------------------------------------------ generation, one token at a time
    generation_ready = Signal(object, object)  # key, core.generation.GenerationView
    _generation = None  # the last view's core.generation.Generation: the next request continues it on the worker

    def generate(self, state, settings, steps: int, layer: int, head: int) -> tuple:
        """``state``'s text brought to ``steps`` generated tokens under ``settings`` (a
        core.generation.GenerationSettings), seen through ``layer`` and ``head`` → :attr:`generation_ready`."""
        key = job_protocol.generation_key(state, settings, steps, layer, head)

        def shown(view) -> None:
            self._generation = view.generation
            self.generation_ready.emit(key, view)

        self._submit(job_protocol.GENERATION, key, jobs.generation_job, self._generation, state.model.lens,
                     state.model.tokenizer, list(state.ids), settings, int(steps), int(layer), int(head),
                     on_result=shown)
        return key

    def measure_fact(self, key: Any, step, context) -> None:
        """A tour step's measured fact on ``context`` (core.tour.TourContext) → :attr:`fact_ready`."""
        self._submit(TOUR_FACT, key, jobs.tour_fact_job, step, context,
                     on_result=lambda fact: self.fact_ready.emit(key, fact))

    def export_csv(self, path, header, rows) -> None:
        """Write a table to ``path`` on the worker → :attr:`file_exported` (or :attr:`file_export_failed`:
        a read-only folder, a full disk).  Exports to different files are separate kinds, so a
        second one never drops the first."""
        if not self.worker.is_shut_down:
            self.worker.submit(job_protocol.file_export_kind(path), jobs.export_csv_job, path, list(header), rows,
                               **self._export_callbacks(path))

    def export_png(self, path, rgba) -> None:
        """Encode a plot's painted pixels as a PNG and write it to ``path`` on the worker, as :meth:`export_csv`."""
        if not self.worker.is_shut_down:
            self.worker.submit(job_protocol.file_export_kind(path), jobs.export_png_job, path, rgba, **self._export_callbacks(path))

    def _export_callbacks(self, path) -> dict:
        return {"on_result": self.file_exported.emit,
                "on_error": lambda exc, details: self.file_export_failed.emit(path, _one_line(exc), details)}

    # ------------------------------------------------------------------ teardown
    def shutdown(self, timeout: float = 1.5) -> bool:
        self._timer.stop()
        ok = self.worker.shutdown(timeout)
        if self.download_worker is not None:
            ok = self.download_worker.shutdown(max(0.1, timeout / 3)) and ok
        return ok


def _reason_parts(exc: BaseException) -> tuple[str, str]:
    """A model's or a download's failure in the interface's language when the core gave it a key (the
    failures a learner meets), else the core's one English line; and the English detail a translated
    sentence leaves out, for a "Details: …" at the very end of the message ("" if none)."""
    if isinstance(exc, ModelLoadError) and exc.key is not None:
        return core_message(exc.key, exc.values)
    return _one_line(exc), ""


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
