"""Faults in front of a learner: the app keeps working, loses nothing, exits cleanly.

- the model folder disappears while the app runs, and is gone at the next start;
- 500 rapid edits: the final display matches the final text, memory comes back;
- the window is closed during an edit update, during the KV benchmark, during a download
  (a process of its own: exit code 0, nothing printed about threads, no partial files);
- the settings file can't be written;
- the installation folder is read-only (nothing is written inside it).

Each injected fault is counted in docs/reliability.md's reliability suite (``tally``).
"""

from __future__ import annotations

import gc
import weakref
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from attention_lab.ui.errors import ErrorDialog

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_MS = 30000


def wait_state(qtbot, window, predicate=lambda s: True):
    qtbot.waitUntil(lambda: window.last_state is not None and bool(predicate(window.last_state)), timeout=TIMEOUT_MS)
    return window.last_state


def type_text(window, text: str) -> None:
    window.panel("panel.token_editor").editor.setPlainText(text)


def close_error_dialog(window) -> str:
    dialog = window.findChild(ErrorDialog, "error_dialog")
    assert dialog is not None and dialog.isVisible()
    text = dialog.message.text()
    dialog.close()
    return text


# ---------------------------------------------------------------------------- the model folder goes away
def test_model_folder_disappearing_while_the_app_runs(qtbot, make_window, isolated_settings, tiny_checkpoint, tmp_path,
                                                      monkeypatch, tally):
    folder = tmp_path / "my-model"
    shutil.copytree(tiny_checkpoint, folder)
    window = make_window(model_spec=str(folder))
    state = wait_state(qtbot, window)
    model = state.model
    shutil.rmtree(folder)  # e.g. a USB stick pulled out, a folder deleted by hand
    tally["fault", "model folder removed while the app runs"] += 1

    # the weights are in memory: editing goes on with the same model
    type_text(window, "The folder is gone but the model is not")
    state = wait_state(qtbot, window, lambda s: s.text == "The folder is gone but the model is not")
    assert state.model is model and state.n_tokens > 0

    # opening it again is a clear error that keeps the loaded model
    with qtbot.waitSignal(window.session.error, timeout=TIMEOUT_MS):
        window.open_model_folder(str(folder))
    message = close_error_dialog(window)
    assert "my-model" in message and "still active" in message
    assert window.session.model is model
    type_text(window, "Still usable after the failed reopen")
    wait_state(qtbot, window, lambda s: s.text == "Still usable after the failed reopen")
    window.close()
    assert isolated_settings.value("model_spec") == str(folder)

    # next start: the saved folder is gone -> the default model, the text kept, the reason shown
    import attention_lab.core.models as models_module

    monkeypatch.setattr(models_module, "default_model_spec", lambda: str(tiny_checkpoint))
    again = make_window(model_spec=None)
    with qtbot.waitSignal(again.session.error, timeout=TIMEOUT_MS):
        pass
    assert "my-model" in close_error_dialog(again)
    state = wait_state(qtbot, again)
    assert state.model.spec == str(tiny_checkpoint)
    assert state.text == "Still usable after the failed reopen"


# ---------------------------------------------------------------------------- 500 edits
def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20




@pytest.mark.skipif(not Path("/proc/self/statm").exists(), reason="reads the resident size from /proc")
def test_500_rapid_edits_end_on_the_final_text_and_memory_comes_back(qtbot, make_window, isolated_settings,
                                                                     tiny_checkpoint, tally):
    window = make_window()
    wait_state(qtbot, window)
    words = ["river", "stone", "light", "paper", "glass", "cloud", "horse", "field"]

    def burst(count: int, tag: str) -> str:
        text = ""
        for i in range(count):
            text = f"Edit {tag}{i}: the {words[i % len(words)]} by the {words[(i * 3) % len(words)]}"
            type_text(window, text)
            if i % 10 == 0:
                QApplication.processEvents()  # some edits reach the worker and are superseded mid-way
            if i % 25 == 24:  # ...and every 25th is analysed and drawn in full
                window.session.analyse_now()
                wait_state(qtbot, window, lambda s, t=text: s.text == t)
        return text

    # warm-up: allocator pools, pyqtgraph's caches, torch's kernels
    final = burst(50, "w")
    wait_state(qtbot, window, lambda s: s.text == final)
    gc.collect()
    baseline = _rss_mb()

    shown: list[weakref.ref] = []  # every analysis the burst put on display
    window.session.state_ready.connect(lambda s: shown.append(weakref.ref(s)))
    final = burst(500, "e")
    tally["fault", "rapid edits (500 in a burst)"] += 500
    state = wait_state(qtbot, window, lambda s: s.text == final)
    qtbot.waitUntil(lambda: not window.session.pending and not window.worker.busy, timeout=TIMEOUT_MS)

    # the display is the final text's: chips, leakage, head grid all show the last analysis
    assert window.last_state is state and window.session.text == final
    assert window.panel("panel.token_editor").text() == final
    assert state.ids == state.model.tokenizer.encode(final)
    assert window.panel("panel.token_editor").chips.ids == state.ids
    assert window.panel("panel.leakage").state is state
    assert window.panel("panel.head_grid").state is state

    # memory: of the analyses the burst showed, only the one on display is still alive; RSS back
    gc.collect()
    assert len(shown) >= 20
    alive = [r() for r in shown if r() is not None]
    assert alive == [state], f"{len(alive)} analyses of the burst are still in memory"
    grown = _rss_mb() - baseline
    print(f"resident memory after 500 edits: {grown:+.1f} MB against the warm baseline")
    assert grown < 25, f"resident memory grew by {grown:.0f} MB over 500 edits"


# ---------------------------------------------------------------------------- settings
def test_unwritable_settings_warn_and_the_app_keeps_working(qtbot, make_window, tmp_path, tiny_checkpoint, caplog, tally):
    blocker = tmp_path / "a-file-not-a-folder"
    blocker.write_text("settings can't be created under a file, even by root")
    path = blocker / "settings.ini"
    settings = QSettings(str(path), QSettings.Format.IniFormat)
    window = make_window(settings=settings)
    tally["fault", "settings file that can't be written"] += 1
    assert window.settings_writable is False
    warning = window.status.settings_warning
    assert warning.isVisible() and "settings not saved" in warning.text()
    assert "can't be saved" in warning.toolTip() and str(path) in warning.toolTip()
    wait_state(qtbot, window)
    assert warning.isVisible()  # still there after "model loaded" replaced the passing message
    type_text(window, "Nothing lost while the app runs")
    wait_state(qtbot, window, lambda s: s.text == "Nothing lost while the app runs")
    with caplog.at_level("WARNING"):
        window.close()  # no exception, no dialog: a warning in the log
    assert not window.worker.thread.is_alive()
    assert any("could not save settings" in r.getMessage() for r in caplog.records)
    assert blocker.is_file() and not path.exists()


# ---------------------------------------------------------------------------- closing mid-way
def _close_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTENTION_LAB_MODELS=str(tmp_path / "downloads"),
               HF_HOME=str(tmp_path / "hf-home"), PYTHONFAULTHANDLER="1")
    env.pop("HF_HUB_CACHE", None)
    return env


@pytest.mark.parametrize("mode", ["edit", "benchmark", "download"])
def test_closing_the_window_mid_way_exits_with_code_0(mode, tiny_checkpoint, tmp_path, tally):
    from attention_lab.core.models import demo_model_dir

    # the benchmark needs room to run for a while: the demo model's 256 positions
    model = str(demo_model_dir()) if mode == "benchmark" else str(tiny_checkpoint)
    if mode == "benchmark" and not (demo_model_dir() / "model.safetensors").exists():
        pytest.skip("demo model not bundled")
    env = _close_env(tmp_path)
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "ui" / "close_driver.py"), mode, model, str(tmp_path / "settings.ini")],
        cwd=str(tmp_path), env=env, capture_output=True, text=True, timeout=300,
    )
    tally["fault", "window closed mid-way (edit, benchmark, download)"] += 1
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert f"driver: closed during {mode}" in proc.stdout
    for bad in ("QThread", "Destroyed while", "Traceback", "Exception ignored", "did not stop", "Fatal Python"):
        assert bad not in output, output
    assert (tmp_path / "settings.ini").exists()  # the settings were saved on the way out
    hub_cache = tmp_path / "hf-home" / "hub"
    leftovers = [p for p in hub_cache.rglob("*")] if hub_cache.exists() else []
    assert leftovers == []  # a cancelled download leaves nothing behind, not even a lock


# ---------------------------------------------------------------------------- read-only installation
# Logs every attempt to write, create, rename or delete inside $INSTALL_ROOT, then runs the app.
WRITE_GUARD = r"""
import os, sys
ROOT = os.path.realpath(os.environ["INSTALL_ROOT"])
LOG = os.environ["WRITE_LOG"]
def inside(path):
    try:
        path = os.path.realpath(os.fsdecode(path))
    except (TypeError, ValueError):
        return False
    return path == ROOT or path.startswith(ROOT + os.sep)
def hook(event, args):
    if event == "open" and args[0] is not None and not isinstance(args[0], int):
        mode, flags = args[1], args[2]
        writing = (mode and any(c in mode for c in "wax+")) or (flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT))
        if writing and inside(args[0]):
            with open(LOG, "a") as f:
                f.write(f"{event} {args[0]}\n")
    elif event in ("os.mkdir", "os.rename", "os.replace", "os.remove", "os.rmdir", "os.chmod", "shutil.rmtree") and inside(args[0]):
        with open(LOG, "a") as f:
            f.write(f"{event} {args[0]}\n")
sys.addaudithook(hook)
from attention_lab.app import main
raise SystemExit(main(sys.argv[1:]))
"""


def _make_read_only(root: Path) -> None:
    for path in sorted(root.rglob("*"), reverse=True) + [root]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _make_writable(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)


@pytest.fixture
def read_only_install(tmp_path):
    """The app's code and resources copied to a folder nobody may write to (as installed)."""
    install = tmp_path / "install"
    shutil.copytree(ROOT / "desktop" / "attention_lab", install / "desktop" / "attention_lab",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "resources", install / "resources", ignore=shutil.ignore_patterns("screenshots"))
    _make_read_only(install)
    yield install
    _make_writable(install)


def _guarded_env(install: Path, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "ATTENTION_LAB_", "XDG_"))}
    env.update(PYTHONPATH=str(install / "desktop"), HOME=str(home), QT_QPA_PLATFORM="offscreen",
               INSTALL_ROOT=str(install), WRITE_LOG=str(tmp_path / "writes.log"),
               # a read-only install has no __pycache__ to fill; Python skips it silently there
               PYTHONDONTWRITEBYTECODE="1", HF_HUB_OFFLINE="1")
    return env


def test_the_write_guard_sees_a_write(read_only_install, tmp_path):
    """Control: a write inside the installation folder is logged (else the test below proves nothing)."""
    env = _guarded_env(read_only_install, tmp_path)
    code = WRITE_GUARD.replace(
        "from attention_lab.app import main",
        "try:\n    open(os.path.join(ROOT, 'resources', 'oops.txt'), 'w')\nexcept OSError:\n    pass\n"
        "from attention_lab.app import main",
    )
    proc = subprocess.run([sys.executable, "-c", code, "--version"], cwd=env["HOME"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "oops.txt" in (tmp_path / "writes.log").read_text()


@pytest.mark.parametrize("args", [["--smoke-test"], ["lab", "--json", "--new-tokens", "5"]], ids=["window", "lab"])
def test_read_only_installation_folder(read_only_install, tmp_path, args, tally):
    from attention_lab.core.models import demo_model_dir

    if not (demo_model_dir() / "model.safetensors").exists():
        pytest.skip("demo model not bundled")
    env = _guarded_env(read_only_install, tmp_path)
    proc = subprocess.run([sys.executable, "-c", WRITE_GUARD, *args], cwd=env["HOME"], env=env,
                          capture_output=True, text=True, timeout=300)
    tally["fault", "read-only installation folder"] += 1
    assert proc.returncode == 0, proc.stdout + proc.stderr
    writes = (tmp_path / "writes.log").read_text() if (tmp_path / "writes.log").exists() else ""
    assert writes == "", f"the app wrote inside its installation folder:\n{writes}"
    if args[0] == "lab":
        import json

        assert json.loads(proc.stdout)["model"]["source"] == "demo"
    else:
        assert "smoke test: ok" in proc.stdout
