"""A log a learner can hand to a teacher: what went wrong, and where the app stopped.

:func:`install` (called by :func:`attention_lab.ui.launch.run_gui` once the QApplication
has its names) opens a rotating log file in Qt's ``AppDataLocation`` (``attention-lab.log``,
1 MB × 3 backups; ``ATTENTION_LAB_LOG_DIR`` puts it elsewhere), logs every uncaught
exception with its traceback (GUI thread through ``sys.excepthook``, other threads
through ``threading.excepthook``), and points :mod:`faulthandler` at ``fatal.log`` so a
hard crash (segfault, abort) still leaves the Python stack of every thread.

A session leaves ``running-<pid>`` there while it runs and removes it when it ends
cleanly (:meth:`CrashLog.clean_exit`).  The next start finds a marker whose process is
gone: the previous session crashed.  Its ``fatal.log`` is copied into the log, and
:func:`attach` shows a non-modal notice with the log's path, once (the marker is gone
after that).  :func:`attach` also adds Help › Open log folder.
"""

from __future__ import annotations

import faulthandler
import logging
import logging.handlers
import os
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from attention_lab.ui.i18n import register, tr

register(
    {
        "crash.menu": {"en": "Open &log folder", "pt_BR": "Abrir a pasta de &registro"},
        "crash.title": {"en": "Attention Lab closed unexpectedly", "pt_BR": "O Attention Lab fechou inesperadamente"},
        "crash.text": {
            "en": "The last session ended without closing normally. What happened is in the log:\n{path}\n\n"
            "If it happens again, send this file to your teacher.",
            "pt_BR": "A última sessão terminou sem fechar normalmente. O que aconteceu está no registro:\n{path}\n\n"
            "Se acontecer de novo, envie este arquivo para o seu professor.",
        },
        "crash.open_folder": {"en": "Open log folder", "pt_BR": "Abrir a pasta de registro"},
    }
)

LOG_NAME = "attention-lab.log"
FATAL_NAME = "fatal.log"
MARKER_PREFIX = "running-"
LOG_BYTES, LOG_BACKUPS = 1_000_000, 3
DIR_ENV = "ATTENTION_LAB_LOG_DIR"

log = logging.getLogger("attention_lab")


def default_log_dir() -> Path:
    """``ATTENTION_LAB_LOG_DIR``, else Qt's AppDataLocation (per user, per app)."""
    if os.environ.get(DIR_ENV):
        return Path(os.environ[DIR_ENV])
    from PySide6.QtCore import QStandardPaths

    location = QStandardPaths.writableLocation(QStandardPaths.StandardLocation.AppDataLocation)
    return Path(location) if location else Path.home() / ".attention-lab"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` still runs (another window of the app, not a crash)."""
    if pid == os.getpid():
        return True
    if sys.platform == "win32":  # os.kill(pid, 0) would terminate it on Windows
        import ctypes

        handle = ctypes.windll.kernel32.OpenProcess(0x1000, False, pid)  # PROCESS_QUERY_LIMITED_INFORMATION
        if not handle:
            return False
        code = ctypes.c_ulong()
        ctypes.windll.kernel32.GetExitCodeProcess(handle, ctypes.byref(code))
        ctypes.windll.kernel32.CloseHandle(handle)
        return code.value == 259  # STILL_ACTIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass
class CrashLog:
    folder: Path
    log_file: Path
    previous_crash: bool = False  # the last session did not end cleanly
    _marker: Path | None = None
    _fatal: object = None  # the open file faulthandler writes to
    _hooks: tuple = field(default=(), repr=False)
    _handler: logging.Handler | None = field(default=None, repr=False)
    _before: tuple = field(default=(logging.WARNING, False), repr=False)  # root level, faulthandler on?

    def clean_exit(self) -> None:
        """The session ends normally: no notice at the next start."""
        log.info("session ended cleanly")
        if self._marker is not None:
            try:
                self._marker.unlink()
            except OSError:
                pass
            self._marker = None

    def hook_exceptions(self) -> None:
        """Log every uncaught exception, then pass it on to the hooks installed before
        (call it after the error dialog's hook: it wraps whatever is there)."""
        previous_hook, previous_thread_hook = sys.excepthook, threading.excepthook

        def excepthook(exc_type, exc, tb):
            log.error("uncaught exception:\n%s", "".join(traceback.format_exception(exc_type, exc, tb)))
            previous_hook(exc_type, exc, tb)

        def thread_hook(args):
            log.error(
                "uncaught exception in thread %s:\n%s",
                getattr(args.thread, "name", "?"),
                "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback)),
            )
            previous_thread_hook(args)

        sys.excepthook, threading.excepthook = excepthook, thread_hook
        self._hooks = (previous_hook, previous_thread_hook)

    def uninstall(self) -> None:
        """Undo :func:`install` (tests): hooks back, handler closed, faulthandler off."""
        if self._hooks:
            sys.excepthook, threading.excepthook = self._hooks
            self._hooks = ()
        if self._handler is not None:
            logging.getLogger().removeHandler(self._handler)
            self._handler.close()
            self._handler = None
            logging.getLogger().setLevel(self._before[0])
        if self._fatal is not None:
            faulthandler.disable()
            self._fatal.close()
            self._fatal = None
            if self._before[1]:
                faulthandler.enable(sys.__stderr__, all_threads=True)


def install(folder: Path | None = None) -> CrashLog | None:
    """Start logging to ``folder`` (default :func:`default_log_dir`); None if it can't be written."""
    folder = Path(folder) if folder is not None else default_log_dir()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handler = logging.handlers.RotatingFileHandler(folder / LOG_NAME, maxBytes=LOG_BYTES, backupCount=LOG_BACKUPS, encoding="utf-8")
    except OSError as exc:  # a read-only home must not stop the app
        logging.getLogger(__name__).warning("no log file in %s: %s", folder, exc)
        return None
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s [%(threadName)s] %(message)s"))
    handler.setLevel(logging.INFO)
    root = logging.getLogger()
    root.addHandler(handler)
    crash = CrashLog(folder=folder, log_file=folder / LOG_NAME)
    crash._before = (root.level, faulthandler.is_enabled())
    if root.level > logging.INFO or root.level == logging.NOTSET:
        root.setLevel(logging.INFO)

    # the previous session: a marker whose process is gone means it never ended cleanly
    for marker in folder.glob(MARKER_PREFIX + "*"):
        try:
            pid = int(marker.name[len(MARKER_PREFIX):])
        except ValueError:
            pid = -1
        if pid > 0 and _alive(pid):
            continue
        crash.previous_crash = True
        marker.unlink(missing_ok=True)
    fatal = folder / FATAL_NAME
    if crash.previous_crash:
        stack = fatal.read_text(encoding="utf-8", errors="replace").strip() if fatal.exists() else ""
        log.error("the previous session ended without closing normally%s", (":\n" + stack) if stack else " (no fatal error recorded)")
    from attention_lab import __version__

    log.info("session started: Attention Lab %s, pid %d, Python %s", __version__, os.getpid(), sys.version.split()[0])
    crash._marker = folder / f"{MARKER_PREFIX}{os.getpid()}"
    crash._marker.write_text(time.strftime("%Y-%m-%d %H:%M:%S"), encoding="ascii")
    crash._fatal = open(fatal, "w", encoding="utf-8")  # noqa: SIM115 -- open while the process lives
    faulthandler.enable(crash._fatal, all_threads=True)

    crash._handler = handler
    return crash


def open_folder(folder: Path) -> bool:
    """Show ``folder`` in the system's file manager."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    return QDesktopServices.openUrl(QUrl.fromLocalFile(str(folder)))


def attach(window, crash: CrashLog | None) -> None:
    """Help › Open log folder, and the notice about a crashed previous session (once)."""
    from PySide6.QtCore import Qt, Slot
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QMessageBox

    from attention_lab.ui.i18n import translator

    class OpenLogFolder(QAction):
        # a bound slot: Qt drops the connection with the action (a lambda would outlive it)
        @Slot(str)
        def retranslate(self, _language: str = "") -> None:
            self.setText(tr("crash.menu"))

    folder = crash.folder if crash is not None else default_log_dir()
    action = OpenLogFolder(window)
    action.setObjectName("action.open_log_folder")
    action.retranslate()
    action.triggered.connect(lambda _checked=False: open_folder(folder))
    window.help_menu.addAction(action)
    translator.language_changed.connect(action.retranslate)
    if crash is None or not crash.previous_crash:
        return
    crash.previous_crash = False  # shown once
    box = QMessageBox(QMessageBox.Icon.Warning, tr("crash.title"), tr("crash.text", path=str(crash.log_file)),
                      QMessageBox.StandardButton.Close, window)
    box.setObjectName("crash_notice")
    box.setWindowModality(Qt.WindowModality.NonModal)  # the app is usable while it is shown
    box.addButton(tr("crash.open_folder"), QMessageBox.ButtonRole.ActionRole).clicked.connect(lambda: open_folder(folder))
    box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)  # the path can be copied
    box.show()
