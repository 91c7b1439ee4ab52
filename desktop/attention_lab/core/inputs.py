"""Every input a learner sets, in one immutable value.

:class:`LearnerInputs` holds the text, the BOS switch, the shown layer, the mask (the one the
analysis runs under, and whether the head grid shows it on or off), the Mask panel's way of hiding
the future, the leakage edit (position and replacement), the knocked-out heads and the KV
benchmark's new-token count.  The window's session owns one; a change is a new value
(:meth:`LearnerInputs.replace`), so the tour can keep the value from before a step and give it
back after, and every control that shows an input reads it from the same place.

The mask is said in words, never as its spec (:func:`mask_words`: a key and its values, which the
window translates; :func:`describe_mask` is the English, for the command line and tests).
Nothing here imports Qt.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .masks import MaskSpec, MaskSpecError, parse_mask_spec

DEFAULT_NEW_TOKENS = 50  # the KV benchmark's tokens generated per run, until the learner changes it
DEFAULT_MASK_MODE = "-inf"  # the Mask panel's way of hiding the future: the textbook's (core.lens.MaskMode)
KNOCKOUT_MODES = ("zero", "mean")

CAUSAL = MaskSpec("causal")
BIDIRECTIONAL = MaskSpec("bidirectional")

#: the mask in words, by kind (English; the window registers the same keys in every language)
ENGLISH_MASK_WORDS = {
    "causal": "causal (GPT-2's)",
    "bidirectional": "bidirectional (no mask)",
    "prefix": "prefix-LM (the first {size} both ways)",
    "window": "sliding window of {size}",
    "documents": "documents split at '{separator}'",
    "custom": "custom (your cells)",
}


def _as_spec(spec: Any) -> MaskSpec:
    """A MaskSpec from a spec, its spelling (``window:3``, as the analysis's extras keep it) or None (causal)."""
    if spec is None:
        return CAUSAL
    if isinstance(spec, MaskSpec):
        return spec
    text = str(spec)
    if text == "custom":
        return MaskSpec("custom")
    try:
        return parse_mask_spec(text)
    except MaskSpecError:
        return MaskSpec("custom")  # (no other spelling reaches here: the analysis writes str(MaskSpec))


def mask_words(spec: Any) -> tuple[str, dict[str, Any]]:
    """``(key, values)`` that say ``spec`` in words: ``("mask.window", {"size": 3})``.

    ``spec``: a :class:`~attention_lab.core.masks.MaskSpec`, its spelling, or None (causal)."""
    spec = _as_spec(spec)
    values: dict[str, Any] = {}
    if spec.kind in ("prefix", "window"):
        values["size"] = spec.size
    elif spec.kind == "documents":
        separator = spec.separator or "."
        values["separator"] = separator.replace("\n", "\\n").replace("\t", "\\t")
    return f"mask.{spec.kind}", values


def describe_mask(spec: Any) -> str:
    """``spec`` in English words ("sliding window of 3", "documents split at '.'")."""
    key, values = mask_words(spec)
    return ENGLISH_MASK_WORDS[key.partition(".")[2]].format(**values)


def same_mask(a: Any, b: Any) -> bool:
    """Whether two masks are the same choice (a custom mask: the same cells)."""
    a, b = _as_spec(a), _as_spec(b)
    if a != b:
        return False
    if a.kind != "custom" or (a.matrix is None and b.matrix is None):
        return True
    if a.matrix is None or b.matrix is None:
        return False
    return a.matrix.shape == b.matrix.shape and bool((a.matrix == b.matrix).all())


@dataclass(frozen=True)
class LearnerInputs:
    """What the learner has set; change it with :meth:`replace` (it is never changed in place)."""

    text: str = ""
    bos: bool = False
    layer: int = 0
    #: the mask the analysis runs under (None: GPT-2's causal mask); bidirectional is a mask too
    mask: MaskSpec | None = None
    #: the head grid shows the maps with the mask (True) or without any (False: bidirectional)
    causal: bool = True
    mask_mode: str = DEFAULT_MASK_MODE
    position: int | None = None  # the leakage edit's position; None: follow the last token
    replacement_id: int | None = None  # None: the model's best guess
    knockout: tuple[tuple[int, int], ...] = ()  # heads (layer, head) knocked out in the analysis
    knockout_mode: str = "zero"
    kv_new_tokens: int = DEFAULT_NEW_TOKENS

    def __post_init__(self) -> None:
        if self.mask is not None and self.mask.kind == "causal":
            object.__setattr__(self, "mask", None)  # one spelling of GPT-2's mask
        heads = tuple(sorted({(int(a), int(b)) for a, b in self.knockout}))
        object.__setattr__(self, "knockout", heads)
        if self.knockout_mode not in KNOCKOUT_MODES:
            raise ValueError(f"unknown knockout mode {self.knockout_mode!r}; choose one of {KNOCKOUT_MODES}")
        object.__setattr__(self, "layer", max(0, int(self.layer)))
        object.__setattr__(self, "kv_new_tokens", max(1, int(self.kv_new_tokens)))

    def replace(self, **changes: Any) -> "LearnerInputs":
        """A new value with ``changes`` (the same value when nothing changes)."""
        new = dataclasses.replace(self, **changes)
        return self if new.same_as(self) else new

    def same_as(self, other: "LearnerInputs") -> bool:
        """Equal in every input, a custom mask's cells included (``==`` compares its kind only)."""
        return self == other and same_mask(self.mask, other.mask)

    def changed_fields(self, other: "LearnerInputs") -> set[str]:
        """The names of the inputs that differ between ``self`` and ``other``."""
        names = {f.name for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(other, f.name)}
        if not same_mask(self.mask, other.mask):
            names.add("mask")
        return names

    @property
    def shown_mask(self) -> MaskSpec:
        """The mask every control shows: bidirectional while the head grid shows the maps without
        the mask, else the analysis's mask (GPT-2's causal one when none was chosen)."""
        if not self.causal:
            return BIDIRECTIONAL
        return self.mask if self.mask is not None else CAUSAL

    @property
    def mask_when_on(self) -> MaskSpec:
        """The mask the head grid's "with the mask" gives: the analysis's, or GPT-2's causal one
        when none was chosen or the chosen one is no mask at all (bidirectional)."""
        if self.mask is None or self.mask.kind == "bidirectional":
            return CAUSAL
        return self.mask

    def describe_mask(self) -> str:
        """The shown mask in English words."""
        return describe_mask(self.shown_mask)

    def with_mask(self, spec: MaskSpec | None) -> "LearnerInputs":
        """The mask chosen in the designer: the analysis runs under it and the grid shows it on."""
        return self.replace(mask=spec, causal=True)

    def with_mask_shown(self, on: bool) -> "LearnerInputs":
        """The head grid's choice: the maps with the mask, or without any.  "With the mask" while
        the mask is the bidirectional one means GPT-2's causal mask (else the choice would show nothing new)."""
        if on and self.mask is not None and self.mask.kind == "bidirectional":
            return self.replace(mask=None, causal=True)
        return self.replace(causal=bool(on))
