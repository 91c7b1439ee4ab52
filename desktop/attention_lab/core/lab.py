"""The chapter's five lab steps, headless: ``attention-lab lab`` (text or ``--json``).

1. the triangular mask in ASCII;  2. one head's map, causal | bidirectional;
3. the leakage diff;  4. the portrait of a layer's heads;  5. what the KV cache buys
(and why it is valid: K/V of earlier positions don't move when a token is appended).

:func:`run_lab` returns plain data (the JSON object); :func:`render_text` prints it.
Bad input raises :class:`LabInputError` with a one-line message.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import torch

from . import analysis, kvbench, roles
from .kvbench import run_kv_benchmark
from .lens import GPT2Config
from .lab_generation import check_steps, generation_section, render_generation
from .lab_masks_knockout import ablation_section, mask_section, parse_lab_options, render_sections
from .lab_texts import LANGUAGES, lab_text
from .numbers import number
from .pipeline import AnalysisRequest, compute_analysis

SEED_TEXT = "The big dog bit the mailman yesterday"
# The chapter's sentence in each edition's language: the text a learner starts from.
SEED_TEXTS = {"en": SEED_TEXT, "pt_BR": "O cachorro grande mordeu o carteiro ontem"}


def seed_text_for(language: str, text: str = "") -> str:
    """``text`` if it is the learner's own; the chapter's sentence in ``language`` if ``text`` is empty or
    still the sentence of another language (so switching the language swaps only an untouched default)."""
    if text and text not in SEED_TEXTS.values():
        return text
    return SEED_TEXTS.get(language, SEED_TEXT)


MAX_SHOWN_TOKENS = 16  # the text rendering prints at most this many rows/columns of a map
MAP_DECIMALS = 6  # attention maps in the JSON are rounded (they can be H×n×n big)
CHAPTER = GPT2Config()  # the chapter's numbers are GPT-2 small's: 768 = 12 × 64


class LabInputError(ValueError):
    """The lab's input is unusable; ``str(err)`` is one line for the user."""


# ---------------------------------------------------------------------------- input
def lab_ids(model, text: str, bos: bool = False) -> list[int]:
    """Token ids of ``text`` (after ``<|endoftext|>`` with ``bos``), checked against the context."""
    if not isinstance(text, str) or not text.strip():
        raise LabInputError("the text is empty: give a sentence with --text")
    ids = model.tokenizer.encode(text)
    if not ids:
        raise LabInputError("the text has no tokens: give a sentence with --text")
    if bos:
        ids = [model.tokenizer.eos_id] + ids
    ctx = model.lens.config.n_positions
    if len(ids) > ctx:
        raise LabInputError(f"the text is {len(ids)} tokens long; this model's context holds {ctx}")
    return ids


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LabInputError(f"{what} must be an integer, got {value!r}")
    return value


def resolve_replacement(model, replacement: str | int, original_id: int) -> int:
    """A token text that must be exactly one token (or a token id) -> its id."""
    tok = model.tokenizer
    if isinstance(replacement, int) and not isinstance(replacement, bool):
        if not 0 <= replacement < model.lens.config.vocab_size:
            raise LabInputError(f"replacement id {replacement} is not in the vocabulary (0..{model.lens.config.vocab_size - 1})")
        token = replacement
    elif isinstance(replacement, str):
        if replacement == "":
            raise LabInputError("the replacement is empty: give one token, e.g. --replacement ' today'")
        ids = tok.encode(replacement)
        if len(ids) != 1:
            pieces = "|".join(tok.token_texts(ids)) if ids else ""
            hint = ""
            if not replacement[:1].isspace() and len(tok.encode(" " + replacement)) == 1:
                hint = f"; ' {replacement}' (with a leading space) is one token"
            raise LabInputError(f"the replacement {replacement!r} is {len(ids)} tokens ({pieces}), not one{hint}")
        token = ids[0]
    else:
        raise LabInputError(f"the replacement must be a token text, got {replacement!r}")
    if token == original_id:
        shown = tok.token_texts([token])[0]
        raise LabInputError(f"the replacement {shown!r} is the token already at that position: choose another one")
    return token


# ---------------------------------------------------------------------------- the run
def _rounded(t: torch.Tensor) -> list:
    return torch.round(t.to(torch.float64), decimals=MAP_DECIMALS).tolist()


def run_lab(
    model,
    text: str = SEED_TEXT,
    layer: int = 0,
    position: int | None = None,
    replacement: str | int | None = None,
    new_tokens: int = 50,
    bos: bool = False,
    *,
    head: int = 0,
    repetitions: int = kvbench.DEFAULT_REPETITIONS,
    progress: Callable[[str], None] | None = None,
    kv_model: str = "loaded",
    rules: roles.RoleRules | None = None,
    mask: str = "causal",
    ablate: str | None = None,
    ablation_mode: str = "zero",
    steps: int | None = None,
    lang: str = "en",
) -> dict:
    """Run the five steps on ``model`` (a ``LoadedModel``) and return the JSON-ready dict.

    ``position`` defaults to the last token (negative values count from the end);
    ``replacement`` (one token's text) defaults to the model's likeliest other token there.
    ``kv_model``: the model step 5 times (:data:`kvbench.KV_MODELS`: the loaded one, or GPT-2
    small's shapes with random weights); ``rules``: the head roles' thresholds.
    ``mask`` / ``ablate`` / ``ablation_mode``: see :mod:`attention_lab.core.lab_masks_knockout`.
    ``steps``: generate that many tokens one at a time (:mod:`attention_lab.core.lab_generation`).
    ``lang``: the language of the result's sentences (``en`` or ``pt_BR``).
    """
    if lang not in LANGUAGES:
        raise LabInputError(f"language {lang!r} is not one of: {', '.join(LANGUAGES)}")
    lens, tok = model.lens, model.tokenizer
    cfg = lens.config
    say = progress or (lambda _msg: None)

    ids = lab_ids(model, text, bos)
    n = len(ids)
    layer = _int(layer, "--layer")
    if not 0 <= layer < cfg.n_layer:
        raise LabInputError(f"layer {layer} is out of range: the model has {cfg.n_layer} layers (0..{cfg.n_layer - 1})")
    head = _int(head, "--head")
    if not 0 <= head < cfg.n_head:
        raise LabInputError(f"head {head} is out of range: the model has {cfg.n_head} heads (0..{cfg.n_head - 1})")
    given = n - 1 if position is None else _int(position, "--position")
    position = given + n if given < 0 else given
    if not 0 <= position < n:
        raise LabInputError(f"position {given} is out of range: the text has {n} tokens (positions 0..{n - 1})")
    new_tokens = _int(new_tokens, "--new-tokens")
    if new_tokens < 1:
        raise LabInputError(f"--new-tokens must be at least 1, got {new_tokens}")
    if kv_model not in kvbench.KV_MODELS:
        raise LabInputError(f"unknown --kv-model {kv_model!r}; choose one of: {', '.join(kvbench.KV_MODELS)}")
    target = kvbench.benchmark_model(kv_model, model)
    kv_ids = ids if target.lens is lens else lab_ids(target, text, bos)
    kv_ctx = target.lens.config.n_positions
    if len(kv_ids) + new_tokens > kv_ctx:
        raise LabInputError(
            f"{len(kv_ids)} tokens + {new_tokens} new tokens exceed the context of {kv_ctx} of the model step 5 "
            f"times; use --new-tokens {kv_ctx - len(kv_ids)} or less, or a shorter text"
        )
    try:
        options = parse_lab_options(model, mask, ablate, ablation_mode)
    except ValueError as exc:
        raise LabInputError(str(exc)) from None
    if steps is not None:
        try:
            steps = check_steps(steps, n, cfg.n_positions)
        except ValueError as exc:
            raise LabInputError(str(exc)) from None
    replacement_id = None if replacement is None else resolve_replacement(model, replacement, ids[position])

    say("steps 1-4: the app's analysis (attention maps with and without the mask, leakage, head portraits)")
    detectors: dict[str, Any] = {"previous_token": [], "duplicate_token": []}

    def detect(_index: int, attn: torch.Tensor) -> None:  # every layer, from the analysis' own causal pass
        detectors["previous_token"].append(analysis.previous_token_scores(attn[0]).tolist())
        detectors["duplicate_token"].append(analysis.duplicate_token_scores(attn[0], ids).tolist())

    # the very function the app runs on its worker (core.pipeline): the lab's maps, leakage and
    # portraits are the numbers the panels show for the same text, position and replacement
    request = AnalysisRequest(request_id=0, text=text, layer=layer, causal=True, position=position,
                              replacement_id=replacement_id, bos=bos)
    state = compute_analysis(model, request, layer_hook=detect)
    assert state.ids == ids and state.position == position, "the lab and the pipeline tokenised differently"
    replacement_id = state.replacement_id  # given, or the model's likeliest other token there
    tokens = tok.token_texts(ids)
    attn_causal, attn_bidir, leak = state.attention_causal, state.attention_bidirectional, state.leakage
    heads = list(state.overview)  # every layer's heads (none under 2 tokens: a portrait needs a query row)

    say("step 3: the mask modes")
    mask_rows = analysis.mask_mode_report(lens, ids, layer, position, replacement_id)

    say(f"mask designer ({options.mask}): reach and verdicts, measured; head knockout")
    designer, allowed = mask_section(lens, ids, options.mask, layer, position, replacement_id)
    if options.heads is not None:
        designer["ablation"] = ablation_section(lens, tok, ids, options.heads, options.mode, position, allowed)

    say("step 4: induction scores and head roles")
    induction, repeat_ids = roles.model_induction(lens, tok)  # the app's one measurement (portrait and tour)
    detectors["induction"] = induction.tolist()
    detectors["induction_sequence_length"] = len(repeat_ids)
    role_table = roles.role_map(heads, n, induction, rules) if n >= 2 else []
    head_entries = [
        vars(h) | {"roles": list(r.roles), "entropy_ratio": r.entropy_ratio, "induction": r.scores["induction"]}
        for h, r in zip(heads, role_table)
    ]

    say(f"step 5: generating {new_tokens} tokens with and without the KV cache ({target.name})")
    bench = run_kv_benchmark(target.lens, kv_ids, new_tokens, repetitions=repetitions)
    stability = analysis.kv_stability(lens, ids, appended_id=bench.generated_ids[0] if target.lens is lens else None)
    drift = analysis.kv_append_drift(lens, ids, stability.appended_id)

    shapes = [{"name": r.name, "shape": list(r.shape), "note": r.note} for r in state.shapes]  # logits row included
    result = {
        "lang": lang,
        "model": {
            "name": model.name,
            "spec": str(model.spec),
            "source": model.source,
            "n_layer": cfg.n_layer,
            "n_head": cfg.n_head,
            "n_embd": cfg.n_embd,
            "head_dim": cfg.head_dim,
            "n_ctx": cfg.n_positions,
            "vocab_size": cfg.vocab_size,
            "n_params": model.n_params,
            "is_demo": model.is_demo,
            "chapter": {"n_embd": CHAPTER.n_embd, "n_head": CHAPTER.n_head, "head_dim": CHAPTER.head_dim},
        },
        "text": text,
        "bos": bos,
        "tokens": tokens,
        "token_ids": ids,
        "attention": {
            "layer": layer,
            "head": head,
            "causal": _rounded(attn_causal),
            "bidirectional": _rounded(attn_bidir),
        },
        "leakage": {
            "position": position,
            "original_id": leak.original_id,
            "original": tokens[position],
            "replacement_id": replacement_id,
            "replacement": tok.token_texts([replacement_id])[0],
            "causal": leak.causal.tolist(),
            "bidirectional": leak.bidirectional.tolist(),
            "causal_max_before": leak.causal_max_before,
            "bidirectional_max_before": leak.bidirectional_max_before,
            "causal_layers": leak.causal_layers.tolist(),
            "bidirectional_layers": leak.bidirectional_layers.tolist(),
        },
        "mask_modes": [vars(r) for r in mask_rows],
        "heads": head_entries,
        "roles": _roles_summary(role_table, layer, rules, repeat_ids, lang),
        "detectors": detectors,
        "kv_cache": {
            "model": {"name": target.name, "choice": kv_model, "random_weights": target.random_weights,
                      "note": kvbench.kv_text("kv.random_weights", lang) if target.random_weights else ""},
            "repetitions": bench.repetitions,
            "threads": bench.threads,
            "timing": lab_text("json.timing", lang),
            "new_tokens": bench.new_tokens,
            "prompt_length": bench.prompt_length,
            "seconds_with_cache": bench.seconds_with_cache,
            "seconds_without_cache": bench.seconds_without_cache,
            "tokens_per_second_with_cache": bench.tokens_per_second_with,
            "tokens_per_second_without_cache": bench.tokens_per_second_without,
            "speedup": bench.speedup,
            "clear": bench.clear,
            "speedup_text": kvbench.speedup_sentence(bench, lang),
            "slope_ms_with_cache": bench.slope_ms_with,
            "slope_ms_without_cache": bench.slope_ms_without,
            "growth_text": kvbench.growth_sentence(bench, lang),
            "per_token_ms_with_cache": [1e3 * t for t in bench.per_token_with],
            "per_token_ms_without_cache": [1e3 * t for t in bench.per_token_without],
            "totals_with_cache": bench.totals_with,
            "totals_without_cache": bench.totals_without,
            "identical": bench.identical,
            "generated_ids": bench.generated_ids,
            "generated_text": target.tokenizer.decode(bench.generated_ids),
            "cache_positions": bench.cache_positions,
            "cache_bytes": bench.cache_bytes,
            "n_layer": target.lens.config.n_layer,
            "n_head": target.lens.config.n_head,
            "head_dim": target.lens.config.head_dim,
        },
        "kv_stability": {
            "appended_id": stability.appended_id,
            "appended": tok.token_texts([stability.appended_id])[0],
            "reference_id": stability.reference_id,
            "reference": tok.token_texts([stability.reference_id])[0],
            "causal": {"keys": stability.causal_keys.tolist(), "values": stability.causal_values.tolist()},
            "bidirectional": {
                "keys": stability.bidirectional_keys.tolist(),
                "values": stability.bidirectional_values.tolist(),
            },
            "causal_max_per_layer": stability.max_per_layer("causal"),
            "bidirectional_max_per_layer": stability.max_per_layer("bidirectional"),
            "compared": lab_text("json.compared", lang),
            "n_vs_n_plus_1_max_per_layer": drift,
            "n_vs_n_plus_1": lab_text("json.n_vs_n_plus_1", lang),
        },
        "shapes": shapes,
    }
    result.update(designer)  # mask_spec, mask, reach, verdicts, …, ablation
    if steps is not None:
        say(f"generation: {steps} tokens one at a time, with the mask and without it")
        result.update(generation_section(lens, tok, ids, steps, layer, head))  # generation, steps, stale_cache, inside_head
    return result


def _roles_summary(table: list[roles.HeadRoles], layer: int, rules: roles.RoleRules | None,
                   repeat_ids: list[int], lang: str = "en") -> dict:
    """Step 4's roles: the rules in force, each role's heads in ``layer`` and where the others are."""
    reference = roles.induction_reference(repeat_ids)
    found = roles.where_all(table, layer) if table else {}
    return {
        "rules": (rules or roles.RoleRules()).as_dict(),
        "layer": layer,
        "induction_reference": reference,
        "where": {role: w.as_dict() for role, w in found.items()},
        "sentences": {role: roles.where_sentence(w, lang) for role, w in found.items()},
        "descriptions": {role: roles.describe(role, rules, lang, reference) for role in roles.ROLES},
    }


# ---------------------------------------------------------------------------- text rendering
def _num(x: float, lang: str = "en") -> str:
    """Exact zeros print as 0 (the point of the lab); anything else shows its size."""
    if x == 0:
        return "0"
    return number(x, ".4f" if abs(x) >= 1e-3 else ".1e", lang)


def _size(n_bytes: int, lang: str = "en") -> str:
    """Bytes in binary units, named as such (KiB, MiB, GiB: the formula counts powers of two)."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n_bytes >= scale:
            return f"{number(n_bytes / scale, '.1f', lang)} {unit}"
    return f"{n_bytes} B"


def _fixed(x: float, lang: str, places: int = 2) -> str:
    return number(x, f".{places}f", lang)


def _side_by_side(left: str, right: str, gap: str = "   |   ") -> str:
    a, b = left.splitlines(), right.splitlines()
    width = max(len(line) for line in a)
    return "\n".join(f"{x:<{width}}{gap}{y}" for x, y in zip(a, b))


def _table(header: Sequence[str], rows: Sequence[Sequence[str]], align: str) -> str:
    """A plain text table; ``align`` has one letter per column: ``l`` (text) or ``r`` (numbers)."""
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def fmt(row: Sequence[str]) -> str:
        cells = (str(c).ljust(w) if a == "l" else str(c).rjust(w) for c, w, a in zip(row, widths, align))
        return "  ".join(cells).rstrip()

    return "\n".join([fmt(header), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows])


def render_text(result: dict, lang: str | None = None) -> str:
    """The five steps of :func:`run_lab`'s result, readable in a terminal, in ``lang`` (default:
    the language the result was made in)."""
    lang = lang or result.get("lang", "en")

    def t(key: str, **values: object) -> str:
        return lab_text(key, lang, **values)

    m, tokens = result["model"], result["tokens"]
    n = len(tokens)
    shown = min(n, MAX_SHOWN_TOKENS)
    cut = t("cut", shown=shown, n=n) if shown < n else ""
    att, leak, kv, st = result["attention"], result["leakage"], result["kv_cache"], result["kv_stability"]
    layer, head = att["layer"], att["head"]
    out: list[str] = []

    out.append(t("title", name=m["name"], layers=m["n_layer"], heads=m["n_head"], d=m["n_embd"], d_k=m["head_dim"],
                 ctx=m["n_ctx"]))
    ch = m["chapter"]
    if (m["n_embd"], m["n_head"]) == (ch["n_embd"], ch["n_head"]):
        out.append(t("chapter.same", d=ch["n_embd"], heads=ch["n_head"], d_k=ch["head_dim"]))
    else:
        out.append(t("chapter.other", d=ch["n_embd"], heads=ch["n_head"], d_k=ch["head_dim"], m_d=m["n_embd"],
                     m_heads=m["n_head"], m_d_k=m["head_dim"]))
    out.append(t("text", text=repr(result["text"]), n=n, bos=t("bos.yes" if result["bos"] else "bos.no"),
                 tokens=" | ".join(tokens)))

    out.append("\n" + t("step1") + cut)
    out.append(analysis.ascii_mask(shown, tokens[:shown]))

    out.append("\n" + t("step2", layer=layer, head=head, model=m["name"]) + cut)
    causal_map = [r[:shown] for r in att["causal"][head][:shown]]
    bidir_map = [r[:shown] for r in att["bidirectional"][head][:shown]]
    out.append(_side_by_side(
        analysis.ascii_mask(shown, tokens[:shown], causal_map),
        analysis.ascii_mask(shown, tokens[:shown], bidir_map, causal=False),
    ))
    out.append(t("step2.rows"))
    out.append(t("step2.bidirectional"))
    out.extend(_mask_modes_table(result, t, lang))

    p = leak["position"]
    out.append("\n" + t("step3", p=p, original=repr(leak["original"]), replacement=repr(leak["replacement"])))
    rows = []
    for i in range(n):
        mark = t("step3.edited") if i == p else ""
        rows.append([str(i), tokens[i], _num(leak["causal"][i], lang), _num(leak["bidirectional"][i], lang), mark])
    out.append(_table([t("col.pos"), t("col.token"), t("col.causal"), t("col.bidirectional"), ""], rows, "rlrrl"))
    if p > 0:
        before = leak["causal_max_before"]
        verdict = t("step3.exactly_zero") if before == 0 else t("step3.up_to", x=_num(before, lang))
        out.append(t("step3.before", p=p, causal=verdict, bidirectional=_num(leak["bidirectional_max_before"], lang)))
    else:
        out.append(t("step3.first"))

    out.append("\n" + t("step4", layer=layer, rows=t("step4.rows", last=n - 1) if n >= 2 else ""))
    heads = [h for h in result["heads"] if h["layer"] == layer]
    if heads:
        summary = result["roles"]
        names = {role: d["name"] for role, d in summary["descriptions"].items()}
        out.append(_table(
            [t("col.head"), t("col.roles"), t("col.mean_distance"), t("col.entropy"), t("col.uniform"), t("col.sink"),
             t("col.previous"), t("col.induction")],
            [[str(h["head"]), ", ".join(names.get(r, r) for r in h["roles"]) or "-", _fixed(h["mean_distance"], lang),
              _fixed(h["entropy"], lang), _fixed(h["entropy_ratio"], lang), _fixed(h["sink_mass"], lang),
              _fixed(h["previous_token"], lang), _fixed(h["induction"], lang)] for h in heads],
            "rlrrrrrr",
        ))
        for role in roles.ROLES:
            out.append(f"- {summary['sentences'][role]}")
        out.append(t("step4.rules", rules="; ".join(f"{d['name']}: {d['rule']}" for d in summary["descriptions"].values())))
        out.append(t("step4.positional"))
        ref = summary["induction_reference"]
        out.append(t("step4.induction", n=result["detectors"]["induction_sequence_length"], maximum=ref["maximum"],
                     uniform=ref["uniform"]))
    else:
        out.append(t("step4.too_short"))

    km = kv["model"]
    out.append("\n" + t("step5", new=kv["new_tokens"], model=km["name"]))
    if km["random_weights"]:
        out.append(km["note"])
    out.append(t("step5.timing", reps=kv["repetitions"], threads=kv["threads"]))
    out.append(_table(
        ["", t("col.seconds"), t("col.tokens_per_s"), t("col.slope")],
        [[t("step5.with"), _fixed(kv["seconds_with_cache"], lang, 3), _fixed(kv["tokens_per_second_with_cache"], lang, 1),
          _fixed(kv["slope_ms_with_cache"], lang, 4)],
         [t("step5.without"), _fixed(kv["seconds_without_cache"], lang, 3),
          _fixed(kv["tokens_per_second_without_cache"], lang, 1), _fixed(kv["slope_ms_without_cache"], lang, 4)]],
        "lrrr",
    ))
    out.append(f"{kv['speedup_text']}")
    out.append(kv["growth_text"])
    out.append(t("step5.identical", same=t("yes") if kv["identical"] else t("NO"), positions=kv["cache_positions"],
                 layers=kv["n_layer"], heads=kv["n_head"], d_k=kv["head_dim"], size=_size(kv["cache_bytes"], lang)))
    generated = kv["generated_text"]
    generated = generated if len(generated) <= 160 else generated[:159] + "…"
    out.append(t("step5.generated", text=repr(generated)))
    out.append(t("step5.valid", last=n - 1, appended=repr(st["appended"]), reference=repr(st["reference"])))
    out.append(_table(
        [t("col.layer"), t("col.causal"), t("col.bidirectional"), "n vs n+1"],
        [[str(i), _num(c, lang), _num(b, lang), _num(d, lang)] for i, (c, b, d) in
         enumerate(zip(st["causal_max_per_layer"], st["bidirectional_max_per_layer"], st["n_vs_n_plus_1_max_per_layer"]))],
        "rrrr",
    ))
    out.append(t("step5.layer0" if m["n_layer"] > 1 else "step5.layer0.single"))
    drift = max(st["n_vs_n_plus_1_max_per_layer"])
    out.append(t("step5.drift", n=n, appended=repr(st["appended"]), drift=_num(drift, lang))
               + t("step5.drift.rounding" if drift else "step5.drift.exact"))

    out.extend(render_sections(result, shown, lang))
    if "steps" in result:
        out.extend(render_generation(result, _table, lang))

    out.append("\n" + t("shapes"))
    out.append(_table([t("col.tensor"), t("col.shape"), ""],
                      [[s["name"], str(tuple(s["shape"])), s["note"]] for s in result["shapes"]], "lrl"))
    return "\n".join(out)


def _mask_modes_table(result: dict, t: Callable[..., str], lang: str) -> list[str]:
    """The chapter's "why −∞ and not zero?" as measured: each way of hiding the future, the
    weight it leaves on the future, the leak it lets through and how far its rows are from 1."""
    rows = [[t(f"modes.{r['mode']}"), _num(r["future_weight"], lang), _num(r["max_leak_before"], lang),
             _num(r["max_row_sum_error"], lang)]
            for r in result["mask_modes"]]
    return ["\n" + t("modes", layer=result["attention"]["layer"]),
            _table([t("modes.header.mode"), t("modes.header.future"), t("modes.header.leak"), t("modes.header.rows")],
                   rows, "lrrr"),
            t("modes.summary")]
