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


# ---------------------------------------------------------------------------- every key core can raise
_RAISERS = re.compile(r"""(?:\.keyed|keyed_event|KeyedValueError|during)\(\s*"([a-z_]+\.[a-z_]+)\"""")
#: keys made from a key (hub_fetch's ``during``: the same message with the file, and with how much of it
#: arrived; models.load_folder: the lens' ``weights.*`` said for the model's folder)
_DERIVED = {"during": ("_during", "_partial")}


def _raised_keys() -> set[str]:
    """Every message key the core's source hands to ``keyed``/``keyed_event``/``KeyedValueError``."""
    from pathlib import Path

    core = Path(messages.__file__).parent
    keys: set[str] = set()
    for path in core.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for match in _RAISERS.finditer(source):
            keys.add(match.group(1))
            if match.group(0).startswith("during"):
                keys.update(match.group(1) + suffix for suffix in _DERIVED["during"])
    keys.update(f"model.weights_{kind}" for kind in ("missing", "shape", "damaged"))
    return keys


def test_every_key_the_core_raises_is_written_in_both_languages():
    import attention_lab.ui.strings.core_messages  # noqa: F401 -- registers them

    raised = _raised_keys()
    assert len(raised) >= 40, sorted(raised)  # the scan found the raisers (a renamed helper would hide them)
    for key in sorted(raised):
        assert key in messages.ENGLISH, f"core raises {key!r}, which core/messages.py doesn't have"
        assert f"core.{key}" in i18n._TABLE and i18n._TABLE[f"core.{key}"]["pt_BR"], key


def _hostile_cases():
    from core.test_hostile_models import CASES

    return CASES


#: broken model folders a learner may open, by what is broken: damaged weights, a bad config, a tokenizer
SAID_IN_PORTUGUESE = {
    "nan-weights": "estão danificados",
    "wider-config": "não correspondem ao seu config.json",
    "more-layers-in-config": "falta o tensor",
    "truncated-safetensors": "não é um arquivo safetensors legível",
    "llama": "contém um modelo llama",
    "no-model-type": "de tipo desconhecido",
    "gpt2-classifier": "não tem a cabeça de modelo de linguagem",
    "cross-attention": "atenção cruzada",
    "config-not-json": "não é um JSON válido",
    "config-is-a-list": "não é um objeto JSON",
    "config-bad-number": "não pode ser usado",
    "no-tokenizer": "não há tokenizador",
    "corrupt-tokenizer": "está ilegível",
    "tokenizer-of-another-model": "eles não combinam",
}


@pytest.mark.parametrize("case", sorted(SAID_IN_PORTUGUESE))
def test_a_broken_model_folder_is_said_in_portuguese(case, portuguese, tiny_checkpoint, tmp_path):
    import shutil

    from attention_lab.ui.session import _reason

    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    breaker, english_pattern = _hostile_cases()[case]
    breaker(folder)
    with pytest.raises(ModelLoadError, match=english_pattern) as caught:  # the CLI's English line is unchanged
        load_model(folder)
    assert caught.value.key is not None, f"{case}: {caught.value}"
    said = _reason(caught.value)
    assert SAID_IN_PORTUGUESE[case] in said, said
    translator.set_language("en")
    assert _reason(caught.value) == str(caught.value)
