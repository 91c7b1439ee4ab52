"""Every mask kind and both knockouts agree with an independent GPT-2 forward to 1e-4.

The reference below is written from the GPT-2 paper's equations straight onto the
checkpoint's tensors (float64, its own layer norms, GELU formula, head split and loss);
it shares no code with the lens.  Attention, final hidden state and loss are compared.
"""

from __future__ import annotations

import json
import math

import pytest
import torch
from safetensors.torch import load_file

from attention_lab.core import ablation, masks
from attention_lab.core.lens import GPT2Config, GPT2Lens, HeadAblation

TOL = 1e-4
KNOCKED = [(0, 1), (1, 5)]  # two heads in two layers: the knockout of one feeds the other
SEPARATOR = 13  # GPT-2's "." (the documents mask splits there)


def reference_forward(state: dict, n_layer: int, n_head: int, eps: float, ids: list[int], allowed: torch.Tensor,
                      knocked: list[tuple[int, int]] = (), mode: str = "zero"):
    """Plain GPT-2 on one sequence: (attentions [L, H, n, n], final hidden [n, d], loss)."""
    def w(name):
        return state["transformer." + name].to(torch.float64)

    def norm(x, prefix):
        mu = x.mean(-1, keepdim=True)
        var = ((x - mu) ** 2).mean(-1, keepdim=True)
        return (x - mu) / torch.sqrt(var + eps) * w(prefix + ".weight") + w(prefix + ".bias")

    n = len(ids)
    wte = w("wte.weight")
    x = wte[torch.tensor(ids)] + w("wpe.weight")[:n]
    d = x.shape[-1]
    dk = d // n_head
    attentions = []
    for layer in range(n_layer):
        p = f"h.{layer}."
        a = norm(x, p + "ln_1")
        qkv = a @ w(p + "attn.c_attn.weight") + w(p + "attn.c_attn.bias")
        q, k, v = (t.reshape(n, n_head, dk).permute(1, 0, 2) for t in qkv.split(d, dim=-1))
        scores = q @ k.transpose(1, 2) / math.sqrt(dk)
        scores = torch.where(allowed, scores, torch.tensor(float("-inf"), dtype=torch.float64))
        att = torch.exp(scores - scores.amax(-1, keepdim=True))
        att = att / att.sum(-1, keepdim=True)
        attentions.append(att)
        heads = att @ v  # [H, n, dk]
        for kl, kh in knocked:
            if kl == layer:
                heads[kh] = 0.0 if mode == "zero" else heads[kh].mean(0)
        y = heads.permute(1, 0, 2).reshape(n, d)
        x = x + y @ w(p + "attn.c_proj.weight") + w(p + "attn.c_proj.bias")
        m = norm(x, p + "ln_2") @ w(p + "mlp.c_fc.weight") + w(p + "mlp.c_fc.bias")
        m = 0.5 * m * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (m + 0.044715 * m**3)))
        x = x + m @ w(p + "mlp.c_proj.weight") + w(p + "mlp.c_proj.bias")
    final = norm(x, "ln_f")
    logits = final @ wte.T  # GPT-2 ties the output projection to the token embeddings
    logp = logits[:-1] - torch.logsumexp(logits[:-1], dim=-1, keepdim=True)
    loss = -logp[torch.arange(n - 1), torch.tensor(ids[1:])].mean()
    return torch.stack(attentions), final, float(loss)


def _lens_and_state(folder):
    config = GPT2Config.from_dict(json.loads((folder / "config.json").read_text()))
    state = load_file(str(folder / "model.safetensors"))
    return GPT2Lens.from_state_dict(config, state), state


def _ids(n: int, seed: int) -> list[int]:
    ids = torch.randint(0, 50000, (n,), generator=torch.Generator().manual_seed(seed)).tolist()
    for p in (4, 9):  # two separators: three documents
        ids[p] = SEPARATOR
    return ids


def _specs(n: int) -> dict[str, masks.MaskSpec]:
    g = torch.Generator().manual_seed(7)
    custom = (torch.rand(n, n, generator=g) < 0.4) | torch.eye(n, dtype=torch.bool)
    return {
        "causal": masks.parse_mask_spec("causal"),
        "bidirectional": masks.parse_mask_spec("bidirectional"),
        "prefix:5": masks.parse_mask_spec("prefix:5"),
        "window:3": masks.parse_mask_spec("window:3"),
        "documents": masks.MaskSpec("documents", separator=".", separator_id=SEPARATOR),
        "custom": masks.custom_mask(custom),
    }


def _check_against_reference(lens, state, ids, spec, heads, mode):
    cfg = lens.config
    allowed = masks.allowed_matrix(spec, ids)
    ref_att, ref_final, ref_loss = reference_forward(state, cfg.n_layer, cfg.n_head, cfg.layer_norm_epsilon,
                                                     ids, allowed, heads, mode)
    abl = HeadAblation.of(heads, mode, cfg.n_layer, cfg.n_head) if heads else None
    out = lens(ids, allowed=allowed, ablation=abl, keep_attentions=True, keep_hidden=False)
    torch.testing.assert_close(out.attention_stack()[0].double(), ref_att, atol=TOL, rtol=0)
    torch.testing.assert_close(out.final_hidden[0].double(), ref_final, atol=TOL, rtol=0)
    loss = float(torch.nn.functional.cross_entropy(out.logits[0, :-1], torch.tensor(ids[1:])))
    assert abs(loss - ref_loss) < TOL
    if heads:  # the knockout readout computes its loss its own way: the same number
        result = ablation.knockout(lens, ids, heads, mode, allowed=allowed)
        assert abs(result.loss_after - ref_loss) < TOL
    # forbidden cells carry exactly zero weight, as the causal mask's do
    assert float(out.attention_stack()[0].masked_select(~allowed.expand(cfg.n_layer, cfg.n_head, -1, -1)).abs().max()
                 if (~allowed).any() else 0.0) == 0.0


CASES = [(kind, mode) for kind in ("causal", "bidirectional", "prefix:5", "window:3", "documents", "custom")
         for mode in (None, "zero", "mean")]


@pytest.fixture(scope="module")
def tiny(tiny_checkpoint):
    return _lens_and_state(tiny_checkpoint)


@pytest.mark.parametrize("kind,mode", CASES)
def test_tiny_checkpoint_matches_the_reference(tiny, kind, mode):
    lens, state = tiny
    ids = _ids(14, seed=3)
    _check_against_reference(lens, state, ids, _specs(len(ids))[kind], KNOCKED if mode else [], mode or "zero")


@pytest.mark.slow
def test_gpt2_small_shapes_match_the_reference(gpt2_small_checkpoint):
    lens, state = _lens_and_state(gpt2_small_checkpoint)
    assert (lens.config.n_layer, lens.config.n_head, lens.config.n_embd) == (12, 12, 768)
    ids = _ids(14, seed=4)
    specs = _specs(len(ids))
    heads = [(0, 1), (5, 3), (11, 11)]
    for kind, mode in CASES:
        _check_against_reference(lens, state, ids, specs[kind], heads if mode else [], mode or "zero")


# ---------------------------------------------------------------------------- the lens's fast paths
def test_the_causal_matrix_is_the_causal_mask_bit_for_bit(tiny):
    lens, _ = tiny
    ids = _ids(12, seed=5)
    n = len(ids)
    plain = lens(ids, keep_attentions=True)
    given = lens(ids, allowed=masks.causal_matrix(n), keep_attentions=True)
    assert torch.equal(plain.logits, given.logits) and torch.equal(plain.attention_stack(), given.attention_stack())
    bidi = lens(ids, causal=False, keep_attentions=False, keep_hidden=False)
    everything = lens(ids, allowed=torch.ones(n, n, dtype=torch.bool), keep_attentions=False, keep_hidden=False)
    assert torch.equal(bidi.logits, everything.logits)


def test_a_batch_may_carry_one_mask_per_sequence(tiny):
    lens, _ = tiny
    ids = _ids(10, seed=6)
    n = len(ids)
    window = masks.allowed_matrix(masks.parse_mask_spec("window:2"), ids)
    both = lens(torch.tensor([ids, ids]), allowed=torch.stack([masks.causal_matrix(n), window]), keep_hidden=False)
    alone = lens(ids, allowed=window, keep_hidden=False)
    torch.testing.assert_close(both.final_hidden[1], alone.final_hidden[0], atol=1e-6, rtol=0)
    torch.testing.assert_close(both.final_hidden[0], lens(ids, keep_hidden=False).final_hidden[0], atol=1e-6, rtol=0)


@pytest.mark.parametrize("bad,message", [
    (torch.ones(5, 5, dtype=torch.bool).triu(1), "diagonal"),
    (torch.ones(4, 4, dtype=torch.bool), "must be [5, 5]"),
    (torch.ones(5, 5), "boolean"),
])
def test_bad_allowed_matrices_are_refused(tiny, bad, message):
    lens, _ = tiny
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        lens([1, 2, 3, 4, 5], allowed=bad)


def test_ablation_checks(tiny):
    lens, _ = tiny
    cfg = lens.config
    with pytest.raises(ValueError, match="does not exist"):
        HeadAblation.of([(cfg.n_layer, 0)], "zero", cfg.n_layer, cfg.n_head)
    with pytest.raises(ValueError, match="unknown ablation"):
        HeadAblation.of([(0, 0)], "half", cfg.n_layer, cfg.n_head)
    first = lens([1, 2, 3], use_cache=True)
    with pytest.raises(ValueError, match="KV cache"):
        lens([4], past=first.cache, ablation=HeadAblation.of([(0, 0)], "mean", cfg.n_layer, cfg.n_head))
    # nothing knocked out is the plain forward, bit for bit
    none = HeadAblation(torch.zeros(cfg.n_layer, cfg.n_head, dtype=torch.bool), "mean")
    assert torch.equal(lens([1, 2, 3], ablation=none).logits, lens([1, 2, 3]).logits)


def test_resuming_at_a_layer_is_the_full_run_bit_for_bit(tiny):
    """Ranking the heads starts a knockout of layer l from the plain run's stream below l."""
    lens, _ = tiny
    ids = _ids(12, seed=8)
    full = lens(ids, keep_hidden=True)
    for layer in range(lens.config.n_layer):
        resumed = lens(ids, resume=(layer, full.hidden_states[:, layer]), keep_hidden=False)
        assert torch.equal(resumed.final_hidden, full.final_hidden) and torch.equal(resumed.logits, full.logits)
        assert resumed.attentions[:layer] == [None] * layer
    with pytest.raises(ValueError, match="resume needs"):
        lens(ids, resume=(0, full.hidden_states[:, 0]), keep_hidden=True)
