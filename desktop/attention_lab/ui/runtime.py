"""Every workaround of a library's internals, and every process-wide setting, in one registry.

Each :class:`Workaround` says why it exists (one sentence), what it measurably bought, the library
versions it was verified on, and how to remove it once the library changes.  Nothing is patched or
set by importing a module of the app: :func:`install_all`, called once at start-up (``ui.launch``,
the devtools' soak and perf probe, the Qt tests' conftest), installs them.  ``ATTENTION_LAB_NO_<NAME>=1``
in the environment leaves one out (to measure it, or to rule it out when something breaks).  When a
library's installed version differs from the one a workaround was verified on, a warning is logged
once per workaround and the workaround is still installed: it was measured to help, and most
library updates leave the internals it touches alone.

``docs/workarounds.md`` is this registry as a table (``python -m attention_lab.ui.runtime --markdown``
writes it; a test checks that it matches).
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
import os
import platform
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass

log = logging.getLogger(__name__)

#: the versions every workaround below was measured on (packaging/constraints.txt pins the pip ones)
PYQTGRAPH = ("pyqtgraph", "0.14.0")
PYSIDE6 = ("PySide6_Essentials", "6.12.0")
TORCH = ("torch", "2.13.0")
PYTHON = ("python", "3.11.7")
GLIBC = ("glibc", "2.36")


@dataclass(frozen=True)
class Workaround:
    name: str  # upper case: the environment variable is ATTENTION_LAB_NO_<name>
    what: str  # what it changes, in library terms
    reason: str  # why, in one sentence
    gain: str  # what it measurably bought, as measured (the module named in ``where`` has the details)
    verified: tuple[tuple[str, str], ...]  # (library, version) pairs it was verified on
    where: str  # the module that holds it (its install function is ``install``'s target)
    install_name: str  # the function in ``where`` that installs it
    remove_when: str  # how to know it is no longer needed, and what to delete then
    measured_again: str  # the last side-by-side measurement, on / off by its variable (see MEASURED_AGAIN)

    @property
    def env_var(self) -> str:
        return f"ATTENTION_LAB_NO_{self.name}"

    def install_function(self) -> Callable[[], object]:
        return getattr(importlib.import_module(self.where), self.install_name)


WORKAROUNDS: tuple[Workaround, ...] = (
    Workaround(
        name="IMMORTAL_SINGLETONS",
        what="None, True and False get 2**40 extra references (CPython < 3.12 only, through ctypes)",
        reason="PySide6 hands Python None (and sometimes True) back from Qt calls without a new reference, and "
               "the interpreter aborts when a count reaches zero (none_dealloc / bool_dealloc mid-session).",
        gain="crash guard: six language switches of the full window took ~5,600 references from True; "
             "without it a long session aborts",
        verified=(PYSIDE6, PYTHON),
        where="attention_lab.ui.qt_compat",
        install_name="immortalize_none",
        remove_when="the app requires Python 3.12 or later (singletons are immortal there), or PySide6 returns "
                    "None with a reference again (sys.getrefcount(None) stays put over many setText calls): "
                    "delete immortalize_none and its record.",
        measured_again="still needed: every QLabel.setText, QCheckBox.setChecked or PlotItem.setPos call takes "
                       "one reference from None (1,000 calls: -1,000; a fresh process holds ~16,500), and 20,000 "
                       "setText calls without it abort the interpreter (none_dealloc)",
    ),
    Workaround(
        name="GC_FREEZE",
        what="gc.freeze() of every object the imports made, once, before the first window",
        reason="A full collection walks every tracked object, and the imports' 179,000 never become garbage.",
        gain="a full collection 110-200 ms shorter on the GUI thread; a window or model switch's collection "
             "3-35 ms instead of 140 ms with a thaw-and-collect (2 busy cores)",
        verified=(PYTHON,),
        where="attention_lab.ui.gc_pause",
        install_name="freeze_imports",
        remove_when="CPython's collector stops walking long-lived objects on a full collection (an "
                    "incremental or generational change that makes gc.collect() after the imports cheap): "
                    "delete freeze_imports and the last gc.freeze() in ui.launch.",
        measured_again="off / on (2 runs each): the GUI thread's full collections a median 120-124 ms (longest "
                       "136-151) / 21 ms (longest 33-35); a window or model switch's collection 121-124 / 36-38 "
                       "ms",
    ),
    Workaround(
        name="HEAP_TRIM",
        what="glibc's malloc_trim(0) after a window or model switch, and on the worker when glibc keeps over 64 MB freed",
        reason="glibc returns freed memory to the system only from the top of a heap, so what a dropped model or "
               "closed window frees stays resident.",
        gain="soak resident size 440-470 MB instead of growing 450 -> 555 MB in 3.6 minutes",
        verified=(GLIBC,),
        where="attention_lab.core.heap",
        install_name="install_heap_trim",
        remove_when="glibc (or the allocator the app ships with) returns freed middle-of-heap pages on its own: "
                    "a soak's resident size stays flat with ATTENTION_LAB_NO_HEAP_TRIM=1; delete the trims.",
        measured_again="off / on (2 runs each): resident size a median 442-454 / 397-403 MB after the first 30 "
                       "s, peak 478-514 / 457-462 MB",
    ),
    Workaround(
        name="GIL_SWITCH",
        what="sys.setswitchinterval(0.001) (Python's default is 5 ms), only ever lowered",
        reason="The GUI thread re-takes the GIL for every Python call back from Qt while it paints, and each waited "
               "up to the switch interval while the worker ran Python between torch ops.",
        gain="a live plot's repaint during a KV benchmark: 50-75 ms stalls instead of 60-120 ms (perf probe, demo model)",
        verified=(PYTHON, TORCH),
        where="attention_lab.ui.worker",
        install_name="install_gil_switch",
        remove_when="the worker leaves the GIL for long stretches only (no Python between torch ops), or a "
                    "free-threaded Python: delete install_gil_switch.",
        measured_again="unclear on a loaded machine, kept: off / on, the KV benchmark's longest GUI stall 35 "
                       "[27-62] / 47 [32-63] ms pooled but 7 ms worse off in the median of 11 paired rounds (4 "
                       "of 11 the other way); the benchmark 1.40 / 2.38 s (33 runs each)",
    ),
    Workaround(
        name="SCENE_PAINTS",
        what="pyqtgraph's GraphicsScene.__init__ wrapped so that every scene gets an event filter; the window's "
             "update requests sent inside a scene's queued call are held to one per turn",
        reason="Qt's QGraphicsScene sends its views' window an update request at the end of each of its passes, so "
               "a turn that changes several plots painted the whole window several times.",
        gain="3-minute soaks: GUI CPU in the steps' longest stalls, summed, 14.7-15.7 s instead of 16.4-17.2 s; "
             "a layer step 8-9 window paints instead of 10",
        verified=(PYQTGRAPH, PYSIDE6),
        where="attention_lab.ui.scene_paints",
        install_name="install_scene_paints",
        remove_when="Qt stops dispatching a scene's update requests synchronously (QGraphicsViewPrivate::"
                    "dispatchPendingUpdateRequests), or pyqtgraph makes scenes through a factory the app can "
                    "set: delete scene_paints.py and its two lines in main_window.py.",
        measured_again="off / on (3 runs each): GUI CPU in each step's longest stall 9.8-11.4 / 9.2-10.2 ms a "
                       "step, worse off in all 3 pairs; a language switch 19.8 / 18.9 ms, a resize 16.3 / 15.5 "
                       "ms (medians): small, kept",
    ),
    Workaround(
        name="PAINT_HOLD",
        what="the docks' setUpdatesEnabled(False) through a burst of relayout (a resize, Reset layout, a language switch)",
        reason="Qt paints every dock after each pass of a relayout that spreads over several turns "
               "(docks, then pyqtgraph's posted layouts, then the head grid's height).",
        gain="a resize 1 paint of each plot instead of 3-4; a language switch's longest turn a median 41/39 ms "
             "of GUI CPU instead of 85/107 ms (to English / Portuguese)",
        verified=(PYSIDE6, PYQTGRAPH),
        where="attention_lab.ui.paint_hold",
        install_name="install_paint_hold",
        remove_when="a resize with ATTENTION_LAB_NO_PAINT_HOLD=1 paints each plot once (tests/ui/test_paint_hold.py "
                    "counts the paints): delete paint_hold.py and the hold() calls in main_window.py.",
        measured_again="off / on (3 runs each): a resize's longest stall 17.4 [10.6-23.1] / 15.5 [11.7-18.8] ms "
                       "of GUI CPU, 25 / 20 ms wall; all steps 9.5-11.8 / 9.2-10.2 ms, worse off in all 3 pairs; "
                       "a language switch's CPU alike (18.3 / 18.9 ms)",
    ),
    Workaround(
        name="AXIS_TICKS",
        what="pyqtgraph's AxisItem.tickStrings and generateDrawSpecs replaced on the class",
        reason="pyqtgraph writes tick numbers with a decimal point in every language, and builds each plot's "
               "axes itself, so there is no subclass to give them.",
        gain="correctness: tick labels with the interface language's decimal sign (0,5 in Portuguese); a "
             "language switch redraws only the axes whose tick texts change",
        verified=(PYQTGRAPH,),
        where="attention_lab.ui.number_format",
        install_name="localize_axis_ticks",
        remove_when="pyqtgraph formats ticks through a locale it takes from the widget (then set the panels' "
                    "locale, which follow_language already does): delete localize_axis_ticks.",
        measured_again="correctness, not speed: with ATTENTION_LAB_NO_AXIS_TICKS=1 two tests of "
                       "tests/ui/test_portuguese_ui.py fail (0.5 where Portuguese writes 0,5)",
    ),
    Workaround(
        name="AXIS_LABEL_REWORD",
        what="an axis' name changed through pyqtgraph's private labelText / _updateLabel, keeping its drawing",
        reason="pyqtgraph's setLabel throws the axis' drawing away and draws every tick text again, though only "
               "the name changed.",
        gain="3-4 ms of GUI CPU per renamed axis, ~10 axes in sight per language switch",
        verified=(PYQTGRAPH,),
        where="attention_lab.ui.panels.plot_setters",
        install_name="install_axis_label_reword",
        remove_when="AxisItem.setLabel keeps the drawing when only the text changes (pyqtgraph's generateDrawSpecs "
                    "not called after setLabel): delete _reword_axis_label.",
        measured_again="off / on (3 runs each): a language switch's longest stall 20.4 [17.4-23.2] / 18.9 "
                       "[16.5-21.5] ms of GUI CPU, higher off in all 3 pairs; 61 / 35 ms wall",
    ),
    Workaround(
        name="QUIET_LANGUAGE_CHANGE",
        what="Qt's LanguageChange to the application filtered out while the app swaps its QTranslator",
        reason="installing a QTranslator sends every widget LanguageChange and repaints the whole window, and no "
               "widget of the app reads it (its words follow the translator's own signal).",
        gain="a switch's first turn 20 ms of GUI CPU instead of 39 ms (medians of 16 switches at 1400x900); "
             "2,500-4,400 events fewer per switch",
        verified=(PYSIDE6,),
        where="attention_lab.ui.i18n",
        install_name="install_quiet_language_change",
        remove_when="a widget of the app needs Qt's LanguageChange (then translate through changeEvent "
                    "instead), or Qt sends it only to widgets that ask: delete _QuietQtBroadcast.",
        measured_again="off / on (3 runs each): a language switch's longest stall 39.8 [36.6-43.5] / 18.9 "
                       "[16.5-21.5] ms of GUI CPU, 110 / 35 ms wall",
    ),
)

#: how ``measured_again`` was measured: the same tools, each workaround on and off (its variable), interleaved
MEASURED_AGAIN = (
    "2026-12-04, 2 cores shared with other jobs (load average 5-9), on and off interleaved, medians "
    "[interquartile range] over the runs. Commands: `python -m attention_lab.devtools.perf_probe --phases "
    "edit,kvbench --reps 3 --trace-ms 0` (11 rounds, the order rotated); `python -m attention_lab.devtools.soak --minutes 2 "
    "--seed N --actions set_language,resize,reset_layout,step_layer,set_head,paste_text,open_tab --log L` "
    "(seeds 1-3; the GUI thread's CPU in each step's longest stall, from the log); "
    "`python -m attention_lab.devtools.gc_timing --minutes 2 --seed N` (seeds 1-2, all actions). IMMORTAL_SINGLETONS: "
    "sys.getrefcount(None) around 1,000 QLabel.setText calls without it."
)

#: what was tried and removed because measuring it again showed no gain (kept so nobody adds it back unmeasured)
DROPPED = (
    ("TORCH_THREADS", "torch.set_num_threads(cores - 1) on the GUI thread and the worker's",
     "measured on torch 2.13.0 (perf probe, 11 interleaved rounds of 3, 2 cores at load 6-8): without it a "
     "50-token KV benchmark took 1.55 s [0.82-1.94] and its longest GUI stall 29 ms [22-52]; with it 2.38 s "
     "[1.64-2.83] and 47 ms [32-63]; edits alike (0.29 / 0.27 s, 29 / 31 ms). The 5-11 s edits and 17-51 s "
     "benchmarks it was added for did not come back. Removed; OMP_NUM_THREADS still sets torch's threads."),
)

_warned: set[str] = set()  # the workarounds whose version warning was logged (once per process)
_installed: list[str] = []


def installed_version(library: str) -> str | None:
    """The version running now, as the registry writes it (no local tag: torch's "+cpu"); None: not there."""
    if library == "python":
        return platform.python_version()
    if library == "glibc":
        try:
            found = os.confstr("CS_GNU_LIBC_VERSION") or ""
        except (AttributeError, ValueError, OSError):
            return None
        return found.split()[1] if found.startswith("glibc ") else None
    try:
        return importlib.metadata.version(library).split("+")[0]
    except importlib.metadata.PackageNotFoundError:
        return None


def check_versions(workaround: Workaround) -> list[tuple[str, str, str]]:
    """The (library, verified, running) triples that differ; a warning logged the first time per workaround.

    A library that is absent (glibc on macOS) is not a difference: the workaround does nothing there."""
    differ = [(library, verified, running) for library, verified in workaround.verified
              if (running := installed_version(library)) is not None and running != verified]
    if differ and workaround.name not in _warned:
        _warned.add(workaround.name)
        log.warning("workaround %s was verified on %s; running %s: installed anyway, measure it again (docs/workarounds.md)",
                    workaround.name, ", ".join(f"{lib} {v}" for lib, v, _ in differ),
                    ", ".join(f"{lib} {r}" for lib, _, r in differ))
    return differ


def disabled(workaround: Workaround) -> bool:
    return os.environ.get(workaround.env_var, "") not in ("", "0")


def install_all(skip: Iterable[str] = ()) -> list[str]:
    """Install every workaround not turned off (by its environment variable or ``skip``); their names.

    Call it after the imports and before the first window: GC_FREEZE freezes what exists then, and
    SCENE_PAINTS watches the scenes made from then on.  Each install is idempotent."""
    skip = set(skip)
    done = []
    for workaround in WORKAROUNDS:
        if workaround.name in skip or disabled(workaround):
            continue
        check_versions(workaround)
        workaround.install_function()()
        done.append(workaround.name)
        if workaround.name not in _installed:
            _installed.append(workaround.name)
    return done


def installed() -> list[str]:
    """The workarounds :func:`install_all` installed in this process."""
    return list(_installed)


def markdown() -> str:
    """The registry as ``docs/workarounds.md``."""
    lines = [
        "# Workarounds of library internals",
        "",
        "Generated from `desktop/attention_lab/ui/runtime.py` (`python -m attention_lab.ui.runtime --markdown "
        "> docs/workarounds.md`); `tests/ui/test_runtime.py` fails when the two differ.",
        "",
        "All are installed by `runtime.install_all()` at start-up, none by an import. `ATTENTION_LAB_NO_<NAME>=1` "
        "turns one off. A different library version than the one verified logs a warning once and installs it anyway.",
        "",
        f"Measured again: {MEASURED_AGAIN}",
        "",
        "| Name | What | Why | Measured gain (when added) | Measured again | Verified on | Remove when |",
        "|---|---|---|---|---|---|---|",
    ]
    for w in WORKAROUNDS:
        versions = ", ".join(f"{lib} {v}" for lib, v in w.verified)
        cells = [f"`{w.name}`<br>(`{w.where}.{w.install_name}`)", w.what, w.reason, w.gain, w.measured_again, versions,
                 w.remove_when]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    lines += ["", "## Dropped", "", "Measured again and removed: the gain no longer showed.", ""]
    lines += [f"- `{name}` ({what}): {why}" for name, what, why in DROPPED]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] == ["--markdown"]:
        sys.stdout.write(markdown())
    else:
        sys.exit("usage: python -m attention_lab.ui.runtime --markdown")
