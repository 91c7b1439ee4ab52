"""Where models come from: the bundled demo, a folder, the local Hugging Face cache, a download.

A model folder is GPT-2 in Hugging Face format: ``config.json`` (``model_type: gpt2``),
weights as ``*.safetensors`` (one file, or shards listed in
``model.safetensors.index.json``) and the tokenizer (``tokenizer.json``, or ``vocab.json``
+ ``merges.txt``).

Safety rules, because people open folders downloaded from anywhere:

- weights are read with ``safetensors`` only.  Pickle checkpoints (``pytorch_model.bin``,
  ``*.pt``, ``*.ckpt``…) are refused without being opened: unpickling can run any code;
- no ``trust_remote_code``, no transformers at all: ``config.json`` is read as plain JSON
  and only GPT-2 is accepted;
- loading never touches the network: a hub id is looked up in the local cache only.  The
  network is used by :mod:`attention_lab.core.hub_download` alone, when the user asks;
- a user's model id or path is never handed to a shell.

Every failure is a :class:`ModelLoadError` with a one-line message a learner can act on.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from . import messages, paths
# the same lists decide what a download fetches (hub_fetch imports neither torch nor this module)
from .hub_fetch import INDEX as INDEX_NAME, OTHER_WEIGHT_SUFFIXES, PICKLE_SUFFIXES
from .job_protocol import Cancelled
from .lens import GPT2Config, GPT2Lens, weights_from_state_dict
from .tokens import Tokenizer, TokenizerError

SUPPORTED_ARCHITECTURES = ("GPT2LMHeadModel", "GPT2Model", "GPT2DoubleHeadsModel")
SUPPORTED_TEXT = "GPT-2-family checkpoints (model_type \"gpt2\": gpt2, distilgpt2, gpt2-medium, gpt2-large, gpt2-xl…)"
DOWNLOAD_MARKER = ".attention-lab-download.json"
MAX_JSON_BYTES = 8 * 1024 * 1024  # config/index files are a few KB; refuse absurd ones unread
MAX_CARD_BYTES = 256 * 1024
DEFAULT_HUB_MODELS = ("gpt2", "openai-community/gpt2")


_REPO_PART = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,94}[A-Za-z0-9])?")
_SHARD_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\.safetensors")


class ModelLoadError(messages.KeyedError):
    """A model could not be loaded or downloaded; ``str(err)`` is one readable line (English).  The failures a
    learner meets also carry ``key`` and ``values`` (:mod:`attention_lab.core.messages`), so the window can
    say them in its own language; ``key`` is None for the rare ones, shown as they are."""

    def __init__(self, message: str, *, key: str | None = None, values: dict[str, str] | None = None):
        super().__init__(" ".join(str(message).split()), key=key, values=values)


class DownloadCancelled(ModelLoadError, Cancelled):
    """The user cancelled a download (nothing was left behind)."""


_serials = itertools.count(1)


@dataclass
class LoadedModel:
    lens: GPT2Lens
    tokenizer: Tokenizer
    name: str  # for display
    spec: str  # what load_model() was given, normalised: "demo", a hub id, or a folder path
    source: str  # "demo" | "folder" | "hub-cache" | "download"
    path: Path  # the folder the files were read from
    n_params: int
    n_bytes: int  # weights in memory (float32)
    is_demo: bool
    model_card: str | None = None  # MODEL_CARD.md / README.md text, when the folder has one
    # one number per load, never reused (id() is, once a model is freed): results are keyed by it
    serial: int = field(default_factory=lambda: next(_serials), compare=False)

    @property
    def config(self) -> GPT2Config:
        return self.lens.config


# ---------------------------------------------------------------------------- where things are
def demo_model_dir() -> Path:
    """The bundled demo model: ``resources/demo-model`` (inside the bundle when frozen)."""
    return paths.resource_dir() / "demo-model"


def validate_repo_id(repo_id: object) -> str:
    """Return ``repo_id`` if it is a plain ``name`` or ``owner/name`` hub id, else raise.

    Only letters, digits, ``.``, ``_`` and ``-``: no path traversal, no shell syntax.
    """
    if not isinstance(repo_id, str):
        raise ModelLoadError(f"a model id must be text, got {type(repo_id).__name__}")
    text = repo_id.strip()
    parts = text.split("/")
    if (
        not text
        or len(parts) > 2
        or not all(_REPO_PART.fullmatch(p) for p in parts)
        or ".." in text
        or "--" in text
    ):
        raise ModelLoadError(
            f"{repo_id!r} is not a valid model id: use a name like \"gpt2\" or \"owner/name\" "
            "(letters, digits, '.', '_' and '-')"
        )
    return text


def _repo_dir_name(repo_id: str) -> str:
    return repo_id.replace("/", "--")  # "--" can't occur in a valid id, so this is reversible


def find_cached_model(repo_id: str) -> Path | None:
    """The snapshot folder of ``repo_id`` in the local Hugging Face cache, or ``None``.

    Reads the cache's ``refs/main`` like ``huggingface_hub`` does; never uses the network.
    """
    repo_id = validate_repo_id(repo_id)
    cache = paths.hub_cache_dir()
    repo_folder = cache / f"models--{_repo_dir_name(repo_id)}"
    try:
        if not repo_folder.is_dir():
            # the usual case at start-up (nothing cached): answered without importing
            # huggingface_hub, which with its HTTP client is ~0.13 s of every launch
            return None
    except OSError:
        return None
    snapshot: Path | None = None
    try:
        from huggingface_hub import try_to_load_from_cache

        hit = try_to_load_from_cache(repo_id, "config.json", cache_dir=str(cache))
        if isinstance(hit, str):
            snapshot = Path(hit).parent
    except Exception:  # an odd cache layout is "not cached", not a crash
        snapshot = None
    if snapshot is None:
        # refs/main missing (e.g. a cache copied by hand): take the newest complete snapshot
        snapshots = repo_folder / "snapshots"
        try:
            candidates = [(p.stat().st_mtime, p) for p in snapshots.iterdir() if (p / "config.json").is_file()]
        except OSError:
            candidates = []
        if candidates:
            snapshot = max(candidates)[1]
    return snapshot


def find_downloaded_model(repo_id: str) -> Path | None:
    """The folder :func:`download_model` made for ``repo_id``, or the installer's bundled copy."""
    name = _repo_dir_name(validate_repo_id(repo_id))
    for root in (paths.models_dir(), paths.bundled_models_dir()):
        folder = root / name
        if (folder / "config.json").is_file():
            return folder
    return None


def _has_safetensors(folder: Path) -> bool:
    try:
        return any(e.name.endswith(".safetensors") or e.name == INDEX_NAME for e in os.scandir(folder))
    except OSError:
        return False


def default_model_spec() -> str:
    """``"gpt2"`` (or its new hub name) when GPT-2 small is available offline, else ``"demo"``."""
    for repo_id in DEFAULT_HUB_MODELS:
        for folder in (find_downloaded_model(repo_id), find_cached_model(repo_id)):
            if folder is not None and _has_safetensors(folder):
                return repo_id
    return "demo"


# ---------------------------------------------------------------------------- loading
def load_model(spec: str | os.PathLike) -> LoadedModel:
    """Load ``"demo"``, a folder path, or a hub id from the local cache (never the network)."""
    if isinstance(spec, os.PathLike):
        folder = Path(spec)
        return load_folder(folder, spec=str(folder), source="folder")
    if not isinstance(spec, str):
        raise ModelLoadError(f"a model must be given as text or a path, got {type(spec).__name__}")
    text = spec.strip()
    if not text:
        raise ModelLoadError("no model given: use \"demo\", a folder path, or a hub id like \"gpt2\"")
    if text.lower() == "demo":
        folder = demo_model_dir()
        if not folder.exists() and not folder.is_symlink():
            raise ModelLoadError(
                f"the bundled demo model is missing from this installation (expected in {folder}); "
                "choose a model folder, or reinstall Attention Lab"
            )
        return load_folder(folder, spec="demo", source="demo")
    try:
        os.fsencode(text)
    except UnicodeError:  # e.g. a lone surrogate: neither a file name nor a hub id
        raise ModelLoadError(f"{text!r} can't be a model: it holds characters no file name or hub id can have") from None
    if "\x00" in text:  # no file system accepts NUL in a name (os.path raises ValueError on it)
        raise ModelLoadError(f"{text!r} can't be a model: it holds a NUL character, which no file name or hub id can have")
    try:
        as_path = Path(text).expanduser()
    except (RuntimeError, UnicodeError):  # "~someone/…" naming a user this machine doesn't have
        as_path = Path(text)
    try:
        is_path = as_path.exists() or as_path.is_symlink() or _looks_like_path(text)
    except OSError:  # a name too long for the file system, a folder we may not enter…
        is_path = True  # load_folder says why, in one line
    if is_path:
        return load_folder(as_path, spec=str(as_path), source="folder")
    try:
        repo_id = validate_repo_id(text)
    except ModelLoadError:
        raise ModelLoadError(
            f"{text!r} is neither an existing folder nor a model id: use \"demo\", a folder path, or a hub id like \"gpt2\""
        ) from None
    downloaded = find_downloaded_model(repo_id)
    if downloaded is not None:
        return load_folder(downloaded, spec=repo_id, source="download", name=repo_id)
    cached = find_cached_model(repo_id)
    if cached is not None:
        return load_folder(cached, spec=repo_id, source="hub-cache", name=repo_id)
    raise ModelLoadError(
        f"{repo_id!r} is not in the local Hugging Face cache ({paths.hub_cache_dir()}) and was not downloaded; "
        "Attention Lab never downloads on its own: download it explicitly, or open a model folder"
    )


def _looks_like_path(text: str) -> bool:
    return (
        text.startswith((".", "/", "~", "\\"))
        or text.count("/") > 1
        or "\\" in text
        or bool(re.match(r"^[A-Za-z]:", text))
        or text.endswith((".json", ".safetensors") + PICKLE_SUFFIXES)
    )


def load_folder(folder: Path, *, spec: str | None = None, source: str = "folder", name: str | None = None) -> LoadedModel:
    """Load a GPT-2 folder (see the module docstring).  Raises :class:`ModelLoadError`."""
    folder = _check_folder(Path(folder))
    config, tokenizer, weight_files = inspect_folder(folder)
    state = _read_weights(folder, weight_files)
    try:
        weights = weights_from_state_dict(config, state)
    except messages.KeyedValueError as exc:  # weights.nan / .missing / .shape
        key = {"weights.nan": "model.weights_damaged"}.get(exc.key, exc.key.replace("weights.", "model.weights_"))
        raise ModelLoadError.keyed(key, folder=folder, **exc.values) from None
    finally:
        state.clear()  # the float16/float32 originals: weights_from_state_dict made copies

    marker = _read_download_marker(folder)
    if marker and source == "folder":
        source = "download"
    is_demo = source == "demo"
    if name is None:
        if is_demo:
            # a demo trained with its own vocabulary says so where the model is named
            tok = "GPT-2 tokenizer" if tokenizer.vocab_size == 50257 else f"own {tokenizer.vocab_size}-token BPE, not GPT-2's"
            name = f"Attention Lab demo ({config.n_layer}×{config.n_head}, {tok})"
        elif marker:
            name = marker
        else:
            name = folder.name or str(folder)
    lens = GPT2Lens(config, weights, name=name)
    return LoadedModel(
        lens=lens,
        tokenizer=tokenizer,
        name=name,
        spec=spec if spec is not None else str(folder),
        source=source,
        path=folder,
        n_params=weights.n_params,
        n_bytes=weights.n_bytes,
        is_demo=is_demo,
        model_card=_read_card(folder),
    )


def inspect_folder(folder: Path) -> tuple[GPT2Config, Tokenizer, list[Path]]:
    """Everything but the tensors: config, tokenizer, and which weight files to read."""
    raw = _read_json(folder, "config.json", what="its configuration")
    config = check_config(raw, where=str(folder))
    weight_files = _weight_files(folder)  # before the tokenizer: "pickle refused" matters most
    tokenizer = _load_tokenizer(folder)
    if tokenizer.vocab_size > config.vocab_size or config.vocab_size - tokenizer.vocab_size >= 1024:
        # a few padding rows (e.g. 50304 for 50257 tokens) are normal; more means the
        # tokenizer belongs to another model, and its ids would index the wrong embeddings
        raise ModelLoadError.keyed("model.vocab_mismatch", folder=folder, tokens=tokenizer.vocab_size, vocab=config.vocab_size)
    return config, tokenizer, weight_files


def check_config(raw: object, where: str) -> GPT2Config:
    """Accept GPT-2 only, and turn its config.json into a :class:`GPT2Config`."""
    if not isinstance(raw, dict):
        raise ModelLoadError.keyed("model.config_not_object", folder=where)
    model_type = raw.get("model_type")
    archs = raw.get("architectures") or []
    if not isinstance(archs, list):
        archs = [archs]
    arch_text = ", ".join(str(a) for a in archs) or "no architecture given"
    if model_type != "gpt2" and not (model_type is None and any(a in SUPPORTED_ARCHITECTURES for a in archs)):
        if model_type:
            raise ModelLoadError.keyed("model.other_type", folder=where, type=model_type, architectures=arch_text,
                                       supported=SUPPORTED_TEXT)
        raise ModelLoadError.keyed("model.unknown_type", folder=where, architectures=arch_text, supported=SUPPORTED_TEXT)
    unsupported = [a for a in archs if a not in SUPPORTED_ARCHITECTURES]
    if archs and not any(a in SUPPORTED_ARCHITECTURES for a in archs):
        raise ModelLoadError.keyed("model.no_lm_head", folder=where, architectures=", ".join(map(str, unsupported)),
                                   supported=", ".join(SUPPORTED_ARCHITECTURES))
    if raw.get("add_cross_attention"):
        raise ModelLoadError.keyed("model.cross_attention", folder=where)
    try:
        return GPT2Config.from_dict(raw)
    except (ValueError, TypeError) as exc:
        detail = str(exc).removeprefix("config: ")
        raise ModelLoadError.keyed("model.config_unusable", folder=where, detail=detail) from None


def _check_folder(folder: Path) -> Path:
    try:
        return _find_folder(folder)
    except OSError as exc:  # exists()/is_dir() raise for e.g. ENAMETOOLONG or EACCES
        raise ModelLoadError.keyed("model.cant_open", folder=folder, **messages.os_error(exc)) from None


def _find_folder(folder: Path) -> Path:
    _check_link(folder, folder)
    if not folder.exists():
        raise ModelLoadError.keyed("model.folder_not_found", folder=folder)
    if folder.is_file() and (folder.name == "config.json" or folder.suffix in (".safetensors", ".json")):
        folder = folder.parent  # a file inside the model folder was picked: use its folder
    if not folder.is_dir():
        raise ModelLoadError.keyed("model.not_a_folder", folder=folder)
    return folder


def _check_link(path: Path, folder: Path) -> None:
    """A symbolic link that loops or dangles gets its own message (``exists()`` hides both)."""
    if not path.is_symlink():
        return
    try:
        path.resolve(strict=True)
    except (OSError, RuntimeError):  # RuntimeError: symlink loop on Python < 3.13
        where = path.name if path != folder else str(path)
        raise ModelLoadError(
            f"{where} is a symbolic link that loops or points to nothing" + (f" (in {folder})" if path != folder else "")
        ) from None


def _read_json(folder: Path, name: str, what: str) -> object:
    path = folder / name
    _check_link(path, folder)
    if not path.is_file():
        if name == "config.json":
            raise ModelLoadError.keyed("model.no_config", folder=folder)
        raise ModelLoadError(f"{name} is missing from {folder}")
    try:
        size = path.stat().st_size
        if size > MAX_JSON_BYTES:
            raise ModelLoadError(f"{name} in {folder} is {size} bytes, far too large for {what}")
        return json.loads(path.read_bytes().decode("utf-8"))
    except ModelLoadError:
        raise
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ModelLoadError.keyed("model.bad_json", name=name, folder=folder, detail=f"{type(exc).__name__}: {_first_line(exc)}") from None


def _load_tokenizer(folder: Path) -> Tokenizer:
    for name in ("tokenizer.json", "vocab.json", "merges.txt"):
        _check_link(folder / name, folder)
    try:
        return Tokenizer.from_folder(folder)
    except TokenizerError as exc:
        raise ModelLoadError(str(exc), key=exc.key, values=exc.values) from None


def _weight_files(folder: Path) -> list[Path]:
    """The safetensors files to read; refuses pickle-only and foreign formats with a reason."""
    try:
        names = sorted(e.name for e in os.scandir(folder))
    except OSError as exc:
        raise ModelLoadError.keyed("model.cant_list", folder=folder, **messages.os_error(exc)) from None

    if "model.safetensors" in names:
        chosen = ["model.safetensors"]
    elif INDEX_NAME in names:
        chosen = _shards_from_index(folder)
    else:
        chosen = [n for n in names if n.endswith(".safetensors")]
    if not chosen:
        pickles = [n for n in names if n.endswith(PICKLE_SUFFIXES)]
        others = [n for n in names if n.endswith(OTHER_WEIGHT_SUFFIXES)]
        if pickles:
            raise ModelLoadError.keyed("model.pickle_only", folder=folder, files=", ".join(pickles))
        if others:
            raise ModelLoadError.keyed("model.other_format", folder=folder, files=", ".join(others))
        raise ModelLoadError.keyed("model.no_weights", folder=folder, index=INDEX_NAME)
    files = []
    for name in chosen:
        path = folder / name
        _check_link(path, folder)
        if not path.is_file():
            raise ModelLoadError(f"weight file {name} is missing from {folder}")
        files.append(path)
    return files


def _shards_from_index(folder: Path) -> list[str]:
    index = _read_json(folder, INDEX_NAME, what="a shard index")
    weight_map = index.get("weight_map") if isinstance(index, dict) else None
    if not isinstance(weight_map, dict) or not weight_map:
        raise ModelLoadError(f"{INDEX_NAME} in {folder} has no weight_map")
    shards = sorted({str(v) for v in weight_map.values()})
    for shard in shards:
        # names only: an index pointing at "../../elsewhere" or "/etc/…" is refused
        if not _SHARD_NAME.fullmatch(shard) or ".." in shard:
            raise ModelLoadError(f"{INDEX_NAME} in {folder} names an invalid shard file {shard!r}")
    return shards


def _read_weights(folder: Path, files: Iterable[Path]) -> dict:
    from safetensors.torch import load_file  # imports torch's serialization helpers lazily

    state: dict = {}
    for path in files:
        try:
            tensors = load_file(str(path))
        except Exception as exc:  # SafetensorError, OSError, MemoryError…: all mean "unreadable"
            raise ModelLoadError.keyed("model.unreadable_weights", file=path.name, folder=folder, detail=_first_line(exc)) from None
        duplicated = state.keys() & tensors.keys()
        if duplicated:
            raise ModelLoadError(f"tensor {sorted(duplicated)[0]!r} appears in more than one weight file in {folder}")
        state.update(tensors)
    return state


def _read_download_marker(folder: Path) -> str | None:
    try:
        raw = json.loads((folder / DOWNLOAD_MARKER).read_text(encoding="utf-8"))
        return validate_repo_id(raw["repo_id"])
    except Exception:
        return None


def _read_card(folder: Path) -> str | None:
    for name in ("MODEL_CARD.md", "README.md"):
        path = folder / name
        try:
            if path.is_file() and path.stat().st_size <= MAX_CARD_BYTES:
                return path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


# ---------------------------------------------------------------------------- downloading
# The download itself is attention_lab.core.hub_download (into the Hugging Face cache).


def _check_safetensors_headers(folder: Path, files: list[Path]) -> None:
    """Cheap completeness check: safetensors verifies the header against the file size."""
    from safetensors import safe_open

    for path in files:
        try:
            with safe_open(str(path), framework="pt") as handle:
                list(handle.keys())
        except Exception as exc:
            raise ModelLoadError(f"downloaded {path.name} is incomplete or corrupt: {_first_line(exc)}") from None
