"""Every string table a learner reads, for the tests that check them all (glossary, word budgets)."""

from __future__ import annotations

import importlib
import pkgutil

import attention_lab.ui.strings as strings_package
from attention_lab.core import kvbench, roles
from attention_lab.ui import i18n


def every_text() -> dict[str, dict[str, str]]:
    """The app's tables (every module of ``ui/strings``), and core's role and KV-cache words."""
    for module in pkgutil.iter_modules(strings_package.__path__):
        importlib.import_module(f"{strings_package.__name__}.{module.name}")
    return {**i18n._TABLE, **roles.ROLE_TEXTS, **kvbench.KV_TEXTS}
