"""Convert GPT-2's byte-level BPE from the openai-whisper sdist into Hugging Face files.

There is no model hub on the machines this project is built on, but PyPI's
``openai-whisper`` source distribution ships GPT-2's tokenizer (MIT licensed) as
``whisper/assets/gpt2.tiktoken``.  This script turns it, once, into the standard
``vocab.json`` + ``merges.txt`` + ``tokenizer.json`` that ``resources/tokenizer``
holds, and checks the result against tiktoken itself on a sample of text.

Usage (the sdist is fetched with pip, from the package registry only)::

    pip download --no-deps --no-binary :all: openai-whisper==20250625 -d /tmp/w
    tar xzf /tmp/w/openai_whisper-20250625.tar.gz -C /tmp/w
    python packaging/convert_gpt2_tokenizer.py /tmp/w/openai_whisper-20250625 resources/tokenizer
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

END_OF_TEXT = "<|endoftext|>"
END_OF_TEXT_ID = 50256
# GPT-2's pre-tokenisation pattern (the one tiktoken's "gpt2" encoding uses).
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def convert(whisper_root: Path, out: Path) -> None:
    from transformers import PreTrainedTokenizerFast
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tiktoken_file = whisper_root / "whisper" / "assets" / "gpt2.tiktoken"
    vocab, merges = TikTokenConverter(vocab_file=str(tiktoken_file)).extract_vocab_merges_from_model(
        str(tiktoken_file)
    )
    vocab[END_OF_TEXT] = END_OF_TEXT_ID
    if len(vocab) != 50257:
        raise SystemExit(f"expected 50257 tokens, got {len(vocab)}")

    out.mkdir(parents=True, exist_ok=True)
    (out / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    with (out / "merges.txt").open("w", encoding="utf-8") as fh:
        fh.write("#version: 0.2\n")
        for left, right in merges:
            fh.write(f"{left} {right}\n")

    # Build the fast tokenizer explicitly (same components as GPT-2's own tokenizer.json).
    from tokenizers import AddedToken, Tokenizer, decoders, pre_tokenizers, processors
    from tokenizers.models import BPE

    backend = Tokenizer(BPE(vocab=vocab, merges=merges, fuse_unk=False))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.post_processor = processors.ByteLevel(trim_offsets=False)
    backend.add_special_tokens([AddedToken(END_OF_TEXT, special=True)])
    tok = PreTrainedTokenizerFast(
        tokenizer_object=backend,
        bos_token=END_OF_TEXT,
        eos_token=END_OF_TEXT,
        unk_token=END_OF_TEXT,
        model_max_length=1024,
    )
    tok.save_pretrained(str(out))
    shutil.copy(whisper_root / "LICENSE", out / "LICENSE.openai-whisper.txt")
    check(tiktoken_file, out)


def check(tiktoken_file: Path, out: Path) -> None:
    """Compare with tiktoken's own GPT-2 encoder on varied text."""
    import tiktoken
    from tiktoken.load import load_tiktoken_bpe
    from transformers import AutoTokenizer

    reference = tiktoken.Encoding(
        name="gpt2",
        pat_str=GPT2_PATTERN,
        mergeable_ranks=load_tiktoken_bpe(str(tiktoken_file)),
        special_tokens={END_OF_TEXT: END_OF_TEXT_ID},
    )
    ours = AutoTokenizer.from_pretrained(str(out))
    samples = [
        "Hello world",
        " the",
        "O Brasil é gigante pela própria natureza.",
        "o cachorro grande mordeu o carteiro ontem",
        "def f(x):\n    return x ** 2  # squares\n\n",
        "Ünïcödé — “quotes” 日本語 🙂 and   spaces\t\ttabs",
    ]
    corpus = Path("/usr/share/games/fortunes/fortunes")
    if corpus.exists():
        samples += corpus.read_text(encoding="utf-8", errors="replace").split("\n%\n")[:2000]
    bad = [s for s in samples if ours.encode(s) != reference.encode_ordinary(s)]
    if bad:
        raise SystemExit(f"{len(bad)} of {len(samples)} samples differ from tiktoken, e.g. {bad[0]!r}")
    print(f"tokenizer written to {out}; {len(samples)} samples identical to tiktoken")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("whisper_root", type=Path, help="unpacked openai-whisper sdist")
    parser.add_argument("out", type=Path, help="output folder, e.g. resources/tokenizer")
    args = parser.parse_args(argv)
    convert(args.whisper_root, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
