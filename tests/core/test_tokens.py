"""The GPT-2 tokenizer: real GPT-2 ids, round trips, and how tokens are shown."""

from __future__ import annotations

import json
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attention_lab.core.paths import tokenizer_dir
from attention_lab.core.tokens import Tokenizer, TokenizerError, byte_decoder

HARD_TEXTS = [
    "",
    "Hello world",
    " the",
    "The big dog bit the mailman yesterday",
    "O cachorro mordeu o carteiro ontem. Ação, coração, pão!",
    "e\u0301 a\u0300 n\u0303",  # combining accents
    "注意力机制 是 Transformer 的核心",  # CJK
    "日本語のテキスト",
    "👋🏽 👨‍👩‍👧 🇧🇷",  # skin tone, ZWJ family, flag
    "שלום עולם مرحبا",  # right-to-left
    "tab\tnew\nline\r\nend",
    "nul\x00bell\x07esc\x1b",
    "    four spaces",
    "<|endoftext|>",
    "a" * 2000,
]


@pytest.fixture(scope="module")
def tok() -> Tokenizer:
    return Tokenizer.from_folder(tokenizer_dir())


def test_gpt2_ids(tok):
    assert tok.encode("Hello world") == [15496, 995]
    assert tok.encode(" the") == [262]
    assert tok.encode("The") == [464]
    assert tok.vocab_size == 50257
    assert tok.eos_id == 50256
    assert tok.encode("<|endoftext|>") == [50256]


@pytest.mark.parametrize("text", HARD_TEXTS)
def test_round_trip(tok, text):
    ids = tok.encode(text)
    assert tok.decode(ids) == text
    # the bytes of the tokens, put together, are exactly the text's UTF-8 bytes
    if "<|endoftext|>" not in text:
        assert b"".join(tok.token_bytes(ids)) == text.encode("utf-8")


def test_token_texts_show_spaces(tok):
    ids = tok.encode("Hello world")
    assert tok.token_texts(ids) == ["Hello", "␣world"]
    assert tok.token_texts(tok.encode(" the")) == ["␣the"]
    assert tok.token_texts(tok.encode("a\nb\tc")) == ["a", "↵", "b", "⇥", "c"]


def test_token_texts_partial_utf8_bytes_are_hex(tok):
    # 👋 is F0 9F 91 8B: GPT-2 splits it into two tokens, neither a whole character
    ids = tok.encode(" 👋")
    texts = tok.token_texts(ids)
    assert "".join(texts) == "␣<0xF0><0x9F><0x91><0x8B>"
    assert len(ids) == 2 and all("<0x" in t for t in texts)
    # a combining accent's bytes (CC 81) arrive as separate pieces too
    assert tok.token_texts(tok.encode("e\u0301")) == ["e", "<0xCC>", "<0x81>"]
    # whole characters are shown as themselves
    assert tok.token_texts(tok.encode("é")) == ["é"]


def test_token_texts_controls_and_specials(tok):
    assert tok.token_texts(tok.encode("a\x00b")) == ["a", "<0x00>", "b"]
    assert tok.token_texts([50256]) == ["<|endoftext|>"]
    assert tok.token_bytes([50256]) == [None]


def test_cjk_and_rtl_are_whole_when_single_tokens(tok):
    texts = tok.token_texts(tok.encode("ש"))
    assert texts == ["ש"]


def test_decode_rejects_ids_outside_vocabulary(tok):
    with pytest.raises(ValueError, match="outside the vocabulary"):
        tok.decode([50257])
    with pytest.raises(ValueError):
        tok.token_texts([-1])


def test_lone_surrogates_do_not_crash(tok):
    ids = tok.encode("a\ud800b")
    assert tok.decode(ids) == "a\ufffdb"


def test_encode_rejects_non_text(tok):
    with pytest.raises(TypeError):
        tok.encode(b"bytes")  # type: ignore[arg-type]


def test_vocab_merges_fallback_matches_tokenizer_json(tmp_path, tok):
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(tokenizer_dir() / name, tmp_path / name)
    fallback = Tokenizer.from_folder(tmp_path)
    assert fallback.vocab_size == tok.vocab_size == 50257
    assert fallback.eos_id == 50256
    for text in HARD_TEXTS:
        assert fallback.encode(text) == tok.encode(text), text
        assert fallback.decode(tok.encode(text)) == text
        assert fallback.token_texts(tok.encode(text)) == tok.token_texts(tok.encode(text))


def test_eos_token_from_tokenizer_config(tmp_path):
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(tokenizer_dir() / name, tmp_path / name)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": {"content": "<|endoftext|>"}}))
    assert Tokenizer.from_folder(tmp_path).eos_id == 50256


def test_missing_tokenizer_is_a_clear_error(tmp_path):
    with pytest.raises(TokenizerError, match="tokenizer.json, or vocab.json and merges.txt"):
        Tokenizer.from_folder(tmp_path)


def test_corrupt_tokenizer_json_is_a_clear_error(tmp_path):
    (tmp_path / "tokenizer.json").write_text('{"model": 12')
    with pytest.raises(TokenizerError, match="unreadable"):
        Tokenizer.from_folder(tmp_path)


def test_corrupt_vocab_is_a_clear_error(tmp_path):
    (tmp_path / "vocab.json").write_text("not json")
    (tmp_path / "merges.txt").write_text("")
    with pytest.raises(TokenizerError, match="unreadable"):
        Tokenizer.from_folder(tmp_path)


def test_byte_decoder_covers_every_byte():
    table = byte_decoder()
    assert sorted(table.values()) == list(range(256))
    assert table["Ġ"] == ord(" ") and table["Ċ"] == ord("\n") and table["A"] == ord("A")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=["Cs"]), max_size=80))
def test_any_text_round_trips(tok, text):
    ids = tok.encode(text)
    assert all(0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == text
    texts = tok.token_texts(ids)
    assert len(texts) == len(ids) and all(isinstance(t, str) and t for t in texts)


def test_text_remark_names_spaces_only_and_byte_pieces():
    from attention_lab.core.tokens import text_remark

    assert text_remark("   ", ["␣", "␣", "␣"]) == "spaces"
    assert text_remark("👋", ["<0xF0><0x9F>", "<0x91><0x8B>"]) == "bytes"
    assert text_remark("The dog", ["The", "␣dog"]) is None
    assert text_remark("", []) is None
