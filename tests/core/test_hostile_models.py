"""Hostile or broken model folders: each gets a one-line ModelLoadError, never a crash.

The pickle case uses a checkpoint that *would* create a file if unpickled, and checks the
file never appears: the loader must refuse ``pytorch_model.bin`` without opening it.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import struct
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from attention_lab.core.models import ModelLoadError, load_model
from model_fixtures import isolated_dirs  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("isolated_dirs")


class WritesAFile:
    """Unpickling this object creates ``path``: proof that a pickle was (not) loaded."""

    def __init__(self, path: Path):
        self.path = str(path)

    def __reduce__(self):
        return (io.open, (self.path, "w"))


def write_evil_checkpoint(path: Path, marker: Path) -> None:
    torch.save({"transformer.wte.weight": WritesAFile(marker)}, str(path))


# ---------------------------------------------------------------------------- folder breakers
def edit_config(folder: Path, **changes) -> None:
    cfg = json.loads((folder / "config.json").read_text())
    for k, v in changes.items():
        if v is None:
            cfg.pop(k, None)
        else:
            cfg[k] = v
    (folder / "config.json").write_text(json.dumps(cfg))


def edit_weights(folder: Path, fn) -> None:
    state = load_file(str(folder / "model.safetensors"))
    fn(state)
    save_file({k: v.contiguous() for k, v in state.items()}, str(folder / "model.safetensors"), metadata={"format": "pt"})


def truncate(path: Path, fraction: float = 0.5) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * fraction)])


def small_word_tokenizer(folder: Path) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {"<|endoftext|>": 0, **{f"w{i}": i + 1 for i in range(99)}}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<|endoftext|>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))


def _nan(state):
    state["transformer.h.0.attn.c_attn.weight"][0, 0] = float("nan")


def _drop_layer(state):
    for k in [k for k in state if k.startswith("transformer.h.1.")]:
        del state[k]


def _shards(folder: Path, names: list[str]) -> None:
    state = load_file(str(folder / "model.safetensors"))
    (folder / "model.safetensors").unlink()
    save_file(state, str(folder / "model-00001-of-00001.safetensors"), metadata={"format": "pt"})
    weight_map = {k: names[i % len(names)] for i, k in enumerate(sorted(state))}
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))


def _duplicate_files(folder: Path) -> None:
    (folder / "model.safetensors").rename(folder / "a.safetensors")
    shutil.copy(folder / "a.safetensors", folder / "b.safetensors")


def _huge_header(folder: Path) -> None:
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", 2**62) + b"{}")


def _loop(folder: Path, name: str) -> None:
    (folder / name).unlink(missing_ok=True)
    os.symlink(name + ".other", folder / name)
    os.symlink(name, folder / (name + ".other"))


def _dangling(folder: Path, name: str) -> None:
    (folder / name).unlink()
    os.symlink(folder / "nowhere" / name, folder / name)


CASES = {
    # missing files
    "no-config": (lambda f: (f / "config.json").unlink(), r"no config\.json in"),
    "no-weights": (lambda f: (f / "model.safetensors").unlink(), r"no weights in .*model\.safetensors"),
    "only-tensorflow-weights": (
        lambda f: (f / "model.safetensors").rename(f / "tf_model.h5"),
        r"only in tf_model\.h5.*safetensors",
    ),
    # corrupt weights
    "truncated-safetensors": (lambda f: truncate(f / "model.safetensors"), r"model\.safetensors .*truncated or corrupt"),
    "truncated-header": (lambda f: truncate(f / "model.safetensors", 0.0001), r"truncated or corrupt"),
    "empty-safetensors": (lambda f: (f / "model.safetensors").write_bytes(b""), r"truncated or corrupt"),
    "garbage-safetensors": (lambda f: (f / "model.safetensors").write_bytes(os.urandom(4096)), r"truncated or corrupt"),
    "absurd-header-length": (_huge_header, r"truncated or corrupt"),
    "nan-weights": (lambda f: edit_weights(f, _nan), r"are damaged: .*NaN or infinite"),
    "duplicate-tensors": (_duplicate_files, r"appears in more than one weight file"),
    # shapes that don't match the config
    "wider-config": (lambda f: edit_config(f, n_embd=96), r"don't match its config\.json: .*shape"),
    "more-layers-in-config": (lambda f: edit_config(f, n_layer=3), r"missing tensor 'transformer\.h\.2\."),
    "missing-layer-weights": (lambda f: edit_weights(f, _drop_layer), r"missing tensor 'transformer\.h\.1\."),
    "longer-context-in-config": (lambda f: edit_config(f, n_positions=128), r"wpe\.weight.*shape"),
    # configs that are not GPT-2, or not usable
    "llama": (
        lambda f: edit_config(f, model_type="llama", architectures=["LlamaForCausalLM"]),
        r"holds a llama model \(LlamaForCausalLM\); Attention Lab loads only GPT-2",
    ),
    "bert": (lambda f: edit_config(f, model_type="bert", architectures=["BertModel"]), r"bert model .*only GPT-2"),
    "no-model-type": (lambda f: edit_config(f, model_type=None, architectures=None), r"a model of unknown type .*only GPT-2"),
    "gpt2-classifier": (
        lambda f: edit_config(f, architectures=["GPT2ForSequenceClassification"]),
        r"GPT2ForSequenceClassification.*supported: GPT2LMHeadModel",
    ),
    "cross-attention": (lambda f: edit_config(f, add_cross_attention=True), r"cross-attention"),
    "config-not-json": (lambda f: (f / "config.json").write_text("{model_type: gpt2"), r"config\.json .*not valid JSON"),
    "config-not-utf8": (lambda f: (f / "config.json").write_bytes(b"\xff\xfe\x00"), r"not valid JSON"),
    "config-is-a-list": (lambda f: (f / "config.json").write_text("[1, 2]"), r"not a JSON object"),
    "config-bad-number": (lambda f: edit_config(f, n_layer="two"), r"not usable: n_layer must be a positive integer"),
    "config-zero-heads": (lambda f: edit_config(f, n_head=0), r"n_head must be a positive integer"),
    "config-indivisible": (lambda f: edit_config(f, n_head=5), r"not divisible"),
    "config-unknown-activation": (lambda f: edit_config(f, activation_function="swish"), r"activation 'swish'"),
    "config-unhashable-activation": (lambda f: edit_config(f, activation_function=["gelu"]), r"not usable"),
    "config-huge": (
        lambda f: (f / "config.json").write_text('{"model_type": "gpt2", "pad": "' + "x" * (9 * 2**20) + '"}'),
        r"far too large",
    ),
    "config-deeply-nested": (lambda f: (f / "config.json").write_text("[" * 100000 + "]" * 100000), r"not valid JSON"),
    # tokenizers
    "no-tokenizer": (
        lambda f: [(f / n).unlink() for n in ("tokenizer.json", "vocab.json", "merges.txt")],
        r"no tokenizer in .*tokenizer\.json, or vocab\.json and merges\.txt",
    ),
    "corrupt-tokenizer": (lambda f: (f / "tokenizer.json").write_text("{"), r"tokenizer\.json .*unreadable"),
    "tokenizer-of-another-model": (small_word_tokenizer, r"tokenizer .*has 100 tokens but the model's vocabulary has 50257"),
    "vocab-smaller-than-tokenizer": (lambda f: edit_config(f, vocab_size=50000), r"50257 tokens but the model's vocabulary has 50000"),
    # shard indexes
    "index-escapes-folder": (lambda f: _shards(f, ["../outside.safetensors"]), r"invalid shard file '\.\./outside"),
    "index-absolute-path": (lambda f: _shards(f, ["/etc/passwd"]), r"invalid shard file '/etc/passwd'"),
    "index-missing-shard": (
        lambda f: _shards(f, ["model-00001-of-00001.safetensors", "model-00002-of-00002.safetensors"]),
        r"model-00002-of-00002\.safetensors is missing",
    ),
    "index-without-map": (
        lambda f: (_shards(f, ["model-00001-of-00001.safetensors"]), (f / "model.safetensors.index.json").write_text("{}")),
        r"has no weight_map",
    ),
    # symbolic links
    "weights-symlink-loop": (lambda f: _loop(f, "model.safetensors"), r"model\.safetensors is a symbolic link that loops"),
    "config-symlink-loop": (lambda f: _loop(f, "config.json"), r"config\.json is a symbolic link that loops"),
    "tokenizer-symlink-loop": (lambda f: _loop(f, "tokenizer.json"), r"tokenizer\.json is a symbolic link that loops"),
    "dangling-weights-symlink": (lambda f: _dangling(f, "model.safetensors"), r"loops or points to nothing"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_broken_folder_is_a_clear_error(case, tiny_checkpoint, tmp_path):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    breaker, expected = CASES[case]
    breaker(folder)
    with pytest.raises(ModelLoadError, match=expected) as err:
        load_model(folder)
    message = str(err.value)
    assert "\n" not in message and len(message) < 600
    assert "Traceback" not in message


# ---------------------------------------------------------------------------- pickle
@pytest.fixture
def pickle_tripwire(monkeypatch):
    """Fail loudly if anything tries to unpickle while a model loads."""
    calls = []

    def tripped(*args, **kwargs):
        calls.append(args)
        raise AssertionError("a pickle was opened")

    monkeypatch.setattr(torch, "load", tripped)
    monkeypatch.setattr(pickle, "load", tripped)
    monkeypatch.setattr(pickle, "loads", tripped)
    return calls


def test_evil_pickle_is_live(tmp_path):
    """Sanity check of the test itself: unpickling this checkpoint does create the file."""
    marker = tmp_path / "unpickled-sanity"
    write_evil_checkpoint(tmp_path / "sanity.bin", marker)
    torch.load(str(tmp_path / "sanity.bin"), weights_only=False)
    assert marker.exists()


@pytest.mark.parametrize("name", ["pytorch_model.bin", "model.pt", "model.ckpt", "model.pth"])
def test_pickle_only_folder_is_refused_unopened(name, tiny_checkpoint, tmp_path, pickle_tripwire):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    (folder / "model.safetensors").unlink()
    marker = tmp_path / "pwned"
    write_evil_checkpoint(folder / name, marker)
    with pytest.raises(ModelLoadError) as err:
        load_model(folder)
    message = str(err.value)
    assert name in message and "pickle" in message and "arbitrary code" in message and ".safetensors" in message
    assert not marker.exists()
    assert pickle_tripwire == []


def test_pickle_beside_safetensors_is_ignored(tiny_checkpoint, tmp_path, pickle_tripwire):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    marker = tmp_path / "pwned"
    write_evil_checkpoint(folder / "pytorch_model.bin", marker)
    model = load_model(folder)
    assert model.n_params > 0
    assert not marker.exists()
    assert pickle_tripwire == []


def test_pickle_only_in_hub_cache_is_refused(tiny_checkpoint, tmp_path, isolated_dirs, pickle_tripwire):
    from model_fixtures import add_to_hub_cache

    hub, _ = isolated_dirs
    src = shutil.copytree(tiny_checkpoint, tmp_path / "src")
    (src / "model.safetensors").unlink()
    marker = tmp_path / "pwned"
    write_evil_checkpoint(src / "pytorch_model.bin", marker)
    add_to_hub_cache(hub, "someone/pickled", src)
    with pytest.raises(ModelLoadError, match="pickle"):
        load_model("someone/pickled")
    assert not marker.exists()


# ---------------------------------------------------------------------------- paths
def test_folder_symlink_loop(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    with pytest.raises(ModelLoadError, match="symbolic link that loops"):
        load_model(tmp_path / "a")
    with pytest.raises(ModelLoadError, match="symbolic link that loops"):
        load_model(str(tmp_path / "a"))


def test_missing_folder(tmp_path):
    with pytest.raises(ModelLoadError, match="model folder not found"):
        load_model(tmp_path / "does-not-exist")
    with pytest.raises(ModelLoadError, match="model folder not found"):
        load_model(str(tmp_path / "does-not-exist"))


def test_a_plain_file_is_not_a_model(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    with pytest.raises(ModelLoadError, match="is not a folder"):
        load_model(tmp_path / "notes.txt")


def test_folder_symlink_to_a_real_model_is_fine(tiny_checkpoint, tmp_path):
    os.symlink(tiny_checkpoint, tmp_path / "link")
    assert load_model(tmp_path / "link").n_params > 0


def test_directory_named_like_weights(tiny_checkpoint, tmp_path):
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").mkdir()
    with pytest.raises(ModelLoadError, match="model.safetensors is missing"):
        load_model(folder)


def test_unreadable_weights(tiny_checkpoint, tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root reads any file")
    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    (folder / "model.safetensors").chmod(0)
    with pytest.raises(ModelLoadError, match="not a readable safetensors file"):
        load_model(folder)
