"""Shared by the Qt tests: tear down the windows a test made."""

from __future__ import annotations


def close_windows(windows) -> None:
    """Tear down every window a test made (joins the workers)."""
    from PySide6.QtWidgets import QApplication

    from attention_lab.ui.launch import teardown

    for window in windows:
        try:
            teardown(QApplication.instance(), window)
        except RuntimeError:  # already deleted by the test
            pass
