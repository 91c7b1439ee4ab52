"""Helpers for the model-loading tests: a fake Hugging Face cache and a fake hub fetcher."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
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


class FakeHub:
    """Serves files from local folders through the ``fetcher`` interface of ``download_model``.

    ``fail_in``: a file name whose transfer breaks halfway (after writing half of it);
    ``truncate``: a file name served with only half its bytes (a server that lies).
    """

    def __init__(self, repos: dict[str, Path], fail_in: str | None = None, truncate: str | None = None, chunks: int = 4):
        self.repos = repos
        self.fail_in = fail_in
        self.truncate = truncate
        self.chunks = chunks
        self.calls: list[str] = []
        self.threads: set[int] = set()

    def __call__(self, repo_id, filename, dest_dir, progress_cb, cancel):
        self.calls.append(filename)
        self.threads.add(threading.get_ident())
        src = self.repos[repo_id] / filename
        if not src.is_file():
            raise FileNotFoundError(filename)
        data = src.read_bytes()
        if filename == self.truncate:
            data = data[: len(data) // 2]
        total = len(data)
        step = max(1, -(-total // self.chunks))
        with open(Path(dest_dir) / filename, "wb") as fh:
            for start in range(0, total, step):
                if cancel.is_set():
                    raise RuntimeError("fetcher saw the cancel flag")  # download_model must still clean up
                fh.write(data[start : start + step])
                done = min(total, start + step)
                if filename == self.fail_in and done >= total // 2:
                    raise ConnectionError("connection reset by peer")
                progress_cb(done, total)
        if total == 0:
            progress_cb(0, 0)
