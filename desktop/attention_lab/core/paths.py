"""Where Attention Lab's files live: bundled resources, downloaded models, the HF cache.

Every function reads the environment when called (not at import), so tests and users can
point them elsewhere with environment variables:

- ``ATTENTION_LAB_RESOURCES``: the ``resources/`` folder (demo model, tokenizer);
- ``ATTENTION_LAB_MODELS``: where earlier versions stored downloads (still read; downloads
  now go into the Hugging Face cache);
- ``HF_HUB_CACHE`` / ``HF_HOME`` / ``XDG_CACHE_HOME``: the Hugging Face cache, resolved the
  way ``huggingface_hub`` resolves it (which reads them only once, at its own import).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

APP_NAME = "attention-lab"

# desktop/attention_lab/core/paths.py -> the repository root
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def _expand(value: str) -> Path:
    return Path(os.path.expandvars(os.path.expanduser(value)))


def resource_dir() -> Path:
    """The ``resources/`` folder: next to the sources, or inside a PyInstaller bundle."""
    override = os.environ.get("ATTENTION_LAB_RESOURCES")
    if override:
        return _expand(override)
    if getattr(sys, "frozen", False):
        # PyInstaller: data files sit under sys._MEIPASS (one-folder mode: ``_internal``);
        # fall back to the executable's folder for layouts that put resources beside it.
        candidates = []
        meipass = getattr(sys, "_MEIPASS", None)
        if meipass:
            candidates.append(Path(meipass) / "resources")
        candidates.append(Path(sys.executable).resolve().parent / "resources")
        for candidate in candidates:
            if candidate.is_dir():
                return candidate
        return candidates[0]
    return _SOURCE_ROOT / "resources"


def tokenizer_dir() -> Path:
    """The bundled GPT-2 tokenizer (tokenizer.json, vocab.json, merges.txt)."""
    return resource_dir() / "tokenizer"


def user_cache_dir() -> Path:
    """The per-user cache folder of the platform (not the HF cache)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or str(Path.home() / "AppData" / "Local")
        return _expand(base) / APP_NAME
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP_NAME
    return _expand(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / APP_NAME


def models_dir() -> Path:
    """Where earlier versions put downloaded models (still found by ``find_downloaded_model``);
    downloads now go into the Hugging Face cache (:mod:`attention_lab.core.hub_download`)."""
    override = os.environ.get("ATTENTION_LAB_MODELS")
    if override:
        return _expand(override)
    return user_cache_dir() / "models"


def bundled_models_dir() -> Path:
    """Models shipped inside an installer (``build_linux.py --with-gpt2``): read-only, laid
    out like :func:`models_dir` (``resources/models/gpt2``)."""
    return resource_dir() / "models"


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, with the same precedence as ``huggingface_hub.constants``."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return _expand(os.environ[var])
    hf_home = os.environ.get("HF_HOME")
    if hf_home:
        return _expand(hf_home) / "hub"
    return _expand(os.environ.get("XDG_CACHE_HOME") or "~/.cache") / "huggingface" / "hub"
