"""The runtime: every workaround of a library's internals installed by one call, none by an import.

Importing every module of the app (in a fresh interpreter) leaves pyqtgraph's classes, the
interpreter's settings and torch's threads as they were; ``install_all`` installs each workaround,
its environment variable leaves it out, a library version other than the verified one logs one
warning per workaround, no module but the runtime calls an install function, the verified versions
are the ones the installer pins and pyproject accepts, and docs/workarounds.md is the registry."""

from __future__ import annotations

import ast
import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from attention_lab.ui import runtime

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "desktop" / "attention_lab"
NAMES = [w.name for w in runtime.WORKAROUNDS]

# Imports every module of the app (the harness too), then reads what each workaround changes, then
# installs them and reads it again.  Printed as JSON: {"imported": {...}, "installed": {...}, "done": [...]}.
PROBE = textwrap.dedent(
    """
    import gc, json, os, pkgutil, importlib, sys
    import pyqtgraph as pg, torch
    originals = {"scene_init": pg.GraphicsScene.__init__, "tick_strings": pg.AxisItem.tickStrings,
                 "draw_specs": pg.AxisItem.generateDrawSpecs}
    switch, threads = sys.getswitchinterval(), torch.get_num_threads()  # the worker's import leaves both alone
    import attention_lab
    for info in pkgutil.walk_packages(attention_lab.__path__, "attention_lab."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    from attention_lab.core import heap
    from attention_lab.ui import gc_pause, i18n, paint_hold, runtime, scene_paints, worker
    from attention_lab.ui.panels import plot_setters
    from PySide6.QtWidgets import QApplication
    app = QApplication([])

    def state():
        return {
            "IMMORTAL_SINGLETONS": sys.getrefcount(None) > 2 ** 39,
            "GC_FREEZE": gc.get_freeze_count() > 0,
            "HEAP_TRIM": heap.trimming(),
            "GIL_SWITCH": sys.getswitchinterval() != switch,
            "SCENE_PAINTS": pg.GraphicsScene.__init__ is not originals["scene_init"] or scene_paints.scene_paints() is not None,
            "PAINT_HOLD": paint_hold._installed,
            "AXIS_TICKS": pg.AxisItem.tickStrings is not originals["tick_strings"]
                          or pg.AxisItem.generateDrawSpecs is not originals["draw_specs"],
            "AXIS_LABEL_REWORD": plot_setters._reword_installed,
            "QUIET_LANGUAGE_CHANGE": i18n.translator._quiet is not None,
        }

    imported = state()
    done = runtime.install_all()
    assert torch.get_num_threads() == threads  # no process-wide thread count any more (measured: it did not help)
    print("PROBE " + json.dumps({"imported": imported, "installed": state(), "done": done}))
    """
)


def _probe(**env_extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTENTION_LAB_NO_") and k != "OMP_NUM_THREADS"}
    env.update(PYTHONPATH=str(ROOT / "desktop"), QT_QPA_PLATFORM="offscreen", **env_extra)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-3000:]
    line = next(line for line in out.stdout.splitlines() if line.startswith("PROBE "))
    return json.loads(line[len("PROBE "):])


def _applies_here(name: str) -> bool:
    """Whether the workaround changes anything observable in the probe's process (the singletons' counts
    only before Python 3.12)."""
    return name != "IMMORTAL_SINGLETONS" or sys.version_info < (3, 12)


def test_importing_every_module_patches_nothing_and_install_all_installs_each():
    seen = _probe()
    assert seen["imported"] == dict.fromkeys(NAMES, False)  # nothing on import
    assert seen["done"] == NAMES
    assert seen["installed"] == {name: _applies_here(name) for name in NAMES}


def test_the_environment_variables_leave_each_one_out():
    seen = _probe(**{w.env_var: "1" for w in runtime.WORKAROUNDS})
    assert seen["done"] == []
    assert seen["installed"] == dict.fromkeys(NAMES, False)


@pytest.fixture
def recorded(monkeypatch):
    """Every install function replaced by a recorder (nothing really patched); the installs, in order."""
    calls: list[str] = []
    for workaround in runtime.WORKAROUNDS:
        module = __import__(workaround.where, fromlist=["_"])
        monkeypatch.setattr(module, workaround.install_name, lambda name=workaround.name: calls.append(name))
        monkeypatch.delenv(workaround.env_var, raising=False)
    monkeypatch.setattr(runtime, "_warned", set())
    return calls


@pytest.mark.parametrize("name", NAMES)
def test_one_variable_leaves_out_only_its_own(recorded, monkeypatch, name):
    monkeypatch.setenv(f"ATTENTION_LAB_NO_{name}", "1")
    assert runtime.install_all() == [n for n in NAMES if n != name]
    assert recorded == [n for n in NAMES if n != name]


def test_a_zero_or_empty_variable_leaves_it_in(recorded, monkeypatch):
    monkeypatch.setenv("ATTENTION_LAB_NO_SCENE_PAINTS", "0")
    monkeypatch.setenv("ATTENTION_LAB_NO_PAINT_HOLD", "")
    assert runtime.install_all() == NAMES


def test_another_library_version_logs_once_per_workaround_and_still_installs(recorded, monkeypatch, caplog):
    real = runtime.installed_version
    monkeypatch.setattr(runtime, "installed_version", lambda lib: "0.15.0" if lib == "pyqtgraph" else real(lib))
    with caplog.at_level(logging.WARNING, logger=runtime.__name__):
        runtime.install_all()
        runtime.install_all()
    on_pyqtgraph = [w.name for w in runtime.WORKAROUNDS if any(lib == "pyqtgraph" for lib, _ in w.verified)]
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == len(on_pyqtgraph) >= 3  # once each, though installed twice
    assert all("pyqtgraph 0.14.0" in m and "pyqtgraph 0.15.0" in m for m in warned)
    assert recorded == NAMES + NAMES  # installed anyway


def test_the_verified_versions_are_the_ones_running_here(caplog):
    # the suite runs on the pinned versions: no workaround warns (a pin moved without measuring again does)
    with caplog.at_level(logging.WARNING, logger=runtime.__name__):
        differ = {w.name: runtime.check_versions(w) for w in runtime.WORKAROUNDS}
    assert {name: d for name, d in differ.items() if d} == {}


def _install_names() -> dict[str, str]:
    return {w.install_name: w.where for w in runtime.WORKAROUNDS}


def test_no_module_but_the_runtime_names_an_install_function():
    """No import of a workaround's install function, and no call of it, anywhere in the app or its
    harness but ui/runtime.py (which names them as strings): installing stays one call at start-up."""
    names = _install_names()
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == PACKAGE / "ui" / "runtime.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                hits = [alias.name for alias in node.names if alias.name in names]
            elif isinstance(node, ast.Attribute):
                hits = [node.attr] if node.attr in names else []
            elif isinstance(node, ast.Name):
                hits = [node.id] if node.id in names else []
            else:
                hits = []
            found += [f"{path.relative_to(ROOT)}:{node.lineno} {hit}" for hit in hits]
    assert found == []


def test_every_install_function_exists_where_the_registry_says():
    for workaround in runtime.WORKAROUNDS:
        assert callable(workaround.install_function()), workaround.name
    assert len(set(NAMES)) == len(NAMES) and all(re.fullmatch(r"[A-Z][A-Z_]+", n) for n in NAMES)


def _pins() -> dict[str, str]:
    pins = {}
    for line in (ROOT / "packaging" / "constraints.txt").read_text().splitlines():
        if "==" in line and not line.lstrip().startswith("#"):
            name, version = line.split("==", 1)
            pins[name.strip().lower().replace("-", "_")] = version.strip()
    return pins


def _pip_verified() -> dict[str, str]:
    return {lib.lower(): version for w in runtime.WORKAROUNDS for lib, version in w.verified
            if lib not in ("python", "glibc")}


def test_the_verified_versions_are_the_installer_s_pins():
    pins = _pins()
    verified = _pip_verified()
    assert set(verified) == {"pyqtgraph", "pyside6_essentials", "torch"}
    assert {lib: pins.get(lib) for lib in verified} == verified


def test_pyproject_accepts_the_verified_minor_versions_only():
    text = (ROOT / "pyproject.toml").read_text()
    for lib, version in _pip_verified().items():
        pattern = re.compile(rf'"{lib.replace("_", "[-_]")}\s*([^"]+)"', re.IGNORECASE)
        match = pattern.search(text)
        assert match, lib
        spec = SpecifierSet(match.group(1))
        major, minor, *_ = (int(p) for p in version.split("."))
        assert version in spec, (lib, str(spec))
        assert f"{major}.{minor + 1}.0" not in spec and f"{major}.{minor - 1}.99" not in spec, (lib, str(spec))


def test_the_workarounds_table_is_the_registry():
    table = ROOT / "docs" / "workarounds.md"
    assert table.read_text(encoding="utf-8") == runtime.markdown(), (
        "docs/workarounds.md is stale: python -m attention_lab.ui.runtime --markdown > docs/workarounds.md")
