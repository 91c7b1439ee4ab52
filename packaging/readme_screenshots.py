"""Retake every screenshot the README shows, at a learner's laptop size, in both languages.

    python3 packaging/readme_screenshots.py [--only NAME ...] [--size 1366x768]

Each picture is the real window under Xvfb (``xvfb-run``), the demo model, fresh settings:
the main window (``attention-lab --screenshot``), the first-run offer, and the Lab tour on
the steps the README describes (``attention_lab.devtools.tour_screenshot``, which waits for the
step's fact to be measured), the Generate tab after four steps and the mask designer's loss
choice (``generate_screenshot``, ``mask_designer_screenshot``).  The files go to ``resources/screenshots/NAME-LANG.png``.
Look at every one before committing them.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "resources" / "screenshots"
LANGS = ("en", "pt_BR")
#: the first-run offer answered and the tour offered: the window as a returning learner sees it
QUIET_SETTINGS = "[first_run]\ngpt2_offer_answered=true\n[tour]\noffered=true\n"

#: README name -> the tour step it shows (None: no tour), whether the KV benchmark is run first,
#: and the answer to the step's question when it asks one (ask: the question itself)
TOUR_SHOTS = {
    "tour-predict": ("leakage", False, "ask"),
    "tour": ("leakage", False, "yes"),
    "tour-budget": ("budget", False, "skip"),
    "tour-portrait": ("portrait", False, "skip"),
    "tour-induction": ("induction", False, "skip"),
    "tour-kv": ("kvcache", True, "skip"),
    "mask": ("mask", False, "skip"),
    "mask-designer": ("mask_designer", False, "skip"),
    "head-knockout": ("knockout", False, "skip"),
}
WINDOW_SHOTS = ("main", "first-run")
#: README name -> the devtools script that takes it, and the other pictures it takes beside it
PANEL_SHOTS = {
    "generate": ("attention_lab.devtools.generate_screenshot", ("generate-inside",)),
    "mask-designer-loss": ("attention_lab.devtools.mask_designer_screenshot", ()),
}


def _python() -> str:
    venv = ROOT / ".venv" / "bin" / "python"
    return str(venv) if venv.exists() else sys.executable


def _xvfb(size: str) -> list[str]:
    return ["xvfb-run", "-a", "-s", f"-screen 0 {size}x24"]


def command(name: str, lang: str, size: str, settings_dir: Path) -> list[str]:
    """The command that takes ``name``'s picture in ``lang``."""
    out = str(OUT / f"{name}-{lang}.png")
    if name in PANEL_SHOTS:
        script, others = PANEL_SHOTS[name]
        also = [str(OUT / f"{other}-{lang}.png") for other in others]
        args = ["-m", script, out, *also, "--model", "demo", "--lang", lang, "--size", size]
        return _xvfb(size) + [_python(), *args]
    if name in TOUR_SHOTS:
        step, benchmark, predict = TOUR_SHOTS[name]
        args = ["-m", "attention_lab.devtools.tour_screenshot", out, "--model", "demo", "--lang", lang,
                "--step", step, "--predict", predict, "--size", size]
        return _xvfb(size) + [_python(), *args, *(["--benchmark"] if benchmark else [])]
    settings = settings_dir / f"{name}-{lang}.ini"
    settings.write_text("" if name == "first-run" else QUIET_SETTINGS, encoding="utf-8")
    args = ["-m", "attention_lab", "--model", "demo", "--lang", lang, "--size", size,
            "--settings", str(settings), "--screenshot", out]
    return _xvfb(size) + [_python(), *args]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=None, help="names to retake (default: all)")
    parser.add_argument("--size", default="1366x768")
    args = parser.parse_args(argv)
    names = args.only or [*WINDOW_SHOTS, *TOUR_SHOTS, *PANEL_SHOTS]
    unknown = [n for n in names if n not in WINDOW_SHOTS and n not in TOUR_SHOTS and n not in PANEL_SHOTS]
    if unknown:
        parser.error(f"unknown screenshot(s): {', '.join(unknown)}")
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"))
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            for lang in LANGS:
                cmd = command(name, lang, args.size, Path(tmp))
                done = subprocess.run([*cmd], cwd=ROOT / "desktop", env=env, capture_output=True, text=True, timeout=600)
                print(f"{name}-{lang}: {'ok' if done.returncode == 0 else 'FAILED'}", flush=True)
                if done.returncode != 0:
                    failed.append(f"{name}-{lang}")
                    print(done.stdout[-2000:], done.stderr[-2000:], sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
