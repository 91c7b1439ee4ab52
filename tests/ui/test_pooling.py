"""Pooled head-grid maps: the maxima are exact, the worker's preview pools to the same
thing, and the grid's hover still names the exact cell under the mouse."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attention_lab.core import pooling
from attention_lab.core.pooling import max_pool, pool_factor, pooled_for, previews


def block_max(maps: np.ndarray, pool: int) -> np.ndarray:
    """The definition, cell by cell: blocks aligned at (0, 0), partial ones at the end."""
    n = maps.shape[-1]
    m = math.ceil(n / pool)
    out = np.empty(maps.shape[:-2] + (m, m), dtype=np.float32)
    for i in range(m):
        for j in range(m):
            out[..., i, j] = maps[..., i * pool:(i + 1) * pool, j * pool:(j + 1) * pool].max(axis=(-2, -1))
    return out


def test_pool_factor_gives_each_cell_a_pixel_until_the_map_is_wider_than_the_view():
    assert pool_factor(10, 130) == 1
    assert pool_factor(130, 130) == 1
    assert pool_factor(131, 130) == 2
    assert pool_factor(1024, 130) == 8  # ⌈1024 / 130⌉: 128 pixels
    assert pool_factor(1024, 0) == 32  # a view not laid out yet counts as 32 pixels, never 0


@pytest.mark.parametrize("n, pool", [(10, 1), (10, 2), (11, 3), (64, 7), (65, 8)])
def test_max_pool_is_the_block_maximum(n, pool):
    maps = torch.rand(3, n, n, generator=torch.Generator().manual_seed(n + pool))
    got = max_pool(maps, pool)
    assert got.dtype == torch.float32 and got.shape == (3, math.ceil(n / pool), math.ceil(n / pool))
    np.testing.assert_array_equal(got.numpy(), block_max(maps.numpy(), pool))


def test_a_sharp_head_stays_bright():
    n = 40
    previous_token = torch.diag(torch.ones(n - 1), -1)  # one cell per row
    pooled = max_pool(previous_token[None], 8)[0]
    assert pooled.max() == 1.0  # a mean would show 1/8
    assert torch.all(pooled.diagonal() == 1.0)


def test_preview_then_the_grid_pools_to_the_same_maxima():
    maps = torch.rand(2, 300, 300, generator=torch.Generator().manual_seed(1))
    preview = previews(maps, maps.flip(-1))
    assert set(preview) == {True, False}
    base, pooled = preview[True]
    assert base == pool_factor(300, pooling.PREVIEW_PIXELS) == 2
    np.testing.assert_array_equal(pooled.numpy(), block_max(maps.numpy(), 2))
    for wanted in (2, 3, 5):
        pool, got = pooled_for(maps, preview[True], wanted)
        assert pool >= wanted and pool % base == 0
        np.testing.assert_array_equal(got.numpy(), block_max(maps.numpy(), pool))
    # a view finer than the preview pools the full maps itself
    pool, got = pooled_for(maps, preview[True], 1)
    assert pool == 1 and torch.equal(got, maps)
    assert previews(maps[:, :200, :200], maps[:, :200, :200]) == {}  # small maps: nothing to pool


def test_the_analysis_carries_the_preview_pooled_to_the_grids_size(tiny_checkpoint):
    from attention_lab.core.pipeline import AnalysisRequest, compute_analysis
    from state_factory import load

    model = load(tiny_checkpoint)
    text = "The big dog bit the mailman yesterday and then it ran away fast. " * 3
    state = compute_analysis(model, AnalysisRequest(request_id=1, text=text, grid_pixels=32))
    n = state.n_tokens
    assert n > 32
    pool, causal = state.grid_previews[True]
    assert pool == pool_factor(n, 32) >= 2
    np.testing.assert_array_equal(causal.numpy(), block_max(state.attention_causal.numpy(), pool))
    np.testing.assert_array_equal(state.grid_previews[False][1].numpy(),
                                  block_max(state.attention_bidirectional.numpy(), pool))
    # the grid of that size pools nothing more itself: the preview is what it draws
    assert pooled_for(state.attention_causal, state.grid_previews[True], pool)[1] is causal
    # a grid wider than the text: no preview at all
    assert compute_analysis(model, AnalysisRequest(request_id=2, text=text, grid_pixels=n)).grid_previews == {}


def test_the_grid_tells_the_session_its_size_and_the_next_analysis_uses_it(qtbot, tiny_checkpoint):
    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from attention_lab.ui.session import Session
    from attention_lab.ui.wiring import connect_panel
    from attention_lab.ui.worker import InferenceWorker
    from state_factory import build_state, load

    session = Session(InferenceWorker(name="test-grid-pixels"))
    try:
        panel = HeadGridPanel()
        qtbot.addWidget(panel)
        connect_panel(session, panel)
        panel.resize(900, 700)
        panel.show()
        told = []
        panel.grid_pixels_changed.connect(told.append)
        panel.show_state(build_state(load(tiny_checkpoint), "The big dog bit the mailman yesterday."))
        assert told and told[-1] == int(panel._grid_pixels())
        assert session.grid_pixels == told[-1] and session._request(7).grid_pixels == told[-1]
    finally:
        assert session.shutdown(5.0)


def test_grid_draws_pooled_maps_and_hover_names_the_exact_cell(qtbot, tiny_checkpoint):
    pytest.importorskip("pytestqt")
    from PySide6.QtCore import QPointF

    from attention_lab.ui.panels.head_grid import HeadGridPanel
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    state = build_state(model, "The big dog bit the mailman yesterday and then it ran away fast. " * 3)
    n = state.n_tokens
    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    panel._grid_pixels = lambda: 32.0  # a grid cell narrower than the text is long
    panel.show_state(state)
    pool = pool_factor(n, 32)
    assert pool >= 2
    np.testing.assert_array_equal(panel.head_map(3), block_max(state.attention_causal[3:4].numpy(), pool)[0])
    assert f"{pool} × {pool}" in panel.grid_plot.getAxis("bottom").labelText
    assert panel.mosaic_overlay.isVisible()
    # the mosaic is drawn over the n × n cells of each map: item pixel (x, y) of head 3's tile
    # covers cells [x·pool, (x+1)·pool) and the hover asks the state for the exact cell
    image = panel.mosaic
    geometry = image.geometry
    m = geometry.pixels
    rect = image.mapRectToParent(image.boundingRect())
    assert rect.width() == pytest.approx(image.image.shape[1] * pool)
    x, y = geometry.origin(3)
    q, k = n - 2, 5
    assert image.cell_at(QPointF(x + (k + 0.5) / pool, y + (q + 0.5) / pool)) == (3, q, k)
    assert image.cell_at(QPointF(x + (n + 0.5) / pool, y + 0.1)) is None  # the pooled tile's padding
    assert image.cell_at(QPointF(x + m + 0.5, y + 0.1)) is None  # the gap after the tile
    panel.hover_text = ""
    panel._grid_hover("mosaic", image.cell_at(QPointF(x + (k + 0.5) / pool, y + (q + 0.5) / pool)), None)
    assert panel.hover_text == panel.cell_text(3, q, k)
    text = panel.cell_text(3, q, k)
    assert f"{float(state.attention_causal[3, q, k]):.3f}" in text
