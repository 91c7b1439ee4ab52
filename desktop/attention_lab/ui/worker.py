"""The one inference thread: every model computation of the app runs here.

Who uses it: :class:`~attention_lab.ui.session.Session` only (see ARCHITECTURE.md); the
job functions live in :mod:`attention_lab.core.jobs` and :mod:`attention_lab.core.pipeline`.

``worker.submit(kind, fn, *args, on_result=, on_error=, on_progress=, on_cancelled=, **kw)``

* ``fn(*args, cancel=, progress=, **kw)`` runs on the worker thread: ``cancel`` is a
  :class:`threading.Event`, ``progress`` a callable taking one payload (safe to call from
  the worker thread) -- the one protocol of :mod:`attention_lab.core.jobs`.
* Latest wins per ``kind``: a new job of the same kind drops a pending one and sets the
  cancel event of a running one; results of superseded jobs are never delivered.
* Callbacks run on the GUI thread, for the latest job of its kind only, never after
  :meth:`InferenceWorker.shutdown`: ``on_result(result)``, ``on_error(exc, details)``
  (``details``: the formatted traceback), ``on_progress(payload)``, ``on_cancelled()``
  (after an explicit ``job.cancel()`` or ``worker.cancel(kind)``, not when superseded).
* An interactive job (``core.job_protocol.INTERACTIVE_KINDS``: the learner's edit) submitted while
  a long job runs does not wait for its end: it runs on this thread at the long job's next
  ``progress`` call, between two of its steps (the KV benchmark reports after each token's
  timed forward, so no timed interval contains it).
* ``fn`` stops early by returning, or raising :class:`~attention_lab.core.job_protocol.Cancelled`
  (or a subclass), once ``cancel`` is set; a cancelled job never delivers ``on_result``.

Why a plain Python thread and not a QThread: the work is torch (which releases the GIL),
results travel back through a queued Qt signal to a QObject that lives on the GUI thread,
and a Python thread can't produce "QThread: Destroyed while thread is still running" when
the window goes away.  :meth:`shutdown` cancels everything and joins; it is called from the
main window's ``closeEvent``.
"""

from __future__ import annotations

import itertools
import sys
import threading
import traceback
from collections import deque
from typing import Any, Callable

from PySide6.QtCore import QObject, Qt, Signal, Slot

from attention_lab.core.heap import KEPT_HEAP, trimming
from attention_lab.core.job_protocol import INTERACTIVE_KINDS, Cancelled

#: the longest the worker keeps the GIL once the GUI thread asks for it (seconds; Python's default: 5 ms)
GIL_SWITCH_S = 0.001


def install_gil_switch() -> None:
    """The GUI thread re-takes the GIL for every Python call back from Qt while it paints
    (each item's ``paint``, ``boundingRect``...); while the worker runs Python between torch
    ops (the KV benchmark, token by token) each of those waited up to the switch interval.
    With 5 ms, a live plot's repaint during a benchmark was mostly waiting: 60-120 ms stalls,
    half of them off the CPU; with 1 ms, 50-75 ms (perf probe, demo model, 2 busy
    cores).  Only ever lowered: a caller that chose less keeps it.  Process-wide: called by
    :func:`attention_lab.ui.runtime.install_all` (GIL_SWITCH), not by each worker."""
    sys.setswitchinterval(min(sys.getswitchinterval(), GIL_SWITCH_S))


_ids = itertools.count(1)


class Job:
    """One submitted computation.  Created by :meth:`InferenceWorker.submit`."""

    def __init__(self, worker: "InferenceWorker", kind: str, fn: Callable, args: tuple, kwargs: dict, callbacks: dict):
        self.id = next(_ids)
        self.kind = kind
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.callbacks = callbacks
        self.event = threading.Event()
        self.done = False
        self.explicitly_cancelled = False
        self._worker = worker

    @property
    def cancelled(self) -> bool:
        return self.event.is_set()

    def cancel(self) -> None:
        """Stop this job (GUI thread).  ``on_cancelled`` follows once it has stopped."""
        if self.done:
            return
        self.explicitly_cancelled = True
        self.event.set()
        self._worker._drop_pending(self)

    def let_go(self) -> None:
        """Drop what the job was given (function, arguments, callbacks) once it is finished.

        A finished job outlives its run: the session keeps its last analysis, KV and ranking
        jobs to ask whether they are done, and the worker its last one until the next arrives.
        Their arguments are a model's lens and tokenizer, a state, a text's ids; the callbacks'
        closures hold the same.  Kept, they kept a model switched away from alive (the
        soak's memory drift); ``done``, ``kind`` and the cancel flags are all that is read later."""
        self.fn = None
        self.args = ()
        self.kwargs = {}
        self.callbacks = dict.fromkeys(self.callbacks)

    def __repr__(self) -> str:
        state = "done" if self.done else ("cancelled" if self.cancelled else "live")
        return f"Job({self.id}, {self.kind!r}, {state})"


class _Relay(QObject):
    """Lives on the GUI thread; its signal carries worker events there (queued)."""

    event = Signal(object, str, object)


class InferenceWorker(QObject):
    """One background thread running jobs in order; see the module docstring."""

    busy_changed = Signal(bool)
    job_started = Signal(str)  # kind, emitted on the GUI thread when a job starts running

    def __init__(self, name: str = "attention-lab-worker", parent: QObject | None = None):
        super().__init__(parent)
        self._lock = threading.Condition()
        self._pending: deque[Job] = deque()
        self._running: Job | None = None
        self._outer: Job | None = None  # the long job an interactive one runs inside (its progress report)
        self._latest: dict[str, Job] = {}  # GUI side: the job whose results are wanted
        self._live = 0  # submitted and not finished (GUI side), drives ``busy``
        self._closed = False
        self._relay = _Relay()
        self._relay.event.connect(self._on_event, Qt.ConnectionType.QueuedConnection)
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ GUI-thread API
    @property
    def busy(self) -> bool:
        return self._live > 0

    @property
    def is_shut_down(self) -> bool:
        return self._closed

    @property
    def thread(self) -> threading.Thread:
        return self._thread

    @property
    def running_kind(self) -> str | None:
        job = self._running
        return job.kind if job is not None else None

    def submit(
        self,
        kind: str,
        fn: Callable,
        *args: Any,
        on_result: Callable[[Any], None] | None = None,
        on_error: Callable[[BaseException, str], None] | None = None,
        on_progress: Callable[[Any], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
        **kwargs: Any,
    ) -> Job:
        callbacks = dict(result=on_result, error=on_error, progress=on_progress, cancelled=on_cancelled)
        job = Job(self, kind, fn, args, kwargs, callbacks)
        if self._closed:
            job.event.set()
            job.done = True
            return job
        previous = self._latest.get(kind)
        if previous is not None and not previous.done:
            previous.event.set()  # superseded: not "explicitly" cancelled, so no on_cancelled
            self._drop_pending(previous)
        self._latest[kind] = job
        self._set_live(self._live + 1)
        with self._lock:
            self._pending.append(job)
            self._lock.notify()
        return job

    def cancel(self, kind: str | None = None) -> None:
        """Cancel the latest job of ``kind`` (all kinds when ``None``)."""
        for k, job in list(self._latest.items()):
            if kind is None or k == kind:
                job.cancel()

    def latest(self, kind: str) -> Job | None:
        job = self._latest.get(kind)
        return job if job is not None and not job.done else None

    def shutdown(self, timeout: float = 2.0) -> bool:
        """Cancel everything, stop the thread and wait for it; True when it has stopped."""
        if not self._closed:
            self._closed = True
            with self._lock:
                for job in self._pending:
                    job.event.set()
                    job.done = True
                    job.let_go()  # never run: the worker takes nothing from a closed queue
                self._pending.clear()
                for running in (self._running, self._outer):
                    if running is not None:
                        running.event.set()
                self._lock.notify_all()
            try:
                self._relay.event.disconnect(self._on_event)
            except (RuntimeError, TypeError):
                pass
            self._latest.clear()
            if self._live:
                self._live = 0
                self.busy_changed.emit(False)
        self._thread.join(timeout)
        return not self._thread.is_alive()

    # ------------------------------------------------------------------ internals
    def _set_live(self, value: int) -> None:
        was = self._live > 0
        self._live = max(0, value)
        if was != (self._live > 0):
            self.busy_changed.emit(self._live > 0)

    def _drop_pending(self, job: Job) -> None:
        """Remove a job that has not started; it is finished at once (GUI thread)."""
        with self._lock:
            try:
                self._pending.remove(job)
            except ValueError:
                return  # running or already done: the thread reports it
        self._finish(job, "cancelled", None)

    def _finish(self, job: Job, event: str, payload: Any) -> None:
        if job.done:
            return
        job.done = True
        try:
            self._report(job, event, payload)
        finally:
            job.let_go()

    def _report(self, job: Job, event: str, payload: Any) -> None:
        """``job``'s end (GUI thread): its callback, when it is still the one wanted."""
        self._set_live(self._live - 1)
        wanted = self._latest.get(job.kind) is job
        if wanted:
            del self._latest[job.kind]
        if self._closed:
            return
        if event == "result" and not job.cancelled and wanted:
            callback = job.callbacks["result"]
            if callback is not None:
                callback(payload)
        elif event == "error" and not job.cancelled and wanted:
            callback = job.callbacks["error"]
            if callback is not None:
                callback(*payload)
        elif job.explicitly_cancelled:
            callback = job.callbacks["cancelled"]
            if callback is not None:
                callback()

    @Slot(object, str, object)
    def _on_event(self, job: Job, event: str, payload: Any) -> None:
        if self._closed:
            return
        if event == "started":
            self.job_started.emit(job.kind)
        elif event == "progress":
            if not job.done and not job.cancelled and self._latest.get(job.kind) is job:
                callback = job.callbacks["progress"]
                if callback is not None:
                    callback(payload)
        else:
            self._finish(job, event, payload)

    def _post(self, job: Job, event: str, payload: Any = None) -> None:
        # Called on the worker thread; the queued connection delivers on the GUI thread.
        if self._closed:
            return
        try:
            self._relay.event.emit(job, event, payload)
        except RuntimeError:  # the relay was deleted with the window: nobody to tell
            pass

    def _loop(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                job = self._pending.popleft()
                self._running = job
            try:
                self._run(job)
            finally:
                with self._lock:
                    self._running = None
                # not kept while waiting for the next job: its arguments (a model, a state) with it
                del job
            # the job's tensors are freed and its result is on its way: trim here, not on the
            # GUI thread, when glibc keeps too much of what they freed (core.heap)
            if trimming():
                KEPT_HEAP.after_job()

    def _serve_interactive(self) -> None:
        """Run the interactive jobs waiting (the learner's edit) now, on this thread, inside a
        long job's progress report: between two of its steps, never inside a timed one."""
        while True:
            with self._lock:
                job = next((j for j in self._pending if j.kind in INTERACTIVE_KINDS), None)
                if job is None or self._closed:
                    return
                self._pending.remove(job)
                self._outer, self._running = self._running, job
            try:
                self._run(job)
            finally:
                with self._lock:
                    self._running, self._outer = self._outer, None

    def _run(self, job: Job) -> None:
        if job.cancelled:
            self._post(job, "cancelled")
            return
        self._post(job, "started")
        kwargs = dict(job.kwargs, cancel=job.event)

        def progress(payload: Any) -> None:
            self._post(job, "progress", payload)
            if job.kind not in INTERACTIVE_KINDS:
                self._serve_interactive()

        kwargs.setdefault("progress", progress)
        try:
            result = job.fn(*job.args, **kwargs)
        except Cancelled:
            self._post(job, "cancelled")
        except Exception as exc:  # noqa: BLE001 -- every failure goes to the GUI's error path
            details = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            self._post(job, "cancelled" if job.cancelled else "error", None if job.cancelled else (exc, details))
        else:
            self._post(job, "cancelled" if job.cancelled else "result", result)
