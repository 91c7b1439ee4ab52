"""The download dialog against the loopback hub (tests/hub_server.py): the real download
path end to end, from the menu's dialog to the model in use."""

from __future__ import annotations

import time

import pytest
from PySide6.QtWidgets import QPushButton

from hub_server import LOOPBACK_MISSING, Repo, gpt2_files, hf_home, serve  # noqa: F401  (fixtures)

pytestmark = pytest.mark.skipif(bool(LOOPBACK_MISSING), reason=LOOPBACK_MISSING or "loopback available")

STATE_TIMEOUT_MS = 60000
REPO = "someone/tiny-gpt2"


def wait_state(qtbot, window, predicate=lambda s: True):
    qtbot.waitUntil(lambda: window.last_state is not None and bool(predicate(window.last_state)), timeout=STATE_TIMEOUT_MS)
    return window.last_state


def test_the_dialog_shows_progress_and_the_model_loads(qtbot, make_window, hf_home, serve, gpt2_files):
    hub = serve({REPO: Repo(gpt2_files)}, rate=len(gpt2_files["model.safetensors"]) / 1.5)  # weights: ~1.5 s
    window = make_window()
    wait_state(qtbot, window)
    bar_values: list[int] = []
    window.session.download_progress.connect(lambda *_: bar_values.append(window.downloads.bar.value()))
    with qtbot.waitSignal(window.session.model_changed, timeout=STATE_TIMEOUT_MS) as blocker:
        window.download_model(REPO)
        dialog = window.downloads.dialog
        assert dialog is not None and dialog.isVisible()
        qtbot.waitUntil(lambda: "model.safetensors" in dialog.labelText(), timeout=STATE_TIMEOUT_MS)
    model = blocker.args[0]
    assert model.source == "hub-cache" and model.name == REPO and window.session.model is model
    assert window.downloads.dialog is None  # closed when done
    moving = [v for v in bar_values if 0 < v < 1000]
    assert len(set(moving)) >= 2, bar_values  # the bar moved during the transfer
    assert bar_values == sorted(bar_values)
    assert window.settings.value("model_spec") == REPO  # next start: found in the cache by its id
    assert "pytorch_model.bin" not in hub.requested_files("GET")
    wait_state(qtbot, window, lambda s: s.model is model)


def test_cancel_stops_the_transfer_and_keeps_the_model(qtbot, make_window, hf_home, serve, gpt2_files):
    hub = serve({REPO: Repo(gpt2_files)}, rate=len(gpt2_files["model.safetensors"]) / 20)  # weights: ~20 s
    window = make_window()
    wait_state(qtbot, window)
    previous = window.session.model
    with qtbot.waitSignal(window.session.download_finished, timeout=STATE_TIMEOUT_MS) as finished:
        window.download_model(REPO)
        dialog = window.downloads.dialog
        qtbot.waitUntil(lambda: window.downloads.bar.value() > 0 and "model.safetensors" in dialog.labelText(),
                        timeout=STATE_TIMEOUT_MS)
        pressed = time.monotonic()
        dialog.findChild(QPushButton).click()  # the Cancel button
    assert time.monotonic() - pressed < 1.0
    ok, message = finished.args
    assert not ok and "cancel" in message.lower()
    assert window.session.model is previous and window.downloads.dialog is None
    requests = len(hub.log)
    qtbot.wait(1500)  # the hub client would retry after 1 s: nothing may come
    assert len(hub.log) == requests
    cache = hf_home / "hub"
    assert not cache.exists() or list(cache.rglob("*")) == []


def test_a_failed_download_is_one_sentence(qtbot, make_window, hf_home, serve, gpt2_files):
    serve({REPO: Repo(gpt2_files)}, faults={"api": "status:500"})
    window = make_window()
    wait_state(qtbot, window)
    previous = window.session.model
    errors: list[str] = []
    window.session.error.connect(lambda message, details: errors.append(message))
    with qtbot.waitSignal(window.session.download_finished, timeout=STATE_TIMEOUT_MS) as finished:
        window.download_model(REPO)
    ok, message = finished.args
    assert not ok
    assert message == f"The download of “{REPO}” failed: 127.0.0.1:{message.split('127.0.0.1:')[1].split(' ')[0]} " \
                      "answered with an error (HTTP 500); try again later"
    assert message.count("failed") == 1 and "download of" not in message.split("failed:")[1]
    assert errors == [message]
    assert window.session.model is previous
