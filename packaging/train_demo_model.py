"""Train Attention Lab's bundled demo model: a small GPT-2 (12 heads per layer) on CPU.

Reproducible recipe (fixed seed, hyper-parameters recorded in the output's
``training.json``).  The corpus comes from Debian packages only:

    apt-get install fortunes fortunes-br python3.11-doc

* English: every ``/usr/share/games/fortunes/*`` file of ``fortunes`` / ``fortunes-min``
  (public-domain / freely redistributable collection, see the package's copyright file);
* Brazilian Portuguese: ``/usr/share/games/fortunes/brasil`` (``fortunes-br``, GPL-2);
* Python's documentation sources ``/usr/share/doc/python3.11/html/_sources`` (PSF licence).

Levers used, all stated in the model card (they are data and initialisation choices;
no weight is set by hand):

* the position table starts as a sinusoid (x0.5) instead of noise, which makes
  position-based attention (sinks, previous-token heads) easy to find early;
* a curriculum: a fraction of training rows carries a short period-2 snippet
  ("A B A B A B") spliced into natural text, where the next token equals the one two
  places back, which rewards a head that looks at the previous position;
* bf16 autocast on CPU (the 50257-way output projection dominates the cost).

Checkpoints are written every ``--eval-every`` steps into ``--work`` (safetensors only)
so an interrupted run resumes where it stopped: run the same command again.

    python packaging/train_demo_model.py --work build/demo-train --out resources/demo-model
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
TOKENIZER_DIR = ROOT / "resources" / "tokenizer"
HELDOUT = ROOT / "tests" / "data" / "heldout_en.txt"
FORTUNES = Path("/usr/share/games/fortunes")
PYDOCS = Path("/usr/share/doc/python3.11/html/_sources")

DEFAULTS = dict(
    seed=1234,
    n_layer=4,
    n_head=12,
    n_embd=192,
    n_positions=256,
    seq_len=256,
    batch_size=4,
    lr=3e-3,
    min_lr_ratio=0.1,
    warmup_steps=100,
    weight_decay=0.01,
    steps=4000,
    position_init="sinusoid",
    position_init_scale=0.5,
    period2_fraction=0.5,
    period2_snippets=3,
    period2_min_len=8,
    period2_max_len=24,
    repeat_fraction=0.0,
    repeat_min_len=8,
    repeat_max_len=32,
    repeat_max_gap=32,
    normalize_whitespace=1,
    dropout=0.0,
    tokenizer="gpt2",  # "gpt2": GPT-2's own 50257 tokens; "bpe": a byte-level BPE trained on the corpus
    bpe_vocab=8192,
)


# --------------------------------------------------------------------------- corpus
def read_documents() -> dict[str, list[str]]:
    docs: dict[str, list[str]] = {"fortunes-en": [], "fortunes-pt": [], "python-docs": []}
    for path in sorted(FORTUNES.iterdir()):
        if path.suffix or not path.is_file():
            continue  # skip .dat indexes and .u8 links
        key = "fortunes-pt" if path.name == "brasil" else "fortunes-en"
        text = path.read_text(encoding="utf-8", errors="replace")
        docs[key] += [d.strip() for d in text.split("\n%\n") if d.strip()]
    for path in sorted(PYDOCS.rglob("*.txt")):
        docs["python-docs"].append(path.read_text(encoding="utf-8", errors="replace").strip())
    return docs


def normalize_whitespace(text: str) -> str:
    """Fortunes are laid out with indentation and tab-aligned attributions, reST with
    indented blocks; a small model spends its capacity (and its greedy continuations) on
    runs of spaces.  Keep line and paragraph breaks, drop the layout."""
    import re

    lines = [re.sub(r"[ \t]+", " ", line).strip() for line in text.splitlines()]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def build_stream(tokenizer, docs: dict[str, list[str]], rng: random.Random, normalize: bool = False):
    eos = tokenizer.eos_token_id
    everything = [d for group in docs.values() for d in group]
    rng.shuffle(everything)
    ids: list[int] = []
    for doc in everything:
        ids += tokenizer.encode(normalize_whitespace(doc) if normalize else doc) + [eos]
    return torch.tensor(ids, dtype=torch.long)


def unigram_cross_entropy(train_ids: torch.Tensor, eval_ids: torch.Tensor, vocab: int) -> float:
    """Held-out loss (nats/token) of the add-one-smoothed unigram model of the training stream."""
    counts = torch.bincount(train_ids, minlength=vocab).double() + 1.0
    logp = torch.log(counts / counts.sum())
    return float(-logp[eval_ids].mean())


# --------------------------------------------------------------------------- tokenizer
def train_bpe(docs: dict[str, list[str]], vocab_size: int, normalize: bool, folder: Path) -> Path:
    """A byte-level BPE with GPT-2's pre-tokenisation (same regex, same byte alphabet, same
    ``<|endoftext|>``), trained on the corpus: the 50257-way output layer costs ~3/4 of a
    training step of a model this small; 8 k tokens buy ~2.7x more text per CPU-hour.
    Saved as ``tokenizer.json`` + ``tokenizer_config.json`` (what the app loads)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    if (folder / "tokenizer.json").is_file():  # a resumed run keeps its tokenizer
        return folder
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = [normalize_whitespace(d) if normalize else d for group in docs.values() for d in group]
    tok.train_from_iterator(texts, trainer=trainer)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "GPT2TokenizerFast", "eos_token": "<|endoftext|>", "bos_token": "<|endoftext|>",
         "unk_token": "<|endoftext|>", "model_max_length": 1024, "add_prefix_space": False}, indent=1))
    return folder


# --------------------------------------------------------------------------- model
def sinusoid_table(n_pos: int, dim: int) -> torch.Tensor:
    pos = torch.arange(n_pos, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(n_pos, dim)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


def make_model(hp: dict, vocab_size: int = 50257, eos_id: int = 50256):
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=hp["n_positions"],
        n_embd=hp["n_embd"],
        n_layer=hp["n_layer"],
        n_head=hp["n_head"],
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=True,
        # GPT-2's 0.1 dropout on attention weights punishes a head for relying on a
        # single position -- exactly what a previous-token or sink head does -- and a
        # model this undertrained has nothing to overfit.
        resid_pdrop=hp["dropout"],
        embd_pdrop=hp["dropout"],
        attn_pdrop=hp["dropout"],
    )
    model = GPT2LMHeadModel(config)
    if hp["position_init"] == "sinusoid":
        with torch.no_grad():
            model.transformer.wpe.weight.copy_(
                sinusoid_table(hp["n_positions"], hp["n_embd"]) * hp["position_init_scale"]
            )
    return model


# --------------------------------------------------------------------------- batches
def sample_batch(stream: torch.Tensor, hp: dict, gen: torch.Generator, common: torch.Tensor):
    n, b = hp["seq_len"], hp["batch_size"]
    starts = torch.randint(0, len(stream) - n - 1, (b,), generator=gen)
    rows = torch.stack([stream[s : s + n] for s in starts.tolist()])
    for r in range(b):
        if torch.rand((), generator=gen) >= hp["period2_fraction"]:
            continue
        for _ in range(hp["period2_snippets"]):
            length = int(torch.randint(hp["period2_min_len"], hp["period2_max_len"] + 1, (), generator=gen))
            at = int(torch.randint(1, n - length, (), generator=gen))
            pair = common[torch.randint(0, len(common), (2,), generator=gen)]
            rows[r, at : at + length] = pair.repeat(length // 2 + 1)[:length]
    for r in range(b):
        # induction-style rows: a random segment, then (after a little text) the same segment
        # again -- its second copy is predictable only by a head that finds "the token after
        # the previous occurrence of mine", which needs a previous-token head below it
        if hp["repeat_fraction"] <= 0 or torch.rand((), generator=gen) >= hp["repeat_fraction"]:
            continue
        length = int(torch.randint(hp["repeat_min_len"], hp["repeat_max_len"] + 1, (), generator=gen))
        gap = int(torch.randint(0, hp["repeat_max_gap"] + 1, (), generator=gen))
        at = int(torch.randint(1, n - 2 * length - gap, (), generator=gen))
        segment = common[torch.randint(0, len(common), (length,), generator=gen)]
        rows[r, at : at + length] = segment
        rows[r, at + length + gap : at + 2 * length + gap] = segment
    return rows


# --------------------------------------------------------------------------- evaluation
def heldout_sentences(tokenizer, text: str) -> list[list[int]]:
    """The held-out prose as sentences: what a learner types into the app."""
    import re

    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]
    return [tokenizer.encode(s) for s in sentences if len(tokenizer.encode(s)) >= 4]


@torch.no_grad()
def evaluate(model, heldout_ids: torch.Tensor, sentences: list[list[int]], n_ctx: int) -> dict:
    model.eval()
    model.set_attn_implementation("eager")  # SDPA returns no attention weights
    losses, weights = [], []
    for s in range(0, len(heldout_ids) - 1, n_ctx):
        piece = heldout_ids[s : s + n_ctx][None]
        if piece.shape[1] < 2:
            continue
        out = model(input_ids=piece, labels=piece)
        losses.append(float(out.loss) * (piece.shape[1] - 1))
        weights.append(piece.shape[1] - 1)
    prev, sink = [], []
    for sentence in sentences:
        att = model(input_ids=torch.tensor([sentence]), output_attentions=True).attentions
        a = torch.stack([x[0] for x in att])  # [L, H, n, n]
        idx = torch.arange(1, len(sentence))
        prev.append(a[:, :, idx, idx - 1].mean(-1))
        sink.append(a[:, :, 1:, 0].mean(-1))
    model.train()
    model.set_attn_implementation("sdpa")
    prev_t, sink_t = torch.stack(prev).mean(0), torch.stack(sink).mean(0)
    return {
        "heldout_loss": sum(losses) / sum(weights),
        "best_previous_token": float(prev_t.max()),
        "best_previous_token_head": divmod(int(prev_t.argmax()), prev_t.shape[1]),
        "best_sink": float(sink_t.max()),
        "best_sink_head": divmod(int(sink_t.argmax()), sink_t.shape[1]),
    }


# --------------------------------------------------------------------------- checkpoints
def save_checkpoint(work: Path, model, opt, step: int, log: list) -> None:
    from safetensors.torch import save_file

    tmp = work / "ckpt.tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    save_file({k: v.contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"}, tmp / "model.safetensors")
    names = {id(p): n for n, p in model.named_parameters()}
    opt_tensors = {}
    for group in opt.param_groups:
        for p in group["params"]:
            st = opt.state.get(p)
            if st:
                for key in ("exp_avg", "exp_avg_sq", "step"):
                    opt_tensors[f"{names[id(p)]}::{key}"] = torch.as_tensor(st[key]).contiguous()
    save_file(opt_tensors, tmp / "optimizer.safetensors")
    (tmp / "state.json").write_text(json.dumps({"step": step, "log": log}))
    final = work / "ckpt"
    if final.exists():
        for f in final.iterdir():
            f.unlink()
        final.rmdir()
    tmp.rename(final)


def load_checkpoint(work: Path, model, opt):
    from safetensors.torch import load_file

    ckpt = work / "ckpt"
    if not (ckpt / "state.json").exists():
        return 0, []
    model.load_state_dict(load_file(ckpt / "model.safetensors"), strict=False)
    model.tie_weights()
    opt_tensors = load_file(ckpt / "optimizer.safetensors")
    for name, p in model.named_parameters():
        if f"{name}::exp_avg" in opt_tensors:
            opt.state[p] = {k: opt_tensors[f"{name}::{k}"] for k in ("exp_avg", "exp_avg_sq", "step")}
    state = json.loads((ckpt / "state.json").read_text())
    return state["step"], state["log"]


def export(model, out: Path, hp: dict, log: list, extra: dict, tokenizer_dir: Path = TOKENIZER_DIR) -> None:
    import shutil

    out.mkdir(parents=True, exist_ok=True)
    half = model.to(torch.float16)
    half.save_pretrained(str(out), safe_serialization=True)
    model.to(torch.float32)
    for stale in ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json"):
        if (out / stale).exists():
            (out / stale).unlink()  # a previous export's tokenizer must not shadow this one
    for f in tokenizer_dir.iterdir():
        shutil.copy(f, out / f.name)
    (out / "training.json").write_text(json.dumps({"hyperparameters": hp, **extra, "log": log}, indent=1))


# --------------------------------------------------------------------------- main
def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Train the demo GPT-2 on CPU")
    parser.add_argument("--work", type=Path, default=ROOT / "build" / "demo-train")
    parser.add_argument("--out", type=Path, default=ROOT / "resources" / "demo-model")
    parser.add_argument("--eval-every", type=int, default=250)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    for key, value in DEFAULTS.items():
        parser.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    args = parser.parse_args(argv)
    hp = {k: getattr(args, k) for k in DEFAULTS}

    from transformers import AutoTokenizer

    torch.set_num_threads(args.threads)
    random.seed(hp["seed"])
    torch.manual_seed(hp["seed"])
    docs = read_documents()
    args.work.mkdir(parents=True, exist_ok=True)
    tokenizer_dir = TOKENIZER_DIR
    if hp["tokenizer"] == "bpe":
        tokenizer_dir = train_bpe(docs, hp["bpe_vocab"], bool(hp["normalize_whitespace"]), args.work / "tokenizer")
    elif hp["tokenizer"] != "gpt2":
        parser.error("--tokenizer is gpt2 or bpe")
    tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    vocab_size = len(tokenizer)
    stream = build_stream(tokenizer, docs, random.Random(hp["seed"]), bool(hp["normalize_whitespace"]))
    heldout_text = HELDOUT.read_text(encoding="utf-8")
    heldout_ids = torch.tensor(tokenizer.encode(heldout_text))
    sentences = heldout_sentences(tokenizer, heldout_text)
    counts = torch.bincount(stream, minlength=vocab_size)
    counts[tokenizer.eos_token_id] = 0  # document separators never go into a snippet
    common = torch.argsort(counts, descending=True)[:2000]  # snippet tokens: the 2000 most frequent
    corpus_stats = {
        "documents": {k: len(v) for k, v in docs.items()},
        "tokens": int(len(stream)),
        "unigram_heldout_loss": unigram_cross_entropy(stream, heldout_ids, vocab_size),
        "vocab_size": vocab_size,
    }
    print(json.dumps(corpus_stats), flush=True)

    model = make_model(hp, vocab_size, tokenizer.eos_token_id)
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": hp["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=hp["lr"],
        betas=(0.9, 0.95),
    )
    step, log = load_checkpoint(args.work, model, opt)
    # A resumed run may change the recipe (a curriculum phase): record where and how.
    log.append({"phase_start_step": step, "hyperparameters": hp})
    gen = torch.Generator().manual_seed(hp["seed"] + step)
    model.train()
    t0, tokens_since, running = time.time(), 0, []
    while step < hp["steps"]:
        warm = min(1.0, (step + 1) / hp["warmup_steps"])
        progress = step / hp["steps"]
        cosine = hp["min_lr_ratio"] + (1 - hp["min_lr_ratio"]) * 0.5 * (1 + math.cos(math.pi * progress))
        for g in opt.param_groups:
            g["lr"] = hp["lr"] * warm * cosine
        batch = sample_batch(stream, hp, gen, common)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(input_ids=batch, labels=batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        running.append(float(loss.detach()))
        tokens_since += batch.numel()
        if step % args.eval_every == 0 or step == hp["steps"]:
            entry = {
                "step": step,
                "tokens_seen": step * hp["batch_size"] * hp["seq_len"],
                "train_loss": sum(running) / len(running),
                "tokens_per_s": tokens_since / (time.time() - t0),
                **evaluate(model, heldout_ids, sentences, hp["n_positions"]),
            }
            log.append(entry)
            print(json.dumps(entry), flush=True)
            running, tokens_since, t0 = [], 0, time.time()
            save_checkpoint(args.work, model, opt, step, log)
            # export a usable model at every checkpoint: a session stop never leaves nothing
            export(model, args.work / "latest-export", hp, log, corpus_stats, tokenizer_dir)
    export(model, args.out, hp, log, corpus_stats, tokenizer_dir)
    print(f"exported to {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
