"""The core's failures a learner meets are said in the interface's language: a model folder
that isn't there, a pickle-only checkpoint, an unreachable hub.  The core keeps its English line (the CLI
prints it) and gives the window a key and values to translate."""

from __future__ import annotations

import errno
import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
from attention_lab.core import messages
from attention_lab.core.models import ModelLoadError, load_model
from attention_lab.ui import i18n
from attention_lab.ui.i18n import translator
from attention_lab.ui.session import Session, _reason_parts
from attention_lab.ui.strings.core_messages import with_details


def _reason(exc: BaseException) -> str:
    """What the app says of a failure: its sentence, then its English detail apart."""
    return with_details(*_reason_parts(exc))
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
        # the same values, but a library's English {detail} stays out of the Portuguese sentence (it is
        # shown apart, after "Detalhes:": see test_an_english_detail_is_a_separate_tail_in_portuguese)
        assert set(PLACEHOLDER.findall(texts["pt_BR"])) == set(PLACEHOLDER.findall(english)) - {"detail"}, key
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


# ---------------------------------------------------------------------------- English from a library or the OS
def _unreadable_weights(folder) -> None:
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:200])  # cut short: safetensors says why, in English


def test_an_english_detail_is_a_separate_tail_in_portuguese(qtbot, session, portuguese, tiny_checkpoint, tmp_path):
    """safetensors' own English ("incomplete metadata, file not fully covered") was inside the Portuguese
    sentence: "… (truncado ou corrompido: Error while deserializing header: …)".  The sentence now stands
    on its own, and the English comes last, after "Detalhes:", past "the previous model is still active"."""
    import shutil

    folder = shutil.copytree(tiny_checkpoint, tmp_path / "model")
    _unreadable_weights(folder)
    with pytest.raises(ModelLoadError) as caught:
        load_model(folder)
    detail = caught.value.values["detail"]
    assert detail and detail in str(caught.value)  # the CLI's English line keeps it inline
    said = _reason(caught.value)
    assert said == (f"model.safetensors em {folder} não é um arquivo safetensors legível (truncado ou corrompido). "
                    f"Detalhes: {detail}")
    session.load_model(str(tiny_checkpoint))  # a model in use: the message adds that it stays
    qtbot.waitUntil(lambda: session.model is not None, timeout=60_000)
    message = _failure(qtbot, session, str(folder))
    assert message.endswith(" Detalhes: " + detail), message
    assert "(truncado ou corrompido). O modelo anterior" in message  # two sentences, not run together
    assert "continua ativo" in message.partition(" Detalhes: ")[0]
    translator.set_language("en")
    assert _reason(caught.value) == str(caught.value)  # English: the core's line, nothing apart


#: (errno, the OS's English, what a Brazilian learner reads instead)
OS_CASES = [
    (errno.ENOENT, "No such file or directory", "arquivo ou pasta não encontrado"),
    (errno.EACCES, "Permission denied", "permissão negada"),
    (errno.ENOSPC, "No space left on device", "não há espaço livre no disco"),
]


@pytest.mark.parametrize(("code", "english", "portuguese_text"), OS_CASES, ids=["ENOENT", "EACCES", "ENOSPC"])
def test_a_common_os_error_is_said_in_portuguese(portuguese, code, english, portuguese_text):
    """The download's cache, unwritable: the OS's strerror was put in the Portuguese sentence as is."""
    from attention_lab.core.hub_fetch import _Reporter, describe_failure
    event = describe_failure(OSError(code, english), _Reporter(), "gpt2")
    assert event["key"] == "download.cache_unwritable" and event["error"].endswith(english)
    error = ModelLoadError(event["error"], key=event["key"], values=event["values"])
    assert _reason(error) == f"não foi possível gravar no cache do Hugging Face: {portuguese_text}"
    translator.set_language("en")
    assert _reason(error) == event["error"]


def test_a_rare_os_error_keeps_its_english_only_as_details(portuguese):
    from attention_lab.core.hub_fetch import _Reporter, describe_failure
    event = describe_failure(OSError(errno.EIO, "Input/output error"), _Reporter(), "gpt2")
    error = ModelLoadError(event["error"], key=event["key"], values=event["values"])
    assert _reason(error) == ("não foi possível gravar no cache do Hugging Face: erro do sistema operacional. "
                              "Detalhes: Input/output error")


def test_a_folder_that_cant_be_opened_is_said_in_portuguese(portuguese, tmp_path):
    """The OS's reason for a folder that can't be opened (a name too long) was English, unkeyed."""
    folder = tmp_path / ("x" * 300)  # ENAMETOOLONG on Linux
    with pytest.raises(ModelLoadError) as caught:
        load_model(str(folder))
    if caught.value.key != "model.cant_open":
        pytest.skip(f"this file system said {caught.value.key}")
    assert str(caught.value).startswith(f"can't open {folder}: ")  # the CLI's English line
    assert _reason(caught.value) == f"não foi possível abrir {folder}: o nome do arquivo é longo demais"


# ---------------------------------------------------------------------------- a download's sizes
def _partial_timeout():
    import httpx2
    from attention_lab.core.hub_fetch import _Reporter, describe_failure

    reporter = _Reporter()
    reporter.file, reporter.file_size, reporter.file_done = "model.safetensors", 548_105_171, 3_120_000
    return describe_failure(httpx2.ReadTimeout("read timed out"), reporter, "gpt2")


def test_a_downloads_sizes_use_the_portuguese_decimal_comma(portuguese):
    """ "(chegaram 3.1 MB de 548.1 MB)": the sizes were written in the download process, in English."""
    event = _partial_timeout()
    assert event["key"] == "download.timeout_partial"
    assert "(3.1 MB of 548.1 MB arrived)" in event["error"]  # the CLI's English line
    error = ModelLoadError(event["error"], key=event["key"], values=event["values"])
    said = _reason(error)
    assert "(chegaram 3,1 MB de 548,1 MB)" in said, said
    translator.set_language("en")
    assert "(3.1 MB of 548.1 MB arrived)" in _reason(error)


def test_a_small_size_is_written_in_kilobytes():
    from attention_lab.core.numbers import download_size

    assert download_size(48_200, "pt_BR") == "48 kB"
    assert download_size(1_234_567, "pt_BR") == "1,2 MB" and download_size(1_234_567, "en") == "1.2 MB"


def test_the_error_dialog_is_closed_in_portuguese(qtbot, portuguese):
    """Its Close button was Qt's own English word ("Close") in a Portuguese dialog."""
    from attention_lab.ui.errors import ErrorDialog

    dialog = ErrorDialog()
    qtbot.addWidget(dialog)
    dialog.set_error("não foi possível …")
    assert dialog.close_button.text() == "Fechar"
    translator.set_language("en")
    dialog.retranslate()
    assert dialog.close_button.text() == "Close"
