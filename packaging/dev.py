"""Set up a virtual environment and run the app or the test suite -- the README's two commands.

    python packaging/dev.py run      # set everything up, then launch Attention Lab
    python packaging/dev.py test     # set everything up, then run the whole test suite

(Windows: ``py packaging\\dev.py run`` / ``py packaging\\dev.py test``.)

Set-up is idempotent and quick when nothing changed: a ``.venv`` beside the checkout,
torch's CPU build installed first and pinned (a looser request pulls a multi-GB CUDA
build), then this project with the exact tested versions in ``packaging/constraints.txt``.
Extra arguments after ``test`` go to pytest; after ``run``, to the app.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV = ROOT / ".venv"
CONSTRAINTS = ROOT / "packaging" / "constraints.txt"
TORCH = "torch==2.13.0"
TORCH_CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def torch_install_attempts(platform: str = sys.platform) -> list[list[str]]:
    """pip arguments for torch's CPU build, to try in order on ``platform``.

    On Linux PyPI's torch is the CUDA build (gigabytes of NVIDIA libraries in every
    installer), so the CPU build is asked for by its local version (a wheel on disk, as on
    this project's build machines), else taken from PyTorch's CPU index (a hosted runner).
    On Windows and macOS PyPI's torch is the CPU build."""
    if platform.startswith("linux"):
        return [[f"{TORCH}+cpu"], [TORCH, "--index-url", TORCH_CPU_INDEX]]
    return [[TORCH], [TORCH, "--index-url", TORCH_CPU_INDEX]]


def venv_python() -> Path:
    return VENV / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def pip(*args: str) -> None:
    subprocess.check_call([str(venv_python()), "-m", "pip", *args])


def has_torch() -> bool:
    probe = "import torch,sys; sys.exit(0 if torch.__version__.split('+')[0]=='2.13.0' else 1)"
    return subprocess.call([str(venv_python()), "-c", probe], stderr=subprocess.DEVNULL) == 0


def setup() -> None:
    if not venv_python().exists():
        print(f"creating {VENV}", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if not has_torch():
        *first, last = torch_install_attempts()
        for attempt in first:
            try:
                pip("install", "--disable-pip-version-check", *attempt)
                break
            except subprocess.CalledProcessError:
                continue
        else:
            pip("install", "--disable-pip-version-check", *last)
    # Reinstall the project only when its metadata or the pins changed.
    stamp = VENV / ".attention-lab-installed"
    digest = hashlib.sha256((ROOT / "pyproject.toml").read_bytes() + CONSTRAINTS.read_bytes()).hexdigest()
    if not stamp.exists() or stamp.read_text() != digest:
        pip("install", "--disable-pip-version-check", "-c", str(CONSTRAINTS), "-e", f"{ROOT}[test]")
        stamp.write_text(digest)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("run", "test", "setup"):
        print(__doc__)
        return 2
    setup()
    command, rest = argv[0], argv[1:]
    if command == "setup":
        return 0
    if command == "run":
        return subprocess.call([str(venv_python()), "-m", "attention_lab", *rest])
    env = dict(os.environ, QT_QPA_PLATFORM=os.environ.get("QT_QPA_PLATFORM", "offscreen"))
    return subprocess.call([str(venv_python()), "-m", "pytest", *rest], cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
