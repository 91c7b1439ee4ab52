"""Fuzzing: arbitrary Unicode text through tokenizer -> lens -> analyses -> lab: no input a learner types may crash it.

Properties, on the tiny checkpoint (2 layers × 12 heads, real GPT-2 tokenizer, 64 positions):

- the tokenizer takes any text (emoji, CJK, combining accents, RTL and bidi controls,
  control characters, NUL, lone surrogates) and gives it back unchanged (lone surrogates
  become U+FFFD), with one visible, single-line label per token;
- under the −∞ mask every attention row sums to 1 (within 1e-5) and the future gets exactly 0;
- editing a token changes nothing before it: causal leakage there is exactly 0.0;
- greedy generation with and without the KV cache gives the same tokens;
- ``run_lab`` and the ``lab`` command, with fuzzed text and flags, either succeed (valid
  JSON, no NaN) or fail with the documented error: ``LabInputError`` / exit 2 with one line.

Texts are kept short (the lens sees at most 40 tokens) so the whole folder runs in well
under two minutes on two busy cores.  Every example is counted (see conftest.py).
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from unittest import mock

import pytest
import torch
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from attention_lab import app
from attention_lab.core import analysis, lab
from attention_lab.core.kvbench import run_kv_benchmark
from attention_lab.core.lab import LabInputError
from attention_lab.core.models import ModelLoadError, load_model

MAX_TOKENS = 40  # what the lens properties look at (the context is 64)

# Pieces a plain random-text generator rarely produces together, each a known trouble-maker.
PIECES = [
    "👋", "👨‍👩‍👧", "🇫🇷", "👍🏽", "🙂🎉", "漢字", "日本語のテキスト", "한국어", "e\u0301", "a\u0308\u0301\u0323",
    "שלום", "مرحبا بالعالم", "\u202e", "\u202d", "\u200f", "\u2066", "\u200b", "\u200d", "\ufeff", "\x00",
    "\x07", "\x1b[31m", "\r\n", "\t", "\x85", "\u2028", "\u2029", "<|endoftext|>", "<|endoftext", "\ud800",
    "\udcff", "\U0010ffff", "\ufffd", " ", "   ", "The", " dog", " yesterday", "ǅ", "ﬁ", "𝕏", "İ", "ß", "\xad",
    "\xa0", "Zalgo\u0336\u0337\u0338", "'", '"', "\\", "{}", "%s", "-", "--text",
]
texts = st.lists(
    st.one_of(st.text(max_size=5), st.sampled_from(PIECES), st.characters()), max_size=8
).map("".join)

FUZZ = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _surrogates_replaced(text: str) -> str:
    return "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c for c in text)


def _ids(model, text: str) -> list[int]:
    return model.tokenizer.encode(text)[:MAX_TOKENS]


# ---------------------------------------------------------------------------- tokenizer
@settings(max_examples=100, **FUZZ)
@given(text=texts)
def test_tokenizer_round_trips_any_text(tiny_model, tally, text):
    tally["fuzz", "tokenizer round trip + token labels"] += 1
    tok = tiny_model.tokenizer
    ids = tok.encode(text)
    assert all(isinstance(i, int) and 0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == _surrogates_replaced(text)
    labels = tok.token_texts(ids)
    assert len(labels) == len(ids)
    for label in labels:
        assert label and len(label.splitlines()) == 1
        assert not any(ord(c) < 0x20 or ord(c) == 0x7F or 0xD800 <= ord(c) <= 0xDFFF for c in label), label


def test_every_vocabulary_token_has_a_visible_one_line_label(tiny_model, tally):
    """Not sampled: all 50,257 tokens (a label with a line break would break tables and chips)."""
    tok = tiny_model.tokenizer
    labels = tok.token_texts(list(range(tok.vocab_size)))
    tally["exhaustive", "vocabulary tokens shown as labels (all of them)"] += len(labels)
    bad = [(i, t) for i, t in enumerate(labels)
           if not t or len(t.splitlines()) != 1 or any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in t)]
    assert bad == []


# ---------------------------------------------------------------------------- lens
@settings(max_examples=80, **FUZZ)
@given(text=texts)
def test_attention_rows_sum_to_one_and_the_future_gets_zero(tiny_model, tally, text):
    tally["fuzz", "attention rows sum to 1, future = 0 (+ portraits, detectors)"] += 1
    ids = _ids(tiny_model, text)
    if not ids:
        with pytest.raises(LabInputError):
            lab.lab_ids(tiny_model, text)
        return
    lens, n = tiny_model.lens, len(ids)
    out = lens(ids, causal=True, mask_mode="-inf", keep_attentions=True, keep_hidden=True)
    assert torch.isfinite(out.logits).all() and torch.isfinite(out.hidden_states).all()
    future = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
    for attn in out.attentions:
        a = attn[0]  # [H, n, n]
        assert torch.isfinite(a).all() and (a >= 0).all()
        assert float((a.sum(-1) - 1).abs().max()) <= 1e-5
        assert bool((a[:, future] == 0).all())  # exactly zero, not merely small
    bidir = lens(ids, causal=False, keep_attentions=True, keep_hidden=False, compute_logits=False)
    for attn in bidir.attentions:
        assert float((attn[0].sum(-1) - 1).abs().max()) <= 1e-5

    per_layer = [a[0] for a in out.attentions]
    if n >= 2:
        heads = analysis.head_portrait(torch.stack(per_layer))
        assert len(heads) == 2 * 12
        for h in heads:
            assert all(math.isfinite(v) for v in (h.mean_distance, h.entropy, h.sink_mass, h.previous_token,
                                                  h.current_token))
    for a in per_layer:
        assert torch.isfinite(analysis.previous_token_scores(a)).all()
        assert torch.isfinite(analysis.duplicate_token_scores(a, ids)).all()
    labels = tiny_model.tokenizer.token_texts(ids)
    assert len(analysis.ascii_mask(n, labels, per_layer[0][0]).splitlines()) == n + 1


# ---------------------------------------------------------------------------- leakage
@settings(max_examples=80, **FUZZ)
@given(text=texts, data=st.data())
def test_causal_leakage_before_the_edit_is_exactly_zero(tiny_model, tally, text, data):
    ids = _ids(tiny_model, text)
    if not ids:
        return
    tally["fuzz", "causal leakage before the edit is exactly 0"] += 1
    position = data.draw(st.integers(0, len(ids) - 1), label="position")
    replacement = data.draw(
        st.integers(0, tiny_model.lens.config.vocab_size - 1).filter(lambda t: t != ids[position]), label="replacement"
    )
    leak = analysis.leakage(tiny_model.lens, ids, position, replacement, mask_mode="-inf")
    assert leak.causal[:position].tolist() == [0.0] * position
    assert bool((leak.causal_layers[:, :position] == 0).all())
    assert leak.causal_max_before == 0.0
    assert float(leak.causal_layers[0, position]) > 0  # the edit itself is seen
    assert torch.isfinite(leak.bidirectional).all() and torch.isfinite(leak.bidirectional_layers).all()


# ---------------------------------------------------------------------------- KV cache
@settings(max_examples=60, **FUZZ)
@given(text=texts, data=st.data())
def test_cached_and_uncached_greedy_generation_agree(tiny_model, tally, text, data):
    ids = _ids(tiny_model, text)
    if not ids:
        return
    tally["fuzz", "greedy generation: KV cache = full recompute"] += 1
    lens, n = tiny_model.lens, len(ids)
    new = data.draw(st.integers(1, min(12, lens.config.n_positions - n)), label="new_tokens")
    result = run_kv_benchmark(lens, ids, new, repetitions=1)  # equality, not timing
    assert result.identical
    assert result.generated_ids == result.generated_ids_without and len(result.generated_ids) == new
    assert result.cache_positions == n + new - 1
    stability = analysis.kv_stability(lens, ids, appended_id=result.generated_ids[0])
    assert bool((stability.causal_keys == 0).all() and (stability.causal_values == 0).all())


# ---------------------------------------------------------------------------- the whole lab
ODD_INTS = st.one_of(st.integers(-70, 70), st.sampled_from([10**9, -(10**9), 2**63, -(2**63) - 1]))


@settings(max_examples=60, **FUZZ)
@given(
    text=st.one_of(texts, st.sampled_from(["", " ", "\n\t", "\u3000", "\x1c", "word " * 70])),
    layer=st.one_of(st.integers(-2, 3), ODD_INTS),
    head=st.one_of(st.integers(-2, 13), ODD_INTS),
    position=st.one_of(st.none(), st.integers(-45, 45), ODD_INTS),
    replacement=st.one_of(st.none(), st.sampled_from(PIECES), st.text(max_size=3),
                          st.integers(-3, 50260)),
    new_tokens=st.one_of(st.integers(-2, 10), st.sampled_from([0, 63, 64, 10**9])),
    bos=st.booleans(),
)
def test_run_lab_succeeds_or_says_why(tiny_model, tally, text, layer, head, position, replacement, new_tokens, bos):
    tally["fuzz", "run_lab with fuzzed text and arguments"] += 1
    try:
        result = lab.run_lab(tiny_model, text=text, layer=layer, head=head, position=position,
                             replacement=replacement, new_tokens=new_tokens, bos=bos)
    except LabInputError as exc:
        message = str(exc)
        assert message and len(message.splitlines()) == 1
        return
    line = app.json_line(result)  # raises on NaN/inf (allow_nan=False)
    line.encode("utf-8")  # valid UTF-8, whatever the text held
    back = json.loads(line)
    assert back["text"] == text and back["kv_cache"]["identical"] is True
    p = back["leakage"]["position"]
    assert back["leakage"]["causal"][:p] == [0.0] * p
    assert lab.render_text(result)


# ---------------------------------------------------------------------------- the command line
INT_WORDS = ["-1", "0", "1", "2", "12", "63", "64", "99", "1e3", "x", "", " 1", "٣", "1_0", "-0", "+1", "0x10",
             "9" * 30, "1.5", "nan", "∞"]
FLAG_VALUES = {
    "--layer": INT_WORDS,
    "--head": INT_WORDS,
    "--position": INT_WORDS,
    "--new-tokens": INT_WORDS,
    "--replacement": PIECES + [" today", "tomorrow", ""],
    "--text": PIECES + ["The big dog", "-x", "word " * 70],
}
flag_pairs = st.sampled_from(sorted(FLAG_VALUES)).flatmap(
    lambda flag: st.tuples(st.just(flag), st.one_of(st.sampled_from(FLAG_VALUES[flag]), st.text(max_size=6)))
)


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = app.main(argv)
    return rc, out.getvalue(), err.getvalue()


@settings(max_examples=60, **FUZZ)
@given(pairs=st.lists(flag_pairs, max_size=4), bos=st.booleans(), glued=st.booleans())
def test_lab_command_exits_0_or_2_with_one_line(tiny_model, tiny_checkpoint, tally, pairs, bos, glued):
    tally["fuzz", "lab command lines with fuzzed flags"] += 1
    argv = ["lab", "--model", str(tiny_checkpoint), "--json"] + (["--bos"] if bos else [])
    if not any(flag == "--new-tokens" for flag, _ in pairs):
        argv += ["--new-tokens", "3"]  # keeps each example fast
    for flag, value in pairs:
        argv += [f"{flag}={value}"] if glued else [flag, value]
    with mock.patch("attention_lab.core.models.load_model", return_value=tiny_model):
        rc, out, err = run_main(argv)
    assert rc in (0, 2), (argv, err)
    if rc == 0:
        assert err == ""
        assert isinstance(json.loads(out), dict)
    else:
        assert out == ""
        assert len(err.strip().splitlines()) == 1 and err.startswith("attention-lab") and "Traceback" not in err


# ---------------------------------------------------------------------------- model specs
SPEC_PREFIXES = ["", "/", "./", "../", "~", "~nosuchuser/", "C:\\", "\\\\server\\share\\", "hf://", "https://",
                 "demo", "gpt2", "owner/", "/dev/", "/proc/self/", "$(", "`", ";", "|", "-", "x" * 300 + "/"]


@settings(max_examples=80, deadline=None,
          suppress_health_check=[*FUZZ["suppress_health_check"], HealthCheck.function_scoped_fixture])
@given(prefix=st.sampled_from(SPEC_PREFIXES), rest=texts)
@example(prefix="~", rest="\x00")  # found by this test: os.path.expanduser raised ValueError on NUL
def test_any_model_spec_loads_or_raises_model_load_error(tmp_path, monkeypatch, tally, prefix, rest):
    tally["fuzz", "model specs (load_model)"] += 1
    # nothing real to find: an empty HF cache, no downloads, no demo model
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "downloads"))
    monkeypatch.setenv("ATTENTION_LAB_RESOURCES", str(tmp_path / "no-resources"))
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(var, raising=False)
    spec = prefix + rest
    try:
        load_model(spec)
    except ModelLoadError as exc:
        assert str(exc) and len(str(exc).splitlines()) == 1
    else:  # only a real model folder may load, and nothing here is one
        pytest.fail(f"{spec!r} loaded a model")
