"""The panels' ids: one enum, so a typo is an AttributeError, not a panel that silently
never appears.  The values are the docks' object names, which saved window layouts depend
on: never rename a value."""

from __future__ import annotations

from enum import Enum


class PanelId(str, Enum):
    TOKEN_EDITOR = "panel.token_editor"
    HEAD_GRID = "panel.head_grid"
    KVBENCH = "panel.kvbench"
    LEAKAGE = "panel.leakage"
    MASK = "panel.mask"
    PORTRAIT = "panel.portrait"
    SHAPES = "panel.shapes"
    MASK_DESIGNER = "panel.mask_designer"
    KNOCKOUT = "panel.knockout"
    GENERATE = "panel.generate"

    def __str__(self) -> str:  # the plain id in f-strings and Qt object names, on every Python
        return self.value

    # Enum hashes the member's name: a dict keyed by ids must also find "panel.mask"
    __hash__ = str.__hash__
