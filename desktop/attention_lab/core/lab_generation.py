"""The headless lab's generation lesson: ``attention-lab lab --steps N [--layer L --head H]``.

:func:`check_steps` checks the flag (``ValueError`` with one line); :func:`generation_section`
returns the JSON-ready ``steps``, ``stale_cache`` and ``inside_head`` that
:func:`attention_lab.core.lab.run_lab` adds to its result, and :func:`render_generation` prints
them.  Everything is measured on the model by :mod:`attention_lab.core.generation`.
"""

from __future__ import annotations

from typing import Sequence

from .generation import Generation, GenerationSettings, stale_cache_run
from .lens import GPT2Lens


def check_steps(steps, n_ids: int, n_positions: int) -> int:
    """``--steps``: an integer ≥ 1 that, with the text, fits the model's context."""
    if isinstance(steps, bool) or not isinstance(steps, int):
        raise ValueError(f"--steps must be an integer, got {steps!r}")
    if steps < 1:
        raise ValueError(f"--steps must be at least 1, got {steps}")
    if n_ids + steps > n_positions:
        room = n_positions - n_ids
        raise ValueError(f"the text ({n_ids} tokens) plus {steps} steps exceed the model's context of "
                         f"{n_positions} positions; use --steps {room} or less" if room > 0 else
                         f"the text ({n_ids} tokens) fills the model's context of {n_positions} positions: "
                         "no step fits")
    return steps


def generation_section(lens: GPT2Lens, tokenizer, ids: Sequence[int], steps: int, layer: int, head: int) -> dict:
    """N greedy steps with the causal mask, the same N without it but with a cache, and the last
    step's arithmetic inside head ``head`` of layer ``layer``."""
    run = Generation(lens, ids, GenerationSettings(), tokenizer)
    run.advance_to(steps)
    stale = stale_cache_run(lens, ids, steps, tokenizer)
    cfg = lens.config
    return {
        "generation": {
            "layer": layer,
            "head": head,
            "choice": "greedy",
            "prompt_length": len(ids),
            "token_ids": [s.token_id for s in run.steps],
            "generated_text": tokenizer.decode([s.token_id for s in run.steps]),
            "totals": run.totals(),
            "cache_formula": {"kv": 2, "n_layer": cfg.n_layer, "n_head": cfg.n_head, "head_dim": cfg.head_dim,
                              "bytes_per_value": 4},
            "earlier_rows": "the previous step's rows and this step's, recomputed side by side at the same width "
                            "(the previous step with the new position hidden): largest absolute difference",
            "work": "multiply-adds of the matrix products: Q/K/V, q·k and the weighted sum of v, W^O, the MLP, "
                    "one position's logits; with the cache one query row, without it every row again",
        },
        "steps": [r.as_json(layer) for r in run.steps],
        "stale_cache": stale.as_json(),
        "inside_head": run.inside_head(steps - 1, layer, head).as_json(),
    }


# ---------------------------------------------------------------------------- text
def _num(x: float) -> str:
    if x == 0:
        return "0"
    return f"{x:.4f}" if abs(x) >= 1e-3 else f"{x:.1e}"


def _count(n: int) -> str:
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= scale:
            return f"{n / scale:.2f} {unit}"
    return str(n)


def _vector(values: Sequence[float], shown: int = 8) -> str:
    cut = " …" if len(values) > shown else ""
    return "[" + ", ".join(f"{v:.3f}" for v in values[:shown]) + cut + f"]  ({len(values)} numbers)"


def render_generation(result: dict, table) -> list[str]:
    """The generation lesson's lines for ``render_text`` (``table``: the lab's plain table maker)."""
    gen, steps, stale, inside = result["generation"], result["steps"], result["stale_cache"], result["inside_head"]
    layer, head = gen["layer"], gen["head"]
    f = gen["cache_formula"]
    out = [f"\nGeneration, one token at a time ({len(steps)} greedy steps, causal mask, KV cache); "
           f"attention rows of layer {layer}"]
    rows = []
    for s in steps:
        w = s["work"]
        row = s["attention_row"][head]
        rows.append([str(s["position"]), repr(s["token"]), f"{s['top'][0]['p']:.3f}" if s["top"] else "",
                     str(s["cache_positions"]), str(s["cache_bytes"]), _num(s["earlier_rows_max_change"]),
                     _num(s["logits_max_diff_cache_vs_recompute"]),
                     f"{_count(w['attention_cached'])} / {_count(w['attention_recompute'])}",
                     f"{_count(w['total_cached'])} / {_count(w['total_recompute'])}",
                     f"{1e3 * s['seconds_cached']:.2f} / {1e3 * s['seconds_recompute']:.2f}",
                     f"{max(row):.2f}@{row.index(max(row))}"])
    out.append(table(["pos", "token", "p(top)", "cache pos", "bytes", "earlier rows Δ", "logits Δ",
                      "attention MACs cache/full", "all MACs cache/full", "ms cache/full", f"H{head} max@key"],
                     rows, "rlrrrrrrrrr"))
    last = steps[-1]
    out.append(f"Cache after the last step: 2 × {f['n_layer']} layers × {f['n_head']} heads × {f['head_dim']} (d_k) "
               f"× {last['cache_positions']} positions × 4 bytes = {last['cache_bytes']} bytes.")
    change = max(s["earlier_rows_max_change"] for s in steps)
    out.append("Earlier rows under the mask, each step against the previous one: "
               + ("changed by exactly 0: their keys and values can stay in the cache." if change == 0
                  else f"changed by up to {_num(change)}."))
    t = gen["totals"]
    out.append(f"Totals since the start: {_count(t['total_cached'])} multiply-adds with the cache, "
               f"{_count(t['total_recompute'])} without; {1e3 * t['seconds_cached']:.1f} ms vs "
               f"{1e3 * t['seconds_recompute']:.1f} ms.")
    out.append("Top 5 at the last step: " + ", ".join(f"{x['token']!r} {x['p']:.3f}" for x in last["top"]))
    out.append(f"Generated: {gen['generated_text']!r}")

    drift = stale["kv_drift_per_step"]
    out.append(f"\nWithout the mask, with a cache anyway ({stale['steps']} steps): the cached K/V against a full "
               "recompute (largest relative change per layer)")
    out.append(table(["step", "token", *[f"L{i}" for i in range(len(drift[0]))], "prob Δ"],
                     [[str(i), repr(tok), *[_num(x) for x in d], _num(p)] for i, (tok, d, p) in
                      enumerate(zip(stale["tokens"], drift, stale["prob_diff_per_step"]))],
                     "rl" + "r" * (len(drift[0]) + 1)))
    out.append(f"Top token still agrees with the recompute in {stale['top1_agreement']:.0%} of the steps; "
               f"largest probability difference {_num(stale['max_prob_diff'])}.")

    out.append(f"\nInside head {inside['head']} of layer {inside['layer']}, the last step's query (position "
               f"{inside['position']}), d_k = {inside['d_k']}")
    out.append(f"q            {_vector(inside['q'])}")
    out.append(f"q·k          {_vector(inside['scores'])}")
    out.append(f"÷ √d_k       {_vector(inside['scaled'])}")
    out.append("mask         nothing to hide: no key lies in the newest query's future")
    out.append(f"softmax      {_vector(inside['weights'])}  sum {sum(inside['weights']):.6f}")
    out.append(f"Σ weight·v   {_vector(inside['head_output'])}")
    out.append(f"concat       {_vector(inside['concat'])}")
    out.append(f"× W^O + b    {_vector(inside['projected'])}")
    out.append(f"Recomposed against the layer's own output: largest difference {_num(inside['max_error_vs_layer'])}.")
    return out
