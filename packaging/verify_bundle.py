"""Prove the Linux installers work: offline, from another folder, as a fresh user.

    python3 packaging/verify_bundle.py                 # the artifacts of the last build
    python3 packaging/verify_bundle.py --system-install  # also apt-get install the .deb here (root)

For the ``.tar.gz`` (unpacked into a scratch folder) and the ``.deb`` (``dpkg-deb -x`` into
a scratch root; its ``/usr/bin`` launcher is run with the ``/opt`` path moved there),
this runs ``--version``, ``lab --json`` (exit 0, the lab's JSON keys, the bundled model)
and ``--smoke-test --all-panels`` (exit 0 and "smoke test: ok"; a crash at exit fails it), each:

- without network: inside ``unshare -n`` (a network namespace with only a down loopback;
  ``unshare -rn`` when not root).  Where neither works the run goes on with a warning, or
  fails with ``--require-offline``;
- with ``QT_QPA_PLATFORM=offscreen``, plus one smoke test on a real X server (xcb) under
  ``xvfb-run`` when it is installed, since offscreen never loads the X11 plugin;
- from an empty working folder, with an empty ``HOME`` and no Python, Hugging Face or
  Attention Lab variables, so nothing from the checkout or a cache can help.

Exit status 0 when every check passed; the results also go to dist/verify-report.json.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import freeze_config as fc  # noqa: E402
from build_linux import INSTALL_PREFIX, LAUNCHER_PATH  # noqa: E402

DIST = ROOT / "dist"
LAB_KEYS = {"model", "text", "tokens", "token_ids", "mask", "attention", "leakage", "heads", "kv_cache", "shapes"}
DEB_FILES = (
    f".{INSTALL_PREFIX}/{fc.APP_NAME}",
    f".{INSTALL_PREFIX}/_internal/resources/demo-model/config.json",
    f".{INSTALL_PREFIX}/_internal/resources/tokenizer/tokenizer.json",
    f".{LAUNCHER_PATH}",
    f"./usr/share/applications/{fc.APP_NAME}.desktop",
    f"./usr/share/icons/hicolor/scalable/apps/{fc.APP_NAME}.svg",
    f"./usr/share/icons/hicolor/256x256/apps/{fc.APP_NAME}.png",
)
RUN_TIMEOUT_S = 900  # the smoke test gives itself 180 s; a loaded 2-core machine is slow to start


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


# --------------------------------------------------------------------------- isolation
def offline_prefix() -> tuple[list[str], str]:
    """The command prefix that cuts the network, and a word for the report."""
    if shutil.which("unshare"):
        for prefix in (["unshare", "-n"], ["unshare", "-rn"]):
            probe = subprocess.run([*prefix, "cat", "/proc/net/dev"], capture_output=True, text=True)
            if probe.returncode == 0:
                interfaces = {line.split(":")[0].strip() for line in probe.stdout.splitlines()[2:] if ":" in line}
                if interfaces <= {"lo"}:
                    return prefix, " ".join(prefix)
    return [], "none (unshare unavailable: network NOT isolated)"


def clean_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """A fresh user's environment: nothing from this shell's Python, HF or app settings."""
    env = {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "QT_QPA_PLATFORM": "offscreen",
        "TMPDIR": str(home / "tmp"),
    }
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    env.update(extra or {})
    return env


def run_app(prefix: list[str], argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str, float]:
    started = time.monotonic()
    try:
        proc = subprocess.run([*prefix, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        return proc.returncode, proc.stdout, proc.stderr, time.monotonic() - started
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else (exc.stderr or "")
        return 124, out, err + f"\n(timed out after {RUN_TIMEOUT_S} s)", time.monotonic() - started


def tail(text: str, n: int = 6) -> str:
    return " | ".join(line for line in text.strip().splitlines()[-n:])


# --------------------------------------------------------------------------- app checks
def check_app(checks: Checks, label: str, argv0: list[str], scratch: Path, prefix: list[str],
              version: str, expect_gpt2: bool, extra_env: dict[str, str] | None = None, xvfb: bool = False) -> None:
    """--version, lab --json and --smoke-test of one installed copy, as a fresh user."""
    home = scratch / f"home-{label}"
    cwd = scratch / f"cwd-{label}"
    home.mkdir(parents=True, exist_ok=True)
    cwd.mkdir(parents=True, exist_ok=True)
    env = clean_env(home, extra_env)

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
            model_text = json.dumps(model)[:160]
            ok = not missing
            detail += f"; keys missing: {sorted(missing)}" if missing else f"; {len(result)} keys; model {model_text}"
            if expect_gpt2 and "gpt2" not in json.dumps(model).lower():
                ok = False
                detail += "; expected the bundled GPT-2 as the default model"
        except json.JSONDecodeError as exc:
            ok, detail = False, f"{detail}; stdout is not JSON ({exc}): {out[:200]!r}"
    else:
        detail += f"; {tail(err)}"
    checks.record(f"{label}: lab --json", ok, detail, secs)

    rc, out, err, secs = run_app(prefix, [*argv0, "--smoke-test", "--all-panels"], cwd, env)
    said_ok = "smoke test: ok" in (out + err)
    line = next((ln for ln in (out + err).splitlines() if ln.startswith("smoke test:")), tail(err))
    why = "" if rc == 0 else "; stderr: " + tail("\n".join(ln for ln in err.splitlines() if "propagateSizeHints" not in ln), 3)
    checks.record(f"{label}: --smoke-test (offscreen)", rc == 0 and said_ok, f"rc={rc}; {line}{why}", secs)

    if xvfb:
        xenv = dict(env, QT_QPA_PLATFORM="xcb")
        rc, out, err, secs = run_app(prefix, ["xvfb-run", "-a", "-s", "-screen 0 1920x1200x24", *argv0, "--smoke-test", "--all-panels"], cwd, xenv)
        said_ok = "smoke test: ok" in (out + err)
        line = next((ln for ln in (out + err).splitlines() if ln.startswith("smoke test:")), tail(err))
        why = "" if rc == 0 else "; stderr: " + tail("\n".join(ln for ln in err.splitlines() if "propagateSizeHints" not in ln), 3)
        checks.record(f"{label}: --smoke-test (xcb under Xvfb)", rc == 0 and said_ok, f"rc={rc}; {line}{why}", secs)

    hf_home = home / ".local" / "share" / fc.APP_NAME / "huggingface"
    checks.record(f"{label}: writable HF_HOME made in the user's data folder", hf_home.is_dir(), str(hf_home.relative_to(scratch)))
    leftovers = sorted(p.name for p in cwd.iterdir())
    checks.record(f"{label}: nothing written to the working folder", not leftovers, ", ".join(leftovers))


# --------------------------------------------------------------------------- artifacts
def latest_report(gpt2: bool) -> dict:
    path = DIST / f"build-report{'-gpt2' if gpt2 else ''}.json"
    if not path.is_file():
        raise SystemExit(f"{path} not found: run packaging/build_linux.py first, or pass --tar/--deb")
    return json.loads(path.read_text(encoding="utf-8"))


def check_tarball(checks: Checks, tarball: Path, scratch: Path, prefix: list[str], version: str, gpt2: bool, xvfb: bool) -> None:
    dest = scratch / "tar"
    dest.mkdir()
    with tarfile.open(tarball) as archive:
        tops = {m.name.split("/")[0] for m in archive.getmembers()}
        archive.extractall(dest, filter="tar") if hasattr(tarfile, "data_filter") else archive.extractall(dest)
    checks.record("tar.gz: one top-level folder", len(tops) == 1, ", ".join(sorted(tops)))
    exe = dest / sorted(tops)[0] / fc.APP_NAME
    checks.record("tar.gz: executable present", exe.is_file() and os.access(exe, os.X_OK), str(exe.relative_to(scratch)))
    dangling = [str(p.relative_to(dest)) for p in dest.rglob("*") if p.is_symlink() and not p.exists()]
    checks.record("tar.gz: no dangling symlinks", not dangling, ", ".join(dangling[:5]))
    check_app(checks, "tar.gz", [str(exe)], scratch, prefix, version, gpt2, xvfb=xvfb)


def deb_field(deb: Path, name: str) -> str:
    return subprocess.run(["dpkg-deb", "-f", str(deb), name], capture_output=True, text=True).stdout.strip()


def check_desktop_file(checks: Checks, path: Path, icon_root: Path) -> None:
    parser = configparser.ConfigParser(interpolation=None, strict=True)
    parser.optionxform = str  # keys are case-sensitive
    parser.read(path, encoding="utf-8")
    entry = parser["Desktop Entry"] if parser.has_section("Desktop Entry") else {}
    icon = entry.get("Icon", "")
    icon_found = any((icon_root / size / "apps" / f"{icon}{ext}").is_file()
                     for size, ext in (("scalable", ".svg"), ("256x256", ".png")))
    ok = entry.get("Type") == "Application" and entry.get("Exec", "").split()[0:1] == [fc.APP_NAME] and icon_found
    detail = f"Exec={entry.get('Exec')} Icon={icon} (found: {icon_found})"
    if shutil.which("desktop-file-validate"):
        proc = subprocess.run(["desktop-file-validate", str(path)], capture_output=True, text=True)
        ok = ok and proc.returncode == 0
        detail += f"; desktop-file-validate rc={proc.returncode} {tail(proc.stdout + proc.stderr, 3)}"
    checks.record("deb: .desktop entry and icon", ok, detail)


def check_deb(checks: Checks, deb: Path, scratch: Path, prefix: list[str], version: str, gpt2: bool) -> None:
    checks.record("deb: Package/Version", deb_field(deb, "Package") == fc.APP_NAME and deb_field(deb, "Version") == version,
                  f"{deb_field(deb, 'Package')} {deb_field(deb, 'Version')} {deb_field(deb, 'Architecture')}")
    depends = deb_field(deb, "Depends")
    needed = ("libegl1", "libgl1", "libxkbcommon0", "libfontconfig1", "libdbus-1-3", "libxcb-cursor0", "libc6")
    checks.record("deb: declares Qt runtime dependencies", all(n in depends for n in needed), depends)
    listing = subprocess.run(["dpkg-deb", "-c", str(deb)], capture_output=True, text=True).stdout
    names = {line.split()[5] for line in listing.splitlines() if len(line.split()) >= 6}
    missing = [f for f in DEB_FILES if f not in names]
    checks.record("deb: files in place", not missing, "missing: " + ", ".join(missing) if missing else f"{len(names)} entries")

    root = scratch / "deb-root"
    subprocess.check_call(["dpkg-deb", "-x", str(deb), str(root)])
    check_desktop_file(checks, root / f"usr/share/applications/{fc.APP_NAME}.desktop", root / "usr/share/icons/hicolor")
    # The installed launcher, with /opt/attention-lab moved into the scratch root, on PATH.
    launcher = (root / LAUNCHER_PATH.lstrip("/")).read_text(encoding="utf-8")
    checks.record("deb: launcher runs the app in /opt", f"{INSTALL_PREFIX}/{fc.APP_NAME}" in launcher, launcher.strip().splitlines()[-1])
    bindir = scratch / "deb-bin"
    bindir.mkdir()
    moved = bindir / fc.APP_NAME
    moved.write_text(launcher.replace(INSTALL_PREFIX, str(root / INSTALL_PREFIX.lstrip("/"))), encoding="utf-8")
    moved.chmod(0o755)
    path = f"{bindir}:/usr/local/bin:/usr/bin:/bin"
    check_app(checks, "deb (scratch root)", [fc.APP_NAME], scratch, prefix, version, gpt2, extra_env={"PATH": path})


def check_system_install(checks: Checks, deb: Path, scratch: Path, prefix: list[str], version: str, gpt2: bool) -> None:
    """apt-get install the .deb on this machine (pulls its Depends), run it, remove it."""
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        checks.record("deb: system install", False, "needs root and apt-get")
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", str(deb.resolve())],
                          capture_output=True, text=True, env=env)
    if not checks.record("deb: apt-get install", proc.returncode == 0, tail(proc.stdout + proc.stderr, 3)):
        return
    try:
        check_app(checks, "deb (installed)", [fc.APP_NAME], scratch, prefix, version, gpt2)
    finally:
        proc = subprocess.run(["dpkg", "--purge", fc.APP_NAME], capture_output=True, text=True)
        checks.record("deb: dpkg --purge", proc.returncode == 0 and not Path(INSTALL_PREFIX).exists(), tail(proc.stdout + proc.stderr, 2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gpt2", action="store_true", help="verify the --with-gpt2 build (expects GPT-2 as the default model)")
    parser.add_argument("--tar", type=Path, help="the .tar.gz to check (default: from dist/build-report.json)")
    parser.add_argument("--deb", type=Path, help="the .deb to check (default: from dist/build-report.json)")
    parser.add_argument("--system-install", action="store_true", help="also apt-get install the .deb here, run it, purge it")
    parser.add_argument("--require-offline", action="store_true", help="fail when the network can't be cut")
    parser.add_argument("--no-xvfb", action="store_true", help="skip the smoke test on Xvfb (xcb)")
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    args = parser.parse_args(argv)

    version = fc.read_version()
    if args.tar is None or args.deb is None:
        report = latest_report(args.gpt2)
        args.tar = args.tar or ROOT / report["tar_gz"]
        args.deb = args.deb or ROOT / report["deb"]
    checks = Checks()
    prefix, isolation = offline_prefix()
    print(f"network isolation: {isolation}")
    if not prefix and args.require_offline:
        checks.record("network isolation", False, isolation)
    xvfb = not args.no_xvfb and shutil.which("xvfb-run") is not None

    scratch = Path(tempfile.mkdtemp(prefix="attention-lab-verify-"))
    started = time.monotonic()
    try:
        check_tarball(checks, args.tar.resolve(), scratch, prefix, version, args.gpt2, xvfb)
        check_deb(checks, args.deb.resolve(), scratch, prefix, version, args.gpt2)
        if args.system_install:
            check_system_install(checks, args.deb, scratch, prefix, version, args.gpt2)
    finally:
        if args.keep:
            print(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    total = time.monotonic() - started
    out = DIST / f"verify-report{'-gpt2' if args.gpt2 else ''}.json"
    out.write_text(json.dumps({"isolation": isolation, "seconds": round(total, 1), "ok": checks.ok,
                               "checks": checks.results}, indent=2) + "\n", encoding="utf-8")
    passed = sum(r["ok"] for r in checks.results)
    print(f"\n{passed}/{len(checks.results)} checks passed in {total / 60:.1f} min; network isolation: {isolation}")
    return 0 if checks.ok else 1


if __name__ == "__main__":
    sys.exit(main())
