"""The commands ``packaging/readme_screenshots.py`` runs to retake the README's pictures each write
their pictures (the window at the size asked, or a panel of it), with something drawn in them.
Checked only by use, a script broken by a change in the window would be found at the next retake.

Run as the script runs them, less ``xvfb-run`` (the offscreen platform draws the same window), into
a temporary folder instead of ``resources/screenshots``; one of each kind of script."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from packaging_scripts import load

pytest.importorskip("PySide6")

from PySide6.QtGui import QImage  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SIZE = "1366x768"

shots = load("readme_screenshots")


def _distinct_colours(image: QImage) -> int:
    """How many colours a 40 × 40 grid of the picture's pixels holds (a blank window: one or two)."""
    return len({image.pixel(image.width() * i // 40, image.height() * j // 40) for i in range(40) for j in range(40)})


@pytest.mark.parametrize(("name", "lang"), [("tour-portrait", "pt_BR"), ("generate", "en"), ("mask-designer-loss", "en")])
def test_a_readme_screenshot_command_writes_its_pictures(name, lang, tmp_path, monkeypatch):
    monkeypatch.setattr(shots, "OUT", tmp_path)
    command = shots.command(name, lang, SIZE, tmp_path)
    xvfb = shots._xvfb(SIZE)
    assert command[: len(xvfb)] == xvfb
    env = dict(os.environ, PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen")
    env.pop("DISPLAY", None)
    done = subprocess.run(command[len(xvfb):], cwd=ROOT / "desktop", env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    extra = shots.PANEL_SHOTS.get(name, (None, ()))[1]
    width, height = (int(v) for v in SIZE.split("x"))
    for picture in (name, *extra):
        path = tmp_path / f"{picture}-{lang}.png"
        image = QImage(str(path))
        assert not image.isNull(), f"{path} was not written"
        if name in shots.TOUR_SHOTS:  # the whole window
            assert (image.width(), image.height()) == (width, height), f"{picture}: {image.size()}"
        else:  # the window, or a panel of it (grabbed whole, taller than its dock shows it)
            assert image.width() >= 200 and image.height() >= 200, f"{picture}: {image.size()}"
        assert _distinct_colours(image) > 20, f"{picture}: hardly anything drawn"
