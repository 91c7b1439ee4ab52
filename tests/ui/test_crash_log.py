"""The crash log: a hard crash of the real app leaves its stack in the log folder, the next
start says so once (non-modal, with the log's path), and Help › Open log folder opens it."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from PySide6.QtWidgets import QMessageBox

from attention_lab.ui import crash_log
from attention_lab.ui.i18n import translator

ROOT = Path(__file__).resolve().parents[2]

# the real app (launch.run_gui, not headless) on the tiny model; once the first analysis is
# on screen, a slot segfaults: what a crash inside Qt or torch looks like to the process
CRASHING_APP = textwrap.dedent(
    """
    import faulthandler, sys
    import attention_lab.ui.launch as launch
    import attention_lab.ui.main_window as main_window

    def the_lab_crashes_here(_state):
        faulthandler._sigsegv()

    class CrashingWindow(main_window.MainWindow):  # the window run_gui makes (imported there)
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.state_shown.connect(the_lab_crashes_here)

    main_window.MainWindow = CrashingWindow
    sys.exit(launch.run_gui(["--model", sys.argv[1], "--settings", sys.argv[2]]))
    """
)

THREAD_ERROR = textwrap.dedent(
    """
    import sys, threading
    from attention_lab.ui import crash_log

    crash = crash_log.install()
    crash.hook_exceptions()

    def worker_that_fails():
        raise RuntimeError("a worker thread failed")

    t = threading.Thread(target=worker_that_fails, name="lab-thread")
    t.start(); t.join()
    crash.clean_exit()
    """
)


def _run(code: str, log_dir: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, ATTENTION_LAB_LOG_DIR=str(log_dir), QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join([str(ROOT / "desktop"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True, text=True, timeout=180)


def test_a_crash_leaves_its_stack_and_the_next_start_says_so_once(tmp_path, tiny_checkpoint, make_window, qtbot, monkeypatch):
    logs = tmp_path / "logs"
    done = _run(CRASHING_APP, logs, str(tiny_checkpoint), str(tmp_path / "settings.ini"))
    assert done.returncode != 0, done.stdout + done.stderr  # it really crashed
    fatal = (logs / crash_log.FATAL_NAME).read_text(encoding="utf-8")
    assert "Segmentation fault" in fatal and "the_lab_crashes_here" in fatal and "run_gui" in fatal
    assert list(logs.glob(crash_log.MARKER_PREFIX + "*")), "the crashed session's marker"
    assert "session started" in (logs / crash_log.LOG_NAME).read_text(encoding="utf-8")

    # the next start: the stack goes into the log, and a notice (not modal) names the log
    window = make_window()
    crash = crash_log.install(logs)
    try:
        assert crash.previous_crash
        text = (logs / crash_log.LOG_NAME).read_text(encoding="utf-8")
        assert "previous session ended without closing normally" in text and "the_lab_crashes_here" in text
        opened = []
        monkeypatch.setattr(crash_log, "open_folder", opened.append)
        crash_log.attach(window, crash)
        notice = window.findChild(QMessageBox, "crash_notice")
        assert notice is not None and notice.isVisible() and not notice.isModal()
        assert str(logs / crash_log.LOG_NAME) in notice.text()
        # Help › Open log folder, in both languages
        action = next(a for a in window.help_menu.actions() if a.objectName() == "action.open_log_folder")
        assert action.text() == "Open &log folder"
        translator.set_language("pt_BR")
        assert action.text() == "Abrir a pasta de &registro"
        action.trigger()
        assert opened == [logs]
        notice.close()
        crash.clean_exit()
    finally:
        crash.uninstall()

    # and the start after that (a clean exit before it): no notice
    again = make_window()
    crash = crash_log.install(logs)
    try:
        assert not crash.previous_crash
        crash_log.attach(again, crash)
        notice = again.findChild(QMessageBox, "crash_notice")
        assert notice is None
        crash.clean_exit()
    finally:
        crash.uninstall()
    assert not list(logs.glob(crash_log.MARKER_PREFIX + "*"))


def test_an_uncaught_exception_in_a_thread_is_logged_with_its_traceback(tmp_path):
    done = _run(THREAD_ERROR, tmp_path)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / crash_log.LOG_NAME).read_text(encoding="utf-8")
    assert "uncaught exception in thread lab-thread" in text
    assert "worker_that_fails" in text and "RuntimeError: a worker thread failed" in text
    assert "session ended cleanly" in text
