"""The hatching over a map's forbidden cells, for the mask the analysis ran under.

The causal mask's hatching is :func:`~attention_lab.ui.panels.heatmap_kit.future_overlay`
(made once per length); a designer's mask (``state.extras["allowed"]``) hatches
its own forbidden cells instead, so a sliding window's or a document's walls show on the
head grid's maps as the causal triangle does.
"""

from __future__ import annotations

import numpy as np

from attention_lab.core.pooling import max_pool
from attention_lab.ui.panels.heatmap_kit import future_overlay, hatch_overlay

_last: dict = {}  # (id of the allowed matrix, pixels, pool) -> overlay: one analysis redraws it per tab


def masked_overlay(state, pixels: int, pool: int = 1) -> np.ndarray:
    """RGBA hatching ``pixels`` × ``pixels`` of the forbidden cells of ``state``'s masked pass;
    a map max-pooled by ``pool`` hatches a pixel when every cell it covers is forbidden."""
    allowed = state.extras.get("allowed") if state.extras else None
    if allowed is None:
        return future_overlay(pixels)
    key = (id(allowed), pixels, pool)
    if key not in _last:
        blocked = (max_pool(allowed.float(), pool) == 0).numpy()
        _last.clear()
        _last[key] = (allowed, hatch_overlay(blocked))  # the matrix is kept: its id stays its own
    return _last[key][1]
