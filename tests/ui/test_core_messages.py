"""The core's failures a learner meets are said in the interface's language (issue 14): a model folder
that isn't there, a pickle-only checkpoint, an unreachable hub.  The core keeps its English line (the CLI
prints it) and gives the window a key and values to translate."""

from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from attention_lab.core import messages
from attention_lab.core.models import ModelLoadError, load_model
from attention_lab.ui import i18n
from attention_lab.ui.i18n import translator
from attention_lab.ui.session import Session
from attention_lab.ui.worker import InferenceWorker

PLACEHOLDER = re.compile(r"\{(\w+)\}")


@pytest.fixture
def portuguese():
    before = translator.language
    translator.set_language("pt_BR")
    yield
    translator.set_language(before)


@pytest.fixture
def session(qtbot):
    s = Session(InferenceWorker(name="test-core-messages"))
    yield s
    assert s.shutdown(5.0)


def test_every_core_message_has_both_languages_with_the_same_values():
    import attention_lab.ui.strings.core_messages  # noqa: F401 -- registers them

    for key, english in messages.ENGLISH.items():
        texts = i18n._TABLE[f"core.{key}"]
        assert texts["en"] == english
        assert set(PLACEHOLDER.findall(texts["pt_BR"])) == set(PLACEHOLDER.findall(english)), key
        assert texts["pt_BR"] != english, key


def test_the_core_keeps_its_english_line_for_the_cli(tmp_path):
    with pytest.raises(ModelLoadError) as caught:
        load_model(str(tmp_path / "nowhere"))
    assert str(caught.value) == f"model folder not found: {tmp_path / 'nowhere'}"
    assert caught.value.key == "model.folder_not_found" and caught.value.values == {"folder": str(tmp_path / "nowhere")}


def _failure(qtbot, session, spec: str) -> str:
    with qtbot.waitSignal(session.error, timeout=60_000) as blocker:
        session.load_model(spec)
    return blocker.args[0]


def test_a_missing_folder_is_said_in_portuguese(qtbot, session, portuguese, tmp_path):
    message = _failure(qtbot, session, str(tmp_path / "nowhere"))
    assert message.startswith("Não foi possível carregar o modelo")
    assert f"pasta do modelo não encontrada: {tmp_path / 'nowhere'}" in message
    assert "not found" not in message


def test_a_pickle_only_folder_is_said_in_portuguese(qtbot, session, portuguese, tmp_path, tiny_checkpoint):
    folder = tmp_path / "pickled"
    folder.mkdir()
    for name in os.listdir(tiny_checkpoint):
        if not name.endswith(".safetensors"):
            (folder / name).write_bytes((tiny_checkpoint / name).read_bytes())
    (folder / "pytorch_model.bin").write_bytes(b"not opened")
    message = _failure(qtbot, session, str(folder))
    assert "tem apenas um checkpoint pickle (pytorch_model.bin), que não foi aberto" in message
    assert "which was not opened" not in message


def test_an_unreachable_hub_is_said_in_portuguese(portuguese):
    import httpx2
    from attention_lab.core.hub_fetch import _Reporter, describe_failure
    from attention_lab.ui.session import _reason

    event = describe_failure(httpx2.ConnectError("no route"), _Reporter(), "gpt2")
    assert event["key"] == "download.unreachable" and "can't be reached" in event["error"]
    error = ModelLoadError(event["error"], key=event["key"], values=event["values"])
    assert _reason(error) == f"não foi possível alcançar {event['values']['host']}: verifique a conexão com a internet"
    translator.set_language("en")
    assert _reason(error) == event["error"]
