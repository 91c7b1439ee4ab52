"""The window's settings: one QSettings INI file, read defensively.

Text, model, layer, mode, BOS switch, layout, language and geometry.  Anything unreadable
falls back to its default and is named in :attr:`SettingsReader.problems` (the window shows
them in the status bar), never a crash.
"""

from __future__ import annotations

import logging

from PySide6.QtCore import QByteArray, QSettings
from PySide6.QtGui import QGuiApplication

log = logging.getLogger(__name__)

SETTINGS_VERSION = 1
ORGANIZATION, APPLICATION = "AttentionLab", "attention-lab"
TEXT_LIMIT = 1_000_000  # characters: a settings file is not a place for a book


def default_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


class SettingsReader:
    """Typed reads of ``settings``; each value that can't be used is noted once in ``problems``."""

    def __init__(self, settings: QSettings):
        self.settings = settings
        self.problems: list[str] = []
        if settings.status() != QSettings.Status.NoError:
            self.problem(f"{settings.fileName()} ({settings.status().name})")

    def problem(self, what: str) -> None:
        if what not in self.problems:
            self.problems.append(what)

    def read_str(self, key: str, default: str) -> str:
        value = self.settings.value(key, default)
        if value is None:
            return default
        if not isinstance(value, str):
            self.problem(key)
            return default
        return value

    def read_int(self, key: str, default: int, low: int, high: int) -> int:
        value = self.settings.value(key, default)
        try:
            number = int(value)
        except (TypeError, ValueError):
            self.problem(key)
            return default
        if not low <= number <= high:
            self.problem(key)
            return default
        return number

    def read_bool(self, key: str, default: bool) -> bool:
        value = self.settings.value(key, default)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if isinstance(value, int):
            return bool(value)
        self.problem(key)
        return default

    def read_bytes(self, key: str) -> QByteArray | None:
        value = self.settings.value(key)
        if value is None:
            return None
        if isinstance(value, (QByteArray, bytes)):
            return QByteArray(value)
        self.problem(key)
        return None

    def warning(self) -> str:
        """What the status bar says about unreadable values and an unwritable file ("" if nothing)."""
        from attention_lab.ui.i18n import tr

        warnings = [tr("status.settings_reset", what=", ".join(self.problems))] if self.problems else []
        if not self.settings.isWritable():
            warnings.append(tr("status.settings_unwritable", file=self.settings.fileName()))
        return " ".join(warnings)

    def restore_inputs(self, session) -> None:
        """The saved text, layer, mode and BOS switch into ``session``: read before the model's
        loading, which analyses them right away."""
        text = self.read_str("text", "")
        if len(text) > TEXT_LIMIT:
            self.problem("text")
            text = ""
        if text:
            session.text = text
        session.layer = self.read_int("layer", 0, 0, 1000)
        session.causal = self.read_bool("causal", True)
        session.bos = self.read_bool("bos", False)


def save(settings: QSettings, session, language: str, geometry: QByteArray, window_state: QByteArray) -> None:
    settings.setValue("settings_version", SETTINGS_VERSION)
    settings.setValue("text", session.text)
    settings.setValue("layer", int(session.layer))
    settings.setValue("causal", bool(session.causal))
    settings.setValue("bos", bool(session.bos))
    settings.setValue("language", language)
    if session.model is not None:
        settings.setValue("model_spec", session.model.spec)
    settings.setValue("geometry", geometry)
    settings.setValue("window_state", window_state)
    settings.sync()
    if settings.status() != QSettings.Status.NoError:  # QSettings never raises: ask
        log.warning("could not save settings to %s (%s)", settings.fileName(), settings.status().name)


def fit_to_screen(window) -> bool:
    """Shrink ``window`` (and move it) into its screen's available area if it doesn't fit:
    the default 1600×1000, or a size saved on a larger monitor, on a 1366×768 laptop.
    True if it had to change; a window that fits is left exactly where it is."""
    screen = window.screen() or QGuiApplication.primaryScreen()
    if screen is None or window.isMaximized() or window.isFullScreen():
        return False
    available = screen.availableGeometry()
    frame = window.frameGeometry()
    extra_w, extra_h = frame.width() - window.width(), frame.height() - window.height()  # title bar, borders
    width = min(window.width(), available.width() - extra_w)
    height = min(window.height(), available.height() - extra_h)
    if (width, height) == (window.width(), window.height()) and available.contains(frame):
        return False
    window.resize(width, height)
    frame = window.frameGeometry()
    # inside the screen; a window still larger than it (its minimum is) keeps its top-left
    # corner, with the title bar and menus, on the screen
    x = max(min(frame.x(), available.right() - frame.width() + 1), available.x())
    y = max(min(frame.y(), available.bottom() - frame.height() + 1), available.y())
    window.move(x, y)
    return True
