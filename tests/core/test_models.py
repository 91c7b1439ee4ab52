"""Where models come from: folders, the demo, the HF cache (offline), explicit downloads."""

from __future__ import annotations

import json
import shutil
import socket
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from attention_lab.core import models, paths
from attention_lab.core.lens import _LAYER_KEYS, GPT2Config, GPT2Lens
from attention_lab.core.models import (
    LoadedModel,
    ModelLoadError,
    default_model_spec,
    demo_model_dir,
    load_model,
)
from model_fixtures import add_to_hub_cache, isolated_dirs  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("isolated_dirs")


@pytest.fixture
def no_network(monkeypatch):
    """Any attempt to open a connection fails the test."""

    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def copy_model(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


# ---------------------------------------------------------------------------- folders
def test_folder_loads_exactly_its_weights(tiny_checkpoint):
    model = load_model(tiny_checkpoint)
    assert isinstance(model, LoadedModel)
    state = load_file(str(tiny_checkpoint / "model.safetensors"))
    w = model.lens.weights
    assert torch.equal(w.wte, state["transformer.wte.weight"])
    assert torch.equal(w.wpe, state["transformer.wpe.weight"])
    assert torch.equal(w.ln_f_w, state["transformer.ln_f.weight"])
    assert len(w.layers) == 2
    for i, layer in enumerate(w.layers):
        for attr, key in _LAYER_KEYS.items():
            assert torch.equal(getattr(layer, attr), state[f"transformer.h.{i}.{key}"]), (i, attr)
    config = json.loads((tiny_checkpoint / "config.json").read_text())
    assert (model.config.n_layer, model.config.n_head, model.config.n_embd) == (2, 12, 48)
    assert model.config.vocab_size == config["vocab_size"]
    reference = GPT2Lens.from_state_dict(GPT2Config.from_dict(config), state)
    ids = model.tokenizer.encode("The big dog bit the mailman yesterday")
    torch.testing.assert_close(model.lens(ids).logits, reference(ids).logits, rtol=0, atol=0)


def test_folder_metadata(tiny_checkpoint):
    model = load_model(str(tiny_checkpoint))
    assert model.source == "folder" and not model.is_demo
    assert model.name == tiny_checkpoint.name == model.lens.name
    assert model.path == tiny_checkpoint
    assert model.spec == str(tiny_checkpoint)
    assert model.n_bytes == model.lens.weights.n_bytes
    expected_params = sum(t.numel() for k, t in load_file(str(tiny_checkpoint / "model.safetensors")).items()
                          if k != "lm_head.weight" and not k.endswith((".attn.bias", ".attn.masked_bias")))
    assert model.n_params == expected_params
    assert model.tokenizer.encode("Hello world") == [15496, 995]


def test_picking_a_file_inside_the_folder_loads_the_folder(tiny_checkpoint):
    assert load_model(tiny_checkpoint / "config.json").path == tiny_checkpoint


def test_fp16_weights_are_upcast(tiny_checkpoint, tmp_path):
    folder = copy_model(tiny_checkpoint, tmp_path / "fp16")
    state = load_file(str(folder / "model.safetensors"))
    half = {k: v.half().contiguous() for k, v in state.items() if k != "lm_head.weight"}
    save_file(half, str(folder / "model.safetensors"), metadata={"format": "pt"})
    model = load_model(folder)
    assert model.lens.weights.wte.dtype == torch.float32
    assert torch.equal(model.lens.weights.wte, half["transformer.wte.weight"].float())


def test_sharded_weights_load_like_one_file(tiny_checkpoint, tmp_path):
    folder = copy_model(tiny_checkpoint, tmp_path / "sharded")
    state = load_file(str(folder / "model.safetensors"))
    (folder / "model.safetensors").unlink()
    keys = sorted(state)
    halves = {"model-00001-of-00002.safetensors": keys[::2], "model-00002-of-00002.safetensors": keys[1::2]}
    weight_map = {}
    for shard, names in halves.items():
        save_file({k: state[k].contiguous() for k in names}, str(folder / shard), metadata={"format": "pt"})
        weight_map.update({k: shard for k in names})
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {}, "weight_map": weight_map}))
    sharded, single = load_model(folder), load_model(tiny_checkpoint)
    ids = sharded.tokenizer.encode("Hello world")
    assert torch.equal(sharded.lens(ids).logits, single.lens(ids).logits)


def test_vocab_merges_tokenizer_is_enough(tiny_checkpoint, tmp_path):
    folder = copy_model(tiny_checkpoint, tmp_path / "classic-tokenizer")
    (folder / "tokenizer.json").unlink()
    assert load_model(folder).tokenizer.encode(" the") == [262]


# ---------------------------------------------------------------------------- demo
def test_demo_model_from_resources(tiny_checkpoint, tmp_path, monkeypatch):
    resources = tmp_path / "resources"
    copy_model(tiny_checkpoint, resources / "demo-model")
    (resources / "demo-model" / "MODEL_CARD.md").write_text("# Demo\nTrained for the chapter.")
    monkeypatch.setenv("ATTENTION_LAB_RESOURCES", str(resources))
    assert demo_model_dir() == resources / "demo-model"
    model = load_model("demo")
    assert model.source == "demo" and model.is_demo and model.spec == "demo"
    assert model.name == "Attention Lab demo (2×12, GPT-2 tokenizer)"
    assert model.model_card.startswith("# Demo")


def test_demo_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_RESOURCES", str(tmp_path / "nowhere"))
    with pytest.raises(ModelLoadError, match="demo model is missing"):
        load_model("demo")


def test_demo_dir_in_source_tree():
    assert demo_model_dir() == Path(__file__).resolve().parents[2] / "resources" / "demo-model"


def test_resource_dir_when_frozen(tmp_path, monkeypatch):
    bundle = tmp_path / "_internal"
    (bundle / "resources").mkdir(parents=True)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "_MEIPASS", str(bundle), raising=False)
    assert paths.resource_dir() == bundle / "resources"
    assert demo_model_dir() == bundle / "resources" / "demo-model"
    # resources beside the executable when the bundle has none
    shutil.rmtree(bundle / "resources")
    exe_dir = tmp_path / "app"
    (exe_dir / "resources").mkdir(parents=True)
    monkeypatch.setattr(sys, "executable", str(exe_dir / "attention-lab"))
    assert paths.resource_dir() == exe_dir / "resources"


# ---------------------------------------------------------------------------- HF cache
def test_hub_id_resolved_from_local_cache(tiny_checkpoint, isolated_dirs, no_network, monkeypatch):
    import huggingface_hub.constants

    # loading must not depend on HF_HUB_OFFLINE: it never asks the network anyway
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    hub, _ = isolated_dirs
    snapshot = add_to_hub_cache(hub, "someone/tiny-gpt2", tiny_checkpoint, revision="a" * 40)
    model = load_model("someone/tiny-gpt2")
    assert model.source == "hub-cache" and model.name == "someone/tiny-gpt2" and model.spec == "someone/tiny-gpt2"
    assert model.path == snapshot
    assert torch.equal(model.lens.weights.wte, load_model(tiny_checkpoint).lens.weights.wte)


def test_hub_cache_follows_refs_main(tiny_checkpoint, tmp_path, isolated_dirs):
    hub, _ = isolated_dirs
    other = copy_model(tiny_checkpoint, tmp_path / "other")
    state = load_file(str(other / "model.safetensors"))
    state["transformer.wte.weight"] = torch.zeros_like(state["transformer.wte.weight"])
    save_file(state, str(other / "model.safetensors"), metadata={"format": "pt"})
    add_to_hub_cache(hub, "gpt2", other, revision="b" * 40)
    add_to_hub_cache(hub, "gpt2", tiny_checkpoint, revision="c" * 40)  # refs/main -> c…
    assert load_model("gpt2").path.name == "c" * 40
    assert load_model("gpt2").lens.weights.wte.abs().sum() > 0


def test_hub_cache_without_refs_uses_the_snapshot(tiny_checkpoint, isolated_dirs):
    hub, _ = isolated_dirs
    add_to_hub_cache(hub, "gpt2", tiny_checkpoint, with_ref=False)
    assert load_model("gpt2").source == "hub-cache"


def test_hub_cache_dir_env_precedence(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "home"))
    assert paths.hub_cache_dir() == tmp_path / "home" / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "explicit"))
    assert paths.hub_cache_dir() == tmp_path / "explicit"
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.delenv("HF_HOME")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert paths.hub_cache_dir() == tmp_path / "xdg" / "huggingface" / "hub"


def test_uncached_hub_id_is_not_downloaded(no_network):
    with pytest.raises(ModelLoadError, match="not in the local Hugging Face cache"):
        load_model("distilgpt2")


def test_default_spec_is_demo_without_gpt2_in_cache():
    assert default_model_spec() == "demo"


def test_default_spec_is_gpt2_when_cached(tiny_checkpoint, isolated_dirs):
    hub, _ = isolated_dirs
    add_to_hub_cache(hub, "gpt2", tiny_checkpoint)
    assert default_model_spec() == "gpt2"


def test_default_spec_accepts_the_new_hub_name(tiny_checkpoint, isolated_dirs):
    hub, _ = isolated_dirs
    add_to_hub_cache(hub, "openai-community/gpt2", tiny_checkpoint)
    assert default_model_spec() == "openai-community/gpt2"


def test_default_spec_ignores_a_pickle_only_gpt2(tiny_checkpoint, tmp_path, isolated_dirs):
    hub, _ = isolated_dirs
    old = copy_model(tiny_checkpoint, tmp_path / "old-gpt2")
    (old / "model.safetensors").rename(old / "pytorch_model.bin")  # what old transformers cached
    add_to_hub_cache(hub, "gpt2", old)
    assert default_model_spec() == "demo"


@pytest.mark.parametrize("spec", ["", "   ", "gpt2; rm -rf ~", "$(touch pwned)", "a b", "org/na me", "x/y/z", "../../etc"])
def test_bad_specs_are_clear_errors(spec, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ModelLoadError) as err:
        load_model(spec)
    assert "\n" not in str(err.value)
    assert list(tmp_path.iterdir()) == []


def test_non_text_spec():
    with pytest.raises(ModelLoadError):
        load_model(42)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------- downloads
# The download path runs against a loopback hub: tests/core/test_hub_download.py.


def test_models_module_never_uses_pickle_or_transformers():
    source = Path(models.__file__).read_text()
    assert "torch.load" not in source and "import pickle" not in source
    assert "transformers" not in source.replace("no transformers at all", "")
    assert "trust_remote_code=True" not in source


@pytest.mark.parametrize("spec", ["~\ud800", "\ud800", "models/\udcff/x", "gpt2\ud83d"])
def test_a_spec_with_unencodable_characters_is_a_clear_error(spec):
    """Found by the fuzzer: a lone surrogate reached Path.expanduser and raised UnicodeEncodeError."""
    from attention_lab.core.models import ModelLoadError, load_model

    with pytest.raises(ModelLoadError):
        load_model(spec)
