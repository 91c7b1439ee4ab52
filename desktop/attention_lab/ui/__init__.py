"""The desktop app (Qt).  Importing it applies :mod:`attention_lab.ui.qt_compat` first."""

from attention_lab.ui.qt_compat import immortalize_none

immortalize_none()
