"""The finished result of one analysis, handed from the worker to every panel.

Plain data only (tensors, lists, core dataclasses): it is built on the worker thread by
core.pipeline.compute_analysis and read on the GUI thread by the panels, never mutated after it is built.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass(frozen=True)
class AnalysisState:
    request_id: int
    model: Any  # core.models.LoadedModel
    text: str
    ids: list[int]
    tokens: list[str]  # per-token text, leading space shown as "␣"
    original_length: int  # tokens before cutting to the model's context (== len(ids) if not cut)
    layer: int
    causal: bool  # the head grid's current mode
    position: int  # the edited position of the leakage view
    replacement_id: int
    attention_causal: torch.Tensor  # [H, n, n] of `layer`, with the mask
    attention_bidirectional: torch.Tensor  # [H, n, n] of `layer`, without it
    leakage: Any  # core.analysis.LeakageResult
    portrait: list  # list[core.analysis.HeadStats] of `layer` (causal)
    overview: list  # list[HeadStats] of every layer (causal), for the layers x heads view
    shapes: list  # list[core.lens.ShapeRow]
    top_ids: torch.Tensor  # [n, k] the model's top-k next-token predictions after each position
    top_probs: torch.Tensor  # [n, k]
    seconds: float  # wall time of the computation
    # {causal?: (pool, [H, m, m])}: the shown layer's maps max-pooled for the head grid, made
    # on the worker when they are wider than core.pooling.PREVIEW_PIXELS (else empty)
    grid_previews: dict = field(default_factory=dict)
    extras: dict = field(default_factory=dict)

    @property
    def n_tokens(self) -> int:
        return len(self.ids)

    @property
    def truncated(self) -> bool:
        return self.original_length > len(self.ids)
