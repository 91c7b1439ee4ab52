"""The guided "Lab tour": its steps as data, where the learner is, and each step's measured fact.

The tour walks the chapter's five lab steps in order, with the three points the chapter
argues in prose placed where they fit: "why −∞ and not zero" right after the mask,
"multi-head costs no more than one head" and "W^O mixes the heads" after the heads' maps.

* :data:`STEPS` -- what each step shows (which panel, layer, edit) -- plain data;
* :class:`TourProgress` -- current step, next / back / goto, finished, to/from a dict;
* :func:`compute_fact` -- the step's claim measured on the current model and text, as a
  :class:`Fact` (a template key plus its numbers), so the UI words it in the current
  language.  Nothing is canned: every number comes from a forward pass of the lens.

No Qt here: the app runs :func:`compute_fact` on its worker thread (``core.jobs.tour_fact_job``,
asked for by the window's tour through its session).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import torch

from . import analysis, roles
from .roles import INDUCTION_WORDS, repeated_words_text  # noqa: F401 -- the induction step's text (the window's tour)
from .budget import budget_rows, default_query, word_at
from .job_protocol import Cancelled
from .kvbench import CLEAR_SPEEDUP, cache_size_bytes
from .lens import GPT2Config, GPT2Lens, GPT2Weights, MaskMode

SETTINGS_VERSION = 1
TOUR_WINDOW = 3  # the mask designer step's sliding window: small enough to see it grow with the layers
MASK_PRINT_LIMIT = 8  # tokens shown in the fact's mask print (the mask panel shows them all)
PRINT_LABEL = 7  # characters of a token's label in that print
DEFAULT_NEW_TOKENS = 50  # the lab's "generating 50 tokens with and without it"
CHAPTER = GPT2Config()  # the chapter's numbers are GPT-2 small's (768 = 12 × 64)


# ---------------------------------------------------------------------------- the steps
@dataclass(frozen=True)
class TourStep:
    """One stop of the tour and how the app is set up for it."""

    key: str  # stable id: saved progress and the UI's string keys use it
    lab_step: int | None  # 1..5 for the lab script's steps, None for the chapter's prose points
    panel: str  # objectName of the dock to bring forward
    layer: int | None = None  # the layer to show (None: keep the learner's)
    causal: bool | None = None  # the head grid's mode (None: keep)
    edit_last_token: bool = False  # the leakage edit goes to the last token (the lab's "end of the sentence")
    mask_mode: str | None = None  # the mode the mask panel's comparison selects
    open_head: bool = False  # open the head whose causal/bidirectional difference is largest
    offers_benchmark: bool = False  # a "Run the benchmark" button; never started by surprise
    ranks_heads: bool = False  # the knockout panel ranks the heads too: its map shows what the fact quotes
    view: str | None = None  # the head grid's enlarged view to open ("budget": one query, every head)
    repeated_text: bool = False  # the text becomes a random word sequence said twice (induction), given back after
    designer_mask: str | None = None  # the mask designer's choice (core.masks spec text, e.g. "window:3")
    generate_steps: int = 0  # tokens the Generate panel steps on the learner's text when the step opens


STEPS: tuple[TourStep, ...] = (
    # the chapter's §1 before the lab: every row sums to 1, so one head must choose
    TourStep("budget", None, "panel.head_grid", causal=True, view="budget"),
    TourStep("mask", 1, "panel.mask", causal=True, mask_mode=MaskMode.NEG_INF.value),
    TourStep("why_inf", None, "panel.mask", edit_last_token=True, mask_mode=MaskMode.ZERO_SCORE.value),
    TourStep("maps", 2, "panel.head_grid", open_head=True),
    TourStep("multihead_cost", None, "panel.shapes"),
    TourStep("wo_mixes", None, "panel.shapes"),
    TourStep("leakage", 3, "panel.leakage", edit_last_token=True),
    TourStep("portrait", 4, "panel.portrait", layer=0),
    # the chapter names induction among the specialisations: its stripe, on a sequence said twice
    TourStep("induction", None, "panel.head_grid", causal=True, open_head=True, repeated_text=True),
    # the Generate tab steps three tokens first: the benchmark then times the row-versus-triangle just watched
    TourStep("kvcache", 5, "panel.generate", offers_benchmark=True, generate_steps=3),
    # beyond the chapter: another mask, and a head taken out
    TourStep("mask_designer", None, "panel.mask_designer", designer_mask=f"window:{TOUR_WINDOW}"),
    TourStep("knockout", None, "panel.knockout", ranks_heads=True),
)
STEP_KEYS = tuple(s.key for s in STEPS)


class TourProgress:
    """Where the learner is in the tour: a bounded index plus a "finished" flag.

    ``next()`` on the last step finishes the tour (the index stays there); ``back()`` on
    the first does nothing.  Both return whether anything changed.
    """

    def __init__(self, steps: Sequence[TourStep] = STEPS, index: int = 0, finished: bool = False):
        if not steps:
            raise ValueError("a tour needs at least one step")
        self.steps = tuple(steps)
        self.index = min(max(0, int(index)), len(self.steps) - 1)
        self.finished = bool(finished)

    @property
    def count(self) -> int:
        return len(self.steps)

    @property
    def step(self) -> TourStep:
        return self.steps[self.index]

    @property
    def at_start(self) -> bool:
        return self.index == 0

    @property
    def at_end(self) -> bool:
        return self.index == len(self.steps) - 1

    def next(self) -> bool:
        if self.at_end:
            changed = not self.finished
            self.finished = True
            return changed
        self.index += 1
        return True

    def back(self) -> bool:
        if self.at_start:
            return False
        self.index -= 1
        self.finished = False
        return True

    def goto(self, where: int | str) -> None:
        """Jump to a step by index or key (``ValueError`` if there is no such step)."""
        if isinstance(where, str):
            keys = [s.key for s in self.steps]
            if where not in keys:
                raise ValueError(f"no tour step {where!r}; steps: {', '.join(keys)}")
            index = keys.index(where)
        else:
            index = int(where)
            if not 0 <= index < len(self.steps):
                raise ValueError(f"tour step {index} is out of range (0..{len(self.steps) - 1})")
        self.index = index
        self.finished = False

    def restart(self) -> None:
        self.goto(0)

    def to_dict(self) -> dict[str, Any]:
        return {"version": SETTINGS_VERSION, "step": self.step.key, "index": self.index, "finished": self.finished}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, steps: Sequence[TourStep] = STEPS) -> "TourProgress":
        """Resume from :meth:`to_dict`'s output; anything unreadable starts at the beginning.

        The step key wins over the index, so a tour whose steps were reordered by an update
        still resumes on the same step.  Values may be strings (QSettings' INI backend).
        """
        progress = cls(steps)
        if not isinstance(data, Mapping):
            return progress
        key = data.get("step")
        keys = [s.key for s in progress.steps]
        if isinstance(key, str) and key in keys:
            progress.index = keys.index(key)
        else:
            try:
                index = int(data.get("index"))  # type: ignore[arg-type]
            except (TypeError, ValueError):
                index = 0
            progress.index = index if 0 <= index < len(keys) else 0
        finished = data.get("finished", False)
        if isinstance(finished, str):
            finished = finished.strip().lower() in ("true", "1")
        progress.finished = bool(finished) if isinstance(finished, (bool, int, str)) else False
        return progress


# ---------------------------------------------------------------------------- facts
class FactCancelled(Cancelled):
    """A fact's measurement was stopped (its ``cancel`` check became true)."""


@dataclass(frozen=True)
class Fact:
    """A measured claim: the UI looks up ``tour.fact.<key>`` and formats ``values`` into it.

    ``lists`` holds enumerations (e.g. the sink heads): name -> (item template key, one dict
    of numbers per item); the UI joins the formatted items into ``values[name]``.
    ``block`` is language-free preformatted text shown under the sentence (the mask print).
    """

    key: str
    values: dict[str, Any]
    lists: dict[str, tuple[str, list[dict[str, Any]]]] = field(default_factory=dict)
    block: str | None = None
    data: dict[str, Any] = field(default_factory=dict)  # structured extras (e.g. roles.RoleWhere per role)


@dataclass
class TourContext:
    """What a fact is measured on: the current model, text and the app's selections."""

    lens: GPT2Lens
    ids: list[int]
    tokens: list[str]  # each token's text ("␣" for a leading space)
    layer: int = 0
    position: int | None = None  # the leakage edit (None: the last token)
    replacement_id: int | None = None  # None: the model's likeliest other token there
    kv_result: Any = None  # core.kvbench.KVResult of a benchmark the learner ran on these ids
    new_tokens: int = DEFAULT_NEW_TOKENS
    rules: roles.RoleRules | None = None  # the chapter's roles (positional, previous-token, sink, induction)
    token_text: Callable[[int], str] | None = None  # id -> token text (for the replacement's name)
    tokenizer: Any = None  # the model's (the induction scores' sequence is made with it)
    model_name: str = ""
    cancel: Callable[[], bool] | None = None  # checked between the passes of the longer facts
    # the mask the window's analysis runs under (the designer's): [n, n] bool, None for causal;
    # the knockout step ranks heads under it, as the knockout panel does
    allowed: Any = None
    mask_spec: str = "causal"
    knockout_mode: str = "zero"  # how the knockout step knocks a head out (the knockout panel's choice)

    def __post_init__(self) -> None:
        self.ids = [int(i) for i in self.ids]
        if not self.ids:
            raise ValueError("the tour needs at least one token")
        if len(self.tokens) != len(self.ids):
            raise ValueError(f"{len(self.tokens)} token texts for {len(self.ids)} ids")
        n_layer = self.lens.config.n_layer
        self.layer = min(max(0, int(self.layer)), n_layer - 1)
        if self.position is None or not 0 <= self.position < len(self.ids):
            self.position = len(self.ids) - 1

    @property
    def n(self) -> int:
        return len(self.ids)

    def replacement(self) -> int:
        """The edit's token: the given one, else the model's likeliest other token at the position."""
        if self.replacement_id is not None and 0 <= self.replacement_id < self.lens.config.vocab_size:
            if self.replacement_id != self.ids[self.position]:
                return int(self.replacement_id)
        context = self.ids[: self.position] if self.position > 0 else self.ids[:1]
        logits, _ = self.lens.next_token_logits(context, None)
        for candidate in torch.topk(logits, min(8, logits.numel())).indices.tolist():
            if candidate != self.ids[self.position]:
                return int(candidate)
        return (self.ids[self.position] + 1) % self.lens.config.vocab_size

    def text_of(self, token_id: int) -> str:
        if self.token_text is not None:
            return self.token_text(int(token_id))
        if token_id in self.ids:
            return self.tokens[self.ids.index(token_id)]
        return f"#{token_id}"

    @classmethod
    def from_model(cls, model, text: str, **kwargs) -> "TourContext":
        """Build from a ``core.models.LoadedModel`` and a text (scripts and tests)."""
        tok = model.tokenizer
        ids = tok.encode(text)
        return cls(
            lens=model.lens,
            ids=ids,
            tokens=tok.token_texts(ids),
            token_text=lambda i: tok.token_texts([int(i)])[0],
            tokenizer=tok,
            model_name=model.name,
            **kwargs,
        )


def _attention(lens: GPT2Lens, ids: list[int], layer: int, causal: bool) -> torch.Tensor:
    out = lens(ids, causal=causal, keep_attentions=[layer], keep_hidden=False, compute_logits=False)
    return out.attentions[layer][0]  # [H, n, n]


def _future(n: int) -> torch.Tensor:
    return torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)


def _before(position: int) -> str:
    """The positions before ``position`` as the text names them: "0" or "0–6"."""
    return "0" if position == 1 else f"0–{position - 1}"


def budget_fact(ctx: TourContext) -> Fact:
    """The chapter's §1: one query's row in every head of the layer against their average
    (:mod:`.budget`), on the query the head grid's budget view opens on."""
    if ctx.n < 2:
        return Fact("too_short", {"n": ctx.n})
    attention = _attention(ctx.lens, ctx.ids, ctx.layer, causal=True)
    query = default_query(attention, ctx.tokens)
    rows = budget_rows(attention, query)
    top_head = max(range(rows.heads), key=lambda h: rows.top_weight[h])
    return Fact(
        "budget",
        {
            "token": word_at(ctx.tokens, query),  # the whole word the query token ends
            "query": query,
            "layer": ctx.layer,
            "heads": rows.heads,
            "chosen": len(rows.keys_chosen),
            "top": rows.top_weight[top_head],
            "top_head": top_head,
            "top_token": ctx.tokens[rows.top_key[top_head]],
            "avg_top": rows.average_top_weight,
            "avg_token": ctx.tokens[rows.average_top_key],
            "avg_entropy": rows.average_entropy,
            "head_entropy": rows.mean_head_entropy,
        },
    )


def mask_fact(ctx: TourContext) -> Fact:
    """Lab step 1: the triangle, and that the mask really gives the future weight 0."""
    n, layer = ctx.n, ctx.layer
    attn = _attention(ctx.lens, ctx.ids, layer, causal=True)
    future = _future(n)
    future_weight = float(attn[:, future].max()) if n > 1 else 0.0
    row_error = float((attn.double().sum(-1) - 1).abs().max())
    shown = min(n, MASK_PRINT_LIMIT)
    labels = [t if len(t) <= PRINT_LABEL else t[: PRINT_LABEL - 1] + "…" for t in ctx.tokens[:shown]]
    block = analysis.ascii_mask(shown, labels, width=4)
    return Fact(
        "mask",
        {
            "n": n,
            "cells": n * n,
            "allowed": n * (n + 1) // 2,
            "forbidden": n * (n - 1) // 2,
            "layer": layer,
            "heads": int(attn.shape[0]),
            "future_weight": future_weight,
            "row_error": row_error,
            "shown": shown,
        },
        block=block,
    )


def why_inf_fact(ctx: TourContext) -> Fact:
    """"Why −∞ and not zero?": each way of hiding the future, measured on this text."""
    if ctx.n < 2:
        return Fact("too_short", {"n": ctx.n})
    replacement = ctx.replacement()
    rows = {r.mode: r for r in analysis.mask_mode_report(ctx.lens, ctx.ids, ctx.layer, ctx.position, replacement)}
    inf, zero = rows[MaskMode.NEG_INF.value], rows[MaskMode.ZERO_SCORE.value]
    after = rows[MaskMode.ZERO_AFTER_SOFTMAX.value]
    e9, fmin = rows[MaskMode.NEG_1E9.value], rows[MaskMode.FINFO_MIN.value]
    values = {
        "layer": ctx.layer,
        "pos": ctx.position,
        "old": ctx.tokens[ctx.position],
        "new": ctx.text_of(replacement),
        "inf_future": inf.future_weight,
        "inf_leak": inf.max_leak_before,
        "inf_error": inf.max_row_sum_error,
        "zero_future": zero.future_weight,
        "zero_leak": zero.max_leak_before,
        "after_future": after.future_weight,
        "after_error": after.max_row_sum_error,
        "after_leak": after.max_leak_before,
        "e9_future": e9.future_weight,
        "e9_leak": e9.max_leak_before,
        "finfo_future": fmin.future_weight,
        "finfo_leak": fmin.max_leak_before,
    }
    return Fact("why_inf" if ctx.position > 0 else "why_inf.no_past", values)


def maps_fact(ctx: TourContext) -> Fact:
    """Lab step 2: the same input causal and bidirectional; how much budget goes to the future."""
    n, layer = ctx.n, ctx.layer
    if n < 2:
        return Fact("too_short", {"n": n})
    causal = _attention(ctx.lens, ctx.ids, layer, causal=True).double()
    bidir = _attention(ctx.lens, ctx.ids, layer, causal=False).double()
    future = _future(n)
    # share of each row's budget spent on later tokens, over the rows that have a future
    causal_share = (causal * future).sum(-1)[:, : n - 1].mean(-1)  # [H]
    bidir_share = (bidir * future).sum(-1)[:, : n - 1].mean(-1)  # [H]
    head = int(torch.argmax(bidir_share))
    return Fact(
        "maps",
        {
            "layer": layer,
            "heads": int(causal.shape[0]),
            "n": n,
            "first": ctx.tokens[0],
            "first_self": float(causal[:, 0, 0].min()),
            "causal_future": float((causal * future).max()),
            "causal_share_pct": float(causal_share.max()),
            "bidir_mean_pct": float(bidir_share.mean()),
            "bidir_head": head,
            "bidir_max_pct": float(bidir_share[head]),
            "bidir_first_self_pct": float(bidir[:, 0, 0].mean()),
        },
    )


def multihead_cost_fact(ctx: TourContext) -> Fact:
    """"Multi-head costs no more than one head": H heads × d_k vs 1 head × d, on this model."""
    lens, cfg = ctx.lens, ctx.lens.config
    d, heads, dk = cfg.n_embd, cfg.n_head, cfg.head_dim
    out = lens(ctx.ids, keep_attentions=False, keep_hidden=False, compute_logits=False)
    shapes = {row.name: tuple(row.shape) for row in out.shapes}
    qkv_shape = shapes["Q, K, V"]  # (H, n, d_k): what the reshape really produced
    lw = lens.weights.layers[ctx.layer]
    c_attn = lw.c_attn_w.numel() + lw.c_attn_b.numel()
    c_proj = lw.c_proj_w.numel() + lw.c_proj_b.numel()
    per_layer = c_attn + c_proj
    total = sum(
        layer.c_attn_w.numel() + layer.c_attn_b.numel() + layer.c_proj_w.numel() + layer.c_proj_b.numel()
        for layer in lens.weights.layers
    )

    def attention_params(n_heads: int, width: int) -> int:  # c_attn (d -> 3·H·width) + c_proj (H·width -> d)
        inner = n_heads * width
        return d * 3 * inner + 3 * inner + inner * d + d

    single = attention_params(1, d)
    multiplied = attention_params(heads, d)
    n = ctx.n
    return Fact(
        "multihead_cost",
        {
            "model": ctx.model_name or lens.name,
            "heads": qkv_shape[0],
            "n": qkv_shape[1],
            "dk": qkv_shape[2],
            "width": qkv_shape[0] * qkv_shape[2],
            "d": d,
            "layer": ctx.layer,
            "layers": cfg.n_layer,
            "c_attn": c_attn,
            "c_proj": c_proj,
            "per_layer": per_layer,
            "single": single,
            "total": total,
            "multiplied": multiplied,
            "ratio": multiplied / per_layer,
            "score_macs": heads * n * n * dk,
            "single_score_macs": n * n * d,
            # the chapter's 768 = 12 × 64 next to this model's d = heads × d_k
            "chapter_d": CHAPTER.n_embd,
            "chapter_heads": CHAPTER.n_head,
            "chapter_dk": CHAPTER.head_dim,
            "same_as_chapter": (d, heads) == (CHAPTER.n_embd, CHAPTER.n_head),
        },
    )


# ---------------------------------------------------------------------------- W^O mixes the heads
@dataclass
class HeadReach:
    """How far a nudge of one head's values reaches in the attention block's output."""

    head: int
    dims_with_wo: int  # output dimensions that moved with c_proj (W^O)
    dims_identity: int  # ... with c_proj replaced by the identity
    slice_lo: int
    slice_hi: int  # inclusive
    outside_with_wo: float  # share of the change (squared norm) outside the head's own slice
    outside_identity: float


def _block_lens(lens: GPT2Lens, ids: list[int], layer: int) -> tuple[GPT2Lens, torch.Tensor]:
    """A one-layer lens whose "embeddings" are the residual stream entering ``layer`` and whose MLP is off.

    Its hidden state after the block is ``h + attention_block(h)``, so comparing two runs
    compares the attention block's outputs exactly (``h`` is the same tensor in both).
    """
    cfg = lens.config
    full = lens(ids, keep_attentions=False, keep_hidden=True, compute_logits=False)
    h = full.hidden_states[0, layer].clone()  # [n, d]
    n, d = h.shape
    lw = lens.weights.layers[layer]
    no_mlp = dataclasses.replace(
        lw,
        c_fc_w=torch.zeros_like(lw.c_fc_w),
        c_fc_b=torch.zeros_like(lw.c_fc_b),
        mlp_proj_w=torch.zeros_like(lw.mlp_proj_w),
        mlp_proj_b=torch.zeros_like(lw.mlp_proj_b),
    )
    one_cfg = dataclasses.replace(cfg, vocab_size=n, n_positions=n, n_layer=1, scale_attn_by_inverse_layer_idx=False)
    if cfg.scale_attn_by_inverse_layer_idx and layer > 0:
        # in a lens of one layer this block is layer 0: scaling Q by 1/(layer+1) keeps its own scores
        w, b = no_mlp.c_attn_w.clone(), no_mlp.c_attn_b.clone()
        w[:, :d] /= layer + 1
        b[:d] /= layer + 1
        no_mlp = dataclasses.replace(no_mlp, c_attn_w=w, c_attn_b=b)
    weights = GPT2Weights(
        wte=h.contiguous(),
        wpe=torch.zeros(n, d),
        layers=[no_mlp],
        ln_f_w=lens.weights.ln_f_w,
        ln_f_b=lens.weights.ln_f_b,
    )
    return GPT2Lens(one_cfg, weights, lens.name), torch.arange(n)


def _block_output(block: GPT2Lens, positions: torch.Tensor, identity: bool) -> torch.Tensor:
    out = block(positions, keep_attentions=False, keep_hidden=True, compute_logits=False, identity_c_proj=identity)
    return out.hidden_states[0, 1]  # [n, d]: h + attention block output


def head_reach(
    lens: GPT2Lens, ids: Sequence[int], layer: int, seed: int = 0, cancel: Callable[[], bool] | None = None
) -> list[HeadReach]:
    """Nudge each head's value slice in turn and count the output dimensions that move.

    The nudge is a fixed random vector added to the head's V bias (so every position's value
    of that head shifts); the rest of the block is untouched.  Through W^O (c_proj) a head
    reaches the whole width d; with c_proj replaced by the identity only its own d_k slice.
    """
    ids = [int(i) for i in ids]
    cfg = lens.config
    d, heads, dk = cfg.n_embd, cfg.n_head, cfg.head_dim
    if not 0 <= layer < cfg.n_layer:
        raise ValueError(f"layer {layer} is out of range: the model has {cfg.n_layer} layers")
    block, positions = _block_lens(lens, ids, layer)
    lw = block.weights.layers[0]
    base = {identity: _block_output(block, positions, identity) for identity in (False, True)}
    generator = torch.Generator().manual_seed(seed)
    v_scale = float(lens.weights.layers[layer].c_attn_w[:, 2 * d :].std()) or 1.0
    result = []
    for head in range(heads):
        if cancel is not None and cancel():
            raise FactCancelled(f"cancelled at head {head} of {heads}")
        lo, hi = 2 * d + head * dk, 2 * d + (head + 1) * dk
        nudged_bias = lw.c_attn_b.clone()
        nudged_bias[lo:hi] += torch.randn(dk, generator=generator) * v_scale * d**0.5
        nudged = GPT2Lens(block.config, dataclasses.replace(block.weights, layers=[dataclasses.replace(lw, c_attn_b=nudged_bias)]), block.name)
        own = torch.zeros(d, dtype=torch.bool)
        own[head * dk : (head + 1) * dk] = True
        counts, outside = {}, {}
        for identity in (False, True):
            diff = (_block_output(nudged, positions, identity) - base[identity]).double()  # [n, d]
            biggest = float(diff.abs().max())
            moved = diff.abs().amax(0) > biggest * 1e-6 if biggest > 0 else torch.zeros(d, dtype=torch.bool)
            counts[identity] = int(moved.sum())
            energy = float((diff**2).sum())
            outside[identity] = float((diff[:, ~own] ** 2).sum()) / energy if energy > 0 else 0.0
        result.append(
            HeadReach(head, counts[False], counts[True], head * dk, (head + 1) * dk - 1, outside[False], outside[True])
        )
    return result


def wo_mixes_fact(ctx: TourContext) -> Fact:
    """"W^O mixes the heads": how many output dimensions one head reaches with and without c_proj."""
    cfg = ctx.lens.config
    reach = head_reach(ctx.lens, ctx.ids, ctx.layer, cancel=ctx.cancel)
    with_wo = [r.dims_with_wo for r in reach]
    identity = [r.dims_identity for r in reach]
    values = {
        "layer": ctx.layer,
        "d": cfg.n_embd,
        "dk": cfg.head_dim,
        "heads": cfg.n_head,
        "with_min": min(with_wo),
        "with_max": max(with_wo),
        "without_min": min(identity),
        "without_max": max(identity),
        "outside_pct": sum(r.outside_with_wo for r in reach) / len(reach),
        "identity_outside_pct": max(r.outside_identity for r in reach),
        "example_head": reach[-1].head,
        "example_lo": reach[-1].slice_lo,
        "example_hi": reach[-1].slice_hi,
    }
    # "all": every head reaches every output dimension (what W^O is for); else the spread
    return Fact("wo_mixes" if min(with_wo) == cfg.n_embd else "wo_mixes.range", values)


def leakage_fact(ctx: TourContext) -> Fact:
    """Lab step 3: edit the last token; what moved before it, with and without the mask."""
    if ctx.n < 2:
        return Fact("too_short", {"n": ctx.n})
    replacement = ctx.replacement()
    leak = analysis.leakage(ctx.lens, ctx.ids, ctx.position, replacement)
    p = ctx.position
    values = {
        "pos": p,
        "old": ctx.tokens[p],
        "new": ctx.text_of(replacement),
        "n": ctx.n,
        "layers": ctx.lens.config.n_layer,
    }
    if p == 0:
        values["bidir_after"] = float(leak.bidirectional[1:].max())
        return Fact("leakage.first", values)
    values.update(
        before=_before(p),
        causal_max=leak.causal_max_before,
        causal_layers_max=float(leak.causal_layers[:, :p].max()),
        bidir_first=float(leak.bidirectional[0]),
        bidir_max=leak.bidirectional_max_before,
    )
    return Fact("leakage" if leak.causal_max_before == 0 else "leakage.leaks", values)


ATTENTION_BUDGET = 128 << 20  # bytes of attention maps one forward may keep for the portraits


def _all_portraits(ctx: TourContext) -> list[analysis.HeadStats]:
    """Every layer's head portraits: one forward keeping every map when they fit the budget
    (GPT-2 small: up to ~370 tokens), else one forward per layer (1024 tokens: 600 MB of maps)."""
    cfg, n = ctx.lens.config, ctx.n
    if cfg.n_layer * cfg.n_head * n * n * 4 <= ATTENTION_BUDGET:
        out = ctx.lens(ctx.ids, keep_attentions=True, keep_hidden=False, compute_logits=False)
        return [s for layer, a in enumerate(out.attentions) for s in analysis.head_portrait(a[0], layer_offset=layer)]
    stats = []
    for layer in range(cfg.n_layer):
        if ctx.cancel is not None and ctx.cancel():
            raise FactCancelled(f"cancelled at layer {layer} of the portraits")
        stats += analysis.head_portrait(_attention(ctx.lens, ctx.ids, layer, causal=True), layer_offset=layer)
    return stats


def portrait_fact(ctx: TourContext) -> Fact:
    """Lab step 4: the positional heads (:mod:`.roles`: most weight on one offset back), each with the
    offset it looks at and its share, and the sink heads; when this layer has no positional head the
    fact says so and names the nearest layer's ("portrait.nearest"), or that none exists ("portrait.nowhere")."""
    if ctx.n < 2:
        return Fact("too_short", {"n": ctx.n})
    all_stats = _all_portraits(ctx)
    if ctx.cancel is not None and ctx.cancel():
        raise FactCancelled("cancelled before the induction scores")
    # the model's one induction measurement, the portrait panel's: the same figure in both
    induction, repeat_ids = roles.model_induction(ctx.lens, ctx.tokenizer)
    table = roles.role_map(all_stats, ctx.n, induction, ctx.rules)
    stats = [s for s in all_stats if s.layer == ctx.layer]
    by_head = {r.head: r for r in table if r.layer == ctx.layer}
    found = roles.where_all(table, ctx.layer)
    here = found["positional"].here
    nearest = found["positional"].nearest()
    positional = here or nearest  # this layer's positional heads, else the nearest layer's
    sinks = [stats[h.head] for h in found["sink"].here]  # the chapter's sink rule (RoleRules.sink), strongest first
    focus = min(stats, key=lambda s: s.entropy)
    rules = ctx.rules or roles.RoleRules()
    key = "portrait" if here else "portrait.nearest" if nearest else "portrait.nowhere"
    return Fact(
        key,
        {
            "layer": ctx.layer,
            "heads": len(stats),
            "n": ctx.n,
            "n_positional": len(here),
            "n_previous_token": len(found["previous-token"].here),
            "n_sinks": len(sinks),
            "n_induction": len(found["induction"].here),
            "near_layer": found["positional"].nearest_layer if nearest else ctx.layer,
            "share_min_pct": rules.positional_share,
            "sink_min_pct": rules.sink,
            "focus_head": focus.head,
            "focus_sink_pct": focus.sink_mass,
        },
        lists={
            "positional": (
                "positional",
                [{"head": h.head, "offset": h.offset, "share_pct": h.score,
                  "variant": "previous" if h.offset == 1 else "back"} for h in positional],
            ),
            "sinks": ("sink", [{"head": s.head, "sink_pct": s.sink_mass} for s in sinks]),
        },
        data={"where": found, "roles": by_head, "induction_reference": roles.induction_reference(repeat_ids)},
    )


def induction_fact(ctx: TourContext) -> Fact:
    """The induction heads on the text shown (the step makes it a sequence said twice): each head's
    induction score (weight on the token after the earlier copy of the current one), the best head,
    and honestly "none" when no head reaches the role's threshold (:class:`roles.RoleRules`)."""
    pattern = analysis.induction_pattern(ctx.ids)
    if ctx.n < 4 or not bool(pattern.any()):
        return Fact("induction.no_repeat", {"n": ctx.n})
    rules = ctx.rules or roles.RoleRules()
    scores = analysis.head_detector(ctx.lens, ctx.ids, "induction")  # [L, H]
    reference = roles.induction_reference(ctx.ids)
    flat = int(scores.argmax())
    n_head = scores.shape[1]
    best_layer, best_head = divmod(flat, n_head)
    best = float(scores[best_layer, best_head])
    qualifying = [(int(layer), int(head)) for layer, head in (scores >= rules.induction).nonzero().tolist()]
    values = {
        "n": ctx.n,
        "best_layer": best_layer,
        "best_head": best_head,
        "best_score": best,
        "threshold": rules.induction,
        "maximum": reference["maximum"],
        "uniform": reference["uniform"],
        "n_induction": len(qualifying),
        "heads_total": int(scores.numel()),
    }
    items = sorted(qualifying, key=lambda lh: -float(scores[lh[0], lh[1]]))
    lists = {"heads": ("induction", [{"layer": layer, "head": head, "score": float(scores[layer, head])}
                                     for layer, head in items])}
    return Fact("induction" if qualifying else "induction.none", values, lists=lists)


def kvcache_fact(ctx: TourContext) -> Fact:
    """Lab step 5: why the cache is valid (K/V don't move), and its speedup once the learner ran it."""
    lens, cfg = ctx.lens, ctx.lens.config
    room = cfg.n_positions - ctx.n
    new_tokens = max(0, min(ctx.new_tokens, room))
    values: dict[str, Any] = {"n": ctx.n, "new_tokens": new_tokens, "layers": cfg.n_layer}
    if room < 1:
        return Fact("kvcache.no_room", values | {"ctx": cfg.n_positions})
    stability = analysis.kv_stability(lens, ctx.ids)
    bidir = stability.max_per_layer("bidirectional")
    values.update(
        # what is compared: ids + [appended] vs ids + [reference], equal lengths, one batch
        appended=ctx.text_of(stability.appended_id),
        reference=ctx.text_of(stability.reference_id),
        causal_kv_max=max(stability.max_per_layer("causal")),
        # ids alone vs ids + [appended]: floating-point rounding at most (≈1e-7), no information
        n_vs_n1_max=max(analysis.kv_append_drift(lens, ctx.ids, stability.appended_id)),
        bidir_layer0=bidir[0],
        bidir_max=max(bidir[1:]) if len(bidir) > 1 else bidir[0],
        cache_bytes=cache_size_bytes(lens, ctx.n + max(new_tokens - 1, 0)),
    )
    # ids alone vs ids + [appended]: said as "the same to the last bit" when the drift is exactly 0
    drift = {"appended": values["appended"], "n_vs_n1_max": values["n_vs_n1_max"],
             "variant": "exact" if values["n_vs_n1_max"] == 0 else None}
    result = ctx.kv_result
    if result is None or getattr(result, "prompt_length", None) != ctx.n:
        # one layer: its K and V see only the token and its position, so no later layer shows the leak
        return Fact("kvcache.pending.one_layer" if cfg.n_layer == 1 else "kvcache.pending", values,
                    lists={"n_vs_n1": ("kvcache_drift", [drift])})
    values.update(
        new_tokens=result.new_tokens,
        with_s=result.seconds_with_cache,
        without_s=result.seconds_without_cache,
        speedup=result.speedup,
        clear=bool(result.speedup >= CLEAR_SPEEDUP),
        slope_ms_with=float(getattr(result, "slope_ms_with", 0.0)),
        slope_ms_without=float(getattr(result, "slope_ms_without", 0.0)),
        identical=bool(result.identical),
        positions=result.cache_positions,
        cache_bytes=result.cache_bytes,
    )
    # below CLEAR_SPEEDUP the sentence says what the ratio means, never "× faster"
    return Fact("kvcache.done" if values["clear"] else "kvcache.done.unclear", values)


def mask_designer_fact(ctx: TourContext) -> Fact:
    """Beyond the chapter: a sliding window's reach over the layers and its bounded cache, measured."""
    from .masks import mask_report, parse_mask_spec

    spec = parse_mask_spec(f"window:{TOUR_WINDOW}")
    cfg = ctx.lens.config
    if ctx.n + 1 > cfg.n_positions:
        return Fact("kvcache.no_room", {"n": ctx.n, "ctx": cfg.n_positions})
    report = mask_report(ctx.lens, ctx.ids, spec, cancel=ctx.cancel)
    reached = report.reach.to(torch.int64)
    first_seen = reached.argmax(dim=1)  # the earliest position each one is reached from
    back = int((torch.arange(ctx.n) - first_seen).max())
    return Fact("mask_designer", {
        "w": TOUR_WINDOW,
        "layers": cfg.n_layer,
        "back": back,
        "n": ctx.n,
        "keep": report.cache_positions_per_layer,
        "kv_max": report.kv_max_change,
        "leaks": report.leaks_labels,
        "confirmed": report.reach_confirmed,
    })


def knockout_fact(ctx: TourContext) -> Fact:
    """Beyond the chapter: knock every head out alone; the one this text needs most."""
    from .ablation import run_rank_heads

    if ctx.n < 2:
        return Fact("knockout.short", {"n": ctx.n})
    ranking = run_rank_heads(ctx.lens, ctx.ids, ctx.knockout_mode, cancel=ctx.cancel, allowed=ctx.allowed)
    layer, head, delta = ranking.top[0]
    masked = ctx.allowed is not None  # the fact names the mask the ranking ran under
    return Fact("knockout.masked" if masked else "knockout", {
        "mask": ctx.mask_spec if masked else "causal",
        "heads": ctx.lens.config.n_layer * ctx.lens.config.n_head,
        "layer": layer,  # written "layer 0, head 1" by the text, never "0.1" (reads as a decimal)
        "head": head,
        "before": ranking.baseline,
        "after": ranking.baseline + delta,
        "delta": delta,
    })


FACTS: dict[str, Callable[[TourContext], Fact]] = {
    "budget": budget_fact,
    "mask": mask_fact,
    "why_inf": why_inf_fact,
    "maps": maps_fact,
    "multihead_cost": multihead_cost_fact,
    "wo_mixes": wo_mixes_fact,
    "leakage": leakage_fact,
    "portrait": portrait_fact,
    "induction": induction_fact,
    "kvcache": kvcache_fact,
    "mask_designer": mask_designer_fact,
    "knockout": knockout_fact,
}
assert set(FACTS) == set(STEP_KEYS)


def compute_fact(step: TourStep | str, ctx: TourContext) -> Fact:
    """The measured fact of ``step`` on ``ctx`` (a forward pass or a few; run it off the GUI thread).

    Raises :class:`FactCancelled` when ``ctx.cancel`` becomes true before or during it.
    """
    key = step.key if isinstance(step, TourStep) else step
    if key not in FACTS:
        raise ValueError(f"no tour step {key!r}; steps: {', '.join(STEP_KEYS)}")
    if ctx.cancel is not None and ctx.cancel():
        raise FactCancelled(f"cancelled before measuring {key!r}")
    return FACTS[key](ctx)
