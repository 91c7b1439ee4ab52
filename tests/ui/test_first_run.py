"""The first-run offer of GPT-2 small: shown when the demo is all there is, never downloads
on its own, "Not now" remembered, the button downloads through the dialog (loopback hub)."""

from __future__ import annotations

import socket
import subprocess

import pytest
from PySide6.QtWidgets import QApplication

from attention_lab.core import paths
from attention_lab.ui.i18n import translator
from hub_server import LOOPBACK_MISSING, Repo, gpt2_files, hf_home, serve  # noqa: F401  (fixtures)
from model_fixtures import add_to_hub_cache

STATE_TIMEOUT_MS = 60000


def wait_state(qtbot, window, predicate=lambda s: True):
    qtbot.waitUntil(lambda: window.last_state is not None and bool(predicate(window.last_state)), timeout=STATE_TIMEOUT_MS)
    return window.last_state


def offer_of(window):
    return getattr(window, "gpt2_offer", None)


@pytest.fixture
def nothing_may_download(monkeypatch):
    """Any process started or connection opened fails the test."""
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail(f"a process was started: {a}"))
    monkeypatch.setattr(socket.socket, "connect", lambda *a, **k: pytest.fail("a connection was opened"))


def test_the_demo_alone_brings_the_offer_and_nothing_downloads_on_its_own(
    qtbot, make_window, hf_home, nothing_may_download
):
    window = make_window(model_spec="demo")
    wait_state(qtbot, window)
    offer = offer_of(window)
    assert offer is not None and offer.isVisible()
    assert QApplication.activeModalWidget() is None  # it blocks nothing
    assert "demo model" in offer.label.text() and "not GPT-2" in offer.label.text()
    assert offer.download.text() == "Download GPT-2 small (≈ 550 MB)"
    assert offer.not_now.text() == "Not now"
    # the window goes on working, and waiting downloads nothing
    window.panel("panel.token_editor").editor.setPlainText("The learner types and explores")
    wait_state(qtbot, window, lambda s: s.text == "The learner types and explores")
    qtbot.wait(500)
    assert window.session._download_job is None and window.downloads.dialog is None
    assert not (hf_home / "hub").exists()


def test_not_now_is_remembered(qtbot, make_window, hf_home, isolated_settings, nothing_may_download):
    window = make_window(model_spec="demo")
    wait_state(qtbot, window)
    offer_of(window).not_now.click()
    assert not offer_of(window).isVisible()
    assert window.session._download_job is None
    window.close()
    again = make_window(settings=isolated_settings, model_spec="demo")
    wait_state(qtbot, again)
    assert offer_of(again) is None


def test_no_offer_when_gpt2_is_cached(qtbot, make_window, hf_home, tiny_checkpoint, nothing_may_download):
    add_to_hub_cache(paths.hub_cache_dir(), "gpt2", tiny_checkpoint)
    window = make_window(model_spec="demo")  # the demo chosen by hand: GPT-2 is there, nothing to offer
    wait_state(qtbot, window)
    assert offer_of(window) is None


def test_in_portuguese(qtbot, make_window, hf_home, nothing_may_download):
    translator.set_language("pt_BR")
    window = make_window(model_spec="demo", language="pt_BR")
    wait_state(qtbot, window)
    offer = offer_of(window)
    assert offer.download.text() == "Baixar o GPT-2 small (≈ 550 MB)" and offer.not_now.text() == "Agora não"
    assert "modelo de demonstração" in offer.label.text()
    translator.set_language("en")
    assert offer.download.text() == "Download GPT-2 small (≈ 550 MB)"


@pytest.mark.skipif(bool(LOOPBACK_MISSING), reason=LOOPBACK_MISSING or "loopback available")
def test_the_button_downloads_gpt2_with_the_dialog_and_uses_it(qtbot, make_window, hf_home, serve, gpt2_files):
    hub = serve({"gpt2": Repo(gpt2_files)})
    window = make_window(model_spec="demo")
    wait_state(qtbot, window)
    assert hub.log == []  # shown: nothing asked of the hub yet
    with qtbot.waitSignal(window.session.model_changed, timeout=STATE_TIMEOUT_MS) as loaded:
        offer_of(window).download.click()
        assert window.downloads.dialog is not None  # progress and Cancel
        assert not offer_of(window).isVisible()
    assert loaded.args[0].name == "gpt2" and loaded.args[0].source == "hub-cache"
    assert window.settings.value("model_spec") == "gpt2"
