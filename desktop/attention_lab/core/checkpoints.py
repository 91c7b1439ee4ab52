"""Random-weight GPT-2 checkpoints with real shapes, for benchmarks.

``attention-lab bench`` times the lens on a folder with GPT-2 small's shapes (12 layers,
12 heads, 768 wide, 50257 tokens) without needing the real weights, which can't be
downloaded everywhere.  The folder is written exactly as ``GPT2LMHeadModel.save_pretrained``
writes it, plus the project's GPT-2 tokenizer files.  Random weights are fine for timing
and memory; such a folder is never presented as a trained model.

transformers is imported inside the function: it is the benchmark's comparison, never
something the app needs at start-up.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

from . import paths

TINY_SHAPES = dict(n_layer=2, n_head=12, n_embd=48, n_positions=64)
GPT2_SMALL_SHAPES = dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024)


def make_random_checkpoint(folder: Path, seed: int = 0, with_tokenizer: bool = True, **shape) -> Path:
    """Write a GPT-2-format folder with random weights (``shape`` overrides the tiny shapes)."""
    import transformers
    from transformers import GPT2Config, GPT2LMHeadModel

    transformers.utils.logging.disable_progress_bar()  # "Writing model shards" on stderr

    generator_state = torch.random.get_rng_state()
    torch.manual_seed(seed)
    try:
        config = GPT2Config(vocab_size=50257, bos_token_id=50256, eos_token_id=50256, **{**TINY_SHAPES, **shape})
        model = GPT2LMHeadModel(config)
        # the default init leaves biases at 0 and LayerNorms at identity: perturb them so
        # every parameter takes part (zeros can make kernels take shortcuts)
        with torch.no_grad():
            for name, p in model.named_parameters():
                if name.endswith("bias") or "ln_" in name:
                    p.add_(torch.randn_like(p) * 0.1)
    finally:
        torch.random.set_rng_state(generator_state)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    if with_tokenizer:
        tokenizer_dir = paths.resource_dir() / "tokenizer"
        for f in tokenizer_dir.iterdir():
            if f.is_file():
                shutil.copy(f, folder / f.name)
    return folder
