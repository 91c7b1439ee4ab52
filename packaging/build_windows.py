"""Build the Windows installer: one command, on Windows 10/11 x64 with Python 3.11 and Inno Setup 6.

    py -3.11 packaging\\build_windows.py          # dist\\attention-lab-<ver>-windows-x64-setup.exe
    py -3.11 packaging\\verify_app.py             # then install it, check it offline, uninstall it

Steps: a ``.venv`` with torch's CPU build and the pinned dependencies (packaging/dev.py),
PyInstaller from packaging/build-requirements.txt, the one-folder bundle from the shared
packaging/attention_lab.spec into dist\\attention-lab\\ (``attention-lab.exe``, windowed, and
``attention-lab-cli.exe``, its console twin), then Inno Setup's compiler (``ISCC.exe``) on
packaging/windows/attention-lab.iss with the app's version.  Writes the sizes and times to
dist/build-report.json.  Inno Setup: https://jrsoftware.org/isdl.php, ``winget install
JRSoftware.InnoSetup`` or ``choco install innosetup``; ``ISCC`` in the environment names
another ``ISCC.exe``.

The demo model is taken from resources/demo-model (``ATTENTION_LAB_DEMO_MODEL`` to use
another folder; ``ATTENTION_LAB_BUNDLE_GPT2`` also bundles GPT-2 small).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Callable, Mapping

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import freeze_config as fc  # noqa: E402
from build_linux import DIST, mib, run, run_pyinstaller, setup_environment, tree_size, write_report  # noqa: E402

ISS = HERE / "windows" / "attention-lab.iss"


def setup_name(version: str) -> str:
    """The installer's file name (the .iss's OutputBaseFilename with the version put in)."""
    return f"{fc.APP_NAME}-{version}-windows-x64-setup.exe"


def find_iscc(environ: Mapping[str, str], which: Callable[[str], str | None] = shutil.which) -> Path | None:
    """Inno Setup 6's command-line compiler: ``ISCC`` from the environment, on PATH, or
    where its installer puts it (all users, or per user)."""
    if environ.get("ISCC"):
        return Path(environ["ISCC"])
    found = which("iscc")
    if found:
        return Path(found)
    for var, sub in (("ProgramFiles(x86)", ""), ("ProgramFiles", ""), ("LOCALAPPDATA", "Programs")):
        if environ.get(var):
            candidate = Path(environ[var]) / sub / "Inno Setup 6" / "ISCC.exe"
            if candidate.is_file():
                return candidate
    return None


def iscc_command(iscc: Path, version: str, iss: Path = ISS) -> list[str]:
    """The compiler call: the version comes from the app (``/D`` overrides the .iss's default)."""
    return [str(iscc), f"/DAppVersion={version}", "/Q", str(iss)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--python", help="build with this interpreter as is (skip the .venv set-up)")
    parser.add_argument("--skip-pyinstaller", action="store_true", help="reuse dist/attention-lab (installer only)")
    args = parser.parse_args(argv)

    started = time.monotonic()
    version = fc.read_version()
    fc.demo_model_source()  # fail now, not after ten minutes of analysis
    iscc = find_iscc(os.environ)
    if iscc is None:
        raise SystemExit("Inno Setup 6 not found (ISCC.exe): install it, or set ISCC to its ISCC.exe")
    python = setup_environment(args.python)
    bundle = DIST / fc.APP_NAME
    t0 = time.monotonic()
    if not args.skip_pyinstaller:
        run_pyinstaller(python)
    pyinstaller_s = time.monotonic() - t0
    for exe in (f"{fc.APP_NAME}.exe", f"{fc.APP_NAME}-cli.exe"):
        if not (bundle / exe).is_file():
            raise SystemExit(f"no {exe} in {bundle}")
    unpacked = tree_size(bundle)

    t0 = time.monotonic()
    run(iscc_command(iscc, version), cwd=ROOT)
    iscc_s = time.monotonic() - t0
    setup = DIST / setup_name(version)
    if not setup.is_file():
        raise SystemExit(f"Inno Setup made no {setup}")

    total_s = time.monotonic() - started
    report = {
        "version": version,
        "platform": "win32",
        "bundle": bundle.relative_to(ROOT).as_posix(),
        "unpacked_bytes": unpacked,
        "installer": setup.relative_to(ROOT).as_posix(),
        "installer_bytes": setup.stat().st_size,
        "seconds_pyinstaller": round(pyinstaller_s, 1),
        "seconds_iscc": round(iscc_s, 1),
        "seconds_total": round(total_s, 1),
    }
    write_report(report)
    print(f"bundle     {bundle}  {mib(unpacked)} unpacked")
    print(f"installer  {setup}  {mib(report['installer_bytes'])}")
    print(f"build time {total_s / 60:.1f} min (PyInstaller {pyinstaller_s / 60:.1f} min, Inno Setup {iscc_s / 60:.1f} min)")
    print("next: python packaging/verify_app.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
