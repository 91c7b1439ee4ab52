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
from .numbers import number


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
#: the lesson's words in the terminal, English and Brazilian Portuguese (the course's: consulta, chave,
#: cabeça, camada, o cache KV)
GEN_TEXTS: dict[str, dict[str, str]] = {
    "title": {"en": "Generation, one token at a time ({steps} greedy steps, causal mask, KV cache); attention rows "
                    "of layer {layer}",
              "pt_BR": "Geração, um token por vez ({steps} passos gulosos, máscara causal, cache KV); linhas de "
                       "atenção da camada {layer}"},
    "col.pos": {"en": "pos", "pt_BR": "pos"},
    "col.token": {"en": "token", "pt_BR": "token"},
    "col.p": {"en": "p(top)", "pt_BR": "p(1º)"},
    "col.cache": {"en": "cache pos", "pt_BR": "pos no cache"},
    "col.bytes": {"en": "bytes", "pt_BR": "bytes"},
    "col.earlier": {"en": "earlier rows Δ", "pt_BR": "Δ linhas de cima"},
    "col.logits": {"en": "logits Δ", "pt_BR": "Δ logits"},
    "col.attention": {"en": "attention MACs cache/full", "pt_BR": "MACs atenção cache/tudo"},
    "col.all": {"en": "all MACs cache/full", "pt_BR": "MACs total cache/tudo"},
    "col.ms": {"en": "ms cache/full", "pt_BR": "ms cache/tudo"},
    "col.peak": {"en": "H{head} max@key", "pt_BR": "H{head} máx@chave"},
    "cache": {"en": "Cache after the last step: 2 × {layers} layers × {heads} heads × {dk} (d_k) × {positions} "
                    "positions × 4 bytes = {bytes} bytes.",
              "pt_BR": "Cache depois do último passo: 2 × {layers} camadas × {heads} cabeças × {dk} (d_k) × "
                       "{positions} posições × 4 bytes = {bytes} bytes."},
    "earlier.zero": {"en": "Earlier rows under the mask, each step against the previous one: changed by exactly 0: "
                           "their keys and values can stay in the cache.",
                     "pt_BR": "Linhas de cima com a máscara, cada passo contra o anterior: mudaram exatamente 0: "
                              "suas chaves e valores podem ficar no cache."},
    "earlier.changed": {"en": "Earlier rows under the mask, each step against the previous one: changed by up to "
                              "{change}.",
                        "pt_BR": "Linhas de cima com a máscara, cada passo contra o anterior: mudaram até {change}."},
    "totals": {"en": "Totals since the start: {cached} multiply-adds with the cache, {full} without; {ms_cached} ms "
                     "vs {ms_full} ms.",
               "pt_BR": "Totais desde o início: {cached} multiplicações-somas com o cache, {full} sem; {ms_cached} ms "
                        "vs {ms_full} ms."},
    "top": {"en": "Top 5 at the last step: {top}", "pt_BR": "Os 5 mais prováveis no último passo: {top}"},
    "generated": {"en": "Generated: {text}", "pt_BR": "Gerado: {text}"},
    "stale": {"en": "Without the mask, with a cache anyway ({steps} steps): the cached K/V against a full recompute "
                    "(largest relative change per layer)",
              "pt_BR": "Sem a máscara, com cache mesmo assim ({steps} passos): o K/V em cache contra um recálculo "
                       "completo (maior mudança relativa por camada)"},
    "col.step": {"en": "step", "pt_BR": "passo"},
    "col.prob": {"en": "prob Δ", "pt_BR": "Δ prob"},
    "stale.agree": {"en": "Top token still agrees with the recompute in {agree} of the steps; largest probability "
                          "difference {probs}.",
                    "pt_BR": "O token mais provável ainda concorda com o recálculo em {agree} dos passos; maior "
                             "diferença de probabilidade {probs}."},
    "inside": {"en": "Inside head {head} of layer {layer}, the last step's query (position {position}), d_k = {dk}",
               "pt_BR": "Dentro da cabeça {head} da camada {layer}, a consulta do último passo (posição {position}), "
                        "d_k = {dk}"},
    "inside.mask": {"en": "nothing to hide: no key lies in the newest query's future",
                    "pt_BR": "nada a esconder: nenhuma chave está no futuro da consulta mais nova"},
    "inside.sum": {"en": "sum", "pt_BR": "soma"},
    "inside.numbers": {"en": "numbers", "pt_BR": "números"},
    "inside.check": {"en": "Recomposed against the layer's own output: largest difference {error}.",
                     "pt_BR": "Recomposta contra a saída da própria camada: maior diferença {error}."},
}


def gen_text(key: str, lang: str = "en", **values: object) -> str:
    table = GEN_TEXTS[key]
    return table.get(lang, table["en"]).format(**values)


def _num(x: float, lang: str) -> str:
    if x == 0:
        return "0"
    return number(x, ".4f" if abs(x) >= 1e-3 else ".1e", lang)


def _count(n: int, lang: str) -> str:
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= scale:
            return number(n / scale, ".2f", lang) + f" {unit}"
    return str(n)


def _vector(values: Sequence[float], lang: str, shown: int = 8) -> str:
    cut = " …" if len(values) > shown else ""
    return ("[" + "; ".join(number(v, ".3f", lang) for v in values[:shown]) + cut
            + f"]  ({len(values)} {gen_text('inside.numbers', lang)})")


def render_generation(result: dict, table, lang: str = "en") -> list[str]:
    """The generation lesson's lines for ``render_text`` in ``lang`` (``table``: the lab's plain table maker)."""
    gen, steps, stale, inside = result["generation"], result["steps"], result["stale_cache"], result["inside_head"]
    layer, head = gen["layer"], gen["head"]
    f = gen["cache_formula"]

    def t(key: str, **values: object) -> str:
        return gen_text(key, lang, **values)

    def ms(seconds: float, spec: str = ".2f") -> str:
        return number(1e3 * seconds, spec, lang)

    out = ["\n" + t("title", steps=len(steps), layer=layer)]
    rows = []
    for s in steps:
        w = s["work"]
        row = s["attention_row"][head]
        rows.append([str(s["position"]), repr(s["token"]), number(s["top"][0]["p"], ".3f", lang) if s["top"] else "",
                     str(s["cache_positions"]), str(s["cache_bytes"]), _num(s["earlier_rows_max_change"], lang),
                     _num(s["logits_max_diff_cache_vs_recompute"], lang),
                     f"{_count(w['attention_cached'], lang)} / {_count(w['attention_recompute'], lang)}",
                     f"{_count(w['total_cached'], lang)} / {_count(w['total_recompute'], lang)}",
                     f"{ms(s['seconds_cached'])} / {ms(s['seconds_recompute'])}",
                     f"{number(max(row), '.2f', lang)}@{row.index(max(row))}"])
    out.append(table([t("col.pos"), t("col.token"), t("col.p"), t("col.cache"), t("col.bytes"), t("col.earlier"),
                      t("col.logits"), t("col.attention"), t("col.all"), t("col.ms"), t("col.peak", head=head)],
                     rows, "rlrrrrrrrrr"))
    last = steps[-1]
    out.append(t("cache", layers=f["n_layer"], heads=f["n_head"], dk=f["head_dim"], positions=last["cache_positions"],
                 bytes=last["cache_bytes"]))
    change = max(s["earlier_rows_max_change"] for s in steps)
    out.append(t("earlier.zero") if change == 0 else t("earlier.changed", change=_num(change, lang)))
    totals = gen["totals"]
    out.append(t("totals", cached=_count(totals["total_cached"], lang), full=_count(totals["total_recompute"], lang),
                 ms_cached=ms(totals["seconds_cached"], ".1f"), ms_full=ms(totals["seconds_recompute"], ".1f")))
    out.append(t("top", top=", ".join(f"{x['token']!r} {number(x['p'], '.3f', lang)}" for x in last["top"])))
    out.append(t("generated", text=repr(gen["generated_text"])))

    drift = stale["kv_drift_per_step"]
    out.append("\n" + t("stale", steps=stale["steps"]))
    out.append(table([t("col.step"), t("col.token"), *[f"L{i}" for i in range(len(drift[0]))], t("col.prob")],
                     [[str(i), repr(tok), *[_num(x, lang) for x in d], _num(p, lang)] for i, (tok, d, p) in
                      enumerate(zip(stale["tokens"], drift, stale["prob_diff_per_step"]))],
                     "rl" + "r" * (len(drift[0]) + 1)))
    agree = number(100 * stale["top1_agreement"], ".0f", lang) + " %"
    out.append(t("stale.agree", agree=agree, probs=_num(stale["max_prob_diff"], lang)))

    out.append("\n" + t("inside", head=inside["head"], layer=inside["layer"], position=inside["position"],
                        dk=inside["d_k"]))
    out.append(f"q            {_vector(inside['q'], lang)}")
    out.append(f"q·k          {_vector(inside['scores'], lang)}")
    out.append(f"÷ √d_k       {_vector(inside['scaled'], lang)}")
    out.append(f"mask         {t('inside.mask')}")
    out.append(f"softmax      {_vector(inside['weights'], lang)}  {t('inside.sum')} "
               f"{number(sum(inside['weights']), '.6f', lang)}")
    out.append(f"Σ weight·v   {_vector(inside['head_output'], lang)}")
    out.append(f"concat       {_vector(inside['concat'], lang)}")
    out.append(f"× W^O + b    {_vector(inside['projected'], lang)}")
    out.append(t("inside.check", error=_num(inside["max_error_vs_layer"], lang)))
    return out
