"""The lens must agree with transformers' GPT2LMHeadModel (eager attention) to 1e-4."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from attention_lab.core.lens import GPT2Config, GPT2Lens, KVCache

TOL = 1e-4


def _pair(folder):
    from transformers import GPT2LMHeadModel

    reference = GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager").eval()
    config = GPT2Config.from_dict(json.loads((folder / "config.json").read_text()))
    lens = GPT2Lens.from_state_dict(config, load_file(str(folder / "model.safetensors")))
    return reference, lens


def _compare(reference, lens, ids):
    with torch.no_grad():
        ref = reference(input_ids=ids, output_attentions=True, output_hidden_states=True)
    ours = lens(ids)
    torch.testing.assert_close(ours.logits, ref.logits, atol=TOL, rtol=0)
    torch.testing.assert_close(ours.attention_stack(), torch.stack(ref.attentions, dim=1), atol=TOL, rtol=0)
    # transformers' last hidden state is after ln_f; the others are the residual stream
    for layer in range(len(ref.hidden_states) - 1):
        torch.testing.assert_close(ours.hidden_states[:, layer], ref.hidden_states[layer], atol=TOL, rtol=0)
    torch.testing.assert_close(ours.final_hidden, ref.hidden_states[-1], atol=TOL, rtol=0)


def test_tiny_checkpoint_matches_transformers(tiny_checkpoint):
    reference, lens = _pair(tiny_checkpoint)
    ids = torch.randint(0, 50257, (3, 17), generator=torch.Generator().manual_seed(0))
    _compare(reference, lens, ids)


@pytest.mark.slow
def test_gpt2_small_shapes_match_transformers(gpt2_small_checkpoint):
    reference, lens = _pair(gpt2_small_checkpoint)
    assert (lens.config.n_layer, lens.config.n_head, lens.config.n_embd) == (12, 12, 768)
    ids = torch.randint(0, 50257, (1, 24), generator=torch.Generator().manual_seed(1))
    _compare(reference, lens, ids)


def test_kv_cache_matches_transformers_incremental(tiny_checkpoint):
    reference, lens = _pair(tiny_checkpoint)
    ids = torch.randint(0, 50257, (1, 12), generator=torch.Generator().manual_seed(2))
    full = lens(ids).logits
    first = lens(ids[:, :8], use_cache=True)
    rest = lens(ids[:, 8:], past=first.cache, use_cache=True)
    assert isinstance(rest.cache, KVCache) and rest.cache.length == 12
    torch.testing.assert_close(rest.logits, full[:, 8:], atol=TOL, rtol=0)
    with torch.no_grad():
        ref = reference(input_ids=ids).logits
    torch.testing.assert_close(rest.logits, ref[:, 8:], atol=TOL, rtol=0)
