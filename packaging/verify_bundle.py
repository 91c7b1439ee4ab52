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

Then the unpacked app's download process against a loopback hub, the sizes against the
goals, and that nothing reached the blocked proxy (packaging/verify_app.py: the checks
the Windows and macOS installers get too).

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
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import freeze_config as fc  # noqa: E402
from build_linux import INSTALL_PREFIX, LAUNCHER_PATH, tree_size  # noqa: E402
from verify_app import (  # noqa: E402  -- the checks every platform's installer gets
    BlockedProxy, Checks, Offline, check_app, check_download, check_proxy_untouched, check_sizes, finish, offline_setup,
    scratch_folder, tail,
)

DIST = ROOT / "dist"
DEB_FILES = (
    f".{INSTALL_PREFIX}/{fc.APP_NAME}",
    f".{INSTALL_PREFIX}/_internal/resources/demo-model/config.json",
    f".{INSTALL_PREFIX}/_internal/resources/tokenizer/tokenizer.json",
    f".{LAUNCHER_PATH}",
    f"./usr/share/applications/{fc.APP_NAME}.desktop",
    f"./usr/share/icons/hicolor/scalable/apps/{fc.APP_NAME}.svg",
    f"./usr/share/icons/hicolor/256x256/apps/{fc.APP_NAME}.png",
)


# --------------------------------------------------------------------------- artifacts
def latest_report(gpt2: bool) -> dict:
    path = DIST / f"build-report{'-gpt2' if gpt2 else ''}.json"
    if not path.is_file():
        raise SystemExit(f"{path} not found: run packaging/build_linux.py first, or pass --tar/--deb")
    return json.loads(path.read_text(encoding="utf-8"))


def check_tarball(checks: Checks, tarball: Path, scratch: Path, offline: Offline, version: str, gpt2: bool,
                  xvfb: bool) -> Path:
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
    check_app(checks, "tar.gz", [str(exe)], scratch, offline, version, gpt2, "linux", xvfb=xvfb)
    assert offline.proxy is not None
    check_download(checks, "tar.gz", [str(exe)], scratch, offline.proxy, "linux")
    return exe.parent


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


def check_deb(checks: Checks, deb: Path, scratch: Path, offline: Offline, version: str, gpt2: bool) -> None:
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
    check_app(checks, "deb (scratch root)", [fc.APP_NAME], scratch, offline, version, gpt2, "linux", extra_env={"PATH": path})


def check_system_install(checks: Checks, deb: Path, scratch: Path, offline: Offline, version: str, gpt2: bool) -> None:
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
        check_app(checks, "deb (installed)", [fc.APP_NAME], scratch, offline, version, gpt2, "linux")
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
    xvfb = not args.no_xvfb and shutil.which("xvfb-run") is not None
    started = time.monotonic()
    with scratch_folder(args.keep) as scratch, BlockedProxy() as proxy:
        offline = offline_setup("linux", proxy)
        isolation = offline.description if offline.isolated else f"NOT isolated (no usable unshare): {offline.description}"
        print(f"network isolation: {isolation}")
        if not offline.isolated and args.require_offline:
            checks.record("network isolation", False, isolation)
        unpacked = check_tarball(checks, args.tar.resolve(), scratch, offline, version, args.gpt2, xvfb)
        check_deb(checks, args.deb.resolve(), scratch, offline, version, args.gpt2)
        if args.system_install:
            check_system_install(checks, args.deb, scratch, offline, version, args.gpt2)
        check_sizes(checks, tree_size(unpacked), {args.tar.name: args.tar.stat().st_size, args.deb.name: args.deb.stat().st_size},
                    args.gpt2)
        check_proxy_untouched(checks, proxy)
    return finish(checks, DIST / f"verify-report{'-gpt2' if args.gpt2 else ''}.json", started, isolation)


if __name__ == "__main__":
    sys.exit(main())
