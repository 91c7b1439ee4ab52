"""Start the desktop app: ``run_gui(argv) -> exit code``.

``--smoke-test`` opens the window offscreen, runs one full analysis on the default (or
``--model``) model, checks that the first view (every panel in sight) received data and
was painted, and exits 0 (1 otherwise): a launch, as a learner's starts.  With
``--all-panels`` it also builds and draws the panels behind tabs and checks all seven.
``--screenshot FILE`` saves a PNG of the populated window.  Both use fresh settings in a
temporary folder, so they neither depend on nor change the user's.

Teardown order matters: PySide6 + pyqtgraph can segfault at interpreter exit when plot
widgets outlive the QApplication, so the window is closed (which joins the worker),
deleted and its deferred deletes processed before ``run_gui`` returns.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

SMOKE_TIMEOUT_S = 180
LATE_JOIN_S = 60.0


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    from attention_lab.app import add_window_arguments

    parser = argparse.ArgumentParser(prog="attention-lab", description="Attention Lab: the desktop app.")
    add_window_arguments(parser)
    parser.add_argument("--timeout", type=float, default=SMOKE_TIMEOUT_S, help=argparse.SUPPRESS)
    args = parser.parse_args(list(argv))
    try:
        w, h = (int(v) for v in args.size.lower().split("x"))
        args.size = (max(320, w), max(240, h))
    except ValueError:
        parser.error(f"--size must look like 1600x1000, not {args.size!r}")
    return args


def _configure_plots() -> None:
    import pyqtgraph as pg

    from attention_lab.ui import number_format

    pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")
    number_format.localize_axis_ticks()


def _wait_for_first_result(window, timeout_s: float) -> tuple[bool, list[str]]:
    """Run the event loop until the first analysis arrives (True) or an error / timeout."""
    from PySide6.QtCore import QEventLoop, QTimer

    errors: list[str] = []
    loop = QEventLoop()
    done = {"ok": False}

    def on_state(_state) -> None:
        done["ok"] = True
        loop.quit()

    def on_error(message: str, _details: str) -> None:
        errors.append(message)
        if window.session.model is None and window._startup_spec is None:
            loop.quit()  # no model and no fallback left to try

    window.state_shown.connect(on_state)  # every panel has drawn it
    window.session.error.connect(on_error)
    QTimer.singleShot(int(timeout_s * 1000), loop.quit)
    if window.last_state is None:
        loop.exec()
    window.state_shown.disconnect(on_state)
    window.session.error.disconnect(on_error)
    if not done["ok"] and window.last_state is None and not errors:
        errors.append(f"no analysis within {timeout_s:.0f} s")
    return done["ok"] or window.last_state is not None, errors


def _settle(app, ms: int = 400) -> None:
    """Let layouts, pyqtgraph's deferred ranges and paints happen."""
    from PySide6.QtCore import QEventLoop, QTimer

    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()
    app.processEvents()


def _paint_now(app, window) -> None:
    """Paint every visible view once, now: an error in drawing code reaches the excepthook
    (and the smoke test's verdict) without waiting a fixed time for the next repaint."""
    app.processEvents()
    window.grab()
    app.processEvents()


def teardown(app, window) -> bool:
    """Close (joins the workers), delete, and flush deferred deletes; True if the workers stopped."""
    from PySide6.QtCore import QCoreApplication, QEvent

    if window is None:
        return True
    threads = [window.worker.thread, window.download_worker.thread]
    running = window.worker.running_kind
    stopped = window.shutdown()
    if not stopped:
        print(f"attention-lab: waiting for the {running or 'current'} job to reach its next cancel check", file=sys.stderr)
    window.close()
    window.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    app.processEvents()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    if not stopped:
        # A job that ignores its cancel flag is still inside torch: the interpreter must
        # not exit under it (that aborts the process), so wait for it to come back.
        for thread in threads:
            thread.join(LATE_JOIN_S)
    return stopped


def _headless(app, window, args, uncaught: list[str], started: float) -> int:
    from attention_lab.ui.main_window import EXPECTED_PANELS

    ok, errors = _wait_for_first_result(window, args.timeout)
    if ok and args.screenshot:
        _settle(app)  # deferred ranges and late repaints: the picture shows the settled window
    elif ok:
        _paint_now(app, window)
    code = 0
    if not ok:
        print("smoke test: FAILED: " + "; ".join(errors), file=sys.stderr)
        code = 1
    if args.screenshot and ok:
        path = Path(args.screenshot)
        path.parent.mkdir(parents=True, exist_ok=True)
        if not window.grab().save(str(path), "PNG"):
            print(f"screenshot: could not write {path}", file=sys.stderr)
            code = 1
        else:
            print(f"screenshot: {path} ({window.width()}x{window.height()})")
    if args.smoke_test and ok:
        if args.all_panels:
            window.build_all_panels()  # those behind tabs are built and drawn when shown:
            window.draw_hidden_panels()  # check them too
        checked = {pid: panel for pid, panel in window.panels.items() if pid not in window.panels_waiting}
        empty = [pid for pid, panel in checked.items() if not panel.has_data()]
        if len(window.docks) != EXPECTED_PANELS or (args.all_panels and len(checked) != EXPECTED_PANELS):
            print(f"smoke test: FAILED: {len(checked)} of {EXPECTED_PANELS} panels (missing: {', '.join(window.missing_panels)})", file=sys.stderr)
            code = 1
        elif empty:
            print(f"smoke test: FAILED: no data in {', '.join(empty)}", file=sys.stderr)
            code = 1
        elif uncaught:
            print("smoke test: FAILED: uncaught " + "; ".join(uncaught), file=sys.stderr)
            code = 1
        else:
            state = window.last_state
            print(
                f"smoke test: ok: {len(checked)} panels with data"
                f"{'' if args.all_panels else f' (the first view; {EXPECTED_PANELS} with --all-panels)'}; model {state.model.name}; "
                f"{state.n_tokens} tokens; analysis {state.seconds * 1000:.0f} ms; "
                f"{time.perf_counter() - started:.1f} s in all"
            )
    return code


def run_gui(argv: Sequence[str] | None = None) -> int:
    args = _parse(sys.argv[1:] if argv is None else argv)
    headless = args.smoke_test or args.screenshot
    if args.smoke_test and not os.environ.get("QT_QPA_PLATFORM"):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    if args.screenshot and not os.environ.get("QT_QPA_PLATFORM") and not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ["QT_QPA_PLATFORM"] = "offscreen"

    # torch before PySide6: PySide6's import hook (shibokensupport's __feature__ support)
    # reads the source of every module imported after it, and torch brings ~1200 of them
    # (0.2 s of start-up).  The window needs torch for its first analysis anyway.
    __import__("torch")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    _configure_plots()
    app = QApplication.instance() or QApplication([sys.argv[0] if sys.argv else "attention-lab"])
    app.setOrganizationName("AttentionLab")
    app.setApplicationName("attention-lab")
    app.setApplicationDisplayName("Attention Lab")

    from attention_lab.ui import crash_log, gc_pause
    from attention_lab.ui.errors import install_excepthook
    from attention_lab.ui.idle_build import install_idle_build
    from attention_lab.ui.main_window import MainWindow

    # a learner's session keeps a log (and faulthandler's stack of a hard crash); the headless
    # runs (smoke test, screenshot) are checks, not sessions: they leave the user's folder alone
    crash = None if headless else crash_log.install()

    tmp = None
    if args.settings:
        settings = QSettings(str(Path(args.settings)), QSettings.Format.IniFormat)
    elif headless:
        tmp = tempfile.TemporaryDirectory(prefix="attention-lab-")
        settings = QSettings(str(Path(tmp.name) / "settings.ini"), QSettings.Format.IniFormat)
    else:
        settings = None

    # what the imports made never becomes garbage: out of the collector's sight before the
    # window exists, so a collection walks only the window, its model and what they make
    gc_pause.freeze_imports()
    uncaught: list[str] = []
    window = None
    previous_hook = sys.excepthook
    started = time.perf_counter()
    code = 1
    try:
        window = MainWindow(settings=settings, model_spec=args.model, language=args.lang)
        if not headless:  # a learner's window: the tabs' panels built while it is idle (not in a check's short run)
            install_idle_build(window)
        previous_hook = install_excepthook(lambda: window)
        if crash is not None:
            crash.hook_exceptions()  # logged first, then the error dialog
        if headless:
            hook = sys.excepthook

            def recording_hook(exc_type, exc, tb):
                uncaught.append(f"{exc_type.__name__}: {exc}")
                hook(exc_type, exc, tb)

            sys.excepthook = recording_hook
            window.resize(*args.size)
        window.show()
        if not headless:
            crash_log.attach(window, crash)  # Help › Open log folder; the notice after a crash
        if not headless:
            code = int(app.exec())
        else:
            code = _headless(app, window, args, uncaught, started)
    finally:
        stopped = teardown(app, window)
        window = None
        sys.excepthook = previous_hook
        if tmp is not None:
            tmp.cleanup()
    if not stopped:
        print("attention-lab: the worker thread did not stop in time", file=sys.stderr)
        code = code or 1
    if crash is not None:
        crash.clean_exit()
    # The interpreter's last collection would walk what the imports' freeze left in sight (the
    # closed window's objects, the models); the process frees them all at once anyway.
    gc.freeze()
    return code
