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


def random_gpt2_lens(seed: int = 0, name: str = "gpt2-shapes (random weights)", **shape):
    """A :class:`~attention_lab.core.lens.GPT2Lens` with GPT-2 small's shapes (or ``shape``) and
    random weights, built in memory from a config: no file, no transformers, no download.

    For timing only (the KV-cache benchmark): the cost of a step depends on the shapes, not on
    the values, so this times GPT-2 small's 124 M parameters; its text is gibberish.  Values
    follow GPT-2's initialisation (normal, std 0.02; LayerNorms near identity), perturbed so
    no tensor is all zeros (zeros can let kernels take shortcuts).  Filled in place and laid
    out as :func:`~attention_lab.core.lens.weights_from_state_dict` lays out a checkpoint."""
    from .lens import GPT2Config, GPT2Lens, GPT2Weights, LayerWeights, _expected_layer_shapes

    cfg = GPT2Config(**{**GPT2_SMALL_SHAPES, **shape})
    cfg.validate()
    g = torch.Generator().manual_seed(seed)

    def normal(*size: int, mean: float = 0.0, std: float = 0.02) -> torch.Tensor:
        return torch.empty(*size).normal_(mean, std, generator=g)

    def layer() -> LayerWeights:
        values = {}
        for attr, size in _expected_layer_shapes(cfg).items():
            if attr.startswith("ln_"):
                values[attr] = normal(*size, mean=1.0 if attr.endswith("_w") else 0.0, std=0.1)
            else:
                values[attr] = normal(*size, std=0.02 if attr.endswith("_w") else 0.1)
        return LayerWeights(**values)

    weights = GPT2Weights(
        wte=normal(cfg.n_embd, cfg.vocab_size).t(),  # stored column-major, as the loader stores it
        wpe=normal(cfg.n_positions, cfg.n_embd, std=0.01),
        layers=[layer() for _ in range(cfg.n_layer)],
        ln_f_w=normal(cfg.n_embd, mean=1.0, std=0.1),
        ln_f_b=normal(cfg.n_embd, std=0.1),
    )
    return GPT2Lens(cfg, weights, name)
