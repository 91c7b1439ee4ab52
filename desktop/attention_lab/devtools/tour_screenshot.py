"""A screenshot of the window with the Lab tour open on one step, once its fact is measured.

``python -m attention_lab.devtools.tour_screenshot FILE [--model SPEC] [--lang en|pt_BR]
[--step N|KEY] [--predict yes|no|unsure|skip|ask] [--benchmark] [--size 1600x1000]``

``attention-lab --screenshot`` grabs the window as soon as the first analysis lands; the
tour's fact is measured after that, so this waits for it (and, with ``--benchmark`` on
step 5, for the benchmark the learner would start).  A step that asks the learner's prediction
first is answered with ``--predict`` (default: skip, "Just show me"); ``--predict ask`` grabs the
question itself.  Fresh settings in a temporary
folder, like ``--screenshot``.  Run it under ``xvfb-run -a -s "-screen 0 1600x1000x24"``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Sequence

TIMEOUT_S = 300.0


def _wait(app, predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        app.processEvents()
        time.sleep(0.02)  # a script, not a test: polling the event loop is fine here
    return True


def save_grab(widget, path: Path, who: str) -> bool:
    """``widget`` as drawn, to ``path`` (its folder made); False, with a line on stderr, when it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if widget.grab().save(str(path), "PNG"):
        return True
    print(f"{who}: could not write {path}", file=sys.stderr)
    return False


def open_window(model: str | None, language: str, size: str, prefix: str):
    """The main window at ``size`` ("1366x768") on fresh settings in a temporary folder (no tour or
    first-run offer), shown, with its first analysis waited for: (app, window, the folder, the
    errors: empty when the analysis arrived).  The caller ends with ``launch.teardown`` and the
    folder's ``cleanup``."""
    width, height = (int(v) for v in size.lower().split("x"))
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from attention_lab.ui import launch, runtime

    launch._configure_plots()
    app = QApplication.instance() or QApplication([sys.argv[0]])
    from attention_lab.ui.main_window import MainWindow

    runtime.install_all()  # as the app does before its window (ui.launch): the Portuguese ticks, the paints

    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    settings = QSettings(str(Path(tmp.name) / "settings.ini"), QSettings.Format.IniFormat)
    settings.setValue("tour/offered", True)  # the screenshot shows the tour (or a panel), not the offer to take it
    settings.setValue("first_run/gpt2_offer_answered", True)  # nor the offer bar (first-run-*.png shows it)
    window = MainWindow(settings=settings, model_spec=model, language=language)
    window.resize(width, height)
    window.show()
    ok, errors = launch._wait_for_first_result(window, TIMEOUT_S)
    return app, window, tmp, [] if ok else (errors or ["no analysis"])


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_lab.devtools.tour_screenshot")
    parser.add_argument("file")
    parser.add_argument("--model", default=None)
    parser.add_argument("--lang", choices=("en", "pt_BR"), default="en")
    parser.add_argument("--step", default="1", help="step number (from 1) or key")
    parser.add_argument("--predict", choices=("yes", "no", "unsure", "skip", "ask"), default="skip",
                        help="the answer to a step's question before its measurement (ask: show the question)")
    parser.add_argument("--benchmark", action="store_true", help="on step 5, press “Run the benchmark” first")
    parser.add_argument("--size", default="1600x1000")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    app, window, tmp, errors = open_window(args.model, args.lang, args.size, "attention-lab-tour-")
    from attention_lab.ui import launch

    code = 1
    try:
        if errors:
            print("tour screenshot: no analysis: " + "; ".join(errors), file=sys.stderr)
            return 1
        dock = window.tour
        step = int(args.step) - 1 if args.step.isdigit() else args.step
        dock.progress.goto(step)
        window.findChild(type(dock.menu_action), "action.tour").trigger()
        _wait(app, lambda: not dock.entry_pending, TIMEOUT_S)
        asked = dock.asking
        if asked and args.predict != "ask":
            dock.predict_box.buttons[args.predict].click()
        # settled, not just "a fact": the induction step switches layer after its fact arrives
        if not (asked and args.predict == "ask") and not _wait(app, dock.settled, TIMEOUT_S):
            print("tour screenshot: the step never settled (its fact, or the layer it opens)", file=sys.stderr)
            return 1
        if args.benchmark and dock.step.offers_benchmark:
            kv = window.panel("panel.kvbench")
            dock.run_button.click()
            if not _wait(app, lambda: kv.result() is not None and not kv.running, TIMEOUT_S):
                print("tour screenshot: the benchmark did not finish", file=sys.stderr)
                return 1
            _wait(app, lambda: dock.settled() and dock.fact.key.startswith("kvcache.done"), TIMEOUT_S)
        launch._settle(app, 600)
        path = Path(args.file)
        if not save_grab(window, path, "tour screenshot"):
            return 1
        shown = dock.predict_box.question.text() if dock.asking else dock.fact_text()
        print(f"tour screenshot: {path} ({window.width()}x{window.height()}), step {dock.progress.index + 1}: {shown}")
        code = 0
    finally:
        stopped = launch.teardown(app, window)
        tmp.cleanup()
        if not stopped:
            code = code or 1
    return code


if __name__ == "__main__":
    raise SystemExit(main())
