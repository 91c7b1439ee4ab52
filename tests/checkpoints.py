"""Generate GPT-2-format checkpoints with random weights for the tests.

Real GPT-2 can't be downloaded on these machines, so the loading code is tested on
folders written here exactly as ``GPT2LMHeadModel.save_pretrained`` writes them
(config.json + model.safetensors), plus the project's real GPT-2 tokenizer files.
These are never committed and never presented as trained models.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER_DIR = ROOT / "resources" / "tokenizer"

TINY = dict(n_layer=2, n_head=12, n_embd=48, n_positions=64)
GPT2_SMALL_SHAPES = dict(n_layer=12, n_head=12, n_embd=768, n_positions=1024)


def make_checkpoint(folder: Path, seed: int = 0, with_tokenizer: bool = True, **shape) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    config = GPT2Config(vocab_size=50257, bos_token_id=50256, eos_token_id=50256, **{**TINY, **shape})
    model = GPT2LMHeadModel(config)
    # Random init leaves biases at 0 and LayerNorms at identity: perturb them so the
    # equivalence tests exercise every parameter.
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias") or "ln_" in name:
                p.add_(torch.randn_like(p) * 0.1)
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    if with_tokenizer:
        for f in TOKENIZER_DIR.iterdir():
            shutil.copy(f, folder / f.name)
    return folder
