"""The mask in the interface's language: "sliding window of 3", "documents split at '.'"."""

from __future__ import annotations

from typing import Any

from attention_lab.core.inputs import mask_words
from attention_lab.ui.i18n import tr
from attention_lab.ui.strings import mask_words as _texts  # noqa: F401 -- registers the texts


def mask_in_words(spec: Any) -> str:
    """``spec`` (a MaskSpec, its spelling as the analysis keeps it, or None: causal) in words."""
    key, values = mask_words(spec)
    return tr(key, **values)
