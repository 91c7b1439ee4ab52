"""Which handler held the GUI thread during each long stall (the perf probe's event-loop trace).

A heartbeat on the GUI thread tells *how long* the event loop could not run; this tells
*what* ran instead.  A sampling thread looks at the GUI thread's Python stack every few
milliseconds while the heartbeat is late, and each stall over the threshold is put down to

- its **handler**: the outermost frame of this app (or pyqtgraph) under the event loop, i.e.
  the slot, timer callback or paint method the loop called into, and
- its **hot spot**: the innermost frame of this app in the samples, where the time went.

Samples that show no such frame (only the loop itself) are Qt's own C++ work: layout,
painting native widgets, or events with no Python handler.  A stall in which the GUI thread
used less than half its length in CPU time is flagged ``off_cpu``: the thread was mostly
waiting (a busy machine, or the worker thread holding the GIL), not working.  No Qt import here: the tracer
only reads a timestamp the heartbeat writes, so it can't disturb what it measures beyond
the GIL hand-offs of one sleeping thread (sampling every ``every_ms``).
"""

from __future__ import annotations

import faulthandler
import os
import re
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

#: frames of these modules are the probe itself (its event loops), never a handler; the learner
#: driver plays the learner in the soak (its clicks and its settling loop stand for the event loop's)
PROBE_MODULES = ("attention_lab.devtools.perf_probe", "attention_lab.devtools.stall_trace", "attention_lab.devtools.soak",
                 "attention_lab.devtools.learner_driver")
#: a handler is the first frame of these packages under the probe's event loop
APP_PACKAGES = ("attention_lab", "pyqtgraph")
QT_ONLY = "Qt C++ (layout, painting or events with no Python handler)"


@dataclass
class Stall:
    ms: float
    cpu_ms: float  # the GUI thread's CPU time in the stall
    off_cpu: bool  # less than half of it on the CPU: mostly waiting, not working
    handler: str
    hot_spot: str
    samples: int


@dataclass
class StallTracer:
    """Attribute every heartbeat gap longer than ``threshold_ms`` to the code that caused it.

    ``last_beat`` returns the ``time.perf_counter()`` of the heartbeat's latest beat; the
    heartbeat calls :meth:`gap_ended` with the previous beat's time, the gap's length and the
    GUI thread's CPU time in it (``time.thread_time()``)."""

    last_beat: Callable[[], float]
    threshold_ms: float = 33.0
    every_ms: float = 4.0
    main_thread_id: int = field(default_factory=threading.get_ident)
    stalls: list[Stall] = field(default_factory=list)
    _samples: dict[float, list[tuple[str, str]]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="stall-trace", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=1.0)
            self._thread = None

    def take(self) -> list[Stall]:
        """The stalls since the last call, longest first."""
        with self._lock:
            stalls, self.stalls = sorted(self.stalls, key=lambda s: -s.ms), []
        return stalls

    # ------------------------------------------------------------------ the heartbeat's side
    def gap_ended(self, beat_before: float, gap_s: float, cpu_s: float) -> None:
        with self._lock:
            samples = self._samples.pop(beat_before, [])
            for stale in [k for k in self._samples if k < beat_before]:
                del self._samples[stale]  # a gap whose end we were not told of (heartbeat reset)
        if gap_s * 1000.0 <= self.threshold_ms:
            return
        handlers = Counter(h for h, _ in samples)
        hot = Counter(s for _, s in samples)
        handler = handlers.most_common(1)[0][0] if samples else "not sampled (shorter than the sampling step)"
        stall = Stall(
            ms=round(gap_s * 1000.0, 1),
            cpu_ms=round(cpu_s * 1000.0, 1),
            off_cpu=cpu_s < gap_s / 2,
            handler=handler,
            hot_spot=hot.most_common(1)[0][0] if samples else "",
            samples=len(samples),
        )
        with self._lock:
            self.stalls.append(stall)

    # ------------------------------------------------------------------ the sampling thread
    def _run(self) -> None:
        # half the threshold: a stall is sampled a few times before it crosses the threshold
        late_after = self.threshold_ms / 2000.0
        with tempfile.TemporaryFile() as dump:
            while not self._stop.wait(self.every_ms / 1000.0):
                beat = self.last_beat()
                if time.perf_counter() - beat < late_after:
                    continue
                stack = gui_thread_stack(dump.fileno(), self.main_thread_id)
                if stack is None:
                    continue
                sample = attribute(stack)
                with self._lock:
                    self._samples.setdefault(beat, []).append(sample)


#: one frame line of faulthandler's dump: ``  File "path", line 12 in name``
_FRAME_LINE = re.compile(r'^\s+File "(?P<path>.*)", line (?:\d+|\?\?\?) in (?P<name>\S+)')
_THREAD_LINE = re.compile(r"^(?:Current thread|Thread) (?P<id>0x[0-9a-fA-F]+)")


def gui_thread_stack(fd: int, thread_id: int) -> list[str] | None:
    """The stack of thread ``thread_id`` now, innermost first, as ``module.function`` names.

    Read through ``faulthandler``'s dump, not ``sys._current_frames()``: walking another
    running thread's frame objects (``f_back``) crashes CPython 3.11 now and then (the
    frame-ownership bugs python/cpython#106092, getsentry/sentry-python#2386, whose
    sampling profiler did just that), and two of five soak runs here died of it in Qt's
    event loop.  faulthandler reads the interpreter's frames under the GIL without making
    frame objects, so the GUI thread never has to take a frame back from us."""
    os.lseek(fd, 0, os.SEEK_SET)
    os.ftruncate(fd, 0)
    faulthandler.dump_traceback(fd, all_threads=True)
    os.lseek(fd, 0, os.SEEK_SET)
    chunks = []
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return parse_dump(b"".join(chunks).decode("utf-8", "replace"), thread_id)


def parse_dump(text: str, thread_id: int) -> list[str] | None:
    """Thread ``thread_id``'s frames in a faulthandler dump, innermost first (None if absent)."""
    stack: list[str] | None = None
    for line in text.splitlines():
        thread = _THREAD_LINE.match(line)
        if thread:
            if stack is not None:
                break  # the next thread's section
            if int(thread.group("id"), 16) == thread_id:
                stack = []
            continue
        if stack is not None:
            frame = _FRAME_LINE.match(line)
            if frame:
                stack.append(f"{module_of(frame.group('path'))}.{frame.group('name')}")
    return stack


def module_of(path: str) -> str:
    """The dotted module a source path holds, from the app's or pyqtgraph's package folder on
    (``.../attention_lab/devtools/soak.py`` → ``attention_lab.devtools.soak``); other files keep their path."""
    parts = path.replace("\\", "/").split("/")
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in APP_PACKAGES:
            names = parts[i:]
            names[-1] = names[-1].removesuffix(".py")
            if names[-1] == "__init__":
                names.pop()
            return ".".join(names)
    return path


def attribute(stack: list[str]) -> tuple[str, str]:
    """(handler, hot spot) of one stack sample: ``module.function`` names, innermost first."""
    stack = stack[::-1]  # outermost first
    # everything above the probe's innermost frame is the probe and its event loop
    start = 0
    for i, name in enumerate(stack):
        if name.startswith(PROBE_MODULES):
            start = i + 1
    ours = [name for name in stack[start:] if name.split(".")[0] in APP_PACKAGES]
    if not ours:
        return QT_ONLY, QT_ONLY
    app_frames = [name for name in ours if name.startswith("attention_lab")]
    return ours[0], (app_frames or ours)[-1]
