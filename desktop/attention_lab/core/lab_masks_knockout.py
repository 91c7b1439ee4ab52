"""The headless lab's two lessons beyond the chapter: the mask designer and head knockout.

``attention-lab lab --mask SPEC`` and ``--ablate L.H[,L.H…] [--ablation zero|mean]``:
:func:`parse_lab_options` checks the flags (``ValueError`` with one line), then
:func:`mask_section` and :func:`ablation_section` return the JSON-ready parts that
:func:`attention_lab.core.lab.run_lab` adds to its result, and :func:`render_sections`
prints them.  Everything is computed under the chosen mask, on the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from . import ablation, masks
from .lens import GPT2Lens
from .lab_texts import lab_text
from .numbers import number

MAP_DECIMALS = 6


@dataclass(frozen=True)
class LabOptions:
    mask: masks.MaskSpec
    heads: list[tuple[int, int]] | None  # None: no knockout asked for
    mode: str


def parse_lab_options(model, mask: str = "causal", ablate: str | None = None, mode: str = "zero") -> LabOptions:
    """Check ``--mask``, ``--ablate`` and ``--ablation``; ``ValueError`` names the flag."""
    cfg = model.lens.config
    try:
        spec = masks.parse_mask_spec(mask, model.tokenizer)
    except ValueError as exc:
        shown = f"--mask {mask}" if isinstance(mask, str) and mask.strip() else "--mask"
        raise ValueError(f"{shown}: {exc}") from None
    try:
        mode = ablation.check_mode(mode)
        heads = None if ablate is None else ablation.parse_heads(ablate, cfg.n_layer, cfg.n_head)
    except ValueError as exc:
        raise ValueError(f"--ablate: {exc}") from None
    return LabOptions(spec, heads, mode)


def _grid(t: torch.Tensor) -> list:
    return t.to(torch.int64).tolist()


def _number(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def mask_section(lens: GPT2Lens, ids: Sequence[int], spec: masks.MaskSpec, layer: int, position: int,
                 replacement_id: int) -> tuple[dict, torch.Tensor]:
    """The mask, its reach, its verdicts (measured), and the lab's attention and edit under it.

    Returns the JSON part and the allowed-matrix (the knockout runs under it too)."""
    report = masks.mask_report(lens, ids, spec)
    allowed = report.allowed
    shown = lens(ids, allowed=allowed, keep_attentions=[layer], keep_hidden=False, compute_logits=False)
    edit = masks.measure_edits(lens, ids, allowed, [(position, replacement_id)])[0]
    reach_column = report.reach[:, position]
    section = {
        "mask_spec": str(spec),
        "mask": _grid(allowed),
        "reach": _grid(report.reach),
        "verdicts": report.verdicts(),
        "mask_measurements": {
            "leaks_labels_measured": report.leaks_labels_measured,
            "reach_confirmed": report.reach_confirmed,
            "probed_positions": report.probed_columns,
            "kv_cache_valid_predicted": report.kv_cache_valid_predicted,
            "kv_max_change": report.kv_max_change,
            "kv_change_per_layer": report.kv_change_per_layer,
            "kv_appended_id": report.kv_appended_id,
            "kv_reference_id": report.kv_reference_id,
        },
        "attention_under_mask": torch.round(shown.attentions[layer][0].double(), decimals=MAP_DECIMALS).tolist(),
        "leakage_under_mask": {
            "final": edit.final.tolist(),
            "layers": edit.layers.tolist(),
            "reach_column": _grid(reach_column),
            "changed_as_reach_predicts": bool(torch.equal(edit.final > 0, reach_column)),
        },
    }
    return section, allowed


def ablation_section(lens: GPT2Lens, tokenizer, ids: Sequence[int], heads: list[tuple[int, int]], mode: str,
                     position: int, allowed: torch.Tensor | None) -> dict:
    result = ablation.knockout(lens, ids, heads, mode, position, allowed=allowed)

    def guesses(top: list[tuple[int, float]]) -> list[dict]:
        texts = tokenizer.token_texts([t for t, _ in top])
        return [{"token": text, "id": t, "p": p} for text, (t, p) in zip(texts, top)]

    return {
        "heads": [[layer, head] for layer, head in result.heads],
        "mode": result.mode,
        "loss_before": _number(result.loss_before),
        "loss_after": _number(result.loss_after),
        "position": result.position,
        "top_before": guesses(result.top_before),
        "top_after": guesses(result.top_after),
        "logprob_next_before": _number(result.logprob_before),
        "logprob_next_after": _number(result.logprob_after),
    }


# ---------------------------------------------------------------------------- text
def _rows(grid: list[list[int]], shown: int) -> list[str]:
    return ["".join("█" if v else "·" for v in row[:shown]) for row in grid[:shown]]


def render_sections(result: dict, shown: int, lang: str = "en") -> list[str]:
    """The mask designer's and the knockout's lines for ``render_text`` (first ``shown`` tokens), in ``lang``."""

    def t(key: str, **values: object) -> str:
        return lab_text(key, lang, **values)

    out: list[str] = []
    v, m = result["verdicts"], result["mask_measurements"]
    n = len(result["mask"])
    cut = t("designer.cut", shown=shown, n=n) if shown < n else ""
    out.append("\n" + t("designer", mask=result["mask_spec"], layers=result["model"]["n_layer"], cut=cut))
    out.extend(f"{a}   |   {b}" for a, b in zip(_rows(result["mask"], shown), _rows(result["reach"], shown)))
    yes = {True: t("yes"), False: t("no")}
    leak = result["leakage_under_mask"]
    out.append(t("designer.leaks", reach=yes[v["leaks_labels"]], probed=len(m["probed_positions"]),
                 measured=yes[m["leaks_labels_measured"]], confirmed=yes[m["reach_confirmed"]]))
    moved = t("step3.exactly_zero") if m["kv_max_change"] == 0 else t("step3.up_to", x=number(m["kv_max_change"], ".3g", lang))
    out.append(t("designer.kv", valid=yes[v["kv_cache_valid"]], moved=moved, predicted=yes[m["kv_cache_valid_predicted"]],
                 positions=v["cache_positions_per_layer"]))
    changed = sum(1 for x in leak["final"] if x > 0)
    out.append(t("designer.moved", changed=changed, same=yes[leak["changed_as_reach_predicts"]]))
    ab = result.get("ablation")
    if ab:
        heads = ", ".join(f"L{layer} H{head}" for layer, head in ab["heads"])
        out.append("\n" + t("knockout", mode=ab["mode"], heads=heads, position=ab["position"]))
        for name in ("before", "after"):
            guesses = ", ".join(f"{g['token']!r} {number(g['p'], '.3f', lang)}" for g in ab[f"top_{name}"])
            out.append(f"  {t('knockout.' + name):<6} {guesses}")
        loss = ab["loss_before"]
        if loss is not None:
            out.append(t("knockout.loss", before=loss, after=ab["loss_after"]))
    return out
