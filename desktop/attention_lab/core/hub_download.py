"""Downloading a model from the Hugging Face hub into its cache, only when the learner asks.

The transfer runs in a child process (:mod:`attention_lab.core.hub_fetch`) and this side
reads its progress.  A Cancel, or a server that stops sending for ``stall_timeout``
seconds, kills the child: the transfer and huggingface_hub's retries stop at once (in a
thread they could not be stopped: see hub_fetch's docstring).  Whatever the child wrote
into the cache by then is removed again (:func:`_restore`), so a failed or cancelled
download leaves the cache as it found it: no half snapshot, no partial blob.  huggingface_hub
(2.x) keeps no partial file between calls anyway, so a second attempt starts the file over.

Files go into the Hugging Face cache (``paths.hub_cache_dir()``), not a folder of the app's
own: transformers and the learner's other tools then share the one 550 MB copy, and the app
finds it with :func:`attention_lab.core.models.find_cached_model` like any cached model.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Callable, Protocol
from urllib.parse import urlsplit

from . import messages, paths
from .models import DownloadCancelled, ModelLoadError, validate_repo_id

log = logging.getLogger(__name__)

#: no event from the child for this long (no byte, no new file), once it has started: the server has stalled.
#: huggingface_hub's own read timeout is 10 s and it retries; this leaves it two tries.
STALL_TIMEOUT_S = 30.0
POLL_S = 0.05
CHILD_COMMAND = "hub-fetch"
APP_OFFLINE_VAR = "ATTENTION_LAB_APP_OFFLINE"  # set by packaging/entry.py: the offline switches it set
DEFAULT_ENDPOINT = "https://huggingface.co"  # huggingface_hub's, when HF_ENDPOINT is not set

ProgressCallback = Callable[[int, int, str], None]  # (bytes done, bytes total or 0, file)


class CancelFlag(Protocol):
    def is_set(self) -> bool: ...


class _CallableFlag:
    def __init__(self, fn: Callable[[], bool]):
        self._fn = fn

    def is_set(self) -> bool:
        return bool(self._fn())


def _as_flag(cancel: CancelFlag | Callable[[], bool] | None) -> CancelFlag:
    if cancel is None:
        return threading.Event()
    if hasattr(cancel, "is_set"):
        return cancel  # type: ignore[return-value]
    if callable(cancel):
        return _CallableFlag(cancel)
    raise TypeError("cancel must be a threading.Event-like object or a callable returning bool")


def gpt2_small_download_mb() -> int:
    """What downloading ``gpt2`` costs, to the nearest 10 MB, computed (the offer is shown
    offline, before the hub lists the sizes): its model.safetensors holds GPT-2 small's
    124,439,808 parameters and, as the hub's copy does, each layer's 1024×1024 causal-mask
    buffer, all float32: 548 MB; the tokenizer and config files add under 1%."""
    from .lens import GPT2Config

    c = GPT2Config()  # the defaults are GPT-2 small's
    d, layers = c.n_embd, c.n_layer
    per_layer = 4 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d)
    params = c.vocab_size * d + c.n_positions * d + layers * per_layer + 2 * d
    masks = layers * c.n_positions * c.n_positions
    return int(round((params + masks) * 4 / 1e6, -1))


def child_command(repo_id: str, cache: Path) -> list[str]:
    """The command line of the download process (an argument list: no shell)."""
    if getattr(sys, "frozen", False):  # the installed app: its executable takes the sub-command
        return [sys.executable, CHILD_COMMAND, repo_id, str(cache)]
    return [sys.executable, "-m", "attention_lab", CHILD_COMMAND, repo_id, str(cache)]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # the installed app switches huggingface_hub offline for itself (packaging/entry.py) and
    # names the switches it set: the download the learner asked for lifts those, and only
    # those (an HF_HUB_OFFLINE the learner set stays, and the download says so)
    for name in env.pop(APP_OFFLINE_VAR, "").split(","):
        if name.endswith("_OFFLINE"):
            env.pop(name, None)
    # the child runs this very package, wherever it was imported from
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
    env.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    env["PYTHONIOENCODING"] = "utf-8"
    return env


def download_model(
    repo_id: str,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelFlag | Callable[[], bool] | None = None,
    cache_dir: str | os.PathLike | None = None,
    stall_timeout: float = STALL_TIMEOUT_S,
) -> Path:
    """Download ``repo_id`` (config, safetensors weights, tokenizer) into the Hugging Face
    cache and return its snapshot folder.  Raises :class:`ModelLoadError` with one readable
    clause, or :class:`DownloadCancelled`; either way the cache is left as it was."""
    repo_id = validate_repo_id(repo_id)
    flag = _as_flag(cancel)
    if flag.is_set():
        raise DownloadCancelled(f"download of {repo_id} cancelled")
    cache = Path(cache_dir) if cache_dir is not None else paths.hub_cache_dir()
    before = _inventory(cache, repo_id)
    try:
        stderr = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            [*child_command(repo_id, cache)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            env=_child_env(),
        )
    except OSError as exc:
        raise ModelLoadError.keyed("download.cant_start", **messages.os_error(exc)) from None
    events: queue.Queue = queue.Queue()
    reader = threading.Thread(target=_read_events, args=(proc.stdout, events), name="hub-fetch-reader", daemon=True)
    reader.start()
    threading.Thread(target=_probe_dns, args=(events,), name="hub-dns-probe", daemon=True).start()
    outcome: dict | None = None
    try:
        outcome = _follow(proc, events, flag, progress, stall_timeout, repo_id, cache)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        reader.join(5)
        for stream in (proc.stdin, proc.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if outcome is None or "ok" not in outcome:
            _restore(cache, repo_id, before)
        _log_stderr(stderr)
    if "error" in outcome:
        raise ModelLoadError(outcome["error"], key=outcome.get("key"), values=outcome.get("values"))
    return Path(outcome["ok"])


def _probe_dns(events: queue.Queue) -> None:
    """Ask for the hub's address while the child starts (it needs ~1 s to import
    huggingface_hub): with no network this fails at once, and the learner reads why at once.
    Skipped behind a proxy (which may resolve names itself) and for a literal address."""
    endpoint = os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT
    parts = urlsplit(endpoint)
    host = parts.hostname
    proxied = any(os.environ.get(v) for v in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"))
    if not host or proxied or host == "localhost" or host.replace(".", "").isdigit() or ":" in host:
        return
    try:
        socket.getaddrinfo(host, parts.port or (443 if parts.scheme == "https" else 80), type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        events.put({**messages.keyed_event("download.unreachable", host=host), "probe": True})
    except OSError:
        pass  # not conclusive: the child will tell


def _read_events(stream, events: queue.Queue) -> None:
    for raw in stream:
        try:
            events.put(json.loads(raw))
        except ValueError:
            log.debug("hub-fetch: %r", raw)
    events.put(None)  # end of output


def _follow(proc, events: queue.Queue, flag: CancelFlag, progress, stall_timeout: float, repo_id: str, cache: Path) -> dict:
    last_event = time.monotonic()
    current = ""
    heard_child = False
    while True:
        if flag.is_set():
            proc.kill()
            raise DownloadCancelled(f"download of {repo_id} cancelled")
        try:
            event = events.get(timeout=POLL_S)
        except queue.Empty:
            if heard_child and time.monotonic() - last_event > stall_timeout:
                proc.kill()
                if current:
                    return messages.keyed_event("download.stalled_during", seconds=f"{stall_timeout:g}", file=current)
                return messages.keyed_event("download.stalled", seconds=f"{stall_timeout:g}")
            continue
        if event is not None and event.get("probe"):
            if heard_child:
                continue  # the child got through: the name lookup failing was a fluke
            proc.kill()
            return event
        heard_child = True
        last_event = time.monotonic()
        if event is None:
            code = proc.wait()
            return messages.keyed_event("download.process_died", code=str(code))
        if "error" in event:
            return event
        if "check" in event:
            try:
                more = _check(event["check"], Path(event["path"]), repo_id)
            except ModelLoadError as exc:
                return {"error": str(exc)}  # the child stops: its stdin gets nothing, or is closed
            _reply(proc, more)
            continue
        if "fetched" in event:
            return {"ok": str(_complete(Path(event["fetched"]), repo_id, cache))}
        if "file" in event:
            current = event["file"]
        if "done" in event and progress is not None:
            progress(int(event["done"]), int(event.get("total") or 0), str(event["file"]))


def _check(name: str, path: Path, repo_id: str) -> list[str]:
    """The child asks: the config must be GPT-2's (before any weight is fetched); a shard
    index names the shards to fetch next (checked: plain file names only)."""
    from .models import INDEX_NAME, _read_json, _shards_from_index, check_config

    if name == "config.json":
        check_config(_read_json(path.parent, name, "its configuration"), where=repo_id)
        return []
    if name == INDEX_NAME:
        return _shards_from_index(path.parent)
    raise ModelLoadError(f"the download process asked about an unexpected file {name!r}")


def _reply(proc, more: list[str]) -> None:
    try:
        proc.stdin.write((json.dumps(more) + "\n").encode())
        proc.stdin.flush()
    except OSError:
        pass  # the child is gone: its end of output says so


def _complete(snapshot: Path, repo_id: str, cache: Path) -> Path:
    """Check the snapshot as the app will load it; only then point ``refs/main`` at it, which
    makes it the cached ``repo_id`` for the app, huggingface_hub and transformers alike."""
    from .models import _check_safetensors_headers, inspect_folder

    _, _, weight_files = inspect_folder(snapshot)
    _check_safetensors_headers(snapshot, weight_files)
    ref = _roots(cache, repo_id)[0] / "refs" / "main"
    ref.parent.mkdir(parents=True, exist_ok=True)
    tmp = ref.with_name(f".main.{os.getpid()}.tmp")
    tmp.write_text(snapshot.name, encoding="utf-8")
    os.replace(tmp, ref)  # atomic: a reader sees the old commit or the new one
    return snapshot


def _inventory(cache: Path, repo_id: str) -> set[Path]:
    """Every path the download may add to: the repository's folder and its lock folder."""
    found: set[Path] = set()
    for root in _roots(cache, repo_id):
        if root.is_dir():
            for folder, dirs, files in os.walk(root):
                found.add(Path(folder))
                found.update(Path(folder) / name for name in dirs + files)
    found.update(p for p in (cache, cache / ".locks", cache / "CACHEDIR.TAG") if p.exists())
    return found


def _roots(cache: Path, repo_id: str) -> tuple[Path, Path]:
    name = "models--" + repo_id.replace("/", "--")
    return cache / name, cache / ".locks" / name


def _restore(cache: Path, repo_id: str, before: set[Path]) -> None:
    """Remove what the download added (files, links, blobs, folders); keep all that was there."""
    for root in _roots(cache, repo_id):
        if not root.is_dir():
            continue
        for folder, dirs, files in os.walk(root, topdown=False):
            for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
                path = Path(folder) / name
                if path not in before:
                    path.unlink(missing_ok=True)
            if Path(folder) not in before:
                try:
                    os.rmdir(folder)
                except OSError:
                    pass  # something else lives there now: keep it
    for path in (cache / "CACHEDIR.TAG", cache / ".locks", cache):
        if path not in before:
            try:
                path.unlink() if path.is_file() else path.rmdir()
            except OSError:
                pass


def _log_stderr(stderr) -> None:
    try:
        stderr.seek(0)
        text = stderr.read().decode("utf-8", "replace").strip()
        stderr.close()
    except OSError:
        return
    if text:
        log.debug("hub-fetch stderr:\n%s", text[-4000:])
