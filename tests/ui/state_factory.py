"""Build a real :class:`AnalysisState` for panel tests, without the window or the session.

It runs the very function the session runs on the worker (:func:`core.pipeline.compute_analysis`),
here synchronously, on a model loaded with the app's own loader.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from attention_lab.core.lab import SEED_TEXT
from attention_lab.core.models import LoadedModel, load_model
from attention_lab.core.pipeline import AnalysisRequest, compute_analysis
from attention_lab.core.analysis_state import AnalysisState

_ids = itertools.count(1)


def load(folder: Path) -> LoadedModel:
    return load_model(str(folder))


def build_state(
    model: LoadedModel,
    text: str = SEED_TEXT,
    *,
    layer: int = 0,
    causal: bool = True,
    position: int | None = None,
    replacement_id: int | None = None,
) -> AnalysisState:
    request = AnalysisRequest(
        request_id=next(_ids),
        text=text,
        layer=layer,
        causal=causal,
        position=position,
        replacement_id=replacement_id,
    )
    return compute_analysis(model, request)
