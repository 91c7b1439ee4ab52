"""Guided heads: an auxiliary loss that steers a few named heads toward the lessons' attention
patterns during the first steps of the demo recipe, then lets go.

Why: at this size and budget (12 heads of 16, ≤ 3 hours on two cores) the heads the chapter
points at do not all form by themselves -- no data or initialisation lever tried made an induction
head (``docs/demo-model-training.md`` §6–7), and GPT-2 took billions of tokens for its own.
So the recipe may name one head per pattern and add, to the language-model loss, the negative
log of that head's attention on where the pattern looks:

* ``previous``: from every position to the one before it;
* ``sink``: from every position to the first;
* ``induction``: from every position whose token occurred earlier in the row to the position
  after such an occurrence (any of them: the detector's own pattern, ``core.analysis.induction_pattern``).

The guide's weight falls linearly to zero over ``guide_steps``; after that only the language
model's loss trains the heads, so what the detectors measure at the end is what the model kept
because it predicts text, not what the guide last asked for.  No weight is ever set by hand.
"""

from __future__ import annotations

import math

import torch

KINDS = ("previous", "sink", "induction")


def parse_head(text: str) -> tuple[int, int] | None:
    """``"L:H"`` → ``(L, H)``; ``""`` → ``None`` (no head guided for that pattern)."""
    if not text:
        return None
    layer, _, head = text.partition(":")
    try:
        return int(layer), int(head)
    except ValueError:
        raise ValueError(f"a guided head is written LAYER:HEAD, e.g. 1:6, not {text!r}") from None


def guided(hp: dict) -> dict[str, tuple[int, int]]:
    """The recipe's guided heads, by pattern (only those named)."""
    heads = {kind: parse_head(hp[f"guide_{kind}"]) for kind in KINDS}
    return {kind: lh for kind, lh in heads.items() if lh is not None}


def weight_at(hp: dict, step: int) -> float:
    """The guide's weight at ``step``: ``guide_weight`` at step 0, falling linearly to 0 at ``guide_steps``."""
    if hp["guide_weight"] <= 0 or hp["guide_steps"] <= 0:
        return 0.0
    return hp["guide_weight"] * max(0.0, 1.0 - step / hp["guide_steps"])


def head_log_attention(attn_module, hidden: torch.Tensor, head: int) -> torch.Tensor:
    """One head's causal attention weights, as logs, ``[B, n, n]``, recomputed from the input of a
    GPT-2 attention block (``ln_1``'s output) with its own weights -- what the block computes."""
    width = hidden.shape[-1]
    size = attn_module.head_dim
    q, k, _ = attn_module.c_attn(hidden).split(width, dim=2)
    q = q[..., head * size : (head + 1) * size].float()
    k = k[..., head * size : (head + 1) * size].float()
    scores = q @ k.transpose(-1, -2) / math.sqrt(size)
    n = hidden.shape[1]
    future = torch.ones(n, n, dtype=torch.bool, device=hidden.device).triu(1)
    return torch.log_softmax(scores.masked_fill(future, float("-inf")), dim=-1)


def induction_targets(ids: torch.Tensor) -> torch.Tensor:
    """``[B, n, n]`` booleans: T[b, i, j] where token j − 1 equals token i and j ≤ i (the position
    after an earlier occurrence of i's token) -- ``core.analysis.induction_pattern``, batched."""
    same = ids[:, :, None] == ids[:, None, :]  # same[b, i, j]
    n = ids.shape[1]
    earlier = torch.ones(n, n, dtype=torch.bool, device=ids.device).tril(-1)
    duplicate = same & earlier  # j < i holds i's token
    targets = torch.zeros_like(duplicate)
    targets[:, :, 1:] = duplicate[:, :, :-1]
    return targets


def pattern_loss(kind: str, log_attention: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """Mean negative log of the attention a head puts where ``kind`` looks (over the positions
    where the pattern looks somewhere)."""
    if kind == "previous":
        return -log_attention[:, 1:, :].diagonal(dim1=-2, dim2=-1).mean()
    if kind == "sink":
        return -log_attention[:, 1:, 0].mean()
    if kind == "induction":
        targets = induction_targets(ids)
        has = targets.any(-1)
        if not bool(has.any()):
            return log_attention.new_zeros(())
        mass = torch.logsumexp(log_attention.masked_fill(~targets, float("-inf")), dim=-1)
        return -mass[has].mean()
    raise ValueError(f"unknown pattern {kind!r}; choose one of {KINDS}")


class HeadGuide:
    """Hooks on the guided heads' layers: each forward pass keeps their attention input, and
    :meth:`loss` turns it into the guide's loss for the batch that was run."""

    def __init__(self, model, heads: dict[str, tuple[int, int]]):
        self.heads = heads
        self.blocks = model.transformer.h
        self.inputs: dict[int, torch.Tensor] = {}
        self.handles = [
            self.blocks[layer].attn.register_forward_pre_hook(self._keeper(layer))
            for layer in sorted({layer for layer, _ in heads.values()})
        ]

    def _keeper(self, layer: int):
        def keep(module, args):
            self.inputs[layer] = args[0]

        return keep

    def loss(self, ids: torch.Tensor) -> tuple[torch.Tensor, dict[str, float]]:
        """The sum of the guided patterns' losses for the last forward pass, and each one's value."""
        parts = {}
        for kind, (layer, head) in self.heads.items():
            log_attention = head_log_attention(self.blocks[layer].attn, self.inputs[layer], head)
            parts[kind] = pattern_loss(kind, log_attention, ids)
        self.inputs.clear()
        total = sum(parts.values())
        return total, {k: round(float(v.detach()), 4) for k, v in parts.items()}

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()
        self.inputs.clear()
