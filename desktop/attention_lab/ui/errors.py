"""One place that turns failures into a readable dialog with "Copy details".

Errors from the worker arrive on the GUI thread (see :mod:`attention_lab.ui.worker`) and
are shown here; an uncaught exception in a GUI slot goes through :func:`install_excepthook`
to the same dialog.  The dialog is not modal-blocking (``open()``, not ``exec()``), and a
second error while one is shown replaces its text instead of stacking windows, so a burst
of failures never buries the app.
"""

from __future__ import annotations

import sys
import traceback

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QApplication,
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QStyle,
    QVBoxLayout,
    QWidget,
)

from attention_lab.ui.i18n import tr
from attention_lab.ui.strings import errors as _texts  # noqa: F401 -- registers the texts


class ErrorDialog(QDialog):
    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("error_dialog")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        icon = QLabel(self)
        icon.setPixmap(self.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning).pixmap(40, 40))
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.hint = QLabel(self)
        self.hint.setWordWrap(True)
        self.details = QPlainTextEdit(self)
        self.details.setReadOnly(True)
        self.details.setVisible(False)
        self.details.setMinimumHeight(180)
        self.toggle = QPushButton(self)
        self.toggle.clicked.connect(self._toggle_details)
        self.copy = QPushButton(self)
        self.copy.setObjectName("copy_details")
        self.copy.clicked.connect(self.copy_details)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close, self)
        buttons.rejected.connect(self.reject)
        buttons.accepted.connect(self.accept)
        # our own word for it, whether or not Qt's translations are in the bundle (i18n._follow_with_qt)
        self.close_button = buttons.button(QDialogButtonBox.StandardButton.Close)
        self.copied = QLabel(self)

        top = QHBoxLayout()
        top.addWidget(icon, 0, Qt.AlignmentFlag.AlignTop)
        texts = QVBoxLayout()
        texts.addWidget(self.message)
        texts.addWidget(self.hint)
        top.addLayout(texts, 1)
        row = QHBoxLayout()
        row.addWidget(self.toggle)
        row.addWidget(self.copy)
        row.addWidget(self.copied)
        row.addStretch(1)
        row.addWidget(buttons)
        layout = QVBoxLayout(self)
        layout.addLayout(top)
        layout.addWidget(self.details, 1)
        layout.addLayout(row)
        self.resize(560, 180)
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("errors.title"))
        self.hint.setText(tr("errors.usable"))
        self.copy.setText(tr("errors.copy"))
        self.close_button.setText(tr("errors.close"))
        self.toggle.setText(tr("errors.hide_details" if self.details.isVisible() else "errors.show_details"))

    def set_error(self, message: str, details: str = "") -> None:
        self.message.setText(message)
        self.details.setPlainText(details or message)
        self.copied.clear()
        self.retranslate()

    def copy_details(self) -> None:
        QGuiApplication.clipboard().setText(self.message.text() + "\n\n" + self.details.toPlainText())
        self.copied.setText(tr("errors.copied"))

    def _toggle_details(self) -> None:
        self.details.setVisible(not self.details.isVisible())
        self.retranslate()
        self.adjustSize()


def show_error(parent: QWidget | None, message: str, details: str = "") -> ErrorDialog:
    """Show ``message`` (one readable line) with ``details`` behind "Show details"."""
    dialog = parent.findChild(ErrorDialog, "error_dialog") if parent is not None else None
    if dialog is None:
        dialog = ErrorDialog(parent)
    dialog.set_error(message, details)
    if not dialog.isVisible():
        dialog.open()
    dialog.raise_()
    return dialog


def install_excepthook(parent_getter):
    """Uncaught exceptions in GUI slots become the error dialog instead of a silent stderr line."""
    previous = sys.excepthook

    def hook(exc_type, exc, tb):
        details = "".join(traceback.format_exception(exc_type, exc, tb))
        sys.stderr.write(details)
        if QApplication.instance() is None or issubclass(exc_type, KeyboardInterrupt):
            previous(exc_type, exc, tb)
            return
        try:
            show_error(parent_getter(), tr("errors.unexpected", reason=str(exc) or exc_type.__name__), details)
        except Exception:  # the dialog itself failed: stderr has it
            previous(exc_type, exc, tb)

    sys.excepthook = hook
    return previous  # to restore when the window goes
