"""Fixtures for the Qt tests: isolated settings, no leaked threads, English by default.

Every test here runs with ``QT_QPA_PLATFORM=offscreen`` (set in tests/conftest.py), waits
with ``qtbot.waitSignal``/``waitUntil`` (never ``sleep``), and fails if it leaves a worker
thread running.
"""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("pytestqt")

import pyqtgraph as pg  # noqa: E402
from PySide6.QtCore import QCoreApplication, QSettings  # noqa: E402

from attention_lab.ui import runtime  # noqa: E402

pg.setConfigOptions(imageAxisOrder="row-major", antialias=True, background="w", foreground="k")
# the workarounds as the app installs them (ui/launch.py), but for the freeze: the suite is one long
# process whose GC tests freeze and thaw for themselves (test_gc_pause, test_window_memory)
runtime.install_all(skip={"GC_FREEZE"})

# A thread still running this long after a test has ended is a leak, not a slow join.
THREAD_GRACE_MS = 3000


@pytest.fixture(autouse=True)
def no_leftover_threads():
    """Fail a test that leaves a Python thread (e.g. an InferenceWorker) running."""
    before = set(threading.enumerate())
    yield

    def leftovers():
        return [t for t in threading.enumerate() if t not in before and t.is_alive()]

    deadline = time.monotonic() + THREAD_GRACE_MS / 1000
    while (rest := leftovers()) and time.monotonic() < deadline:
        # a worker that was shut down may still be returning from its last step
        if QCoreApplication.instance() is not None:
            QCoreApplication.processEvents()
        rest[0].join(0.05)
    extra = leftovers()
    if extra:
        pytest.fail(f"test left threads running: {[t.name for t in extra]}")


@pytest.fixture(autouse=True)
def english():
    """Every test starts (and leaves the app) in English; the translator is process-wide."""
    from attention_lab.ui.i18n import translator

    translator.set_language("en")
    yield
    translator.set_language("en")


@pytest.fixture
def isolated_settings(tmp_path) -> QSettings:
    """A settings file of the test's own; the default (user-scope) path is redirected too."""
    QSettings.setPath(QSettings.Format.IniFormat, QSettings.Scope.UserScope, str(tmp_path / "user-settings"))
    return QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)


@pytest.fixture(scope="session")
def tiny_model(tiny_checkpoint):
    from attention_lab.core.models import load_model

    return load_model(str(tiny_checkpoint))


@pytest.fixture
def make_window(qtbot, isolated_settings, tiny_checkpoint):
    """``make(settings=None, model_spec="tiny")``: a shown MainWindow, torn down after the test."""
    from attention_lab.ui.main_window import MainWindow

    windows: list[MainWindow] = []

    def make(settings: QSettings | None = None, model_spec: str | None = "tiny", **kwargs) -> MainWindow:
        spec = str(tiny_checkpoint) if model_spec == "tiny" else model_spec
        window = MainWindow(settings=settings if settings is not None else isolated_settings, model_spec=spec, **kwargs)
        window.resize(1400, 900)
        window.show()
        windows.append(window)
        return window

    yield make
    from qt_windows import close_windows

    close_windows(windows)

