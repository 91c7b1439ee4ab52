"""The lens must agree with transformers' GPT2LMHeadModel (eager attention) to 1e-4."""

from __future__ import annotations

import json

import pytest
import torch
from safetensors.torch import load_file

from attention_lab.core.lens import GPT2Config, GPT2Lens, KVCache, MaskMode, apply_mask

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


def test_output_projection_is_stored_for_the_fast_product_and_reads_the_same(tiny_checkpoint):
    """The tied embedding is kept as its (d, vocab) transpose: ``h @ wteᵀ`` reads a contiguous
    matrix (the faster matrix-vector product), while ``wte`` still reads as (vocab, d)."""
    state = load_file(str(tiny_checkpoint / "model.safetensors"))
    _reference, lens = _pair(tiny_checkpoint)
    wte = lens.weights.wte
    assert wte.shape == state["transformer.wte.weight"].shape
    assert torch.equal(wte, state["transformer.wte.weight"])
    assert lens.output_embedding.T.is_contiguous()
    ids = [5, 17, 50256, 3]
    torch.testing.assert_close(lens(ids).hidden_states[0, 0], wte[ids] + lens.weights.wpe[:4], atol=0, rtol=0)


@pytest.mark.parametrize("mode", list(MaskMode))
def test_one_new_token_needs_no_mask_in_any_mode(tiny_checkpoint, mode):
    """A single new query has no future: the decode step skips building the mask.  In every
    mode an all-allowed mask changes nothing, and where the mask doesn't leak, the step's
    attention and logits equal the last row of the full masked pass."""
    scores = torch.randn(2, 3, 1, 6, generator=torch.Generator().manual_seed(4))
    nothing_hidden = torch.zeros(1, 6, dtype=torch.bool)
    assert torch.equal(apply_mask(scores, nothing_hidden, mode), torch.softmax(scores, dim=-1))
    if mode in (MaskMode.ZERO_SCORE, MaskMode.ZERO_AFTER_SOFTMAX):
        return  # these leak: the prefix's K/V depend on what follows, so no full pass to compare
    _reference, lens = _pair(tiny_checkpoint)
    ids = torch.randint(0, 50257, (1, 9), generator=torch.Generator().manual_seed(3))
    full = lens(ids, mask_mode=mode)
    first = lens(ids[:, :8], mask_mode=mode, use_cache=True)
    step = lens(ids[:, 8:], mask_mode=mode, past=first.cache, use_cache=True)
    torch.testing.assert_close(step.logits[:, -1], full.logits[:, -1], atol=TOL, rtol=0)
    for layer in range(lens.config.n_layer):
        torch.testing.assert_close(step.attentions[layer][..., -1:, :], full.attentions[layer][..., -1:, :], atol=TOL, rtol=0)


def test_attention_no_one_reads_takes_the_fused_kernel_and_computes_the_same(tiny_checkpoint, monkeypatch):
    """Where no weights are kept or masked (a generated token's step, a bidirectional pass
    that keeps no map), the lens uses torch's fused attention: same logits, hidden states and
    shapes table as the step-by-step softmax(Q·Kᵀ/√d_k)·V, and transformers' next token."""
    reference, lens = _pair(tiny_checkpoint)
    fused_calls = []
    fused = torch.nn.functional.scaled_dot_product_attention
    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention",
                        lambda *a, **k: (fused_calls.append(1), fused(*a, **k))[1])
    ids = torch.randint(0, 50257, (2, 10), generator=torch.Generator().manual_seed(5))
    first = lens(ids[:, :9], use_cache=True)
    assert not fused_calls  # a causal pass with several queries: the mask, step by step
    kept = lens(ids[:, 9:], past=first.cache, use_cache=True, keep_attentions=True)
    assert not fused_calls  # its maps are wanted: step by step
    step = lens(ids[:, 9:], past=first.cache, use_cache=True, keep_attentions=False)
    assert len(fused_calls) == lens.config.n_layer
    torch.testing.assert_close(step.logits, kept.logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(step.hidden_states, kept.hidden_states, atol=1e-5, rtol=0)
    assert [(r.name, r.shape) for r in step.shapes] == [(r.name, r.shape) for r in kept.shapes]
    with torch.no_grad():
        ref = reference(input_ids=ids).logits
    torch.testing.assert_close(step.logits[:, -1], ref[:, -1], atol=TOL, rtol=0)
    # bidirectional, keeping one layer's map: that layer step by step, the others fused
    fused_calls.clear()
    some = lens(ids, causal=False, keep_attentions=[0])
    every = lens(ids, causal=False, keep_attentions=True)
    assert len(fused_calls) == lens.config.n_layer - 1
    torch.testing.assert_close(some.logits, every.logits, atol=1e-5, rtol=0)
    torch.testing.assert_close(some.attentions[0], every.attentions[0], atol=0, rtol=0)
