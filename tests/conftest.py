from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))
sys.path.insert(0, str(ROOT / "tests"))
# Nothing in the suite may reach a model hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# The tests' models are tiny: one thread each avoids OpenMP spin-waiting on a busy
# 2-core machine (a 0.3 ms forward took 100+ ms with 2 threads under load).  Subprocesses
# (CLI and smoke tests) inherit OMP_NUM_THREADS.
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

torch.set_num_threads(1)

from checkpoints import GPT2_SMALL_SHAPES, make_checkpoint  # noqa: E402
from reliability_tally import TALLY  # noqa: E402


@pytest.fixture(scope="session")
def tally():
    """Count inputs tried / faults injected / fuzz examples for docs/reliability.md's reliability suite."""
    return TALLY


@pytest.fixture(scope="session")
def tiny_checkpoint(tmp_path_factory) -> Path:
    """A 2-layer, 12-head GPT-2-format folder with random weights and the real tokenizer."""
    return make_checkpoint(tmp_path_factory.mktemp("tiny-gpt2"), seed=0)


@pytest.fixture(scope="session")
def gpt2_small_checkpoint(tmp_path_factory) -> Path:
    """GPT-2 small's real shapes (12 layers, 12 heads, 768 wide), random weights."""
    return make_checkpoint(tmp_path_factory.mktemp("gpt2-small-shaped"), seed=1, **GPT2_SMALL_SHAPES)
