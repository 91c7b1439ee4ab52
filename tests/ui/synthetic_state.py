"""An :class:`AnalysisState` made by hand, from small tensors whose every number the test
knows: no model is loaded or run.  A panel shown this state must draw exactly these numbers
(``tests/ui/test_panels_synthetic.py``), which a state computed by the model can't pin down.

Four tokens, two layers of two heads: head 0 looks at the previous token, head 1 puts all
its weight on the first token (a sink); without the mask both spread evenly.  Token ``i``
is the text ``"t{i}"``; the leakage of an edit at position 2 is 0 before it, as under the
mask, and made-up non-zero numbers without it.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from types import SimpleNamespace

import torch
from attention_lab.core.analysis import LeakageResult, head_portrait
from attention_lab.core.analysis_state import AnalysisState
from attention_lab.core.lens import GPT2Config, ShapeRow
from attention_lab.core.pooling import previews

N_TOKENS, N_LAYER, N_HEAD, N_EMBD, CONTEXT, VOCAB = 4, 2, 2, 8, 16, 12
POSITION, REPLACEMENT = 2, 9
_serials = itertools.count(10_000)


class SyntheticTokenizer:
    """Token ``i`` is the text ``"t{i}"``: enough for the panels (labels, guesses)."""

    eos_id = VOCAB - 1
    vocab_size = VOCAB

    def token_texts(self, ids) -> list[str]:
        return [f"t{int(i)}" for i in ids]

    def decode(self, ids) -> str:
        return "".join(self.token_texts(ids))

    def encode(self, text: str) -> list[int]:
        return [int(piece) for piece in text.split("t") if piece.isdigit()]


def synthetic_model(name: str = "synthetic"):
    config = GPT2Config(vocab_size=VOCAB, n_positions=CONTEXT, n_embd=N_EMBD, n_layer=N_LAYER, n_head=N_HEAD)
    return SimpleNamespace(name=name, serial=next(_serials), lens=SimpleNamespace(config=config),
                           tokenizer=SyntheticTokenizer(), spec=name, is_demo=False)


def previous_token_head(n: int) -> torch.Tensor:
    attn = torch.zeros(n, n)
    attn[0, 0] = 1.0
    for i in range(1, n):
        attn[i, i - 1] = 1.0
    return attn


def sink_head(n: int) -> torch.Tensor:
    attn = torch.zeros(n, n)
    attn[:, 0] = 1.0
    return attn


def causal_maps(n: int = N_TOKENS) -> torch.Tensor:
    return torch.stack([previous_token_head(n), sink_head(n)])  # [H, n, n]


def bidirectional_maps(n: int = N_TOKENS) -> torch.Tensor:
    return torch.full((N_HEAD, n, n), 1.0 / n)


def synthetic_leakage(n: int = N_TOKENS, position: int = POSITION) -> LeakageResult:
    causal = torch.zeros(n)
    causal[position:] = torch.tensor([0.5, 0.25, 0.125, 0.0625][: n - position])
    bidirectional = torch.linspace(0.1, 0.4, n)
    layers = torch.arange(1, N_LAYER + 2, dtype=torch.float32)[:, None] / 10  # [L+1, 1]
    return LeakageResult(position=position, replacement_id=REPLACEMENT, original_id=position, mask_mode="-inf",
                         causal=causal, bidirectional=bidirectional,
                         causal_layers=layers * causal, bidirectional_layers=layers * bidirectional)


def synthetic_state(*, layer: int = 0, causal: bool = True, model=None, request_id: int = 1) -> AnalysisState:
    """The hand-made state (``model``: one of :func:`synthetic_model`, a new one by default)."""
    model = model if model is not None else synthetic_model()
    n = N_TOKENS
    ids = list(range(n))
    attention_causal, attention_bidirectional = causal_maps(n), bidirectional_maps(n)
    overview = [s for index in range(N_LAYER) for s in head_portrait(attention_causal, layer_offset=index)]
    top_ids = torch.tensor([[(i + 1 + k) % VOCAB for k in range(3)] for i in range(n)])
    top_probs = torch.tensor([[0.6, 0.3, 0.1]] * n)
    shapes = [ShapeRow("x", (n, N_EMBD), "embeddings"), ShapeRow("Q", (N_HEAD, n, N_EMBD // N_HEAD), "per head"),
              ShapeRow("logits", (n, VOCAB), "ln_f, then × wteᵀ")]
    return AnalysisState(
        request_id=request_id, model=model, text="".join(f"t{i}" for i in ids), ids=ids,
        tokens=model.tokenizer.token_texts(ids), original_length=n, layer=layer, causal=causal,
        position=POSITION, replacement_id=REPLACEMENT,
        attention_causal=attention_causal, attention_bidirectional=attention_bidirectional,
        leakage=synthetic_leakage(n), portrait=[s for s in overview if s.layer == layer], overview=overview,
        shapes=shapes, top_ids=top_ids, top_probs=top_probs, seconds=0.0,
        grid_previews=previews(attention_causal, attention_bidirectional),
        extras={"kept_chars": 2 * n, "bos": False, "replacement_text": f"t{REPLACEMENT}", "mask_mode": "-inf",
                "follow_last": False},
    )


def with_layer(state: AnalysisState, layer: int) -> AnalysisState:
    return replace(state, layer=layer, portrait=[s for s in state.overview if s.layer == layer])
