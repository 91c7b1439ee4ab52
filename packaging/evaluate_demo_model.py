"""Measure the demo model with the app's own code, for its model card and its test.

Everything here goes through the public loading code (``core.models.load_model``) and
the same analyses the app shows (``core.analysis.head_portrait``,
``core.analysis.induction_scores_on_repeats``, ``core.kvbench``), on held-out prose that
is not in the training corpus (``tests/data/heldout_en.txt``), one sentence at a time --
the kind of input a learner types.

    python packaging/evaluate_demo_model.py resources/demo-model --json build/demo-eval.json
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "desktop"))

from attention_lab.core.analysis import head_portrait, induction_scores_on_repeats  # noqa: E402
from attention_lab.core.kvbench import run_kv_benchmark  # noqa: E402
from attention_lab.core.models import load_model  # noqa: E402

HELDOUT = ROOT / "tests" / "data" / "heldout_en.txt"
FORTUNES = Path("/usr/share/games/fortunes")
PYDOCS = Path("/usr/share/doc/python3.11/html/_sources")


def heldout_sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


def mean_head_stats(model, sentences: list[str]) -> dict[tuple[int, int], dict[str, float]]:
    """Per (layer, head): the portrait's numbers averaged over sentences (causal, no BOS)."""
    totals: dict[tuple[int, int], dict[str, float]] = {}
    counted = 0
    for sentence in sentences:
        ids = model.tokenizer.encode(sentence)
        if len(ids) < 4:
            continue
        out = model.lens(ids, keep_hidden=False, compute_logits=False)
        for stats in head_portrait(out.attention_stack()[0]):
            row = totals.setdefault((stats.layer, stats.head), {})
            for key in ("mean_distance", "entropy", "sink_mass", "previous_token", "current_token"):
                row[key] = row.get(key, 0.0) + getattr(stats, key)
        counted += 1
    return {k: {m: v / counted for m, v in row.items()} for k, row in totals.items()}


def heldout_loss(model, text: str) -> tuple[float, int]:
    ids = model.tokenizer.encode(text)
    ctx = model.lens.config.n_positions
    total, count = 0.0, 0
    for start in range(0, len(ids) - 1, ctx):
        piece = ids[start : start + ctx + 1]
        if len(piece) < 2:
            continue
        logits = model.lens(piece[:-1], keep_attentions=False, keep_hidden=False).logits[0]
        logp = torch.log_softmax(logits, dim=-1)
        target = torch.tensor(piece[1:])
        total += float(-logp[torch.arange(len(target)), target].sum())
        count += len(target)
    return total / count, count


def unigram_loss(model, text: str) -> float | None:
    """Add-one-smoothed unigram model of the training corpus (needs the Debian corpus packages)."""
    if not FORTUNES.exists():
        return None
    counts = torch.zeros(model.lens.config.vocab_size, dtype=torch.float64)
    sources = [p for p in FORTUNES.iterdir() if p.is_file() and not p.suffix]
    sources += sorted(PYDOCS.rglob("*.txt")) if PYDOCS.exists() else []
    for path in sources:
        ids = model.tokenizer.encode(path.read_text(encoding="utf-8", errors="replace"))
        counts += torch.bincount(torch.tensor(ids, dtype=torch.long), minlength=len(counts)).double()
    logp = torch.log((counts + 1) / (counts + 1).sum())
    return float(-logp[torch.tensor(model.tokenizer.encode(text))].mean())


def continuation(model, prompt: str, n: int, sample: bool, seed: int = 0) -> str:
    ids = model.tokenizer.encode(prompt)
    past = None
    gen = torch.Generator().manual_seed(seed)
    out: list[int] = []
    for _ in range(n):
        logits, past = model.lens.next_token_logits(ids + out, past)
        if sample:
            probs = torch.softmax(logits / 0.8, dim=-1)
            top = torch.topk(probs, 40)
            nxt = int(top.indices[torch.multinomial(top.values / top.values.sum(), 1, generator=gen)])
        else:
            nxt = int(torch.argmax(logits))
        out.append(nxt)
    return model.tokenizer.decode(out)


def evaluate(folder: Path) -> dict:
    model = load_model(str(folder))
    text = HELDOUT.read_text(encoding="utf-8")
    sentences = heldout_sentences(text)
    stats = mean_head_stats(model, sentences)
    loss, n_tokens = heldout_loss(model, text)
    induction, _ = induction_scores_on_repeats(model.lens)
    kv = run_kv_benchmark(model.lens, model.tokenizer.encode("The old bridge over the river"), new_tokens=30)

    def best(metric: str, k: int = 3) -> list[dict]:
        ranked = sorted(stats.items(), key=lambda kv: kv[1][metric], reverse=True)[:k]
        return [{"layer": l, "head": h, metric: round(v[metric], 3)} for (l, h), v in ranked]

    induction_ranked = sorted(
        ((l, h, float(induction[l, h])) for l in range(induction.shape[0]) for h in range(induction.shape[1])),
        key=lambda t: t[2],
        reverse=True,
    )[:3]
    return {
        "model": model.name,
        "n_params": model.n_params,
        "config": {k: getattr(model.lens.config, k) for k in ("n_layer", "n_head", "n_embd", "n_positions", "vocab_size")},
        "heldout": {"tokens": n_tokens, "sentences": len(sentences), "loss": round(loss, 3),
                    "perplexity": round(math.exp(loss), 1), "unigram_loss": unigram_loss(model, text),
                    # nats/token depend on the tokenizer; bits per character compare across them
                    "bits_per_char": round(loss * n_tokens / len(text) / math.log(2), 3)},
        "previous_token_heads": best("previous_token"),
        "sink_heads": best("sink_mass"),
        "induction_heads": [{"layer": l, "head": h, "induction": round(s, 3)} for l, h, s in induction_ranked],
        "greedy": continuation(model, "The weather changed quickly in the", 20, sample=False),
        "sampled": continuation(model, "The weather changed quickly in the", 20, sample=True),
        "kv_identical": kv.identical,
        "kv_speedup_30_tokens": round(kv.speedup, 2),
    }


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    result = evaluate(args.folder)
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
