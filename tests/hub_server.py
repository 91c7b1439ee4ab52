"""A Hugging Face hub on loopback, for the download tests: what huggingface_hub 2.x asks, answered.

Written from the client's source (huggingface_hub/hf_api.py ``model_info``,
file_download.py ``get_hf_file_metadata`` / ``http_get``), not guessed:

- ``GET /api/models/{repo}[/revision/{rev}]?blobs=true`` -> ``{"id", "sha", "siblings":
  [{"rfilename", "size", "blobId", "lfs": {"sha256", "size", "pointerSize"}}]}``;
- ``HEAD /{repo}/resolve/{rev}/{file}`` -> a small file: 200 with ``ETag`` (its git blob
  id), ``X-Repo-Commit``, ``Content-Length``; an LFS file (weights): 302 to the "CDN" with
  ``X-Linked-Etag`` (its sha256), ``X-Linked-Size`` and ``X-Repo-Commit``.  The CDN is a
  second port, another origin, as on the real hub: the client then reads the metadata
  from the redirect itself and does not follow it for the HEAD;
- ``GET`` on either: the bytes, with ``Range: bytes=N-`` answered 206 (how http_get
  resumes after a broken connection);
- 404 with ``X-Error-Code: RepoNotFound`` / ``RevisionNotFound`` / ``EntryNotFound``.

No ``X-Xet-*`` header is sent, so the client takes the plain HTTP path (hf_xet is installed).
Faults (``faults={file_or_"api": kind}``): ``"drop_once"`` (the first GET stops half-way
and the connection closes), ``"drop_always"`` (every GET stops at the half: nothing
past it is ever sent), ``"short"`` (the file is stored shorter than it is announced:
Content-Length says N, half arrives, a resume gets 416), ``"stall"`` (half, then
nothing until the server stops), ``"status:CODE"`` (that HTTP status).  ``rate`` slows
the LFS bodies to that many bytes per second.  Every request is logged in ``.log``.
Bounded: ``max_requests`` requests, ``max_seconds`` of life, loopback only.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

# The real ``gpt2`` (openai-community/gpt2) repository's file list: what the app must take
# and what it must leave (pickles, other frameworks, onnx/, tflite, the card).
GPT2_NEEDED = (
    "config.json",
    "generation_config.json",
    "merges.txt",
    "model.safetensors",
    "tokenizer.json",
    "tokenizer_config.json",
    "vocab.json",
)
GPT2_DECOYS = (
    ".gitattributes",
    "64-8bits.tflite",
    "64-fp16.tflite",
    "64.tflite",
    "README.md",
    "flax_model.msgpack",
    "pytorch_model.bin",
    "rust_model.ot",
    "tf_model.h5",
    "onnx/config.json",
    "onnx/decoder_model.onnx",
    "onnx/decoder_model_merged.onnx",
    "onnx/decoder_with_past_model.onnx",
    "onnx/generation_config.json",
    "onnx/merges.txt",
    "onnx/special_tokens_map.json",
    "onnx/tokenizer.json",
    "onnx/tokenizer_config.json",
    "onnx/vocab.json",
)
LFS_SUFFIXES = (".safetensors", ".bin", ".h5", ".msgpack", ".onnx", ".ot", ".tflite")


def gpt2_repo_files(checkpoint: Path) -> dict[str, bytes]:
    """The gpt2 repository's files, made from a generated GPT-2-format checkpoint folder."""
    files: dict[str, bytes] = {}
    for name in GPT2_NEEDED:
        path = checkpoint / name
        if path.is_file():
            files[name] = path.read_bytes()
        elif name == "generation_config.json":
            files[name] = json.dumps({"bos_token_id": 50256, "eos_token_id": 50256}).encode()
        elif name == "tokenizer_config.json":
            files[name] = json.dumps({"model_max_length": 1024}).encode()
    for name in GPT2_DECOYS:
        # not a working pickle or model: a decoy that must simply never be requested
        files[name] = b"decoy: Attention Lab must not fetch " + name.encode() + b"\n" + os.urandom(2048)
    return files


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str = field(default_factory=lambda: hashlib.sha1(os.urandom(8)).hexdigest())

    def etag(self, name: str) -> str:
        data = self.files[name]
        if name.endswith(LFS_SUFFIXES):
            return hashlib.sha256(data).hexdigest()
        return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # git's blob id


class _QuietServer(ThreadingHTTPServer):
    """A client that goes away mid-request (a cancelled download, a closed window: the app's
    httpx client resets its kept-alive connection) is expected here, not an error: the stock
    server prints "Exception occurred during processing of request" and a traceback to stderr,
    which the close-mid-way test reads as the app's own (it failed ~1 run in 3)."""

    def handle_error(self, request, client_address) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class HubServer:
    """``with HubServer({"gpt2": Repo(files)}) as hub:`` then ``HF_ENDPOINT=hub.url``."""

    def __init__(self, repos: dict[str, Repo], *, faults: dict[str, str] | None = None, rate: float | None = None,
                 max_requests: int = 400, max_seconds: float = 120.0):
        self.repos = repos
        self.faults = dict(faults or {})
        self.rate = rate
        self.max_requests = max_requests
        self.max_seconds = max_seconds
        self.log: list[dict] = []
        self.stopping = threading.Event()
        self._lock = threading.Lock()
        self._gets: dict[str, int] = {}
        self._servers: list[ThreadingHTTPServer] = []
        self._timer: threading.Timer | None = None

    # ------------------------------------------------------------------ life
    def start(self) -> "HubServer":
        for role in ("hub", "cdn"):
            server = _QuietServer(("127.0.0.1", 0), _Handler)
            server.daemon_threads = True
            server.hub = self  # type: ignore[attr-defined]
            server.role = role  # type: ignore[attr-defined]
            self._servers.append(server)
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True,
                             name=f"hub-server-{role}").start()
        self._timer = threading.Timer(self.max_seconds, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        if self._timer is not None:
            self._timer.cancel()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    def __enter__(self) -> "HubServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._servers[0].server_address[1]}"

    @property
    def cdn_url(self) -> str:
        return f"http://127.0.0.1:{self._servers[1].server_address[1]}"

    # ------------------------------------------------------------------ what was asked
    def requested_files(self, method: str = "GET") -> list[str]:
        """Files whose bytes (GET) or metadata (HEAD) were asked for, in order."""
        return [e["file"] for e in self.log if e["method"] == method and e.get("file")]

    def count_get(self, name: str) -> int:
        with self._lock:
            self._gets[name] = self._gets.get(name, 0) + 1
            return self._gets[name]


def _is_lfs(name: str) -> bool:
    return name.endswith(LFS_SUFFIXES)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as huggingface_hub's httpx client uses it
    server_version = "AttentionLabTestHub/1"

    def log_message(self, *args) -> None:  # the test log is hub.log, not stderr
        pass

    @property
    def hub(self) -> HubServer:
        return self.server.hub  # type: ignore[attr-defined]

    def do_HEAD(self) -> None:
        self._route(body=False)

    def do_GET(self) -> None:
        self._route(body=True)

    # ------------------------------------------------------------------ routing
    def _route(self, body: bool) -> None:
        hub = self.hub
        path = unquote(urlsplit(self.path).path)
        entry = {"server": self.server.role, "method": self.command, "path": path,  # type: ignore[attr-defined]
                 "range": self.headers.get("Range"), "t": time.monotonic()}
        with hub._lock:
            hub.log.append(entry)
            too_many = len(hub.log) > hub.max_requests
        if too_many or hub.stopping.is_set():
            return self._status(503, "test server: request budget spent")
        if self.server.role == "cdn":  # type: ignore[attr-defined]
            return self._cdn(path, entry, body)
        if path.startswith("/api/models/"):
            return self._api(path[len("/api/models/"):])
        if "/resolve/" in path:
            repo_id, rest = path[1:].split("/resolve/", 1)
            revision, _, name = rest.partition("/")
            entry["file"] = name
            return self._resolve(repo_id, revision, name, entry, body)
        return self._status(404, "no such route", code="EntryNotFound")

    def _api(self, rest: str) -> None:
        repo_id, _, revision = rest.partition("/revision/")
        fault = self.hub.faults.get("api", "")
        if fault.startswith("status:"):
            return self._status(int(fault.split(":")[1]), "injected")
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            return self._status(404, "Repository not found", code="RepoNotFound")
        if revision not in ("", "main", repo.commit):
            return self._status(404, "Revision not found", code="RevisionNotFound")
        siblings = []
        for name, data in sorted(repo.files.items()):
            sibling = {"rfilename": name, "size": len(data), "blobId": hashlib.sha1(data).hexdigest()}
            if _is_lfs(name):
                sibling["lfs"] = {"sha256": repo.etag(name), "size": len(data), "pointerSize": 134}
            siblings.append(sibling)
        payload = {"_id": "0" * 24, "id": repo_id, "modelId": repo_id, "sha": repo.commit, "private": False,
                   "gated": False, "disabled": False, "tags": ["gpt2"], "siblings": siblings}
        self._send(200, json.dumps(payload).encode(), {"Content-Type": "application/json"})

    def _resolve(self, repo_id: str, revision: str, name: str, entry: dict, body: bool) -> None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            return self._status(404, "Repository not found", code="RepoNotFound")
        if revision not in ("main", repo.commit):
            return self._status(404, "Revision not found", code="RevisionNotFound")
        if name not in repo.files:
            return self._status(404, "Entry not found", code="EntryNotFound", commit=repo.commit)
        fault = self.hub.faults.get(name, "")
        if fault.startswith("status:"):
            return self._status(int(fault.split(":")[1]), "injected", commit=repo.commit)
        data = repo.files[name]
        headers = {"X-Repo-Commit": repo.commit, "Accept-Ranges": "bytes"}
        if _is_lfs(name):
            headers.update({
                "Location": f"{self.hub.cdn_url}/lfs/{repo.etag(name)}",
                "X-Linked-Etag": f'"{repo.etag(name)}"',
                "X-Linked-Size": str(len(data)),
                "ETag": f'"{hashlib.sha1(data).hexdigest()}"',
            })
            return self._send(302, b"", headers)
        headers["ETag"] = f'"{repo.etag(name)}"'
        self._serve_bytes(name, data, headers, entry, body)

    def _cdn(self, path: str, entry: dict, body: bool) -> None:
        sha = path.rsplit("/", 1)[-1]
        for repo in self.hub.repos.values():
            for name, data in repo.files.items():
                if _is_lfs(name) and repo.etag(name) == sha:
                    entry["file"] = name
                    return self._serve_bytes(name, data, {"ETag": f'"{sha}"', "Accept-Ranges": "bytes"}, entry, body)
        self._status(404, "no such object")

    # ------------------------------------------------------------------ bytes, and faults
    def _serve_bytes(self, name: str, data: bytes, headers: dict, entry: dict, body: bool) -> None:
        hub = self.hub
        fault = hub.faults.get(name, "")
        half = len(data) // 2
        if fault == "short":
            # the stored file ends on a 256 KiB boundary (the client's read size), so the
            # client's resume asks exactly for the bytes that don't exist: 416, as from a
            # server whose copy is shorter than the size it announces
            half -= half % (256 * 1024)
        start = 0
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            start = int(rng[len("bytes="):].split("-")[0] or 0)
        if not body:
            return self._send(200, b"", {**headers, "Content-Length": str(len(data))}, length_only=True)
        attempt = hub.count_get(name)
        entry["attempt"] = attempt
        if fault == "short" and start >= half:
            return self._send(416, b"", {**headers, "Content-Range": f"bytes */{half}"})
        if start >= len(data) and data:
            return self._send(416, b"", {**headers, "Content-Range": f"bytes */{len(data)}"})
        status = 206 if start else 200
        headers = {**headers, "Content-Length": str(len(data) - start), "Content-Type": "application/octet-stream"}
        if start:
            headers["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        stop_at = len(data)
        if fault in ("drop_always", "short", "stall") or (fault == "drop_once" and attempt == 1):
            stop_at = max(start, half)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self._write(data[start:stop_at], throttled=_is_lfs(name))
        if stop_at < len(data):
            if fault == "stall":
                hub.stopping.wait(hub.max_seconds)  # holds the connection open, sending nothing
            self._hang_up()

    def _write(self, chunk: bytes, throttled: bool) -> None:
        rate = self.hub.rate if throttled else None
        step = 64 * 1024
        try:
            for i in range(0, len(chunk), step):
                if self.hub.stopping.is_set():
                    break
                self.wfile.write(chunk[i:i + step])
                if rate:
                    time.sleep(step / rate)
            self.wfile.flush()
        except OSError:  # the client went away (a cancelled download): nothing to do
            self.close_connection = True

    def _hang_up(self) -> None:
        self.close_connection = True
        try:
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _status(self, status: int, message: str, code: str | None = None, commit: str | None = None) -> None:
        headers = {"Content-Type": "application/json"}
        if code:
            headers["X-Error-Code"] = code
            headers["X-Error-Message"] = message
        if commit:
            headers["X-Repo-Commit"] = commit
        self._send(status, json.dumps({"error": message}).encode(), headers)

    def _send(self, status: int, payload: bytes, headers: dict, length_only: bool = False) -> None:
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            if not length_only:
                self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if payload and self.command != "HEAD":
                self.wfile.write(payload)
        except OSError:
            self.close_connection = True


# ---------------------------------------------------------------------------- fixtures
def _loopback_missing() -> str:
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind(("127.0.0.1", 0))
    except OSError as exc:
        return f"binding 127.0.0.1 is impossible here ({exc}): the loopback hub tests can't run"
    return ""


#: why the loopback tests can't run here ("" when they can); printed, and the skip reason
LOOPBACK_MISSING = _loopback_missing()
if LOOPBACK_MISSING:
    print(LOOPBACK_MISSING, file=sys.stderr)


@pytest.fixture
def hf_home(tmp_path, monkeypatch) -> Path:
    """An empty Hugging Face cache; the network allowed (for the download process only)."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "ATTENTION_LAB_RESOURCES", "HF_HUB_OFFLINE",
                "TRANSFORMERS_OFFLINE", "HF_HUB_DOWNLOAD_TIMEOUT", "HF_HUB_ETAG_TIMEOUT"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.setenv("ATTENTION_LAB_MODELS", str(tmp_path / "downloads"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")  # a proxy of the machine must not see the tests
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    return tmp_path / "hf-home"


@pytest.fixture
def serve(monkeypatch):
    """``serve(repos, faults=…, rate=…)`` starts a loopback hub and points HF_ENDPOINT at it.

    HF_ENDPOINT is read by the download process when it starts; this process's
    huggingface_hub read it at import and is never pointed at the test hub."""
    if LOOPBACK_MISSING:
        pytest.skip(LOOPBACK_MISSING)
    started: list[HubServer] = []

    def start(repos: dict[str, Repo], **options) -> HubServer:
        hub = HubServer(repos, **options).start()
        started.append(hub)
        monkeypatch.setenv("HF_ENDPOINT", hub.url)
        return hub

    yield start
    for hub in started:
        hub.stop()


@pytest.fixture(scope="session")
def gpt2_files(tmp_path_factory, tiny_checkpoint) -> dict[str, bytes]:
    """The gpt2 repository made of the tiny checkpoint with other weights (so that its blob
    differs from one cached from ``tiny_checkpoint`` itself)."""
    import shutil

    from safetensors.torch import load_file, save_file

    served = Path(shutil.copytree(tiny_checkpoint, tmp_path_factory.mktemp("served") / "gpt2"))
    state = {k: v + 0.01 for k, v in load_file(str(served / "model.safetensors")).items()}
    save_file(state, str(served / "model.safetensors"), metadata={"format": "pt"})
    return gpt2_repo_files(served)
