"""Screenshots of the Generate tab after a few steps: the window, and "Inside this head" alone.

``python -m attention_lab.devtools.generate_screenshot WINDOW_FILE INSIDE_FILE [--model SPEC]
[--lang en|pt_BR] [--steps N] [--size 1366x768]``

The window at the given size with the Generate tab in front, once its N steps (default 4) are
computed on the worker and drawn; then the panel's "Inside this head" box, grabbed on its own
(it sits below the fold of a laptop's dock) with its table unfolded, every row in sight.  Fresh settings in a temporary folder, like
``attention-lab --screenshot``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from attention_lab.devtools.tour_screenshot import TIMEOUT_S, _wait, open_window


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m attention_lab.devtools.generate_screenshot")
    parser.add_argument("window_file")
    parser.add_argument("inside_file")
    parser.add_argument("--model", default=None)
    parser.add_argument("--lang", choices=("en", "pt_BR"), default="en")
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--size", default="1366x768")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    app, window, tmp, errors = open_window(args.model, args.lang, args.size, "attention-lab-generate-")
    from attention_lab.ui import launch

    code = 1
    try:
        if errors:
            print("generate screenshot: no analysis: " + "; ".join(errors), file=sys.stderr)
            return 1
        window.docks["panel.generate"].raise_()
        panel = window.panel("panel.generate")
        _wait(app, lambda: panel.state is not None, TIMEOUT_S)
        panel.step_to(args.steps)
        if not _wait(app, lambda: panel.view() is not None and len(panel.view().steps) == args.steps, TIMEOUT_S):
            print("generate screenshot: the steps never arrived", file=sys.stderr)
            return 1
        launch._settle(app, 600)
        for path, widget in ((Path(args.window_file), window), (Path(args.inside_file), panel.inside_box)):
            path.parent.mkdir(parents=True, exist_ok=True)
            if widget is panel.inside_box:  # unfolded: the whole arithmetic, not the first rows
                table = panel.inside_table
                table.setFixedHeight(table.horizontalHeader().height() + sum(
                    table.rowHeight(r) for r in range(table.rowCount())) + 4)
                launch._settle(app, 300)
            if not widget.grab().save(str(path), "PNG"):
                print(f"generate screenshot: could not write {path}", file=sys.stderr)
                return 1
        last = panel.view().steps[-1]
        print(f"generate screenshot: {args.window_file}, {args.inside_file}: {args.steps} steps, the last "
              f"{last.token!r}, earlier rows changed by {last.earlier_rows_max_change}")
        code = 0
    finally:
        launch.teardown(app, window)
        tmp.cleanup()
    return code


if __name__ == "__main__":
    raise SystemExit(main())
