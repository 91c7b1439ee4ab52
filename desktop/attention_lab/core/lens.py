"""A readable GPT-2 forward pass that shows its attention.

The attention block follows the chapter's ``AtencaoMultiCabeca`` step by step:

1. one matmul (``c_attn``) produces Q, K and V at once;
2. ``(B, n, d) -> (B, H, n, d/H)`` separates the heads;
3. scaled scores ``Q Kᵀ / sqrt(d_k)``;
4. **the mask line**: future positions get −∞ (or another :class:`MaskMode`);
5. softmax, weighted sum of V, concat of the heads, ``c_proj`` (W^O) mixes them.

Then GPT-2's MLP and residuals.  ``causal=False`` removes the mask (RoBERTa-style,
bidirectional); ``allowed`` replaces it by any boolean matrix (prefix-LM, sliding window,
packed documents, a learner's own: see :mod:`attention_lab.core.masks`); ``ablation``
knocks heads out before W^O (:class:`HeadAblation`); everything else is identical.  Agreement with transformers'
``GPT2LMHeadModel`` (eager attention) is tested to 1e-4.

Weights are plain tensors held in :class:`GPT2Weights`; nothing here reads files (see
:mod:`attention_lab.core.models`) and nothing imports Qt.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Callable, Iterable, Mapping

import torch

from . import messages

Tensor = torch.Tensor


class MaskMode(str, Enum):
    """How the future is hidden -- the chapter's "why −∞ and not zero?"."""

    NEG_INF = "-inf"  # the textbook choice: exp(−∞) = 0 exactly
    FINFO_MIN = "finfo.min"  # what transformers uses: as good as −∞ after the softmax
    NEG_1E9 = "-1e9"  # a "very negative number": also 0 after the softmax in float32
    ZERO_SCORE = "zero-score"  # score 0 -> e⁰ = 1: the future still gets weight (leaks)
    ZERO_AFTER_SOFTMAX = "zero-after-softmax"  # rows no longer sum to 1

    @classmethod
    def parse(cls, value: "MaskMode | str") -> "MaskMode":
        try:
            return cls(value)
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown mask mode {value!r}; choose one of: {names}") from None


@dataclass(frozen=True)
class GPT2Config:
    """The few numbers of a GPT-2 ``config.json`` that the forward pass needs."""

    vocab_size: int = 50257
    n_positions: int = 1024
    n_embd: int = 768
    n_layer: int = 12
    n_head: int = 12
    layer_norm_epsilon: float = 1e-5
    activation_function: str = "gelu_new"
    n_inner: int | None = None
    scale_attn_weights: bool = True
    scale_attn_by_inverse_layer_idx: bool = False

    @property
    def head_dim(self) -> int:
        return self.n_embd // self.n_head

    @property
    def inner_dim(self) -> int:
        return self.n_inner or 4 * self.n_embd

    @classmethod
    def from_dict(cls, raw: Mapping) -> "GPT2Config":
        known = {f for f in cls.__dataclass_fields__}
        values = {k: raw[k] for k in known if raw.get(k) is not None}
        cfg = cls(**values)
        cfg.validate()
        return cfg

    def validate(self) -> None:
        for name in ("vocab_size", "n_positions", "n_embd", "n_layer", "n_head"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"config: {name} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head:
            raise ValueError(f"config: n_embd ({self.n_embd}) is not divisible by n_head ({self.n_head})")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(
                f"config: activation {self.activation_function!r} is not supported "
                f"(supported: {', '.join(sorted(ACTIVATIONS))})"
            )


def _gelu_new(x: Tensor) -> Tensor:
    """GPT-2's tanh approximation of GELU ("gelu_new" in transformers):

    ``0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³)))``.  torch's ``gelu(approximate="tanh")`` is
    this very formula in one fused kernel (7 passes over the MLP's n × 4d activations become
    one); the two agree to float32 rounding (≤ 5e-7).
    """
    return torch.nn.functional.gelu(x, approximate="tanh")


ACTIVATIONS = {
    "gelu_new": _gelu_new,
    "gelu_pytorch_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu": torch.nn.functional.gelu,
    "relu": torch.relu,
}


@dataclass
class LayerWeights:
    ln_1_w: Tensor
    ln_1_b: Tensor
    c_attn_w: Tensor  # (d, 3d): GPT-2 stores Conv1D weights as (in, out)
    c_attn_b: Tensor
    c_proj_w: Tensor  # (d, d): W^O
    c_proj_b: Tensor
    ln_2_w: Tensor
    ln_2_b: Tensor
    c_fc_w: Tensor
    c_fc_b: Tensor
    mlp_proj_w: Tensor
    mlp_proj_b: Tensor


@dataclass
class GPT2Weights:
    wte: Tensor  # (vocab, d); also the output projection (tied), unless lm_head is given
    wpe: Tensor  # (n_positions, d)
    layers: list[LayerWeights]
    ln_f_w: Tensor
    ln_f_b: Tensor
    lm_head: Tensor | None = None

    @property
    def n_bytes(self) -> int:
        tensors = [self.wte, self.wpe, self.ln_f_w, self.ln_f_b]
        if self.lm_head is not None and self.lm_head.data_ptr() != self.wte.data_ptr():
            tensors.append(self.lm_head)
        for layer in self.layers:
            tensors += list(vars(layer).values())
        return sum(t.numel() * t.element_size() for t in tensors)

    @property
    def n_params(self) -> int:
        return self.n_bytes // 4  # weights are kept in float32


_LAYER_KEYS = {
    "ln_1_w": "ln_1.weight",
    "ln_1_b": "ln_1.bias",
    "c_attn_w": "attn.c_attn.weight",
    "c_attn_b": "attn.c_attn.bias",
    "c_proj_w": "attn.c_proj.weight",
    "c_proj_b": "attn.c_proj.bias",
    "ln_2_w": "ln_2.weight",
    "ln_2_b": "ln_2.bias",
    "c_fc_w": "mlp.c_fc.weight",
    "c_fc_b": "mlp.c_fc.bias",
    "mlp_proj_w": "mlp.c_proj.weight",
    "mlp_proj_b": "mlp.c_proj.bias",
}


def _expected_layer_shapes(cfg: GPT2Config) -> dict[str, tuple[int, ...]]:
    d, inner = cfg.n_embd, cfg.inner_dim
    return {
        "ln_1_w": (d,),
        "ln_1_b": (d,),
        "c_attn_w": (d, 3 * d),
        "c_attn_b": (3 * d,),
        "c_proj_w": (d, d),
        "c_proj_b": (d,),
        "ln_2_w": (d,),
        "ln_2_b": (d,),
        "c_fc_w": (d, inner),
        "c_fc_b": (inner,),
        "mlp_proj_w": (inner, d),
        "mlp_proj_b": (d,),
    }


def weights_from_state_dict(cfg: GPT2Config, state: Mapping[str, Tensor]) -> GPT2Weights:
    """Build :class:`GPT2Weights` from a GPT-2 state dict (``GPT2LMHeadModel`` or ``GPT2Model`` keys).

    Every tensor is checked against the config; a mismatch raises ``ValueError`` naming
    the tensor, so a broken folder gets a clear message instead of a shape error later.
    """
    prefix = "transformer." if any(k.startswith("transformer.") for k in state) else ""

    def take(key: str, shape: tuple[int, ...]) -> Tensor:
        full = prefix + key
        if full not in state:
            raise messages.KeyedValueError("weights.missing", tensor=repr(full))
        t = state[full]
        if tuple(t.shape) != shape:
            raise messages.KeyedValueError("weights.shape", tensor=repr(full), shape=tuple(t.shape), expected=shape)
        t = t.to(torch.float32)  # the app computes in float32 (fp16 checkpoints are upcast)
        if not torch.isfinite(t).all():
            raise messages.KeyedValueError("weights.nan", tensor=repr(full))
        return t.contiguous()

    d = cfg.n_embd
    layer_shapes = _expected_layer_shapes(cfg)
    layers = [
        LayerWeights(**{attr: take(f"h.{i}.{key}", layer_shapes[attr]) for attr, key in _LAYER_KEYS.items()})
        for i in range(cfg.n_layer)
    ]
    wte = take("wte.weight", (cfg.vocab_size, d))
    lm_head = None
    if "lm_head.weight" in state:
        head = state["lm_head.weight"].to(torch.float32)
        if tuple(head.shape) != (cfg.vocab_size, d):
            raise messages.KeyedValueError("weights.shape", tensor=repr("lm_head.weight"), shape=tuple(head.shape),
                                           expected=(cfg.vocab_size, d))
        if not torch.equal(head, wte):
            lm_head = _column_major(head)
    return GPT2Weights(
        wte=_column_major(wte),
        wpe=take("wpe.weight", (cfg.n_positions, d)),
        layers=layers,
        ln_f_w=take("ln_f.weight", (d,)),
        ln_f_b=take("ln_f.bias", (d,)),
        lm_head=lm_head,
    )


def _column_major(table: Tensor) -> Tensor:
    """``table`` (vocab, d) stored as its transpose (d, vocab), returned as a (vocab, d) view.

    The same numbers for every reader; but the output projection ``h @ tableᵀ`` then reads
    a contiguous (d, vocab) matrix, the layout whose matrix-vector product runs ~15 %
    faster on one CPU thread (measured: 9.9 vs 11.6 ms for GPT-2's 50257 × 768): a tenth
    of the time of each generated token.  Looking up n embeddings gathers n strided
    columns instead of n rows, which no one measures next to a forward pass."""
    return table.t().contiguous().t()


@dataclass
class KVCache:
    """Past keys and values, one ``(B, H, T, d_k)`` pair per layer."""

    keys: list[Tensor] = field(default_factory=list)
    values: list[Tensor] = field(default_factory=list)

    @property
    def length(self) -> int:
        return 0 if not self.keys else int(self.keys[0].shape[2])

    @property
    def n_bytes(self) -> int:
        return sum(t.numel() * t.element_size() for t in self.keys + self.values)


@dataclass
class ShapeRow:
    """One line of the chapter's "dimensions in practice" table."""

    name: str
    shape: tuple[int, ...]
    note: str


@dataclass
class LensOutput:
    """What one forward pass returns.

    ``attentions``: ``[B, L, H, n, T]`` (T = past + n keys) for the layers that were kept
    (``None`` entries are layers that were not kept, see ``keep_attentions``).
    ``hidden_states``: ``[B, L+1, n, d]``: the embeddings, then the residual stream after
    every block (before ``ln_f``).  ``final_hidden``: ``[B, n, d]`` after ``ln_f``.
    """

    attentions: list[Tensor | None]
    hidden_states: Tensor | None
    final_hidden: Tensor
    logits: Tensor | None
    shapes: list[ShapeRow]
    cache: KVCache | None
    keys: list[Tensor] | None = None
    values: list[Tensor] | None = None

    def attention_stack(self) -> Tensor:
        """All kept layers as one tensor ``[B, L, H, n, T]`` (every layer must have been kept)."""
        if any(a is None for a in self.attentions):
            raise ValueError("not every layer's attention was kept")
        return torch.stack(self.attentions, dim=1)  # type: ignore[arg-type]


def _layer_norm(x: Tensor, w: Tensor, b: Tensor, eps: float) -> Tensor:
    return torch.nn.functional.layer_norm(x, (x.shape[-1],), w, b, eps)


def future_mask(n_query: int, n_key: int | None = None, past: int = 0) -> Tensor:
    """``True`` where a query may NOT look: key position j > query position (past + i)."""
    n_key = n_key if n_key is not None else past + n_query
    q = torch.arange(past, past + n_query)[:, None]
    k = torch.arange(n_key)[None, :]
    return k > q


def apply_mask(scores: Tensor, future: Tensor, mode: MaskMode) -> Tensor:
    """Step 4, the line that defines the architecture; returns the attention weights."""
    if mode is MaskMode.NEG_INF:
        return torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1)
    if mode is MaskMode.FINFO_MIN:
        return torch.softmax(scores.masked_fill(future, torch.finfo(scores.dtype).min), dim=-1)
    if mode is MaskMode.NEG_1E9:
        return torch.softmax(scores.masked_fill(future, -1e9), dim=-1)
    if mode is MaskMode.ZERO_SCORE:
        return torch.softmax(scores.masked_fill(future, 0.0), dim=-1)
    if mode is MaskMode.ZERO_AFTER_SOFTMAX:
        return torch.softmax(scores, dim=-1).masked_fill(future, 0.0)
    raise AssertionError(mode)


def forbidden_from_allowed(allowed: Tensor, batch: int, n_query: int, n_key: int, past: int = 0) -> Tensor:
    """``~allowed`` checked and shaped for the scores: ``[n, T]`` or ``[B, 1, n, T]``.

    ``allowed[i, j]``: query ``past + i`` may look at key ``j``.  Every query must keep its
    own position (the diagonal): a row with nothing allowed would be a softmax over −∞ alone
    (NaN), and a token that can't see itself is no longer the mask's question."""
    if not isinstance(allowed, Tensor) or allowed.dtype != torch.bool:
        raise ValueError("allowed must be a boolean tensor (True = the query may look at the key)")
    if allowed.dim() not in (2, 3) or tuple(allowed.shape[-2:]) != (n_query, n_key):
        raise ValueError(f"allowed must be [{n_query}, {n_key}] or [B, {n_query}, {n_key}], got {tuple(allowed.shape)}")
    if allowed.dim() == 3 and allowed.shape[0] not in (1, batch):
        raise ValueError(f"allowed has {allowed.shape[0]} matrices for a batch of {batch}")
    diagonal = allowed[..., torch.arange(n_query), torch.arange(past, past + n_query)]
    if not bool(diagonal.all()):
        raise ValueError("allowed must keep the diagonal: every position may look at itself")
    forbidden = ~allowed
    return forbidden[:, None] if forbidden.dim() == 3 else forbidden


ABLATION_MODES = ("zero", "mean")


@dataclass
class HeadAblation:
    """Heads knocked out before W^O mixes them (``c_proj``).

    ``knocked``: boolean ``[L, H]`` (the same heads in every sequence of the batch) or
    ``[B, L, H]`` (one set per sequence: ranking the heads runs one knockout per sequence).
    ``mode``: ``"zero"`` (the head's output is 0) or ``"mean"`` (each of its output vectors is
    replaced by their mean over the sequence's positions: the head still adds its average
    contribution, but no longer depends on which token is where).
    """

    knocked: Tensor
    mode: str = "zero"
    _layers: frozenset[int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.mode not in ABLATION_MODES:
            raise ValueError(f"unknown ablation {self.mode!r}; choose one of: {', '.join(ABLATION_MODES)}")
        if not isinstance(self.knocked, Tensor) or self.knocked.dtype != torch.bool or self.knocked.dim() not in (2, 3):
            raise ValueError("knocked must be a boolean [L, H] or [B, L, H] tensor")
        per_layer = self.knocked.reshape(-1, *self.knocked.shape[-2:]).any(0).any(-1)
        self._layers = frozenset(int(i) for i in torch.nonzero(per_layer).flatten())

    @classmethod
    def of(cls, heads: Iterable[tuple[int, int]], mode: str, n_layer: int, n_head: int) -> "HeadAblation":
        knocked = torch.zeros(n_layer, n_head, dtype=torch.bool)
        for layer, head in heads:
            if not (0 <= layer < n_layer and 0 <= head < n_head):
                raise ValueError(f"head {layer}.{head} does not exist: layers 0..{n_layer - 1}, heads 0..{n_head - 1}")
            knocked[layer, head] = True
        return cls(knocked, mode)

    def check(self, config: "GPT2Config", batch: int) -> None:
        if tuple(self.knocked.shape[-2:]) != (config.n_layer, config.n_head):
            raise ValueError(f"knocked is {tuple(self.knocked.shape)}; the model has {config.n_layer} × {config.n_head} heads")
        if self.knocked.dim() == 3 and self.knocked.shape[0] != batch:
            raise ValueError(f"knocked has {self.knocked.shape[0]} sets of heads for a batch of {batch}")

    def apply(self, layer: int, per_head: Tensor) -> Tensor:
        """``per_head`` ``[B, H, n, d_k]`` with this layer's knocked heads replaced."""
        if layer not in self._layers:
            return per_head
        sel = self.knocked[..., layer, :]  # [H] or [B, H]
        sel = sel.view(-1 if sel.dim() == 2 else 1, sel.shape[-1], 1, 1)
        replacement = torch.zeros_like(per_head) if self.mode == "zero" else per_head.mean(dim=2, keepdim=True)
        return torch.where(sel, replacement, per_head)


class GPT2Lens:
    """GPT-2's forward pass, written to be read, returning everything the app shows."""

    def __init__(self, config: GPT2Config, weights: GPT2Weights, name: str = "gpt2"):
        self.config = config
        self.weights = weights
        self.name = name
        self._act = ACTIVATIONS[config.activation_function]

    @classmethod
    def from_state_dict(cls, config: GPT2Config, state: Mapping[str, Tensor], name: str = "gpt2") -> "GPT2Lens":
        return cls(config, weights_from_state_dict(config, state), name)

    @property
    def output_embedding(self) -> Tensor:
        return self.weights.lm_head if self.weights.lm_head is not None else self.weights.wte

    # ------------------------------------------------------------------ the forward pass
    @torch.inference_mode()
    def forward(
        self,
        input_ids: Tensor | Iterable[int],
        *,
        causal: bool = True,
        mask_mode: MaskMode | str = MaskMode.NEG_INF,
        past: KVCache | None = None,
        use_cache: bool = False,
        keep_attentions: bool | Iterable[int] = True,
        keep_hidden: bool = True,
        keep_kv: bool = False,
        compute_logits: bool = True,
        logits_positions: slice | None = None,
        identity_c_proj: bool = False,
        attention_hook: Callable[[int, Tensor], None] | None = None,
        allowed: Tensor | None = None,
        ablation: HeadAblation | None = None,
        resume: tuple[int, Tensor] | None = None,
        output_hook: Callable[[int, Tensor], None] | None = None,
    ) -> LensOutput:
        """Run GPT-2 on ``input_ids`` (``[n]`` or ``[B, n]``).

        ``causal``: apply the mask (GPT-2) or not (bidirectional, RoBERTa-style).
        ``mask_mode``: how the mask hides the future (see :class:`MaskMode`).
        ``past`` / ``use_cache``: KV cache in, updated cache out (generation).
        ``keep_attentions``: ``True`` (all layers), ``False``, or the layer indices to keep;
        at 1024 tokens all attentions of GPT-2 small take 600 MB, so panels ask for what they show.
        ``compute_logits`` / ``logits_positions``: skip or restrict the vocabulary projection.
        ``keep_kv``: return each layer's full K and V (``[B, H, T, d_k]``), for the K/V-stability view.
        ``identity_c_proj``: replace W^O by the identity (heads stay in their own slices).
        ``attention_hook(layer, attention)``: sees every layer's attention ``[B, H, n, T]`` as
        it is made, e.g. to summarise all layers while keeping only the one a panel draws
        (at 1024 tokens that is 48 MB held instead of 576 MB for GPT-2 small).
        ``allowed``: a boolean ``[n, T]`` (or ``[B, n, T]``) matrix that replaces ``causal``:
        True where the query may look at the key (the diagonal must stay allowed); forbidden
        cells are filled as ``mask_mode`` says, as the causal mask's are.
        ``ablation``: heads knocked out before W^O (see :class:`HeadAblation`).
        ``resume``: ``(layer, h)``: start at block ``layer`` from the residual stream ``h``
        ``[B, n, d]`` an earlier run computed (its ``hidden_states[:, layer]``); the blocks before
        are skipped (their attentions come back as ``None``).  Knocking out a head of layer l
        leaves layers 0 … l−1 as they were: ranking the heads starts there.
        ``output_hook(layer, mixed)``: sees each layer's attention output after W^O ``[B, n, d]``,
        what is added to the residual stream (the "inside this head" view checks its arithmetic on it).
        """
        cfg, w = self.config, self.weights
        mode = MaskMode.parse(mask_mode)
        ids = torch.as_tensor(input_ids if isinstance(input_ids, Tensor) else list(input_ids), dtype=torch.long)
        if ids.dim() == 1:
            ids = ids[None]
        if ids.dim() != 2 or ids.shape[1] == 0:
            raise ValueError("input_ids must be a non-empty [n] or [B, n] sequence of token ids")
        B, n = ids.shape
        past_len = past.length if past is not None else 0
        if past_len + n > cfg.n_positions:
            raise ValueError(f"{past_len + n} positions exceed the model's context of {cfg.n_positions}")
        if int(ids.min()) < 0 or int(ids.max()) >= cfg.vocab_size:
            raise ValueError(f"token ids must lie in [0, {cfg.vocab_size})")
        if isinstance(keep_attentions, bool):
            kept = set(range(cfg.n_layer)) if keep_attentions else set()
        else:
            kept = set(keep_attentions)

        H, dk, d = cfg.n_head, cfg.head_dim, cfg.n_embd
        shapes: list[ShapeRow] = []

        def note(name: str, t: Tensor | tuple[int, ...], text: str) -> None:
            # batch dimension dropped for one sequence, as in the chapter's table
            shape = tuple(t.shape if isinstance(t, Tensor) else t)
            shapes.append(ShapeRow(name, shape[1:] if B == 1 else shape, text))

        positions = torch.arange(past_len, past_len + n)
        h = w.wte[ids] + w.wpe[positions][None]
        note("h", h, "token + position embeddings")
        first = 0
        if resume is not None:
            first, h = resume
            if not 0 <= first < cfg.n_layer or tuple(h.shape) != (B, n, d) or keep_hidden or past_len:
                raise ValueError(f"resume needs a layer in 0..{cfg.n_layer - 1} and h of shape {(B, n, d)}, "
                                 "without keep_hidden or a KV cache")
        if allowed is not None:
            forbidden = forbidden_from_allowed(allowed, B, n, past_len + n, past_len)
            # nothing forbidden (bidirectional): no mask to apply, the fast kernel may run
            forbidden = forbidden if bool(forbidden.any()) else None
        else:
            # one new query sees every key (nothing lies in its future): no mask to build or apply
            forbidden = future_mask(n, past_len + n, past_len) if causal and n > 1 else None
        if ablation is not None:
            ablation.check(cfg, B)
            if ablation.mode == "mean" and past_len:
                raise ValueError("a mean ablation averages over the whole text: it can't run on a KV cache")
        scale = 1.0 / math.sqrt(dk) if cfg.scale_attn_weights else 1.0

        attentions: list[Tensor | None] = []
        hidden = [h] if keep_hidden else None
        new_cache = KVCache() if use_cache else None
        keys_out: list[Tensor] | None = [] if keep_kv else None
        values_out: list[Tensor] | None = [] if keep_kv else None

        attentions.extend([None] * first)
        for layer_idx, lw in enumerate(w.layers[first:], start=first):
            a = _layer_norm(h, lw.ln_1_w, lw.ln_1_b, cfg.layer_norm_epsilon)
            # 1) a single matmul produces Q, K and V at once
            qkv = torch.addmm(lw.c_attn_b, a.reshape(-1, d), lw.c_attn_w).view(B, n, 3 * d)
            # 2) (B, n, 3d) -> three (B, H, n, d_k): Q, K, V, each separated into its heads
            q, k, v = qkv.view(B, n, 3, H, dk).permute(2, 0, 3, 1, 4).unbind(0)
            if past is not None and past.keys:
                k = torch.cat([past.keys[layer_idx], k], dim=2)
                v = torch.cat([past.values[layer_idx], v], dim=2)
            if new_cache is not None:
                new_cache.keys.append(k)
                new_cache.values.append(v)
            if keys_out is not None:
                keys_out.append(k)
                values_out.append(v)  # type: ignore[union-attr]
            # 3) scaled scores -> (B, H, n, T)
            layer_scale = scale / (layer_idx + 1) if cfg.scale_attn_by_inverse_layer_idx else scale
            if forbidden is None and layer_idx not in kept and attention_hook is None:
                # no mask to apply and no one to show the weights to (a generated token's
                # step): the same softmax(Q·Kᵀ·scale)·V in torch's fused kernel, which never
                # writes the n × T weights out (three ops instead of five: ~0.1 ms a token)
                per_head = torch.nn.functional.scaled_dot_product_attention(q, k, v, scale=layer_scale)
                scores = att = (B, H, n, k.shape[2])  # their shape, for the table
                attentions.append(None)
            else:
                # (Q/√d_k)·Kᵀ = Q·Kᵀ/√d_k: scaling Q touches n×d_k numbers instead of n×T scores
                # (and 1/√d_k is a power of two for GPT-2's d_k = 64, so the result is bit-identical)
                scores = torch.matmul(q * layer_scale, k.transpose(-1, -2))
                # 4) ===== THE LINE THAT DEFINES THE ARCHITECTURE =====
                att = apply_mask(scores, forbidden, mode) if forbidden is not None else torch.softmax(scores, dim=-1)
                attentions.append(att if layer_idx in kept else None)
                if attention_hook is not None:
                    attention_hook(layer_idx, att)
                per_head = torch.matmul(att, v)  # (B, H, n, d_k)
            if ablation is not None:  # knockout: before W^O, so the other heads pass unchanged
                per_head = ablation.apply(layer_idx, per_head)
            # 5) regroup the heads and mix them with W^O (c_proj)
            y = per_head.transpose(1, 2).reshape(B, n, d)
            if identity_c_proj:
                mixed = y
            else:
                mixed = torch.addmm(lw.c_proj_b, y.reshape(-1, d), lw.c_proj_w).view(B, n, d)
            if output_hook is not None:
                output_hook(layer_idx, mixed)
            if layer_idx == 0:  # the table describes one layer; every layer has the same shapes
                note("c_attn", qkv, "a single matmul: Q, K, V fused")
                note("Q, K, V", q, "reshaped into heads: heads in parallel")
                note("scores", scores, "Q·Kᵀ/√d_k, one map per head")
                note("attention", att, "after the mask and the softmax")
                note("per head", per_head, "weighted sum of V, per head")
                note("concat", y, "regroups the slices")
                note("c_proj", mixed, "W^O mixes the heads")
            h = h + mixed
            m = _layer_norm(h, lw.ln_2_w, lw.ln_2_b, cfg.layer_norm_epsilon)
            m = torch.addmm(lw.c_fc_b, m.reshape(-1, d), lw.c_fc_w)
            m = torch.addmm(lw.mlp_proj_b, self._act(m), lw.mlp_proj_w).view(B, n, d)
            h = h + m
            if layer_idx == 0:
                note("block output", h, "same shape as the input")
            if hidden is not None:
                hidden.append(h)

        final = _layer_norm(h, w.ln_f_w, w.ln_f_b, cfg.layer_norm_epsilon)
        logits = None
        if compute_logits:
            sel = final if logits_positions is None else final[:, logits_positions]
            logits = torch.matmul(sel, self.output_embedding.T)
            shapes.append(ShapeRow("logits", tuple(logits.shape[1:]) if B == 1 else tuple(logits.shape), "ln_f, then × wteᵀ"))
        return LensOutput(
            attentions=attentions,
            hidden_states=torch.stack(hidden, dim=1) if hidden is not None else None,
            final_hidden=final,
            logits=logits,
            shapes=shapes,
            cache=new_cache,
            keys=keys_out,
            values=values_out,
        )

    __call__ = forward

    # ------------------------------------------------------------------ generation
    @torch.inference_mode()
    def next_token_logits(self, ids: list[int], past: KVCache | None) -> tuple[Tensor, KVCache]:
        """Logits for the token after ``ids``; with ``past`` only the new ids are computed."""
        new = ids[past.length :] if past is not None else ids
        out = self.forward(
            new,
            past=past,
            use_cache=True,
            keep_attentions=False,
            keep_hidden=False,
            logits_positions=slice(-1, None),
        )
        assert out.logits is not None and out.cache is not None
        return out.logits[0, -1], out.cache

    def parameter_count(self) -> int:
        return self.weights.n_params
