"""Layering and safety rules that hold for the whole of ``attention_lab.core``.

- core imports no Qt (the same code serves the GUI, the headless lab and the tests);
- the tokenizer and model loading don't import transformers (seconds of start-up);
- no pickle path for weights, no ``trust_remote_code``, no shell.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "desktop" / "attention_lab" / "core"
QT_NAMES = ("PySide6", "PyQt5", "PyQt6", "PySide2", "shiboken6", "pyqtgraph")


def core_modules() -> list[str]:
    return sorted(
        "attention_lab.core" + ("" if p.stem == "__init__" else "." + p.stem)
        for p in CORE.glob("*.py")
    )


def _imported_after(modules: list[str]) -> set[str]:
    """Import ``modules`` in a fresh interpreter and return every module name it loaded."""
    code = (
        "import importlib, json, sys\n"
        f"sys.path.insert(0, {str(ROOT / 'desktop')!r})\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_core_modules_are_found():
    names = core_modules()
    assert {"attention_lab.core.lens", "attention_lab.core.models", "attention_lab.core.tokens"} <= set(names)


def test_core_imports_no_qt():
    loaded = _imported_after(core_modules())
    qt = sorted(m for m in loaded if m.split(".")[0] in QT_NAMES)
    assert qt == [], f"attention_lab.core pulled in Qt: {qt}"


def test_model_loading_does_not_import_transformers():
    loaded = _imported_after(["attention_lab.core.tokens", "attention_lab.core.models", "attention_lab.core.paths"])
    assert "transformers" not in loaded


@pytest.mark.parametrize("path", sorted(CORE.glob("*.py")), ids=lambda p: p.name)
def test_core_sources_never_mention_qt(path):
    source = path.read_text(encoding="utf-8")
    for name in ("PySide6", "PyQt", "QtCore", "QtWidgets"):
        assert name not in source, f"{path.name} mentions {name}"


def _sources() -> list[Path]:
    return sorted((ROOT / "desktop").rglob("*.py"))


@pytest.mark.parametrize("path", _sources(), ids=lambda p: str(p.relative_to(ROOT / "desktop")))
def test_no_pickle_no_remote_code_no_shell(path):
    source = path.read_text(encoding="utf-8")
    # torch.load only with weights_only=True (there is no reason for it at all today)
    for call in re.finditer(r"torch\.load\(([^)]*)\)", source):
        assert "weights_only=True" in call.group(1), f"{path.name}: {call.group(0)}"
    assert not re.search(r"^\s*(import pickle|from pickle import|import dill|import joblib)", source, re.M), path.name
    assert not re.search(r"trust_remote_code\s*=\s*True", source), path.name
    assert "shell=True" not in source and "os.system(" not in source and "os.popen(" not in source, path.name
