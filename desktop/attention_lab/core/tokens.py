"""GPT-2's byte-level BPE tokenizer, and how each token is shown to a learner.

Wraps a ``tokenizers.Tokenizer`` (the Rust library) directly: importing transformers
would cost seconds at startup and adds nothing here.

How :meth:`Tokenizer.token_texts` shows a token (display only, not reversible):

- a space is shown as ``␣`` (``" world"`` -> ``"␣world"``), a newline as ``↵``, a tab as
  ``⇥``, a carriage return as ``␍``;
- GPT-2 works on bytes, so one character can be split across tokens (``"👋"`` is two
  tokens).  Bytes that are not a complete UTF-8 character on their own are shown as
  ``<0xF0>``-style hex, one per byte, so the learner sees that the token is a piece of
  a character; other control characters (NUL…) are shown the same way;
- special tokens (``<|endoftext|>``) are shown as they are written.

As in transformers' GPT-2 tokenizer, ``<|endoftext|>`` typed in the text is encoded as
the special token (id 50256).
"""

from __future__ import annotations

import json
import os
import re
from functools import lru_cache
from pathlib import Path

import tokenizers
from tokenizers import decoders, models, pre_tokenizers

from . import messages

EOS_TEXT = "<|endoftext|>"

_SURROGATES = re.compile("[\ud800-\udfff]")
_VISIBLE = {" ": "␣", "\n": "↵", "\t": "⇥", "\r": "␍"}


class TokenizerError(messages.KeyedError, ValueError):
    """The tokenizer files are missing or unreadable (one readable line, keyed: :mod:`attention_lab.core.messages`)."""


@lru_cache(maxsize=1)
def byte_decoder() -> dict[str, int]:
    """GPT-2's byte-level alphabet, inverted: printable stand-in character -> byte."""
    # The 188 printable Latin-1 bytes stand for themselves; the other 68 (controls, space,
    # soft hyphen…) are shifted to U+0100 and above, so that every byte has a visible char.
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for b in range(256):
        if b not in printable:
            printable.append(b)
            chars.append(256 + extra)
            extra += 1
    return {chr(c): b for b, c in zip(printable, chars)}


def _show_bytes(data: bytes) -> str:
    """Readable text for a token's bytes (see the module docstring for the rules)."""
    # surrogateescape maps every byte that is not part of a valid UTF-8 character to a
    # lone surrogate U+DC80..U+DCFF, which we then print as <0xNN>.
    text = data.decode("utf-8", errors="surrogateescape")
    out = []
    for ch in text:
        code = ord(ch)
        if 0xDC80 <= code <= 0xDCFF:
            out.append(f"<0x{code - 0xDC00:02X}>")
        elif ch in _VISIBLE:
            out.append(_VISIBLE[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"<0x{code:02X}>")
        else:
            out.append(ch)
    return "".join(out)


def _clean(text: str) -> str:
    # Python strings may hold lone surrogates (from a broken paste or a fuzzer); the Rust
    # tokenizer refuses them, so they become U+FFFD like any invalid character would.
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    return _SURROGATES.sub("\ufffd", text)


def _read_special(folder: Path, key: str) -> str | None:
    """``eos_token`` etc. from tokenizer_config.json / special_tokens_map.json, if present."""
    for name in ("tokenizer_config.json", "special_tokens_map.json"):
        path = folder / name
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        value = raw.get(key) if isinstance(raw, dict) else None
        if isinstance(value, dict):
            value = value.get("content")
        if isinstance(value, str) and value:
            return value
    return None


class Tokenizer:
    """GPT-2 tokenizer: text <-> ids, plus each token's own readable text."""

    def __init__(self, backend: tokenizers.Tokenizer, eos_token: str = EOS_TEXT, source: Path | None = None):
        self._tok = backend
        self.source = source
        self.vocab_size: int = backend.get_vocab_size(with_added_tokens=True)
        eos = backend.token_to_id(eos_token)
        if eos is None:
            eos = backend.token_to_id(EOS_TEXT)
        if eos is None:
            raise TokenizerError.keyed("tokenizer.no_eos", token=repr(eos_token))
        self.eos_id: int = eos
        self._byte_level = isinstance(backend.decoder, decoders.ByteLevel)
        self._special = {t.content for t in backend.get_added_tokens_decoder().values() if t.special}

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_folder(cls, folder: str | os.PathLike) -> "Tokenizer":
        """Load ``tokenizer.json``, or build the same tokenizer from ``vocab.json`` + ``merges.txt``."""
        folder = Path(folder)
        eos = _read_special(folder, "eos_token") or EOS_TEXT
        tj = folder / "tokenizer.json"
        if tj.is_file():
            try:
                backend = tokenizers.Tokenizer.from_file(str(tj))
            except Exception as exc:  # the Rust parser raises plain Exception
                raise TokenizerError.keyed("tokenizer.unreadable", folder=folder, detail=_first_line(exc)) from None
            return cls(backend, eos, folder)
        vocab, merges = folder / "vocab.json", folder / "merges.txt"
        if vocab.is_file() and merges.is_file():
            return cls(_byte_level_bpe(vocab, merges), eos, folder)
        raise TokenizerError.keyed("tokenizer.missing", folder=folder)

    # ------------------------------------------------------------------ text <-> ids
    def encode(self, text: str) -> list[int]:
        return self._tok.encode(_clean(text), add_special_tokens=False).ids

    def decode(self, ids: list[int]) -> str:
        ids = self._check_ids(ids)
        return self._tok.decode(ids, skip_special_tokens=False)

    def token_bytes(self, ids: list[int]) -> list[bytes | None]:
        """Each token's raw bytes (``None`` for special tokens, which are not text)."""
        out: list[bytes | None] = []
        table = byte_decoder()
        for i in self._check_ids(ids):
            piece = self._tok.id_to_token(i)
            if piece is None or piece in self._special:
                out.append(None)
            elif self._byte_level and all(ch in table for ch in piece):
                out.append(bytes(table[ch] for ch in piece))
            else:  # not a byte-level tokenizer: the decoder knows best
                out.append(self._tok.decode([i], skip_special_tokens=False).encode("utf-8", "surrogateescape"))
        return out

    def token_texts(self, ids: list[int]) -> list[str]:
        """Each token's own text, made visible: ``"␣world"``, ``"<0xF0><0x9F>"``, ``"<|endoftext|>"``."""
        ids = self._check_ids(ids)
        texts = []
        for i, data in zip(ids, self.token_bytes(ids)):
            texts.append((self._tok.id_to_token(i) or "") if data is None else _show_bytes(data))
        return texts

    def _check_ids(self, ids) -> list[int]:
        ids = [int(i) for i in ids]
        for i in ids:
            if not 0 <= i < self.vocab_size:
                raise ValueError(f"token id {i} is outside the vocabulary [0, {self.vocab_size})")
        return ids

    def __repr__(self) -> str:
        return f"Tokenizer(vocab_size={self.vocab_size}, eos_id={self.eos_id}, source={self.source})"


def _byte_level_bpe(vocab: Path, merges: Path) -> tokenizers.Tokenizer:
    """GPT-2's tokenizer from the classic two files, configured like its tokenizer.json."""
    try:
        bpe = models.BPE.from_file(str(vocab), str(merges))
    except Exception as exc:
        raise TokenizerError.keyed("tokenizer.vocab_unreadable", folder=vocab.parent, detail=_first_line(exc)) from None
    backend = tokenizers.Tokenizer(bpe)
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    if backend.token_to_id(EOS_TEXT) is not None:
        # so that "<|endoftext|>" in a text is one special token, as with tokenizer.json
        backend.add_special_tokens([EOS_TEXT])
    return backend


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def text_remark(text: str, token_texts: list[str]) -> str | None:
    """What a learner needs told about an unusual text, as a key: ``"spaces"`` when the text is only
    whitespace (each space becomes a ``␣`` token: nothing for attention to relate), ``"bytes"`` when some
    token is a piece of a character (``<0xF0>``: byte-level BPE splits what its vocabulary lacks into
    UTF-8 bytes); ``None`` for an ordinary text."""
    if text and not text.strip():
        return "spaces"
    if any("<0x" in shown for shown in token_texts):
        return "bytes"
    return None
