"""Train Attention Lab's bundled demo model: a small GPT-2 (12 heads per layer) on CPU.

Second edition of the recipe.  Reproducible: a fixed seed, every hyper-parameter recorded
in the output's ``training.json``, and the batch of step *s* a function of (seed, *s*)
alone, so a run interrupted at any checkpoint and resumed with the same command ends with
bit-identical weights to one never interrupted (same machine, same ``--threads``).

Corpus: English + Brazilian-Portuguese prose built by ``packaging/demo_corpus.py`` (Debian
documentation packages; see its docstring for the sources and their licences), language-
balanced, with a held-out file per language that is never trained on:

    python packaging/demo_corpus.py --out /work/demo-train/corpus
    python packaging/train_demo_model.py --corpus /work/demo-train/corpus --work /work/demo-train/run

Tokenizer: a byte-level BPE with GPT-2's pre-tokenisation (same regex, same 256-byte
alphabet, ``<|endoftext|>``), trained on the balanced training documents only.

Levers (data and initialisation; no weight is set by hand), each a recorded hyper-parameter:

* the position table starts as a sinusoid instead of noise: position-based attention
  (sinks, previous-token heads) is then within reach of layer 0 from the first step;
* a share of rows carries a random segment repeated after a short gap (``repeat_*``):
  predicting the second copy rewards an induction head, which needs a previous-token
  head below it -- from step 0, so that the earliest layer, 0, is where it can form;
* a share of rows carries period-2 snippets ("A B A B ..."), where the next token is the
  one two back: a head that reads the previous position is rewarded directly;
* no dropout on attention weights (it punishes a head for relying on one position, which
  is what previous-token and sink heads do);
* optionally (``copy_warmup_steps``), the first steps' rows are nothing but random segments each
  said twice: the copy signal alone, before prose dilutes it to a few per cent of the tokens;
  ``copy_warmup_seq_len`` makes those rows shorter (as many tokens a step), because copying in
  context is learnt sooner the shorter the rows are;
* optionally (``guide_*``), an auxiliary loss steers one named head per pattern (previous token,
  sink, induction) during the first ``guide_steps``, fading to nothing (``head_guide.py``);
* ``init_range``: the weights' initial spread (transformers' ``initializer_range``; GPT-2's 0.02
  suits its 768-wide layers, and at a width of 192 it leaves a token's embedding small beside
  its position's and every product of weights near zero, where copying is learnt slowest).

Checkpoints (``--work``/ckpt, every ``--eval-every`` steps) are safetensors and JSON only,
never pickle: the weights, the AdamW moments and step counts, torch's RNG state, and a
JSON state (step, log, hyper-parameters, SHA-256 of the corpus and tokenizer, seconds
spent).  Each checkpoint also exports a loadable model to ``--work``/latest-export and
measures it with ``packaging/evaluate_demo_model.py`` (the app's own detectors).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import random
import shutil
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "packaging"))

import demo_corpus  # noqa: E402
import head_guide  # noqa: E402

DEFAULTS = dict(
    seed=1234,
    n_layer=4,
    n_head=12,
    n_embd=192,
    n_positions=256,
    seq_len=256,
    batch_size=8,
    lr=2e-3,
    min_lr_ratio=0.1,
    warmup_steps=200,
    weight_decay=0.01,
    steps=8000,
    position_init="sinusoid",
    position_init_scale=1.0,
    period2_fraction=0.25,
    period2_snippets=2,
    period2_min_len=8,
    period2_max_len=24,
    repeat_fraction=0.5,
    repeat_min_len=8,
    repeat_max_len=32,
    repeat_max_gap=32,
    repeat_vocab=2000,
    dropout=0.0,  # residual and embedding dropout; attention dropout is always 0 (see the docstring)
    bpe_vocab=16384,
    copy_warmup_steps=0,
    copy_warmup_seq_len=0,  # 0: the rows' own length
    copy_min_len=8,
    copy_max_len=32,
    init_range=0.02,
    guide_weight=0.0,  # 0: no head is guided (head_guide.py)
    guide_steps=0,
    guide_previous="",  # "LAYER:HEAD"
    guide_sink="",
    guide_induction="",
)
#: hyper-parameters added after a run could have started, with the value that leaves its recipe as it
#: was: a checkpoint that does not name one ran with this value
ADDED_LATER = {"copy_warmup_steps": 0, "copy_warmup_seq_len": 0, "copy_min_len": 8, "copy_max_len": 32,
               "init_range": 0.02, "guide_weight": 0.0, "guide_steps": 0, "guide_previous": "", "guide_sink": "",
               "guide_induction": ""}
# run controls that do not change what is trained (never part of the recorded recipe)
EOS = "<|endoftext|>"


# --------------------------------------------------------------------------- tokenizer
def train_bpe(texts: list[str], vocab_size: int, folder: Path) -> Path:
    """A byte-level BPE with GPT-2's pre-tokenisation, trained on ``texts``; saved as
    ``tokenizer.json`` + ``tokenizer_config.json`` (what the app loads).  Deterministic for
    the same texts in the same order."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=[EOS],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    tok.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps(
        {"tokenizer_class": "GPT2TokenizerFast", "eos_token": EOS, "bos_token": EOS,
         "unk_token": EOS, "model_max_length": 1024, "add_prefix_space": False}, indent=1))
    return folder


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --------------------------------------------------------------------------- data
def build_stream(tokenizer, docs: list[dict], seed: int) -> torch.Tensor:
    """Every training document once, in a seeded order, each followed by ``<|endoftext|>``."""
    order = sorted(docs, key=lambda d: (d["lang"], d["source"], d["path"], d["chunk"]))
    random.Random(seed).shuffle(order)
    eos = tokenizer.token_to_id(EOS)
    ids: list[int] = []
    for enc in tokenizer.encode_batch([d["text"] for d in order]):
        ids += enc.ids + [eos]
    return torch.tensor(ids, dtype=torch.long)


def frequent_tokens(stream: torch.Tensor, vocab: int, k: int, eos: int) -> torch.Tensor:
    """The ``k`` most frequent tokens (ties by id): what repeated segments are drawn from."""
    counts = torch.bincount(stream, minlength=vocab)
    # document separators never go into a snippet, even when k asks for the whole vocabulary
    order = sorted((t for t in range(vocab) if t != eos), key=lambda t: (-int(counts[t]), t))
    return torch.tensor(order[:k], dtype=torch.long)


def sample_batch(stream: torch.Tensor, hp: dict, step: int, common: torch.Tensor) -> torch.Tensor:
    """The rows of step ``step``: drawn from a generator seeded by (seed, step) alone, so a
    resumed run sees exactly the batches an uninterrupted one would."""
    gen = torch.Generator().manual_seed(hp["seed"] * 1_000_003 + step)
    n, b = hp["seq_len"], hp["batch_size"]
    if step < hp["copy_warmup_steps"]:
        short = hp["copy_warmup_seq_len"] or n
        return copy_rows(short, b * n // short, hp, common, gen)  # as many tokens a step as the prose rows
    starts = torch.randint(0, len(stream) - n - 1, (b,), generator=gen)
    rows = torch.stack([stream[s : s + n] for s in starts.tolist()])
    for r in range(b):
        if float(torch.rand((), generator=gen)) >= hp["period2_fraction"]:
            continue
        for _ in range(hp["period2_snippets"]):
            length = int(torch.randint(hp["period2_min_len"], hp["period2_max_len"] + 1, (), generator=gen))
            at = int(torch.randint(1, max(2, n - length), (), generator=gen))
            pair = common[torch.randint(0, len(common), (2,), generator=gen)]
            rows[r, at : at + length] = pair.repeat(length // 2 + 1)[: min(length, n - at)]
    for r in range(b):
        # a random segment, then (after a little text) the same segment again: its second
        # copy is predictable only by a head that finds "the token after the previous
        # occurrence of mine", which needs a previous-token head below it
        if float(torch.rand((), generator=gen)) >= hp["repeat_fraction"]:
            continue
        length = int(torch.randint(hp["repeat_min_len"], hp["repeat_max_len"] + 1, (), generator=gen))
        gap = int(torch.randint(0, hp["repeat_max_gap"] + 1, (), generator=gen))
        if 2 * length + gap + 1 >= n:
            continue
        at = int(torch.randint(1, n - 2 * length - gap, (), generator=gen))
        segment = common[torch.randint(0, len(common), (length,), generator=gen)]
        rows[r, at : at + length] = segment
        rows[r, at + length + gap : at + 2 * length + gap] = segment
    return rows


def copy_rows(n: int, b: int, hp: dict, common: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """Rows made only of random segments each said twice in a row (``copy_min_len`` .. ``copy_max_len``
    tokens): half of every row is predictable by copying, and only by copying."""
    def draw(length: int) -> torch.Tensor:
        return common[torch.randint(0, len(common), (length,), generator=gen)]

    return torch.stack([said_twice(n, hp["copy_min_len"], hp["copy_max_len"], draw, gen)[0] for _ in range(b)])


def said_twice(n: int, min_len: int, max_len: int, draw, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """One row of ``n`` tokens: segments (``draw(length)``, lengths drawn from ``min_len``..``max_len``)
    each said twice in a row, and which of its tokens only copying predicts (each second copy after
    its first token)."""
    row = torch.empty(n, dtype=torch.long)
    copyable = torch.zeros(n, dtype=torch.bool)
    at = 0
    while at < n:
        length = int(torch.randint(min_len, max_len + 1, (), generator=gen))
        segment = draw(length)
        pair = torch.cat([segment, segment])[: n - at]
        row[at : at + len(pair)] = pair
        copyable[at + length + 1 : at + len(pair)] = True
        at += len(pair)
    return row, copyable


def learning_rate(hp: dict, step: int) -> float:
    warm = min(1.0, (step + 1) / hp["warmup_steps"])
    progress = step / hp["steps"]
    cosine = hp["min_lr_ratio"] + (1 - hp["min_lr_ratio"]) * 0.5 * (1 + math.cos(math.pi * progress))
    return hp["lr"] * warm * cosine


# --------------------------------------------------------------------------- model
def sinusoid_table(n_pos: int, dim: int) -> torch.Tensor:
    pos = torch.arange(n_pos, dtype=torch.float32)[:, None]
    freq = torch.exp(torch.arange(0, dim, 2, dtype=torch.float32) * (-math.log(10000.0) / dim))
    table = torch.zeros(n_pos, dim)
    table[:, 0::2] = torch.sin(pos * freq)
    table[:, 1::2] = torch.cos(pos * freq)
    return table


def make_model(hp: dict, vocab_size: int, eos_id: int):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(hp["seed"])
    config = GPT2Config(
        vocab_size=vocab_size,
        n_positions=hp["n_positions"],
        n_embd=hp["n_embd"],
        n_layer=hp["n_layer"],
        n_head=hp["n_head"],
        bos_token_id=eos_id,
        eos_token_id=eos_id,
        tie_word_embeddings=True,
        resid_pdrop=hp["dropout"],
        embd_pdrop=hp["dropout"],
        attn_pdrop=0.0,
        initializer_range=hp["init_range"],
    )
    model = GPT2LMHeadModel(config)
    if hp["position_init"] == "sinusoid":
        with torch.no_grad():
            model.transformer.wpe.weight.copy_(
                sinusoid_table(hp["n_positions"], hp["n_embd"]) * hp["position_init_scale"]
            )
    return model


def make_optimizer(model, hp: dict) -> torch.optim.AdamW:
    decay = [p for _, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for _, p in model.named_parameters() if p.dim() < 2]
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": hp["weight_decay"]}, {"params": no_decay, "weight_decay": 0.0}],
        lr=hp["lr"],
        betas=(0.9, 0.95),
    )


# --------------------------------------------------------------------------- checkpoints
def save_checkpoint(work: Path, model, opt, state: dict) -> Path:
    """Weights, AdamW state and torch's RNG as safetensors, the rest as JSON; written to a
    temporary folder and swapped in, so an interruption at any moment leaves a whole checkpoint."""
    from safetensors.torch import save_file

    tmp, final, old = work / "ckpt.tmp", work / "ckpt", work / "ckpt.old"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    save_file({k: v.detach().contiguous() for k, v in model.state_dict().items() if k != "lm_head.weight"},
              tmp / "model.safetensors")
    names = {id(p): n for n, p in model.named_parameters()}
    tensors = {}
    for group in opt.param_groups:
        for p in group["params"]:
            for key, value in opt.state.get(p, {}).items():
                tensors[f"{names[id(p)]}::{key}"] = torch.as_tensor(value).detach().clone().contiguous()
    save_file(tensors, tmp / "optimizer.safetensors")
    save_file({"torch_rng": torch.get_rng_state()}, tmp / "rng.safetensors")
    groups = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
    (tmp / "state.json").write_text(json.dumps({**state, "param_groups": groups}, indent=1))
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    tmp.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def add_to_log(record: Path, log: list) -> None:
    """Write ``log`` into the JSON ``record`` (a checkpoint's state, an export's training.json),
    swapped in whole so an interruption leaves the old record or the new one."""
    data = json.loads(record.read_text())
    data["log"] = log
    tmp = record.with_name(record.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=1))
    os.replace(tmp, record)


def load_checkpoint(work: Path, model, opt) -> dict | None:
    """Restore what :func:`save_checkpoint` wrote; ``None`` when there is no checkpoint."""
    from safetensors.torch import load_file

    ckpt = work / "ckpt"
    if not (ckpt / "state.json").exists() and (work / "ckpt.old" / "state.json").exists():
        ckpt = work / "ckpt.old"  # interrupted between the two renames
    if not (ckpt / "state.json").exists():
        return None
    missing, unexpected = model.load_state_dict(load_file(ckpt / "model.safetensors"), strict=False)
    if unexpected or any(k != "lm_head.weight" for k in missing):
        raise SystemExit(f"checkpoint {ckpt} does not fit this model: missing {missing}, unexpected {unexpected}")
    model.tie_weights()
    tensors = load_file(ckpt / "optimizer.safetensors")
    for name, p in model.named_parameters():
        keys = sorted(k.split("::", 1)[1] for k in tensors if k.split("::", 1)[0] == name)
        if keys:
            opt.state[p] = {k: tensors[f"{name}::{k}"] for k in keys}
    state = json.loads((ckpt / "state.json").read_text())
    for group, saved in zip(opt.param_groups, state.pop("param_groups")):
        group.update(saved)
    torch.set_rng_state(load_file(ckpt / "rng.safetensors")["torch_rng"])
    return state


def export(model, out: Path, tokenizer_dir: Path, record: dict) -> None:
    """A folder the app loads like GPT-2's: float16 safetensors, config, tokenizer, training.json."""
    import copy

    out.mkdir(parents=True, exist_ok=True)
    # a float16 copy: converting the training model itself and back would round its weights
    copy.deepcopy(model).to(torch.float16).save_pretrained(str(out), safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(tokenizer_dir / name, out / name)
    (out / "training.json").write_text(json.dumps(record, indent=1))


# --------------------------------------------------------------------------- main
def parse(argv=None):
    parser = argparse.ArgumentParser(description="Train the demo GPT-2 on CPU (resumable: run the same command again)")
    parser.add_argument("--corpus", type=Path, required=True, help="a folder written by packaging/demo_corpus.py")
    parser.add_argument("--work", type=Path, required=True, help="checkpoints, tokenizer, latest export, log")
    parser.add_argument("--out", type=Path, help="where the final model goes (default: WORK/final)")
    parser.add_argument("--eval-every", type=int, default=500)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--stop-after", type=int, help="stop after this step's checkpoint (the recipe is unchanged)")
    parser.add_argument("--no-measure", action="store_true", help="checkpoint without measuring the export")
    parser.add_argument("--change-recipe", action="store_true",
                        help="resume although the hyper-parameters differ from the checkpoint's (logged)")
    for key, value in DEFAULTS.items():
        parser.add_argument("--" + key.replace("_", "-"), type=type(value), default=value)
    args = parser.parse_args(argv)
    if args.eval_every < 1:
        parser.error("--eval-every must be at least 1")
    try:
        heads = head_guide.guided(vars(args))
    except ValueError as exc:
        parser.error(str(exc))
    for kind, (layer, head) in heads.items():
        if not (0 <= layer < args.n_layer and 0 <= head < args.n_head):
            parser.error(f"--guide-{kind} {layer}:{head} is not a head of {args.n_layer} layers × {args.n_head} heads")
    return args, {k: getattr(args, k) for k in DEFAULTS}


def main(argv=None) -> int:
    from tokenizers import Tokenizer

    args, hp = parse(argv)
    torch.set_num_threads(args.threads)
    work = args.work
    work.mkdir(parents=True, exist_ok=True)
    lock = hold_lock(work)  # noqa: F841 -- held until the process ends
    docs = demo_corpus.read_train(args.corpus)
    corpus_sha = sha256_file(args.corpus / "train.jsonl")
    tokenizer_dir = work / "tokenizer"
    if not (tokenizer_dir / "tokenizer.json").is_file():  # a resumed run keeps its tokenizer
        train_bpe([d["text"] for d in docs], hp["bpe_vocab"], tokenizer_dir)
    tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    tokenizer_sha = sha256_file(tokenizer_dir / "tokenizer.json")
    vocab_size, eos = tokenizer.get_vocab_size(), tokenizer.token_to_id(EOS)
    stream = build_stream(tokenizer, docs, hp["seed"])
    common = frequent_tokens(stream, vocab_size, hp["repeat_vocab"], eos)
    corpus_stats = {"corpus_manifest": json.loads((args.corpus / "manifest.json").read_text(encoding="utf-8")),
                    "corpus_sha256": corpus_sha, "tokenizer_sha256": tokenizer_sha,
                    "stream_tokens": int(len(stream)), "vocab_size": vocab_size}

    model = make_model(hp, vocab_size, eos)
    opt = make_optimizer(model, hp)
    state = load_checkpoint(work, model, opt)
    if state is None:
        state = {"step": 0, "train_seconds": 0.0, "hyperparameters": hp, "log": [],
                 "corpus_sha256": corpus_sha, "tokenizer_sha256": tokenizer_sha}
    else:
        if (state["corpus_sha256"], state["tokenizer_sha256"]) != (corpus_sha, tokenizer_sha):
            raise SystemExit("the corpus or tokenizer differs from the checkpoint's: resuming would not reproduce the run")
        saved = {**ADDED_LATER, **state["hyperparameters"]}
        changed = {k: (saved.get(k), v) for k, v in hp.items() if saved.get(k) != v}
        if changed and not args.change_recipe:
            raise SystemExit(f"hyper-parameters differ from the checkpoint's (old, new): {changed}; "
                             "pass --change-recipe to continue with the new ones")
        if changed:
            state["log"].append({"recipe_change_at_step": state["step"], "changed": changed})
            state["hyperparameters"] = hp
    # which code ran which steps: a resumed run should use the same recipe
    state["log"].append({"started_at_step": state["step"], "commit": git_commit(), "threads": args.threads})
    print(json.dumps({"resume_from_step": state["step"], "stream_tokens": len(stream), "vocab": vocab_size,
                      "params": sum(p.numel() for p in model.parameters())}), flush=True)

    model.train()
    guide = head_guide.HeadGuide(model, head_guide.guided(hp)) if hp["guide_weight"] > 0 else None
    step, running, guided, t0 = state["step"], [], [], time.time()
    while step < hp["steps"]:
        for g in opt.param_groups:
            g["lr"] = learning_rate(hp, step)
        batch = sample_batch(stream, hp, step, common)
        weight = head_guide.weight_at(hp, step)
        if guide is not None and weight == 0:  # the guide has let go: only the language model trains from here
            guide.remove()
            guide = None
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = model(input_ids=batch, labels=batch).loss
            total = loss
            if guide is not None:
                guide_loss, parts = guide.loss(batch)
                guided.append(parts)
                total = loss + weight * guide_loss
        total.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        step += 1
        running.append(float(loss.detach()))
        if step % args.eval_every == 0 or step == hp["steps"]:
            seconds = time.time() - t0
            state["train_seconds"] += seconds
            entry = {"step": step, "tokens_seen": step * hp["batch_size"] * hp["seq_len"],
                     "train_loss": round(sum(running) / len(running), 4),
                     "tokens_per_s": round(len(running) * hp["batch_size"] * hp["seq_len"] / seconds, 1),
                     "train_seconds": round(state["train_seconds"], 1)}
            if guided:  # each guided pattern's loss, over the steps since the last checkpoint
                entry["guide_loss"] = {k: round(sum(p[k] for p in guided) / len(guided), 4) for k in guided[0]}
                entry["guide_weight"] = round(weight, 4)
            state["step"] = step
            state["log"].append(entry)
            save_checkpoint(work, model, opt, state)
            # a usable model at every checkpoint: a stopped session never leaves nothing
            record = {"hyperparameters": hp, **corpus_stats, "steps_done": step,
                      "tokens_seen": entry["tokens_seen"], "train_seconds": entry["train_seconds"],
                      "log": state["log"]}
            export(model, work / "latest-export", tokenizer_dir, record)
            if not args.no_measure:
                entry["measured"] = measure(work / "latest-export", args.corpus)
                model.train()
                # measured after the checkpoint was safe on disk: its record and the export's take the
                # result in, so a run resumed from here (or ended here) keeps this step's measurement
                add_to_log(work / "ckpt" / "state.json", state["log"])
                add_to_log(work / "latest-export" / "training.json", state["log"])
            print(json.dumps(entry), flush=True)
            running, guided, t0 = [], [], time.time()
            if args.stop_after is not None and step >= args.stop_after:
                print(f"stopped after step {step}; the same command resumes", flush=True)
                return 0
    out = args.out or work / "final"
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(work / "latest-export", out)
    print(f"exported to {out}", flush=True)
    return 0


def hold_lock(work: Path):
    """One run per work folder: a second one (a resume started while the first still runs)
    would interleave checkpoints."""
    import fcntl

    handle = open(work / "run.lock", "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(f"another training run is using {work} (see its log); nothing started") from None
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def git_commit() -> str | None:
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None


def measure(folder: Path, corpus: Path) -> dict:
    """The in-run summary: held-out bits per character per language and the best head of
    each kind, by the app's own detectors (``evaluate_demo_model.quick``)."""
    import evaluate_demo_model

    return evaluate_demo_model.quick(folder, evaluate_demo_model.heldout_files(corpus))


if __name__ == "__main__":
    sys.exit(main())
