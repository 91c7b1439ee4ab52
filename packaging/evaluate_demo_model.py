"""Measure the demo model with the app's own code, for its model card and its test.

Everything here goes through the public loading code (``core.models.load_model``) and
the same analyses the app shows (``core.analysis.head_portrait``,
``core.analysis.induction_scores_on_repeats``, ``core.roles``, ``core.kvbench``), on
held-out prose that is not in the training corpus, one sentence at a time for the heads --
the kind of input a learner types.  Held-out prose: with ``--corpus`` (a folder written by
``packaging/demo_corpus.py``) its ``heldout_en.txt`` and ``heldout_pt_BR.txt``, measured per
language; without it ``tests/data/heldout_en.txt``.

    python packaging/evaluate_demo_model.py resources/demo-model --json build/demo-eval.json
    python packaging/evaluate_demo_model.py /work/demo-train/run/latest-export --corpus /work/demo-train/corpus
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

from attention_lab.core import roles  # noqa: E402
from attention_lab.core.analysis import head_portrait, induction_scores_on_repeats  # noqa: E402
from attention_lab.core.kvbench import run_kv_benchmark  # noqa: E402
from attention_lab.core.lab import SEED_TEXTS  # noqa: E402
from attention_lab.core.models import load_model  # noqa: E402

HELDOUT = ROOT / "tests" / "data" / "heldout_en.txt"
GPT2_TOKENIZER = ROOT / "resources" / "tokenizer" / "tokenizer.json"
LANGS = ("en", "pt_BR")
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


def heldout_files(corpus: Path) -> dict[str, Path]:
    """The corpus's held-out prose per language (written by ``demo_corpus.py``, never trained on)."""
    files = {lang: corpus / f"heldout_{lang}.txt" for lang in LANGS}
    missing = [str(p) for p in files.values() if not p.is_file()]
    if missing:
        raise SystemExit(f"no held-out prose at {', '.join(missing)}: run packaging/demo_corpus.py first")
    return files


def bits_per_char(model, text: str) -> dict:
    """Held-out cross-entropy in bits per character (comparable across tokenizers) and nats/token."""
    loss, n_tokens = heldout_loss(model, text)
    return {"bits_per_char": round(loss * n_tokens / len(text) / math.log(2), 4),
            "nats_per_token": round(loss, 4), "tokens": n_tokens, "chars": len(text)}


def tokens_per_word(encode, text: str) -> float:
    """Tokens per whitespace-separated word of ``text`` under ``encode``."""
    return round(len(encode(text)) / max(1, len(text.split())), 3)


def tokenizer_report(tokenizer_json: Path, heldout: dict[str, str]) -> dict:
    """Tokens per word on the held-out prose and the chapter's sentences (how many of their
    words are single tokens), for the tokenizer in ``tokenizer_json`` beside GPT-2's."""
    from tokenizers import Tokenizer

    files = {"model": tokenizer_json}
    if GPT2_TOKENIZER.is_file():
        files["gpt2"] = GPT2_TOKENIZER
    report = {}
    for name, path in files.items():
        tok = Tokenizer.from_file(str(path))
        entry = {"vocab_size": tok.get_vocab_size(),
                 "tokens_per_word": {lang: tokens_per_word(lambda t: tok.encode(t).ids, text) for lang, text in heldout.items()}}
        for lang, sentence in SEED_TEXTS.items():
            pieces = [tok.decode([i]) for i in tok.encode(sentence).ids]
            entry[f"sentence_{lang}"] = {"tokens": len(pieces), "words": len(sentence.split()), "pieces": pieces,
                                         "whole_words": sum(p.strip() in sentence.split() for p in pieces)}
        report[name] = entry
    return report


def best_of(scores: torch.Tensor) -> dict:
    """The best head of ``[L, H]`` scores (the first, on a tie), with its score to 3 decimals."""
    layer, head = divmod(int(scores.argmax()), scores.shape[1])
    return {"layer": layer, "head": head, "score": round(float(scores[layer, head]), 3)}


def best_heads(model, sentences: list[str]) -> dict:
    """Each head kind's best head overall and in layer 0 (mean over ``sentences``), and the
    induction detector's best head on repeated random tokens."""
    stats = mean_head_stats(model, sentences)
    induction, _ = induction_scores_on_repeats(model.lens)
    out = {}
    for kind, metric in (("previous_token", "previous_token"), ("sink", "sink_mass")):
        for scope, keys in (("best", list(stats)), ("best_layer0", [k for k in stats if k[0] == 0])):
            layer, head = max(keys, key=lambda k: stats[k][metric])
            out[f"{kind}_{scope}"] = {"layer": layer, "head": head, "score": round(stats[(layer, head)][metric], 3)}
    out["induction_best"] = best_of(induction)
    # positional heads by the chapter's rule (core.roles), on the chapter's sentence of each language
    for lang, sentence in SEED_TEXTS.items():
        ids = model.tokenizer.encode(sentence)
        attn = model.lens(ids, keep_hidden=False, compute_logits=False).attention_stack()[0]
        found = [roles.head_roles(st, len(ids)) for st in head_portrait(attn[:1])]
        out[f"positional_layer0_{lang}"] = [
            {"head": h.head, "mean_distance": round(h.scores["positional"], 3)} for h in found if h.has("positional")
        ]
    return out


def read_heldout(files: dict[str, Path] | None) -> dict[str, str]:
    if files is None:
        return {"en": HELDOUT.read_text(encoding="utf-8")}
    return {lang: path.read_text(encoding="utf-8") for lang, path in files.items()}


def head_sentences(heldout: dict[str, str], per_language: int = 40) -> list[str]:
    """The first ``per_language`` held-out sentences of each language of 6–60 words: the
    length of what a learner types."""
    chosen = []
    for text in heldout.values():
        sentences = [s for s in heldout_sentences(text) if 6 <= len(s.split()) <= 60]
        chosen += sentences[:per_language]
    return chosen


def quick(folder: Path, files: dict[str, Path] | None = None) -> dict:
    """What the training log records at each checkpoint: bits per character per language
    and each head kind's best head."""
    model = load_model(str(folder))
    heldout = read_heldout(files)
    return {"heldout": {lang: bits_per_char(model, text)["bits_per_char"] for lang, text in heldout.items()},
            **best_heads(model, head_sentences(heldout, per_language=20))}


def model_card_table(folder: Path, files: dict[str, Path] | None = None) -> dict:
    """The model card's table: bits per character per language, each head kind's best head,
    size on disk, tokenizer figures, and the training time and tokens recorded by the recipe."""
    model = load_model(str(folder))
    heldout = read_heldout(files)
    training = json.loads((folder / "training.json").read_text()) if (folder / "training.json").is_file() else {}
    return {
        "heldout": {lang: bits_per_char(model, text) for lang, text in heldout.items()},
        "heads": best_heads(model, head_sentences(heldout)),
        "tokenizer": tokenizer_report(folder / "tokenizer.json", heldout),
        "tour_induction": tour_induction(model),
        "size_bytes": (folder / "model.safetensors").stat().st_size,
        "n_params": model.n_params,
        "training": {k: training.get(k) for k in ("steps_done", "tokens_seen", "train_seconds")},
    }


def tour_induction(model) -> dict:
    """The induction head the tour's step shows: ``roles.model_induction`` (whole words said twice, after BOS)."""
    scores, _ = roles.model_induction(model.lens, model.tokenizer)
    return best_of(scores)


def card_markdown(table: dict) -> str:
    """The model card's table, in Markdown, from :func:`model_card_table`'s numbers (nothing typed by hand)."""
    held, heads, tok = table["heldout"], table["heads"], table["tokenizer"]
    langs = list(held)

    def head(entry: dict) -> str:
        return f"L{entry['layer']} H{entry['head']}, {entry['score']:.2f}"

    def sentence(name: str, lang: str) -> str:
        s = tok[name][f"sentence_{lang}"]
        return f"{s['tokens']} tokens for {s['words']} words ({s['whole_words']} whole)"

    rows = [
        "| measure | " + " | ".join(langs) + " |",
        "|---|" + "---|" * len(langs),
        "| bits per character, held-out prose | " + " | ".join(f"{held[l]['bits_per_char']:.3f}" for l in langs) + " |",
        "| held-out prose: characters / tokens | " + " | ".join(f"{held[l]['chars']:,} / {held[l]['tokens']:,}" for l in langs) + " |",
        "| tokens per word, held-out prose (GPT-2's) | " + " | ".join(
            f"{tok['model']['tokens_per_word'][l]:.2f} ({tok['gpt2']['tokens_per_word'][l]:.2f})" if "gpt2" in tok
            else f"{tok['model']['tokens_per_word'][l]:.2f}" for l in langs) + " |",
        "| the chapter's sentence (GPT-2's) | " + " | ".join(
            f"{sentence('model', l)} ({sentence('gpt2', l)})" if "gpt2" in tok else sentence("model", l)
            for l in langs) + " |",
        "| positional heads in layer 0 (mean distance), the chapter's sentence | " + " | ".join(
            ", ".join(f"H{h['head']} ({h['mean_distance']:.2f})" for h in heads[f"positional_layer0_{l}"]) or "none"
            for l in langs) + " |",
        "",
        "| head kind (the app's detectors) | best head, score | best in layer 0 |",
        "|---|---|---|",
        f"| previous token (attention on i − 1, held-out sentences) | {head(heads['previous_token_best'])} | {head(heads['previous_token_best_layer0'])} |",
        f"| sink (attention on the first token, held-out sentences) | {head(heads['sink_best'])} | {head(heads['sink_best_layer0'])} |",
        f"| induction (random tokens said twice; at most 0.5) | {head(heads['induction_best'])} | — |",
        f"| induction (the tour's words said twice, after BOS; at most 0.5) | {head(table['tour_induction'])} | — |",
        "",
        "| size and training | |",
        "|---|---|",
        f"| parameters | {table['n_params']:,} |",
        f"| `model.safetensors` | {table['size_bytes'] / 1e6:.1f} MB |",
        f"| vocabulary | {tok['model']['vocab_size']:,} |",
    ]
    training = table["training"]
    if training.get("steps_done"):
        rows += [f"| training steps / tokens | {training['steps_done']:,} / {training['tokens_seen']:,} |",
                 f"| training time (recorded by the recipe) | {training['train_seconds'] / 60:.0f} minutes |"]
    return "\n".join(rows) + "\n"


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
    parser.add_argument("--corpus", type=Path, help="a demo_corpus.py folder: measure its held-out prose per language")
    parser.add_argument("--card", action="store_true",
                        help="print only the model card's table, in Markdown (needs --corpus)")
    parser.add_argument("--tokenizer-only", action="store_true",
                        help="FOLDER holds only a tokenizer.json: report its tokens per word (needs --corpus)")
    args = parser.parse_args(argv)
    if args.tokenizer_only:
        if not args.corpus:
            parser.error("--tokenizer-only needs --corpus")
        result = tokenizer_report(args.folder / "tokenizer.json", read_heldout(heldout_files(args.corpus)))
        print(json.dumps(result, indent=1, ensure_ascii=False))
        return 0
    if args.card:
        if not args.corpus:
            parser.error("--card needs --corpus")
        print(card_markdown(model_card_table(args.folder, heldout_files(args.corpus))), end="")
        return 0
    result = evaluate(args.folder)
    if args.corpus:
        result["card"] = model_card_table(args.folder, heldout_files(args.corpus))
    text = json.dumps(result, indent=1, ensure_ascii=False)
    print(text)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
