"""The download itself, run in a child process: ``attention-lab hub-fetch REPO CACHE_DIR``.

:func:`attention_lab.core.hub_download.download_model` starts this and reads one JSON
object per line from its stdout; killing the process is how a download is cancelled.
huggingface_hub blocks in socket reads (up to its 10 s timeout), reads 10 MB per
progress step and retries failed transfers with sleeps: none of that can be interrupted
from another thread, so in-process a Cancel left the hub client working in the background.

What it does, with huggingface_hub's own calls, into the Hugging Face cache (so
transformers and other tools share the learner's one copy):

1. ``model_info(files_metadata=True)``: the commit and the file list with sizes.  The
   files to fetch are chosen from that list (:func:`plan_files`); a repository with no
   safetensors weights is refused here, before anything is fetched;
2. ``hf_hub_download(revision=<commit>)`` of ``config.json``, which the app checks is
   GPT-2 before anything else is fetched, then the tokenizer files and the weights (last:
   a snapshot holding weights is complete; a shard index is checked by the app too);
3. the app checks the snapshot as it loads it, and only then writes ``refs/main``: until
   that moment the cache holds no snapshot huggingface_hub or the app would use.

Events (stdout): ``{"plan": [[name, size], ...], "commit": ...}``, ``{"file": name}``,
``{"done": bytes, "total": bytes, "file": name}``, ``{"check": name, "path": …}`` (then
one line is read from stdin: a JSON list of files to fetch because of it, or nothing:
stop), then ``{"fetched": snapshot_folder}`` or ``{"error": one_line}``.  This process
never imports torch (the checks run in the app, which has it loaded), so it starts in
the time Python and huggingface_hub take, about a second.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import messages, numbers

TOKENIZER_FILES = ("tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json")
EXTRA_FILES = ("generation_config.json",)
CONFIG = "config.json"
WEIGHTS = "model.safetensors"
INDEX = "model.safetensors.index.json"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
OTHER_WEIGHT_SUFFIXES = (".h5", ".msgpack", ".onnx", ".gguf", ".ot", ".tflite")
PROGRESS_EVERY_S = 0.1
# huggingface_hub reads 10 MB per step; at 1 MB/s that is a progress bar moving every 10 s
CHUNK_BYTES = 256 * 1024
API_TIMEOUT_S = 10.0


class Stopped(Exception):
    """The app said stop (its check failed, and it has the reason already)."""


class Refused(Exception):
    """The repository can't be used: the message is the one sentence the learner reads."""


def plan_files(sizes: dict[str, int | None]) -> list[str]:
    """The files to fetch, in order, from the repository's top-level file list.

    Config first (checked before anything large), tokenizer next, the weights last.  Files
    in sub-folders (``onnx/…``) and other frameworks' weights are never fetched; a
    repository whose only weights are a pickle is refused without fetching anything.
    """
    names = {n for n in sizes if "/" not in n}
    if "config.json" not in names:
        raise Refused("it has no config.json, so it is not a Hugging Face transformers model")
    if WEIGHTS in names:
        weights = [WEIGHTS]
    elif INDEX in names:
        weights = [INDEX]  # the shards are named inside it: fetched after it
    else:
        pickles = sorted(n for n in names if n.endswith(PICKLE_SUFFIXES))
        others = sorted(n for n in names if n.endswith(OTHER_WEIGHT_SUFFIXES))
        if pickles:
            raise Refused(
                f"it offers its weights only as a pickle ({', '.join(pickles)}), which Attention Lab never "
                "downloads: loading a pickle can run arbitrary code (safetensors only)"
            )
        if others:
            raise Refused(f"it has weights only in {', '.join(others)}; Attention Lab reads .safetensors weights")
        raise Refused("it has no weights (model.safetensors)")
    if "tokenizer.json" not in names and not {"vocab.json", "merges.txt"} <= names:
        raise Refused("it has no GPT-2 tokenizer (tokenizer.json, or vocab.json and merges.txt)")
    extras = [n for n in TOKENIZER_FILES + EXTRA_FILES if n in names]
    return [CONFIG, *extras, *weights]


def main(argv: list[str]) -> int:
    repo_id, cache_dir = argv[0], argv[1]
    reporter = _Reporter()
    try:
        snapshot = _fetch(repo_id, Path(cache_dir), reporter)
    except Stopped:
        return 3
    except Exception as exc:  # noqa: BLE001 -- every failure becomes the one line the parent shows
        reporter.emit(describe_failure(exc, reporter, repo_id))
        return 1
    reporter.emit({"fetched": str(snapshot)})
    return 0


class _Reporter:
    def __init__(self) -> None:
        self.file = ""
        self.file_done = 0
        self.file_size: int | None = None
        self.before = 0  # bytes of the files already fetched
        self.total = 0
        self._last = 0.0

    def emit(self, event: dict) -> None:
        sys.stdout.write(json.dumps(event) + "\n")
        sys.stdout.flush()

    def start_file(self, name: str, size: int | None) -> None:
        self.file, self.file_done, self.file_size = name, 0, size
        # at once, not throttled (the event names the file): the previous file's last event was
        # just sent, so a fast first stretch of this one would otherwise say nothing, and the
        # dialog would go on naming the previous file while the weights transfer (or stall)
        self.progress(force=True)

    def end_file(self) -> None:
        self.before += self.file_size if self.file_size is not None else self.file_done
        self.file_done = 0
        self.progress(force=True)

    def add(self, n: int) -> None:
        self.file_done += n  # negative when huggingface_hub restarts a file the server won't resume
        self.progress()

    def progress(self, force: bool = False) -> None:
        now = time.monotonic()
        if force or now - self._last >= PROGRESS_EVERY_S:
            self._last = now
            self.emit({"done": self.before + max(0, self.file_done), "total": self.total, "file": self.file})


def _fetch(repo_id: str, cache: Path, reporter: _Reporter) -> Path:
    from huggingface_hub import HfApi, constants, hf_hub_download
    from huggingface_hub.utils import tqdm as hf_tqdm

    constants.DOWNLOAD_CHUNK_SIZE = CHUNK_BYTES  # this process does nothing else
    reporter.emit({"started": True})  # imports done: from here on, silence means a stalled server

    class Progress(hf_tqdm):
        def __init__(self, *args, **kwargs):
            kwargs["disable"] = True  # no terminal bar: the app draws its own
            super().__init__(*args, **kwargs)

        def update(self, n=1):
            reporter.add(int(n or 0))
            return super().update(n)

    info = HfApi().model_info(repo_id, files_metadata=True, timeout=API_TIMEOUT_S)
    sizes = {s.rfilename: (s.lfs.size if s.lfs else s.size) for s in info.siblings or []}
    plan = plan_files(sizes)
    commit = info.sha
    reporter.total = sum(sizes.get(n) or 0 for n in plan)
    reporter.emit({"plan": [[n, sizes.get(n)] for n in plan], "commit": commit})

    def get(name: str) -> Path:
        reporter.start_file(name, sizes.get(name))
        path = Path(hf_hub_download(repo_id, name, revision=commit, cache_dir=str(cache), tqdm_class=Progress))
        reporter.end_file()
        return path

    def ask(path: Path) -> list[str] | None:
        """The app checks ``path`` (it has torch and the checks; this process stays light):
        the reply is the files to fetch next because of it, or None: stop here."""
        reporter.emit({"check": path.name, "path": str(path)})
        reply = sys.stdin.readline()
        return json.loads(reply) if reply.strip() else None

    for name in plan:
        path = get(name)
        if name in (CONFIG, INDEX):  # GPT-2? before the weights; which shards? after the index
            more = ask(path)
            if more is None:
                raise Stopped()
            for shard in more:
                sizes.setdefault(shard, None)
                reporter.total += sizes.get(shard) or 0
                get(shard)
    return path.parent


def _causes(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def describe_error(exc: BaseException, reporter: _Reporter, repo_id: str) -> str:
    """One clause a learner can act on (the window puts it after "The download of … failed:")."""
    return describe_failure(exc, reporter, repo_id)["error"]


def describe_failure(exc: BaseException, reporter: _Reporter, repo_id: str) -> dict:
    """The event the parent reads: ``{"error": clause}``, plus ``key`` and ``values`` for the failures the
    window says in its own language (:mod:`attention_lab.core.messages`)."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        OfflineModeIsEnabled,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    host = constants.ENDPOINT.split("://", 1)[-1]
    where = f" during {reporter.file}" if reporter.file else ""

    def during(key: str, **values) -> dict:
        """``key`` as it fits what is known: ``key`` alone, ``key_during`` a file, ``key_partial`` how much of it."""
        if reporter.file and reporter.file_size:
            return messages.keyed_event(f"{key}_partial", file=reporter.file, **_arrived(reporter), **values)
        return messages.keyed_event(f"{key}_during", file=reporter.file, **values) if reporter.file else (
            messages.keyed_event(key, **values))

    def incomplete() -> dict:
        if reporter.file_size:
            return messages.keyed_event("download.incomplete_partial", file=reporter.file, **_arrived(reporter))
        return messages.keyed_event("download.incomplete", file=reporter.file)

    chain = list(_causes(exc))
    for err in chain:
        if isinstance(err, Refused):
            return {"error": f"{repo_id} can't be used: {err}"}
        if isinstance(err, OfflineModeIsEnabled):
            return messages.keyed_event("download.offline_mode")
        if isinstance(err, (RepositoryNotFoundError, RevisionNotFoundError)):
            return messages.keyed_event("download.no_such_model", repo=repo_id, host=host)
        if isinstance(err, GatedRepoError):
            return messages.keyed_event("download.gated", repo=repo_id, host=host)
        if isinstance(err, (httpx2.ConnectError, httpx2.ConnectTimeout)):
            return messages.keyed_event("download.unreachable", host=host)
        if isinstance(err, httpx2.TimeoutException):
            return during("download.timeout", host=host)
        if isinstance(err, (httpx2.RemoteProtocolError, httpx2.ReadError, httpx2.NetworkError)):
            return during("download.broke_off", host=host)
        if isinstance(err, HfHubHTTPError) and err.response is not None:
            code = err.response.status_code
            if code == 416 or (reporter.file_size and 0 < reporter.file_done < reporter.file_size):
                return incomplete()
            if reporter.file:
                return messages.keyed_event("download.http_error_during", host=host, code=str(code), file=reporter.file)
            return messages.keyed_event("download.http_error", host=host, code=str(code))
        if isinstance(err, OSError) and "Consistency check failed" in str(err):
            return incomplete()
        if isinstance(err, OSError) and getattr(err, "strerror", None):
            return messages.keyed_event("download.cache_unwritable", **messages.os_error(err))
    lines = str(exc).strip().splitlines()
    return {"error": f"{type(exc).__name__}{where}: {lines[0] if lines else ''}".rstrip(": ")}


def _arrived(reporter: _Reporter) -> dict[str, str]:
    """How much of the file arrived, of how much: in English (this process doesn't know the window's
    language), and in bytes, which the window writes with its own decimal sign (3,1 MB in Portuguese)."""
    done, size = max(0, reporter.file_done), reporter.file_size or 0
    return {"done": numbers.download_size(done, "en"), "size": numbers.download_size(size, "en"),
            "done_bytes": str(done), "size_bytes": str(size)}
