"""Screenshot of the mask designer's dock: a prefix-LM of 4 with the loss taken only after the prefix.

``python -m attention_lab.devtools.mask_designer_screenshot FILE [--model SPEC] [--lang en|pt_BR]
[--size 1366x768]``

The window at the given size on fresh settings, the designer's dock in front, its verdicts
measured on the default text (the worker's report waited for); then the dock alone is grabbed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from attention_lab.devtools.tour_screenshot import TIMEOUT_S, _wait, open_window, save_grab

DESIGNER = "panel.mask_designer"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_lab.devtools.mask_designer_screenshot")
    parser.add_argument("file")
    parser.add_argument("--model", default=None)
    parser.add_argument("--lang", choices=("en", "pt_BR"), default="en")
    parser.add_argument("--size", default="1366x768")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    app, window, tmp, errors = open_window(args.model, args.lang, args.size, "attention-lab-designer-")
    from attention_lab.ui import launch

    try:
        if errors:
            print("mask designer screenshot: no analysis: " + "; ".join(errors), file=sys.stderr)
            return 1
        dock = window.docks[DESIGNER]
        dock.show()
        dock.raise_()
        if not _wait(app, lambda: window.built_panel(DESIGNER) is not None, TIMEOUT_S):
            print("mask designer screenshot: the panel was never built", file=sys.stderr)
            return 1
        panel = window.panel(DESIGNER)
        panel.set_choice("prefix", 4)
        panel.set_loss("after-prefix")
        if not _wait(app, lambda: panel.shown_verdicts() is not None and panel.spec().kind == "prefix", TIMEOUT_S):
            print("mask designer screenshot: the verdicts never arrived", file=sys.stderr)
            return 1
        launch._settle(app, 600)
        path = Path(args.file)
        if not save_grab(dock, path, "mask designer screenshot"):
            return 1
        print(f"mask designer screenshot: {path}: {panel.shown_verdicts()}")
        return 0
    finally:
        launch.teardown(app, window)
        tmp.cleanup()


if __name__ == "__main__":
    sys.exit(main())
