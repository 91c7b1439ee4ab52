"""Max-pooled attention maps for views smaller than the map (the worker's previews, the grid's pixels).

A 1024-token map has a million cells; a head of the grid gets ~130 × 130 pixels.  Painting
all of them cost 60 ms of GUI time per repaint for twelve heads, and pooling them there
another 10-30 ms, so the worker pools a preview with the analysis and the grid pools that
further to its real size.  The pooling keeps each block's largest weight: a sharp head
(one cell per row) stays as bright as it is, where a mean would fade it by the factor.
"""

from __future__ import annotations

import math

import torch

PREVIEW_PIXELS = 256  # the worker's preview: no grid cell of a 12-head layer is wider on a 4K screen


def pool_factor(cells: int, pixels: float) -> int:
    """Cells per pixel for a map of ``cells`` a side drawn ``pixels`` wide: 1 while every
    cell gets a pixel, else just enough that the map has no more pixels than the screen."""
    pixels = max(32, int(pixels))
    return 1 if cells <= pixels else math.ceil(cells / pixels)


def max_pool(maps: torch.Tensor, pool: int) -> torch.Tensor:
    """``[..., n, n]`` → ``[..., ⌈n/pool⌉, ⌈n/pool⌉]`` float32, blocks of ``pool`` × ``pool``
    aligned at (0, 0), each pixel the block's largest weight (a partial last block: the
    largest of the cells it has)."""
    t = torch.as_tensor(maps).to(torch.float32)
    if pool <= 1:
        return t
    shape = t.shape
    pooled = torch.nn.functional.max_pool2d(t.reshape(-1, 1, *shape[-2:]), pool, pool, ceil_mode=True)
    return pooled.reshape(*shape[:-2], *pooled.shape[-2:])


def previews(causal: torch.Tensor, bidirectional: torch.Tensor, pixels: int = PREVIEW_PIXELS) -> dict[bool, tuple[int, torch.Tensor]]:
    """{causal?: (pool, pooled maps)} for maps wider than ``pixels`` (the head grid's, when it
    said; else :data:`PREVIEW_PIXELS`); empty when the maps are small enough to draw as they are."""
    pool = pool_factor(causal.shape[-1], pixels)
    if pool == 1:
        return {}
    return {True: (pool, max_pool(causal, pool)), False: (pool, max_pool(bidirectional, pool))}


def pooled_for(maps: torch.Tensor, preview: tuple[int, torch.Tensor] | None, pool: int) -> tuple[int, torch.Tensor]:
    """``maps`` pooled by at least ``pool``, from ``preview`` when it is fine enough (pooling
    blocks of blocks: the same maxima as pooling the full map by the product)."""
    if preview is not None and pool >= preview[0]:
        base, pooled = preview
        extra = math.ceil(pool / base)
        return base * extra, max_pool(pooled, extra)
    return pool, max_pool(maps, pool)
