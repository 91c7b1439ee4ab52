"""Check an installed Attention Lab as a workshop laptop runs it: offline, from another
folder, as a fresh user.  The same checks on Linux, Windows and macOS.

    python packaging/verify_app.py                  # the installer named in dist/build-report.json
    python packaging/verify_app.py --installer dist/attention-lab-0.1.0-windows-x64-setup.exe
    python packaging/verify_app.py --installer dist/attention-lab-0.1.0-macos-arm64.dmg
    python packaging/verify_app.py --app "dist/Attention Lab.app"   # a built app, no installer

Windows: the Inno Setup installer runs silently, per user, into a scratch folder; the copy
is checked, then uninstalled.  macOS: the ``.dmg`` is attached read-only, its app copied
out as the drag to Applications does, the image detached, and the copy checked.  Linux:
``packaging/verify_bundle.py`` (the ``.tar.gz`` and the ``.deb``), which uses the checks here.

Each installed copy: ``--version``; ``lab --json`` (the lab's keys, the bundled model);
``--smoke-test --all-panels`` (offscreen); ``HF_HOME`` made in the platform's per-user
data folder; nothing written to the working folder; the download process (``hub-fetch``,
started from the executable the app starts it from) against a loopback hub
(tests/hub_server.py): what it was served lands in the cache unchanged and nothing the app
must leave is asked for; the sizes against the goals.

Network: on Linux the runs are inside ``unshare -n``.  Where a process can't be cut off
(Windows, macOS), they get ``HF_HUB_OFFLINE=1`` and every proxy variable points at a
blocked proxy on loopback that records each connection: a client that honours the proxy
settings and tries the network fails the check (one that ignores them is not caught).
Runs from an empty working folder, with an empty home and no Python, Hugging Face or
Attention Lab variables.  Exit status 0 when every check passed; the results also go to
dist/verify-report-<platform>.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import freeze_config as fc  # noqa: E402
from build_linux import tree_size  # noqa: E402

DIST = ROOT / "dist"
LAB_KEYS = {"model", "text", "tokens", "token_ids", "mask", "attention", "leakage", "heads", "kv_cache", "shapes"}
RUN_TIMEOUT_S = 900  # the smoke test gives itself 180 s; a loaded 2-core machine is slow to start
DOWNLOAD_TIMEOUT_S = 300
# The goals for the default installer (the --with-gpt2 workshop build carries 548 MB more).
UNPACKED_GOAL_BYTES = 1_000_000_000
COMPRESSED_GOAL_BYTES = 450_000_000
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
MAC_APP = f"{fc.DISPLAY_NAME}.app"


def platform_key(platform: str = sys.platform) -> str:
    """``linux``, ``win32`` or ``darwin``: the three the installers are built for."""
    if platform.startswith("linux"):
        return "linux"
    if platform in ("win32", "darwin"):
        return platform
    raise SystemExit(f"no installer is built for {platform}")


# --------------------------------------------------------------------------- results
class Checks:
    def __init__(self) -> None:
        self.results: list[dict] = []

    def record(self, name: str, ok: bool, detail: str = "", seconds: float | None = None) -> bool:
        self.results.append({"check": name, "ok": bool(ok), "detail": detail, "seconds": seconds})
        mark = "PASS" if ok else "FAIL"
        timing = f" ({seconds:.0f} s)" if seconds is not None else ""
        print(f"[{mark}] {name}{timing}{': ' + detail if detail else ''}", flush=True)
        return ok

    @property
    def ok(self) -> bool:
        return all(r["ok"] for r in self.results)


def tail(text: str, n: int = 6) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-n:])


# --------------------------------------------------------------------------- where things are
def executables(root: Path, platform: str) -> tuple[Path, Path]:
    """(the app's own executable, its console twin) in an installed copy rooted at ``root``:
    the install folder (Windows), the ``.app`` (macOS), the unpacked folder (Linux).

    The first is ``sys.executable`` of the running app, so it is what starts the download
    process; the second is what a terminal runs (on Linux they are one file)."""
    key = platform_key(platform)
    if key == "win32":
        return root / f"{fc.APP_NAME}.exe", root / f"{fc.APP_NAME}-cli.exe"
    if key == "darwin":
        macos = root / "Contents" / "MacOS"
        return macos / fc.APP_NAME, macos / f"{fc.APP_NAME}-cli"
    return root / fc.APP_NAME, root / fc.APP_NAME


def clean_env(home: Path, platform: str = sys.platform, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A fresh user's environment on ``platform``: nothing from this shell's Python, HF or
    app settings; the home (and on Windows the AppData folders) in ``home``."""
    key = platform_key(platform)
    tmp = home / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    if key == "win32":
        system_root = os.environ.get("SYSTEMROOT", r"C:\Windows")
        env = {
            "SYSTEMROOT": system_root,  # Windows' own DLLs and Winsock need it
            "WINDIR": system_root,
            "SYSTEMDRIVE": os.environ.get("SYSTEMDRIVE", "C:"),
            "COMSPEC": f"{system_root}\\System32\\cmd.exe",
            "PATHEXT": ".COM;.EXE;.BAT;.CMD",
            "PATH": f"{system_root}\\System32;{system_root}",
            "USERPROFILE": str(home),
            "APPDATA": str(home / "AppData" / "Roaming"),
            "LOCALAPPDATA": str(home / "AppData" / "Local"),
            "TEMP": str(tmp),
            "TMP": str(tmp),
        }
    else:
        env = {
            "PATH": "/usr/bin:/bin:/usr/sbin:/sbin" if key == "darwin" else "/usr/local/bin:/usr/bin:/bin",
            "HOME": str(home),
            "LANG": "en_US.UTF-8" if key == "darwin" else "C.UTF-8",
            "LC_ALL": "en_US.UTF-8" if key == "darwin" else "C.UTF-8",
            "TMPDIR": str(tmp),
        }
    env["QT_QPA_PLATFORM"] = "offscreen"
    env.update(extra or {})
    return env


def expected_hf_home(env: dict[str, str], platform: str) -> Path:
    """Where the installed app must make its writable Hugging Face home for this user
    (written out here, not taken from packaging/entry.py, so the two are checked against
    each other)."""
    key = platform_key(platform)
    if key == "win32":
        return Path(env["LOCALAPPDATA"]) / fc.APP_NAME / "huggingface"
    if key == "darwin":
        return Path(env["HOME"]) / "Library" / "Application Support" / fc.APP_NAME / "huggingface"
    return Path(env["HOME"]) / ".local" / "share" / fc.APP_NAME / "huggingface"


# --------------------------------------------------------------------------- the network
class BlockedProxy:
    """A proxy on loopback that answers nothing: it records each connection and closes it.

    Every proxy variable points here, so an HTTP client that honours them and tries to
    reach the network fails at once, and the attempt is seen (``attempts``)."""

    def __init__(self) -> None:
        self.attempts: list[str] = []
        self._sock: socket.socket | None = None
        self._stop = threading.Event()

    def __enter__(self) -> "BlockedProxy":
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        threading.Thread(target=self._serve, name="blocked-proxy", daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._sock is not None:
            self._sock.close()

    @property
    def url(self) -> str:
        assert self._sock is not None
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def env(self, no_proxy: str = "") -> dict[str, str]:
        return {**{name: self.url for name in PROXY_VARS}, "NO_PROXY": no_proxy, "no_proxy": no_proxy}

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = self._sock.accept()  # type: ignore[union-attr]
            except socket.timeout:
                continue
            except OSError:
                return
            with conn:
                conn.settimeout(2)
                try:
                    first = conn.recv(512)
                except OSError:
                    first = b""
                self.attempts.append(first.split(b"\r\n", 1)[0].decode("latin-1") or "(connection, no request)")


def unshare_prefix() -> list[str]:
    """``unshare -n`` (or ``-rn`` when not root) where it gives a namespace with no
    interface but loopback; [] where it can't (no unshare, user namespaces off)."""
    if not shutil.which("unshare"):
        return []
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
        probe = subprocess.run([*prefix, "cat", "/proc/net/dev"], capture_output=True, text=True)
        if probe.returncode == 0:
            interfaces = {line.split(":")[0].strip() for line in probe.stdout.splitlines()[2:] if ":" in line}
            if interfaces <= {"lo"}:
                return prefix
    return []


@dataclass
class Offline:
    """How the app's runs are kept off the network: a command prefix, or variables."""

    prefix: list[str]
    env: dict[str, str]
    description: str
    isolated: bool  # True when the network is really gone (not just switched off)
    proxy: BlockedProxy | None = field(default=None, repr=False)


def offline_setup(platform: str, proxy: BlockedProxy, prefix: list[str] | None = None) -> Offline:
    """Linux: a network namespace (``prefix``, found by :func:`unshare_prefix` when None).
    Elsewhere, or where that fails: HF_HUB_OFFLINE=1 and the blocked proxy."""
    if platform_key(platform) == "linux":
        prefix = unshare_prefix() if prefix is None else prefix
        if prefix:
            return Offline(prefix, {}, " ".join(prefix) + " (no network interface but a down loopback)", True, proxy)
    return Offline([], {"HF_HUB_OFFLINE": "1", **proxy.env()},
                   f"HF_HUB_OFFLINE=1 and every proxy variable at a blocked proxy ({proxy.url})", False, proxy)


# --------------------------------------------------------------------------- the app's runs
def run_app(prefix: list[str], argv: list[str], cwd: Path, env: dict[str, str],
            timeout: float = RUN_TIMEOUT_S) -> tuple[int, str, str, float]:
    started = time.monotonic()
    try:
        proc = subprocess.run([*prefix, *argv], cwd=cwd, env=env, capture_output=True, timeout=timeout)
        return (proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"),
                time.monotonic() - started)
    except subprocess.TimeoutExpired as exc:
        out = (exc.stdout or b"").decode("utf-8", "replace")
        err = (exc.stderr or b"").decode("utf-8", "replace")
        return 124, out, err + f"\n(timed out after {timeout:.0f} s)", time.monotonic() - started


def _smoke_detail(rc: int, out: str, err: str) -> tuple[bool, str]:
    said_ok = "smoke test: ok" in (out + err)
    line = next((ln for ln in (out + err).splitlines() if ln.startswith("smoke test:")), tail(err))
    why = "" if rc == 0 else "; stderr: " + tail("\n".join(ln for ln in err.splitlines() if "propagateSizeHints" not in ln), 3)
    return rc == 0 and said_ok, f"rc={rc}; {line}{why}"


def check_app(checks: Checks, label: str, argv0: list[str], scratch: Path, offline: Offline, version: str,
              expect_gpt2: bool, platform: str = sys.platform, extra_env: dict[str, str] | None = None,
              xvfb: bool = False) -> None:
    """--version, lab --json and --smoke-test --all-panels of one installed copy, offline,
    as a fresh user; then where it wrote."""
    home = scratch / f"home-{label}"
    cwd = scratch / f"cwd-{label}"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    env = clean_env(home, platform, {**offline.env, **(extra_env or {})})
    prefix = offline.prefix

    rc, out, err, secs = run_app(prefix, [*argv0, "--version"], cwd, env)
    checks.record(f"{label}: --version", rc == 0 and version in out, f"rc={rc} {out.strip() or tail(err)}", secs)

    rc, out, err, secs = run_app(prefix, [*argv0, "lab", "--json", "--new-tokens", "20"], cwd, env)
    detail = f"rc={rc}"
    ok = rc == 0
    if ok:
        try:
            result = json.loads(out)
            missing = LAB_KEYS - set(result)
            model = result.get("model") or {}
            ok = not missing
            detail += f"; keys missing: {sorted(missing)}" if missing else f"; {len(result)} keys; model {json.dumps(model)[:160]}"
            if expect_gpt2 and "gpt2" not in json.dumps(model).lower():
                ok = False
                detail += "; expected the bundled GPT-2 as the default model"
        except json.JSONDecodeError as exc:
            ok, detail = False, f"{detail}; stdout is not JSON ({exc}): {out[:200]!r}"
    else:
        detail += f"; {tail(err)}"
    checks.record(f"{label}: lab --json", ok, detail, secs)

    rc, out, err, secs = run_app(prefix, [*argv0, "--smoke-test", "--all-panels"], cwd, env)
    checks.record(f"{label}: --smoke-test --all-panels (offscreen)", *_smoke_detail(rc, out, err), secs)

    if xvfb:
        xenv = dict(env, QT_QPA_PLATFORM="xcb")
        rc, out, err, secs = run_app(prefix, ["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24", *argv0,
                                              "--smoke-test", "--all-panels"], cwd, xenv)
        checks.record(f"{label}: --smoke-test --all-panels (xcb under Xvfb)", *_smoke_detail(rc, out, err), secs)

    hf_home = expected_hf_home(env, platform)
    checks.record(f"{label}: writable HF_HOME made in the user's data folder", hf_home.is_dir(),
                  str(hf_home.relative_to(scratch)))
    leftovers = sorted(p.name for p in cwd.iterdir())
    checks.record(f"{label}: nothing written to the working folder", not leftovers, ", ".join(leftovers))


def check_download(checks: Checks, label: str, argv0: list[str], scratch: Path, proxy: BlockedProxy,
                   platform: str = sys.platform, extra_env: dict[str, str] | None = None,
                   timeout: float = DOWNLOAD_TIMEOUT_S) -> None:
    """The download process of the installed app (``hub-fetch gpt2 CACHE``) against the
    loopback hub, which serves a gpt2 repository made of the demo model plus the files the
    app must never fetch.  The process gets what the app gives it (its offline switches
    lifted), the hub as HF_ENDPOINT, and the blocked proxy for everything else."""
    sys.path.insert(0, str(ROOT / "tests"))
    from hub_server import GPT2_DECOYS, LOOPBACK_MISSING, HubServer, Repo, gpt2_repo_files

    if LOOPBACK_MISSING:
        checks.record(f"{label}: download from the loopback hub", False, LOOPBACK_MISSING)
        return
    home = scratch / f"home-{label}-download"
    cwd = scratch / f"cwd-{label}-download"
    cwd.mkdir(parents=True, exist_ok=True)
    cache = home / "hub-cache"
    repo = Repo(gpt2_repo_files(ROOT / "resources" / "demo-model"))
    events: list[dict] = []
    with HubServer({"gpt2": repo}, max_seconds=timeout + 30) as hub:
        env = clean_env(home, platform, {**proxy.env(no_proxy="127.0.0.1,localhost"), "HF_ENDPOINT": hub.url,
                                         "HF_HUB_DISABLE_TELEMETRY": "1", **(extra_env or {})})
        started = time.monotonic()
        proc = subprocess.Popen([*argv0, "hub-fetch", "gpt2", str(cache)], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            for raw in proc.stdout:  # type: ignore[union-attr]
                try:
                    event = json.loads(raw)
                except ValueError:
                    continue
                events.append(event)
                if "check" in event:  # the app checks config.json here; a passing check asks for nothing more
                    proc.stdin.write(b"[]\n")  # type: ignore[union-attr]
                    proc.stdin.flush()  # type: ignore[union-attr]
            err = proc.stderr.read().decode("utf-8", "replace")  # type: ignore[union-attr]
            rc = proc.wait()
        finally:
            killer.cancel()
        secs = time.monotonic() - started
        asked = set(hub.requested_files("GET")) | set(hub.requested_files("HEAD"))
    fetched = next((e["fetched"] for e in events if "fetched" in e), None)
    error = next((e["error"] for e in events if "error" in e), None)
    ok = rc == 0 and fetched is not None
    checks.record(f"{label}: download process finished", ok,
                  f"rc={rc}; {len(events)} events; " + (f"snapshot {fetched}" if fetched else f"error {error!r}; {tail(err, 3)}"),
                  secs)
    if not ok:
        return
    snapshot = Path(fetched)
    wanted = [name for name in ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json",
                                "model.safetensors") if name in repo.files]
    wrong = [name for name in wanted if not (snapshot / name).is_file() or (snapshot / name).read_bytes() != repo.files[name]]
    checks.record(f"{label}: downloaded files are the served bytes, in the given cache",
                  not wrong and cache in snapshot.parents, "differ or missing: " + ", ".join(wrong) if wrong else str(snapshot.relative_to(scratch)))
    decoys = sorted(asked & set(GPT2_DECOYS))
    checks.record(f"{label}: nothing the app must leave was asked for", not decoys, ", ".join(decoys))


def check_proxy_untouched(checks: Checks, proxy: BlockedProxy) -> None:
    checks.record("no connection reached the blocked proxy", not proxy.attempts, "; ".join(proxy.attempts[:5]))


def check_sizes(checks: Checks, unpacked: int, compressed: dict[str, int], with_gpt2: bool) -> None:
    """The installed size and each installer's size against the goals (not for the
    --with-gpt2 build, which adds GPT-2's weights on purpose)."""
    mb = lambda n: f"{n / 1e6:.0f} MB"  # noqa: E731
    if with_gpt2:
        checks.record("sizes (GPT-2 build: no goal)", True,
                      f"unpacked {mb(unpacked)}; " + "; ".join(f"{k} {mb(v)}" for k, v in compressed.items()))
        return
    checks.record("unpacked size within the goal", 0 < unpacked <= UNPACKED_GOAL_BYTES,
                  f"{mb(unpacked)} (goal <= {mb(UNPACKED_GOAL_BYTES)})")
    for name, size in compressed.items():
        checks.record(f"{name} size within the goal", 0 < size <= COMPRESSED_GOAL_BYTES,
                      f"{mb(size)} (goal <= {mb(COMPRESSED_GOAL_BYTES)})")


# --------------------------------------------------------------------------- installing
def inno_install_command(installer: Path, target: Path, log: Path) -> list[str]:
    """Inno Setup's silent, per-user install into ``target`` (no desktop icon, no launch)."""
    return [str(installer), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART", "/SP-", "/CURRENTUSER",
            "/TASKS=", f"/DIR={target}", f"/LOG={log}"]


def inno_uninstall_command(target: Path) -> list[str]:
    return [str(target / "unins000.exe"), "/VERYSILENT", "/SUPPRESSMSGBOXES", "/NORESTART"]


def start_menu_shortcut(environ: Mapping[str, str]) -> Path:
    """The per-user Start menu entry the .iss makes ({autoprograms} when not admin)."""
    return Path(environ.get("APPDATA", "")) / "Microsoft" / "Windows" / "Start Menu" / "Programs" / f"{fc.DISPLAY_NAME}.lnk"


def install_windows(checks: Checks, installer: Path, scratch: Path) -> Path | None:
    target = scratch / "Programs" / fc.DISPLAY_NAME
    log = scratch / "setup.log"
    started = time.monotonic()
    proc = subprocess.run(inno_install_command(installer, target, log), capture_output=True, text=True, timeout=900)
    ok = proc.returncode == 0 and all(p.is_file() for p in executables(target, "win32"))
    log_tail = tail(log.read_text(encoding="utf-8", errors="replace"), 3) if log.is_file() else ""
    checks.record("setup.exe: silent per-user install", ok, f"rc={proc.returncode}; {log_tail}", time.monotonic() - started)
    checks.record("setup.exe: Start menu entry", start_menu_shortcut(os.environ).is_file(), str(start_menu_shortcut(os.environ)))
    return target if ok else None


def uninstall_windows(checks: Checks, target: Path) -> None:
    proc = subprocess.run(inno_uninstall_command(target), capture_output=True, text=True, timeout=600)
    # the uninstaller hands over to a copy of itself in %TEMP% and returns: wait for the files to go
    deadline = time.monotonic() + 180
    exe = executables(target, "win32")[0]
    while exe.exists() and time.monotonic() < deadline:
        time.sleep(1)
    checks.record("setup.exe: uninstall removes the app and its Start menu entry",
                  proc.returncode == 0 and not exe.exists() and not start_menu_shortcut(os.environ).exists(),
                  f"rc={proc.returncode}; app left: {exe.exists()}")


def dmg_attach_command(dmg: Path, mountpoint: Path) -> list[str]:
    return ["hdiutil", "attach", "-nobrowse", "-readonly", "-noautoopen", "-mountpoint", str(mountpoint), str(dmg)]


def install_mac(checks: Checks, dmg: Path, scratch: Path) -> Path | None:
    """Attach the image, check its layout (the app and an Applications link), copy the app
    out with ``ditto`` (as the drag does), detach."""
    mount = scratch / "dmg"
    mount.mkdir()
    proc = subprocess.run(dmg_attach_command(dmg, mount), capture_output=True, text=True, timeout=300)
    if not checks.record("dmg: attaches", proc.returncode == 0, tail(proc.stdout + proc.stderr, 2)):
        return None
    target = scratch / "Applications" / MAC_APP
    try:
        link = mount / "Applications"
        checks.record("dmg: the app and a link to /Applications",
                      (mount / MAC_APP).is_dir() and link.is_symlink() and os.readlink(link) == "/Applications",
                      ", ".join(sorted(p.name for p in mount.iterdir())))
        target.parent.mkdir()
        subprocess.run(["ditto", str(mount / MAC_APP), str(target)], check=True, timeout=600)
    finally:
        subprocess.run(["hdiutil", "detach", str(mount), "-force"], capture_output=True, timeout=120)
    ok = all(p.is_file() for p in executables(target, "darwin"))
    checks.record("dmg: app copied out", ok, str(target.relative_to(scratch)))
    sign = subprocess.run(["codesign", "--verify", "--deep", "--strict", str(target)], capture_output=True, text=True)
    details = subprocess.run(["codesign", "-dv", str(target)], capture_output=True, text=True).stderr
    signed = "Authority=" in details  # an ad-hoc signature (PyInstaller's own) names no authority
    checks.record("app: code signature valid" if signed else "app: unsigned (ad-hoc), so Gatekeeper asks on first open",
                  sign.returncode == 0 or not signed, tail(sign.stderr or details, 2))
    return target if ok else None


# --------------------------------------------------------------------------- main
@contextlib.contextmanager
def scratch_folder(keep: bool = False) -> Iterator[Path]:
    """A folder for the installed copies and the fresh users' homes: removed after, unless ``keep``."""
    scratch = Path(tempfile.mkdtemp(prefix="attention-lab-verify-"))
    try:
        yield scratch
    finally:
        if keep:
            print(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def finish(checks: Checks, out: Path, started: float, network: str, **fields) -> int:
    """Write the report, print the tally; the exit status (0: every check passed, and there was one)."""
    total = time.monotonic() - started
    out.parent.mkdir(exist_ok=True)
    out.write_text(json.dumps({**fields, "network": network, "seconds": round(total, 1), "ok": checks.ok,
                               "checks": checks.results}, indent=2) + "\n", encoding="utf-8")
    passed = sum(r["ok"] for r in checks.results)
    print(f"\n{passed}/{len(checks.results)} checks passed in {total / 60:.1f} min; network: {network}")
    return 0 if checks.ok and checks.results else 1


def default_installer(platform: str) -> Path:
    report = DIST / "build-report.json"
    if not report.is_file():
        raise SystemExit(f"{report} not found: build first, or pass --installer/--app")
    data = json.loads(report.read_text(encoding="utf-8"))
    key = {"win32": "installer", "darwin": "dmg"}.get(platform_key(platform))
    if key is None or key not in data:
        raise SystemExit(f"{report} names no {key or 'installer'} for {platform}: on Linux run packaging/verify_bundle.py")
    return ROOT / data[key]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--installer", type=Path, help="the setup.exe (Windows) or .dmg (macOS) to install and check")
    parser.add_argument("--app", type=Path, help="check this installed copy as it is (install folder or .app)")
    parser.add_argument("--gpt2", action="store_true", help="the --with-gpt2 build (GPT-2 is the default model; no size goal)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)

    platform = platform_key()
    if platform == "linux":
        raise SystemExit("on Linux: python3 packaging/verify_bundle.py (the .tar.gz and the .deb)")
    version = fc.read_version()
    checks = Checks()
    started = time.monotonic()
    installed: Path | None = args.app.resolve() if args.app else None
    installer = None if installed else (args.installer or default_installer(platform)).resolve()
    with scratch_folder(args.keep) as scratch, BlockedProxy() as proxy:
        offline = offline_setup(platform, proxy)
        print(f"network: {offline.description}")
        if installer is not None:
            installed = (install_windows if platform == "win32" else install_mac)(checks, installer, scratch)
        if installed is not None:
            app_exe, cli_exe = executables(installed, platform)
            check_app(checks, platform, [str(cli_exe)], scratch, offline, version, args.gpt2, platform)
            check_download(checks, platform, [str(app_exe)], scratch, proxy, platform)
            check_sizes(checks, tree_size(installed), {installer.name: installer.stat().st_size} if installer else {},
                        args.gpt2)
            if installer is not None and platform == "win32":
                uninstall_windows(checks, installed)
        check_proxy_untouched(checks, proxy)
    return finish(checks, DIST / f"verify-report-{platform}{'-gpt2' if args.gpt2 else ''}.json", started,
                  offline.description, platform=platform)


if __name__ == "__main__":
    sys.exit(main())
