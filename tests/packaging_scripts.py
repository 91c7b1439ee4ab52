"""Import a packaging/ script by file for the packaging tests (packaging/ is no package:
one named ``packaging`` would shadow the PyPI library of that name)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGING = ROOT / "packaging"


def load(name: str, prefix: str = "_al_packaging"):
    """Import packaging/<name>.py under a private module name."""
    if str(PACKAGING) not in sys.path:
        sys.path.insert(0, str(PACKAGING))  # the scripts import freeze_config by name
    spec = importlib.util.spec_from_file_location(f"{prefix}_{name}", PACKAGING / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module
