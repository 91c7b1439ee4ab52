"""How long does a GPT-2 of the demo model's head shape take to learn copying in context?

The demo model's recipe (``train_demo_model.py``) needs an induction head, and its runs stayed on
the "copy plateau" -- the loss on tokens that only copying can predict stays at ln(vocabulary) --
for as long as they ran.  This probe trains small GPT-2s on synthetic rows alone, so a lever
(rows, learning rate, width, depth) can be tried in minutes instead of an hour:

    python packaging/copy_plateau_probe.py --layout twice --steps 3000
    python packaging/copy_plateau_probe.py --layout mix --seq 64 --seg-min 4 --seg-max 16 --batch 32

Every 100 steps it prints one JSON line: the mean loss over those steps on the positions only
copying predicts (``copy_loss``; ln V is the plateau), and every ``--measure-every`` steps the best
head by attention on a random segment said twice: ``induction`` (attention from a second-copy
token to the position after its first occurrence), ``duplicate_token`` (to its first occurrence)
and ``previous_token`` (to i - 1), each with its (layer, head); ``--save`` keeps the model.  Rows (``--layout``):

* ``twice``: random segments, each said twice in a row, until the row is full;
* ``period2``: snippets "A B A B ...", where the answer is the token two back (a previous-token
  head and a copy are enough);
* ``mix``: even rows ``period2``, odd rows ``twice`` (``copy_loss`` is the ``twice`` rows');
  ``mix-spread`` likewise with ``spread`` rows;
* ``half``: one random segment of half the row, said twice (a fixed offset: solvable by
  position alone, without an induction head);
* ``alphabet``: like ``twice``, but every segment of a row is drawn from an alphabet of
  ``--alphabet`` tokens of the row's own, so knowing which tokens the row holds narrows the
  next one to the alphabet and no further: past ln(alphabet), only "what followed it last time" pays;
* ``spread``: random tokens in which segments are said again after a random gap of up to
  ``--gap-max`` tokens, so the distance back to the first copy varies from row to row and from
  segment to segment: no fixed distance pays, only "what followed it last time".

Deterministic for the same arguments (seeds fixed); float32 on CPU; nothing is saved unless ``--save``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))

from train_demo_model import said_twice, sinusoid_table  # noqa: E402

LAYOUTS = ("twice", "period2", "mix", "half", "alphabet", "spread", "mix-spread")


def parse(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--embd", type=int, default=192, help="width (12 heads of 16 at the default)")
    p.add_argument("--heads", type=int, default=12)
    p.add_argument("--vocab", type=int, default=2000, help="the model's vocabulary, every token drawn from it")
    p.add_argument("--segment-vocab", type=int, default=0,
                   help="draw the rows' tokens from the first K ids only (0: the whole vocabulary)")
    p.add_argument("--alphabet", type=int, default=16, help="tokens per row in the alphabet layout")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--seq", type=int, default=128)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--weight-decay", type=float, default=0.01)
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--seg-min", type=int, default=8)
    p.add_argument("--seg-max", type=int, default=32)
    p.add_argument("--gap-max", type=int, default=16, help="the spread layout's longest gap between a segment and its copy")
    p.add_argument("--layout", choices=LAYOUTS, default="twice")
    p.add_argument("--sinusoid", type=float, default=0.0,
                   help="start the position table as a sinusoid of this scale (0: transformers' initialisation)")
    p.add_argument("--measure-every", type=int, default=500)
    p.add_argument("--measure-half", type=int, default=20,
                   help="distinct tokens said twice for the head measure; inside the rows' segment lengths a "
                        "layer-0 head that looks a fixed distance back scores too: keep it longer than they are")
    p.add_argument("--init-range", type=float, default=0.02, help="transformers' initializer_range (std of the weights)")
    p.add_argument("--attn-only", action="store_true",
                   help="replace every block's MLP by zero (the toy models of the induction-head literature)")
    p.add_argument("--save", type=Path, help="save the model here (safetensors) at every head measure and at the end")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def make_rows(args, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch of rows and, for each token, whether only copying from earlier in the row
    predicts it (the ``twice``, ``alphabet`` and ``half`` rows' second copies after their first token; the
    ``period2`` snippets after their first two)."""
    drawn = args.segment_vocab or args.vocab
    rows = torch.empty((args.batch, args.seq), dtype=torch.long)
    copyable = torch.zeros_like(rows, dtype=torch.bool)
    for r in range(args.batch):
        kind = args.layout
        if args.layout.startswith("mix"):
            kind = "period2" if r % 2 == 0 else ("twice" if args.layout == "mix" else "spread")
        if kind == "half":
            h = args.seq // 2
            segment = torch.randint(0, drawn, (h,), generator=gen)
            rows[r, :h], rows[r, h : 2 * h] = segment, segment
            rows[r, 2 * h :] = segment[: args.seq - 2 * h]
            copyable[r, h + 1 : 2 * h] = True
            continue
        if kind == "period2":
            at = 0
            while at < args.seq:
                length = int(torch.randint(8, 25, (), generator=gen))
                pair = torch.randint(0, drawn, (2,), generator=gen)
                piece = pair.repeat(length // 2 + 1)[: min(length, args.seq - at)]
                copyable[r, at + 2 : at + len(piece)] = True
                rows[r, at : at + len(piece)] = piece
                at += len(piece)
            continue
        if kind == "alphabet":
            alphabet = torch.randperm(drawn, generator=gen)[: args.alphabet]

            def draw(length: int, alphabet=alphabet) -> torch.Tensor:
                return alphabet[torch.randint(0, len(alphabet), (length,), generator=gen)]
        else:
            def draw(length: int) -> torch.Tensor:
                return torch.randint(0, drawn, (length,), generator=gen)
        if kind == "spread":
            rows[r], copyable[r] = said_again(args.seq, args.seg_min, args.seg_max, args.gap_max, draw, gen)
            continue
        rows[r], copyable[r] = said_twice(args.seq, args.seg_min, args.seg_max, draw, gen)
    return rows, copyable


def said_again(n: int, min_len: int, max_len: int, gap_max: int, draw, gen: torch.Generator):
    """A row of ``n`` random tokens in which segments are said a second time after a random gap
    (0 .. ``gap_max`` random tokens), one pair after another, and which tokens only copying predicts."""
    row = draw(n)
    copyable = torch.zeros(n, dtype=torch.bool)
    at = int(torch.randint(0, max_len + 1, (), generator=gen))
    while at + 2 * min_len <= n:
        length = int(torch.randint(min_len, max_len + 1, (), generator=gen))
        gap = int(torch.randint(0, gap_max + 1, (), generator=gen))
        copy_at = at + length + gap
        if copy_at + length > n:
            break
        row[copy_at : copy_at + length] = row[at : at + length]
        copyable[copy_at + 1 : copy_at + length] = True
        at = copy_at + length + int(torch.randint(0, max_len + 1, (), generator=gen))
    return row, copyable


def best_heads(model, vocab: int, half: int = 20) -> dict:
    """The best induction and previous-token head, by attention, on ``half`` distinct random tokens said twice."""
    gen = torch.Generator().manual_seed(99)
    segment = torch.randperm(vocab, generator=gen)[:half]  # distinct: each second-copy token has one earlier place
    ids = torch.cat([segment, segment])[None]
    model.eval()
    trained_with = model.config._attn_implementation
    model.config._attn_implementation = "eager"  # the one that hands its attention weights back
    try:
        with torch.no_grad():
            attentions = model(input_ids=ids, output_attentions=True).attentions  # layers × [1, H, n, n]
    finally:
        model.config._attn_implementation = trained_with
        model.train()
    n = ids.shape[1]
    second, later = torch.arange(half + 1, n), torch.arange(1, n)
    induction = torch.stack([a[0][:, second, second - half + 1].mean(-1) for a in attentions])
    duplicate = torch.stack([a[0][:, second, second - half].mean(-1) for a in attentions])
    previous = torch.stack([a[0][:, later, later - 1].mean(-1) for a in attentions])

    def best(scores: torch.Tensor) -> dict:
        at = int(scores.argmax())
        return {"score": round(float(scores.max()), 3), "layer_head": list(divmod(at, scores.shape[1]))}

    return {"induction": best(induction), "previous_token": best(previous), "duplicate_token": best(duplicate)}


class NoMLP(torch.nn.Module):
    def forward(self, hidden_states):
        return torch.zeros_like(hidden_states)


def make_model(args):
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(args.seed)
    config = GPT2Config(vocab_size=args.vocab, n_positions=max(256, args.seq), n_embd=args.embd, n_layer=args.layers,
                        n_head=args.heads, resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, tie_word_embeddings=True,
                        bos_token_id=0, eos_token_id=0, initializer_range=args.init_range)
    model = GPT2LMHeadModel(config)
    if args.attn_only:
        for block in model.transformer.h:
            block.mlp = NoMLP()
    if args.sinusoid:
        with torch.no_grad():
            model.transformer.wpe.weight.copy_(sinusoid_table(config.n_positions, args.embd) * args.sinusoid)
    return model


def main(argv=None) -> int:
    args = parse(argv)
    torch.set_num_threads(args.threads)
    model = make_model(args)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=args.lr, betas=(0.9, 0.95))
    gen = torch.Generator().manual_seed(args.seed + 1)
    print(json.dumps({"plateau": round(math.log(args.vocab), 3), **vars(args)}, default=str), flush=True)
    t0, window = time.time(), []
    for step in range(1, args.steps + 1):
        for group in opt.param_groups:
            group["lr"] = args.lr * min(1.0, step / args.warmup)
        rows, copyable = make_rows(args, gen)
        logits = model(input_ids=rows).logits[:, :-1]
        losses = torch.nn.functional.cross_entropy(
            logits.reshape(-1, args.vocab), rows[:, 1:].reshape(-1), reduction="none").view(rows.shape[0], -1)
        losses.mean().backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        scored = copyable[:, 1:].clone()
        if args.layout.startswith("mix"):
            scored[0::2] = False  # the period-2 rows are learnt in a few hundred steps: report the copies
        window.append(float(losses.detach()[scored].mean()))
        if step % 100 == 0:
            line = {"step": step, "copy_loss": round(sum(window) / len(window), 3), "seconds": round(time.time() - t0)}
            if step % args.measure_every == 0:
                line.update(best_heads(model, args.segment_vocab or args.vocab, args.measure_half))
                if args.save:
                    model.save_pretrained(str(args.save), safe_serialization=True)
            print(json.dumps(line), flush=True)
            window = []
    measured_last = args.steps % 100 == 0 and args.steps % args.measure_every == 0  # (and saved then)
    if args.save and not measured_last:
        model.save_pretrained(str(args.save), safe_serialization=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
