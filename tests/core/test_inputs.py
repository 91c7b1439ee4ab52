"""The learner's inputs as one immutable value: replacing, comparing, and the mask in words."""

import dataclasses

import pytest
import torch

from attention_lab.core.inputs import (
    BIDIRECTIONAL, CAUSAL, ENGLISH_MASK_WORDS, LearnerInputs, describe_mask, mask_words, same_mask,
)
from attention_lab.core.masks import MASK_KINDS, MaskSpec, custom_mask, parse_mask_spec


def test_the_value_is_immutable_and_replace_makes_a_new_one():
    inputs = LearnerInputs(text="a b")
    with pytest.raises(dataclasses.FrozenInstanceError):
        inputs.text = "c"  # type: ignore[misc]
    new = inputs.replace(text="c", layer=2)
    assert (inputs.text, inputs.layer) == ("a b", 0)
    assert (new.text, new.layer) == ("c", 2)
    assert new.changed_fields(inputs) == {"text", "layer"}
    assert inputs.replace(text="a b") is inputs  # nothing changed: the same value


def test_one_spelling_per_input():
    assert LearnerInputs(mask=MaskSpec("causal")).mask is None
    assert LearnerInputs(knockout=[(1, 0), (0, 2), (1, 0)]).knockout == ((0, 2), (1, 0))
    assert LearnerInputs(kv_new_tokens=0).kv_new_tokens == 1
    with pytest.raises(ValueError):
        LearnerInputs(knockout_mode="half")


def test_custom_masks_compare_by_their_cells():
    grid = torch.ones(3, 3, dtype=torch.bool).tril()
    a = LearnerInputs(mask=custom_mask(grid))
    other = grid.clone()
    other[0, 2] = True
    b = a.replace(mask=custom_mask(other))
    assert b is not a and b.changed_fields(a) == {"mask"}
    assert a.replace(mask=custom_mask(grid.clone())) is a
    assert not same_mask(custom_mask(grid), custom_mask(other))
    assert same_mask(None, CAUSAL) and same_mask("window:3", parse_mask_spec("window:3"))


def test_the_shown_mask_is_the_one_every_control_shows():
    window = parse_mask_spec("window:3")
    inputs = LearnerInputs().with_mask(window)
    assert inputs.shown_mask == window and inputs.causal
    off = inputs.with_mask_shown(False)  # the head grid's "Bidirectional (no mask)"
    assert off.shown_mask == BIDIRECTIONAL and off.mask == window  # "with the mask" still means the window
    assert off.with_mask_shown(True).shown_mask == window
    assert off.with_mask(None).shown_mask == CAUSAL  # a mask chosen in the designer is shown on
    bidir = LearnerInputs().with_mask(BIDIRECTIONAL)
    assert bidir.shown_mask == BIDIRECTIONAL and bidir.mask_when_on == CAUSAL
    back = bidir.with_mask_shown(True)  # "with the mask" when the chosen one is no mask: GPT-2's
    assert back.mask is None and back.shown_mask == CAUSAL


def test_every_mask_kind_has_words_and_no_spec_spelling():
    said = {
        "causal": describe_mask(None),
        "bidirectional": describe_mask(BIDIRECTIONAL),
        "prefix": describe_mask("prefix:2"),
        "window": describe_mask(parse_mask_spec("window:3")),
        "documents": describe_mask(MaskSpec("documents", separator=".")),
        "custom": describe_mask(custom_mask(torch.eye(2, dtype=torch.bool))),
    }
    assert set(said) == set(MASK_KINDS) == set(ENGLISH_MASK_WORDS)
    assert said["window"] == "sliding window of 3"
    assert said["documents"] == "documents split at '.'"
    for words in said.values():
        assert ":" not in words.split("'")[0]  # never "window:3" or "documents:."
    assert mask_words(MaskSpec("documents", separator="\n")) == ("mask.documents", {"separator": "\\n"})
    assert LearnerInputs(causal=False).describe_mask() == "bidirectional (no mask)"
