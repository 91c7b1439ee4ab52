"""Every Portuguese text uses the glossary's one word per concept (``ui/strings/glossary.py``)."""

from __future__ import annotations

import importlib
import pkgutil

import attention_lab.ui.strings as strings_package
import pytest
from attention_lab.ui import i18n
from attention_lab.ui.strings import glossary


def _all_tables() -> None:
    for module in pkgutil.iter_modules(strings_package.__path__):
        importlib.import_module(f"{strings_package.__name__}.{module.name}")


def test_every_portuguese_text_follows_the_glossary():
    _all_tables()
    failures = []
    for key in i18n.all_keys():
        for problem in glossary.problems(i18n._TABLE[key]["pt_BR"]):
            failures.append(f"{key}: {problem}")
    assert not failures, "Portuguese texts off the glossary (ui/strings/glossary.py):\n" + "\n".join(failures)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cabeças “sumidouro” põem tudo no token 0", "vala"),
        ("massa no sink", "vala"),
        ("Linha = query (destino)", "consulta"),
        ("O que o cache KV compra", "compra"),
        ("as linhas erram a soma 1", "erram a soma"),
        ("o KV cache guarda K e V", "cache KV"),
    ],
)
def test_the_check_catches_the_variants_seen_in_the_app(text, expected):
    assert any(expected in problem for problem in glossary.problems(text))


def test_the_check_leaves_the_chapter_words_and_placeholders_alone():
    chapter = (
        "Multi-head: dividir, não multiplicar. As cabeças posicionais (distância ≈ 1) e as de “vala” "
        "(entropia baixíssima, tudo no token 0); o cache KV; vazamento de rótulo; {key} <b>x</b> <|endoftext|>"
    )
    assert glossary.problems(chapter) == []


def test_roles_read_their_portuguese_name_from_the_glossary():
    _all_tables()
    translator_language = i18n.translator.language
    try:
        i18n.translator.set_language("pt_BR")
        assert i18n.tr("roles.sink.name") == glossary.pt("sink")  # the chapter's roles, the one role system
    finally:
        i18n.translator.set_language(translator_language)
