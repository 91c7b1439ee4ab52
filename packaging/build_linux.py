"""Build the Linux installers: one command from a clean checkout.

    python3 packaging/build_linux.py                      # dist/attention-lab-<ver>-linux-x86_64.tar.gz + .deb
    python3 packaging/build_linux.py --with-gpt2 ~/gpt2   # also bundle GPT-2 small from a local folder
    python3 packaging/verify_bundle.py                    # then prove them (offline, another folder)

Steps: a ``.venv`` with torch's CPU build and the pinned dependencies (packaging/dev.py),
PyInstaller from packaging/build-requirements.txt, the one-folder bundle from
packaging/attention_lab.spec into dist/attention-lab/, then a ``.tar.gz`` and a ``.deb``
(app in /opt/attention-lab, launcher /usr/bin/attention-lab, a .desktop entry and icon).
Prints the bundle's size (unpacked, compressed) and the build time, and writes them to
dist/build-report.json.

The demo model is taken from resources/demo-model (``--demo-model FOLDER`` or
``ATTENTION_LAB_DEMO_MODEL`` to use another folder).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
import freeze_config as fc  # noqa: E402

DIST = ROOT / "dist"
WORK = ROOT / "build" / "packaging"
BUILD_REQUIREMENTS = HERE / "build-requirements.txt"
SPEC = HERE / "attention_lab.spec"
INSTALL_PREFIX = f"/opt/{fc.APP_NAME}"
LAUNCHER_PATH = f"/usr/bin/{fc.APP_NAME}"

# Debian packages of the libraries Qt loads from the system (PyInstaller leaves out the
# GL/EGL stack and libxcb on purpose: they must match the machine's drivers and X server).
DEB_DEPENDS = (
    "libc6 (>= {glibc})",
    "libegl1",
    "libgl1",
    "libopengl0",
    "libfontconfig1",
    "libfreetype6",
    "libdbus-1-3",
    "libxkbcommon0",
    "libxkbcommon-x11-0",
    "libx11-6",
    "libx11-xcb1",
    "libxcb1",
    "libxcb-cursor0",
    "libxcb-icccm4",
    "libxcb-image0",
    "libxcb-keysyms1",
    "libxcb-randr0",
    "libxcb-render-util0",
    "libxcb-shape0",
    "libxcb-xkb1",
)
DEB_RECOMMENDS = ("fonts-dejavu-core | fonts-liberation2", "libwayland-client0", "libwayland-egl1")

GPT2_FILES = (
    "config.json", "model.safetensors", "model.safetensors.index.json", "generation_config.json",
    "tokenizer.json", "vocab.json", "merges.txt", "tokenizer_config.json", "special_tokens_map.json",
)


# --------------------------------------------------------------------------- Debian files
@dataclass
class DebInfo:
    version: str
    installed_size_kib: int
    glibc: str = "2.28"
    package: str = fc.APP_NAME
    architecture: str = "amd64"
    maintainer: str = "Attention Lab maintainers <attention-lab@users.noreply.github.com>"
    homepage: str = ""
    with_gpt2: bool = False
    depends: tuple[str, ...] = field(default_factory=lambda: DEB_DEPENDS)
    recommends: tuple[str, ...] = field(default_factory=lambda: DEB_RECOMMENDS)


def control_text(info: DebInfo) -> str:
    """The DEBIAN/control file (deb-control(5)): one field a line, description indented."""
    depends = ", ".join(d.format(glibc=info.glibc) for d in info.depends)
    summary = "see multi-head attention and the causal mask inside GPT-2"
    body = [
        "Attention Lab is a desktop app for a course chapter on multi-head attention:",
        "type a sentence, see the 12 heads of a layer with and without the causal",
        "mask, the leakage diff, head portraits and the KV-cache gain. It runs",
        "offline on a laptop CPU with a bundled demo model"
        + (" and GPT-2 small." if info.with_gpt2 else "; GPT-2 can be added later."),
        ".",
        f"Self-contained: Python, PyTorch (CPU) and Qt are bundled in {INSTALL_PREFIX}.",
    ]
    fields = [
        ("Package", info.package),
        ("Version", info.version),
        ("Architecture", info.architecture),
        ("Maintainer", info.maintainer),
        ("Installed-Size", str(int(info.installed_size_kib))),
        ("Depends", depends),
        ("Recommends", ", ".join(info.recommends)),
        ("Section", "education"),
        ("Priority", "optional"),
    ]
    if info.homepage:
        fields.append(("Homepage", info.homepage))
    lines = [f"{k}: {v}" for k, v in fields if v]
    lines.append(f"Description: {summary}")
    lines += [" " + line for line in body]
    return "\n".join(lines) + "\n"


def desktop_entry_text(exec_name: str = fc.APP_NAME, icon: str = fc.APP_NAME) -> str:
    """The freedesktop .desktop entry (Desktop Entry Specification 1.4: it uses no key of 1.5,
    and desktop-file-validate before 0.27 (Debian 12, Ubuntu 22.04) rejects "1.5")."""
    return "\n".join([
        "[Desktop Entry]",
        "Type=Application",
        "Version=1.4",
        f"Name={fc.DISPLAY_NAME}",
        "GenericName=Attention visualizer",
        "GenericName[pt_BR]=Visualizador de atenção",
        "Comment=See multi-head attention and the causal mask inside GPT-2",
        "Comment[pt_BR]=Veja a atenção multi-cabeça e a máscara causal dentro do GPT-2",
        f"Exec={exec_name}",
        f"TryExec={exec_name}",
        f"Icon={icon}",
        "Terminal=false",
        "Categories=Education;Science;ComputerScience;",
        "Keywords=GPT-2;transformer;attention;causal mask;neural network;",
        f"StartupWMClass={fc.APP_NAME}",
        "",
    ])


def launcher_text(prefix: str = INSTALL_PREFIX) -> str:
    """/usr/bin/attention-lab: runs the bundle's executable with the user's arguments."""
    return (
        "#!/bin/sh\n"
        "# Attention Lab launcher (Debian package): the app is one PyInstaller folder.\n"
        f'exec "{prefix}/{fc.APP_NAME}" "$@"\n'
    )


def copyright_text() -> str:
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8") if (ROOT / "LICENSE").is_file() else "MIT"
    return (
        "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n"
        f"Upstream-Name: {fc.APP_NAME}\n\n"
        "Files: *\nLicense: MIT\n"
        + "".join(" " + (line if line.strip() else ".") + "\n" for line in license_text.splitlines())
        + "\nThe bundled third-party components (Python, PyTorch, Qt/PySide6, NumPy, tokenizers,\n"
        "safetensors, huggingface_hub, pyqtgraph) keep their own licenses; their metadata is in\n"
        f"{INSTALL_PREFIX}/_internal/*.dist-info.  GPT-2 tokenizer data: MIT (OpenAI).\n"
    )


def write_deb_tree(staging: Path, bundle: Path, info: DebInfo) -> Path:
    """Lay out the package tree under ``staging`` (DEBIAN/control, /opt, /usr); return it.

    ``bundle`` (dist/attention-lab) is hard-linked into /opt when possible (no 800 MB copy).
    """
    if staging.exists():
        shutil.rmtree(staging)
    (staging / "DEBIAN").mkdir(parents=True)
    control = staging / "DEBIAN" / "control"
    control.write_text(control_text(info), encoding="utf-8")
    control.chmod(0o644)

    opt = staging / INSTALL_PREFIX.lstrip("/")
    opt.parent.mkdir(parents=True)
    if bundle.is_dir():
        try:
            shutil.copytree(bundle, opt, symlinks=True, copy_function=os.link)
        except OSError:
            shutil.rmtree(opt, ignore_errors=True)
            shutil.copytree(bundle, opt, symlinks=True)
    else:
        opt.mkdir()

    launcher = staging / LAUNCHER_PATH.lstrip("/")
    launcher.parent.mkdir(parents=True)
    launcher.write_text(launcher_text(), encoding="utf-8")
    launcher.chmod(0o755)

    apps = staging / "usr/share/applications"
    apps.mkdir(parents=True)
    (apps / f"{fc.APP_NAME}.desktop").write_text(desktop_entry_text(), encoding="utf-8")
    icons = ROOT / "resources" / "icons"
    for src, dest in (
        (icons / "attention-lab.svg", "usr/share/icons/hicolor/scalable/apps"),
        (icons / "attention-lab.png", "usr/share/icons/hicolor/256x256/apps"),
    ):
        (staging / dest).mkdir(parents=True)
        shutil.copy2(src, staging / dest / f"{fc.APP_NAME}{src.suffix}")
    doc = staging / f"usr/share/doc/{fc.APP_NAME}"
    doc.mkdir(parents=True)
    (doc / "copyright").write_text(copyright_text(), encoding="utf-8")
    normalize_permissions(staging)  # dpkg-deb wants sane permissions whatever the umask
    return staging


# --------------------------------------------------------------------------- helpers
def tree_size(folder: Path) -> int:
    total = 0
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total


def normalize_permissions(folder: Path) -> None:
    """Readable by everyone, executable where the owner could execute: an 0600 model file
    (safetensors writes them so) would be unreadable for users once root owns /opt."""
    for dirpath, dirs, files in os.walk(folder):
        os.chmod(dirpath, 0o755)
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                continue
            mode = os.stat(path).st_mode
            os.chmod(path, 0o755 if mode & 0o100 else 0o644)


def mib(n: int) -> str:
    return f"{n / 2**20:.0f} MiB"


def required_glibc(folder: Path) -> str:
    """The highest GLIBC_x.y symbol version any bundled ELF file needs (objdump -T)."""
    best = (2, 17)
    if not shutil.which("objdump"):
        return "2.28"  # manylinux_2_28: torch's own floor
    for dirpath, _dirs, files in os.walk(folder):
        for name in files:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or not (".so" in name or os.access(path, os.X_OK)):
                continue
            with open(path, "rb") as handle:
                if handle.read(4) != b"\x7fELF":
                    continue
            out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
            best = max([best, *glibc_versions(out)])
    return ".".join(str(x) for x in best)


def glibc_versions(objdump_output: str) -> list[tuple[int, int]]:
    """(major, minor) of every ``GLIBC_x.y[.z]`` symbol version in ``objdump -T`` output
    (they appear in parentheses: ``(GLIBC_2.2.5) free``)."""
    return [(int(a), int(b)) for a, b in re.findall(r"GLIBC_(\d+)\.(\d+)", objdump_output)]


def stage_gpt2(source: Path, dest: Path) -> Path:
    """Copy a GPT-2 folder (HF layout or cache snapshot; links resolved) for bundling."""
    source = source.expanduser()
    if not (source / "config.json").is_file():
        raise SystemExit(f"--with-gpt2: {source} has no config.json")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "gpt2":
        raise SystemExit(f"--with-gpt2: {source} is not a GPT-2 model (model_type={config.get('model_type')!r})")
    if not (source / "model.safetensors").exists() and not (source / "model.safetensors.index.json").exists():
        raise SystemExit(f"--with-gpt2: {source} has no model.safetensors (pickle checkpoints are not bundled)")
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    names = list(GPT2_FILES)
    index = source / "model.safetensors.index.json"
    if index.exists():
        names += sorted(set(json.loads(index.read_text(encoding="utf-8"))["weight_map"].values()))
    for name in names:
        if (source / name).exists():
            shutil.copyfile(source / name, dest / name)  # follows the HF cache's symlinks
    # the marker models.py writes after a download: the app then names it "gpt2"
    (dest / ".attention-lab-download.json").write_text(json.dumps({"repo_id": "gpt2"}), encoding="utf-8")
    return dest


def run(cmd: list[str], **kwargs) -> None:
    print("+ " + " ".join(str(c) for c in cmd), flush=True)
    subprocess.check_call([str(c) for c in cmd], **kwargs)


def setup_environment(python: str | None) -> str:
    """The interpreter to build with: the project's .venv (made by dev.py) + PyInstaller."""
    if python is None:
        import dev  # packaging/dev.py: .venv, torch CPU build, pinned dependencies

        dev.setup()
        python = str(dev.venv_python())
    run([python, "-m", "pip", "install", "--disable-pip-version-check", "-q",
         "-c", str(HERE / "constraints.txt"), "-r", str(BUILD_REQUIREMENTS)])
    return python


def run_pyinstaller(python: str, env: dict[str, str] | None = None) -> None:
    """The shared spec into dist/attention-lab (the same call on every platform)."""
    WORK.mkdir(parents=True, exist_ok=True)
    run([python, "-m", "PyInstaller", SPEC, "--noconfirm", "--clean",
         "--distpath", DIST, "--workpath", WORK / "pyinstaller"], cwd=ROOT, env=env)


def write_report(report: dict, suffix: str = "") -> None:
    """dist/build-report[suffix].json: what the verify scripts and the workflow read."""
    (DIST / f"build-report{suffix}.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print()


# --------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--with-gpt2", metavar="FOLDER", type=Path, help="bundle GPT-2 small from this local folder")
    parser.add_argument("--demo-model", metavar="FOLDER", type=Path, help="demo model to bundle (default resources/demo-model)")
    parser.add_argument("--python", help="build with this interpreter as is (skip the .venv set-up)")
    parser.add_argument("--deb-compression", default="gzip", choices=("gzip", "xz", "zstd", "none"),
                        help="gzip (default: fast, every dpkg reads it), xz (smaller, much slower to build), zstd (needs dpkg >= 1.21.18)")
    parser.add_argument("--skip-pyinstaller", action="store_true", help="reuse dist/attention-lab (package only)")
    args = parser.parse_args(argv)

    started = time.monotonic()
    version = fc.read_version()
    suffix = "-gpt2" if args.with_gpt2 else ""
    env = dict(os.environ)
    if args.demo_model:
        env[fc.DEMO_MODEL_ENV] = str(args.demo_model.resolve())
    fc.demo_model_source(env)  # fail now, not after ten minutes of analysis
    WORK.mkdir(parents=True, exist_ok=True)
    if args.with_gpt2:
        env[fc.GPT2_ENV] = str(stage_gpt2(args.with_gpt2, WORK / "gpt2"))
    else:
        env.pop(fc.GPT2_ENV, None)

    python = setup_environment(args.python)
    bundle = DIST / fc.APP_NAME
    t0 = time.monotonic()
    if not args.skip_pyinstaller:
        run_pyinstaller(python, env)
    pyinstaller_s = time.monotonic() - t0
    if not (bundle / fc.APP_NAME).is_file():
        raise SystemExit(f"no bundle at {bundle}")
    normalize_permissions(bundle)
    unpacked = tree_size(bundle)

    # .tar.gz: one top folder named after the release
    t0 = time.monotonic()
    tar_name = f"{fc.APP_NAME}-{version}{suffix}-linux-x86_64"
    tarball = DIST / f"{tar_name}.tar.gz"
    run(["tar", "-C", DIST, "--transform", f"s,^{fc.APP_NAME},{tar_name},", "--owner=0", "--group=0",
         "-czf", tarball, fc.APP_NAME])
    tar_s = time.monotonic() - t0

    # .deb
    t0 = time.monotonic()
    info = DebInfo(version=version, installed_size_kib=(unpacked + 1023) // 1024 + 64,
                   glibc=required_glibc(bundle), with_gpt2=bool(args.with_gpt2))
    staging = write_deb_tree(WORK / "deb-root", bundle, info)
    deb = DIST / f"{fc.APP_NAME}{suffix}_{version}_{info.architecture}.deb"
    run(["dpkg-deb", "--root-owner-group", f"-Z{args.deb_compression}", "--build", staging, deb])
    shutil.rmtree(staging, ignore_errors=True)
    deb_s = time.monotonic() - t0

    total_s = time.monotonic() - started
    report = {
        "version": version,
        "with_gpt2": bool(args.with_gpt2),
        "bundle": str(bundle.relative_to(ROOT)),
        "unpacked_bytes": unpacked,
        "tar_gz": str(tarball.relative_to(ROOT)),
        "tar_gz_bytes": tarball.stat().st_size,
        "deb": str(deb.relative_to(ROOT)),
        "deb_bytes": deb.stat().st_size,
        "deb_compression": args.deb_compression,
        "glibc_required": info.glibc,
        "seconds_pyinstaller": round(pyinstaller_s, 1),
        "seconds_tar": round(tar_s, 1),
        "seconds_deb": round(deb_s, 1),
        "seconds_total": round(total_s, 1),
    }
    write_report(report, suffix)
    print(f"bundle    {bundle}  {mib(unpacked)} unpacked")
    print(f"tar.gz    {tarball}  {mib(report['tar_gz_bytes'])}")
    print(f"deb       {deb}  {mib(report['deb_bytes'])} ({args.deb_compression}; needs glibc >= {info.glibc})")
    print(f"build time {total_s / 60:.1f} min (PyInstaller {pyinstaller_s / 60:.1f} min, tar {tar_s:.0f} s, deb {deb_s:.0f} s)")
    print("next: python3 packaging/verify_bundle.py")
    return 0


if __name__ == "__main__":
    sys.exit(main())
