"""The window's small dialogs: the models in the local hub cache, a download's progress
(with Cancel), the chapter's key ideas, About.

The download itself is the session's (``Session.download``, on its own worker); the dialog
shows its progress and closes when it ends.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Qt
from PySide6.QtWidgets import QInputDialog, QMessageBox, QProgressBar, QProgressDialog, QWidget

from attention_lab import __version__
from attention_lab.ui.i18n import tr


def cached_hub_models() -> list[str]:
    """Model ids present in the local Hugging Face cache (folder names only; nothing is opened)."""
    try:
        from attention_lab.core.paths import hub_cache_dir

        names = [p.name for p in hub_cache_dir().iterdir() if p.name.startswith("models--")]
    except OSError:
        return []
    return sorted(name[len("models--") :].replace("--", "/") for name in names)


def show_key_ideas(parent: QWidget) -> None:
    box = QMessageBox(QMessageBox.Icon.Information, tr("ideas.title"), tr("ideas.text"), QMessageBox.StandardButton.Close, parent)
    box.setObjectName("key_ideas")
    box.setTextFormat(Qt.TextFormat.RichText)
    box.open()


def show_about(parent: QWidget, model_name: str | None) -> None:
    model = model_name if model_name is not None else tr("status.no_model")
    text = tr("about.text", version=__version__, model=model)
    box = QMessageBox(QMessageBox.Icon.NoIcon, tr("about.title"), text, QMessageBox.StandardButton.Close, parent)
    box.setObjectName("about")
    box.open()


def ask_repo_to_download(parent: QWidget) -> str | None:
    """The model id the learner wants downloaded (gpt2 offered), or None if they cancelled."""
    from attention_lab.core.hub_download import gpt2_small_download_mb  # (not at start-up)

    label = tr("dialog.download_label", size=gpt2_small_download_mb())
    repo_id, ok = QInputDialog.getText(parent, tr("dialog.download_title"), label, text="gpt2")
    return repo_id.strip() if ok and repo_id.strip() else None


class DownloadProgress(QObject):
    def __init__(self, parent: QWidget, session, show_message):
        super().__init__(parent)
        self.parent_widget = parent
        self.session = session
        self.show_message = show_message  # (message, milliseconds): a failure, in the status bar
        self.dialog: QProgressDialog | None = None
        self.bar: QProgressBar | None = None  # the dialog's bar
        session.download_progress.connect(self.on_progress)
        session.download_finished.connect(self.on_finished)

    def start(self, repo_id: str) -> None:
        dialog = QProgressDialog(tr("dialog.downloading", repo=repo_id, file="…"), tr("dialog.cancel"), 0, 0,
                                 self.parent_widget)
        dialog.setObjectName("download_dialog")
        dialog.setWindowTitle(tr("dialog.download_title"))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        # our own bar, set directly: QProgressDialog.setValue on a modal dialog runs the event
        # loop, so the next progress or the "finished" event (which closes and deletes the
        # dialog) ran inside it: the likely cause of a segfault there, seen once in CI
        self.bar = QProgressBar(dialog)
        dialog.setBar(self.bar)
        dialog.canceled.connect(self.session.cancel_download)
        dialog.setProperty("repo", repo_id)
        self.dialog = dialog
        dialog.show()
        self.session.download(repo_id)

    def on_progress(self, done: int, total: int, name: str) -> None:
        dialog = self.dialog
        if dialog is None:
            return
        dialog.setLabelText(tr("dialog.downloading", repo=dialog.property("repo"), file=name))
        if total > 0:
            self.bar.setRange(0, 1000)
            self.bar.setValue(int(1000 * min(done, total) / total))
        else:
            self.bar.setRange(0, 0)

    def on_finished(self, ok: bool, message: str) -> None:
        dialog, self.dialog = self.dialog, None
        if dialog is not None:
            dialog.canceled.disconnect()
            dialog.close()
            dialog.deleteLater()
        if not ok:
            self.show_message(message, 8000)
