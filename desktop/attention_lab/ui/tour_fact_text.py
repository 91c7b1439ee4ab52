"""A tour step's measured fact as the learner reads it: its numbers formatted, its sentence filled."""

from __future__ import annotations

import html
from typing import Any

from attention_lab.core.tour import Fact
from attention_lab.ui.i18n import tr
from attention_lab.ui.mask_words import mask_in_words
from attention_lab.ui.number_format import fixed, integer, significant
from attention_lab.ui.panels.panel_kit import fmt_bytes, fmt_number
from attention_lab.ui.strings import tour as _texts  # noqa: F401 -- registers the texts


def format_value(name: str, value: Any) -> str:
    """One number of a fact, as the learner reads it (exact zeros print as "0"; a mask in words)."""
    if name == "mask":
        return html.escape(mask_in_words(value))
    if isinstance(value, bool):
        return tr("tour.yes" if value else "tour.no")
    if isinstance(value, int):
        if name.endswith("_bytes"):
            return fmt_bytes(value)
        return integer(value)
    if isinstance(value, float):
        if name.endswith("_pct"):
            pct = 100.0 * value
            if pct == 0:
                return "0%"
            return significant(pct, 2) + "%" if abs(pct) < 0.1 else fixed(pct, 1) + "%"
        if name.endswith("_s"):
            return fixed(value, 3)
        if name in ("speedup", "ratio"):
            return fixed(value, 1)
        return fmt_number(value)
    return html.escape(str(value))


def _fill(key: str, values: dict[str, Any]) -> str:
    return tr(key, **{name: f"<b>{format_value(name, v)}</b>" for name, v in values.items()})


def format_fact(fact: Fact) -> str:
    """The fact's sentence in the current language (rich text, numbers in bold)."""
    values = dict(fact.values)
    formatted = {name: f"<b>{format_value(name, v)}</b>" for name, v in values.items()}
    for name, (item_key, items) in fact.lists.items():
        # an item's "variant" picks its wording (e.g. "the previous token" or "3 tokens back")
        parts = [_fill(".".join(filter(None, ("tour.item", item_key, item.get("variant")))),
                       {k: v for k, v in item.items() if k != "variant"}) for item in items]
        formatted[name] = "; ".join(parts) if parts else tr("tour.none")
    return tr(f"tour.fact.{fact.key}", **formatted)
