"""Helpers for the model-loading tests: an isolated environment and a Hugging Face cache laid out by hand.

Downloads are tested against a loopback hub: tests/hub_server.py."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest


@pytest.fixture
def isolated_dirs(tmp_path, monkeypatch):
    """Empty HF cache, empty downloads folder, no resources override: nothing from the real machine."""
    hub = tmp_path / "hf-home" / "hub"
    models = tmp_path / "downloads"
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "ATTENTION_LAB_RESOURCES"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(models))
    return hub, models


def add_to_hub_cache(cache: Path, repo_id: str, source: Path, revision: str = "0" * 40, with_ref: bool = True) -> Path:
    """Lay ``source``'s files out as huggingface_hub does: blobs, a snapshot of symlinks, refs/main."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    blobs = repo / "blobs"
    snapshot = repo / "snapshots" / revision
    blobs.mkdir(parents=True, exist_ok=True)
    snapshot.mkdir(parents=True, exist_ok=True)
    for f in sorted(source.iterdir()):
        if not f.is_file():
            continue
        digest = hashlib.sha256(f.read_bytes()).hexdigest()
        blob = blobs / digest
        if not blob.exists():
            shutil.copy(f, blob)
        link = snapshot / f.name
        if link.is_symlink() or link.exists():
            link.unlink()
        os.symlink(os.path.relpath(blob, snapshot), link)
    if with_ref:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / "main").write_text(revision)
    return snapshot
