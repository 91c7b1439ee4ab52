"""Every Portuguese text uses the glossary's one word per concept (``ui/strings/glossary.py``)."""

from __future__ import annotations

import re

import pytest
from attention_lab.ui import i18n
from attention_lab.ui.strings import glossary
from string_tables import every_text


def test_every_portuguese_text_follows_the_glossary():
    failures = []
    for key, by_lang in every_text().items():
        for problem in glossary.problems(by_lang["pt_BR"]):
            failures.append(f"{key}: {problem}")
    assert not failures, "Portuguese texts off the glossary (ui/strings/glossary.py):\n" + "\n".join(failures)


def test_no_english_is_left_in_the_portuguese_beyond_the_listed_loanwords():
    failures = []
    for key, by_lang in every_text().items():
        left = glossary.english_left(by_lang["pt_BR"], by_lang["en"])
        if left:
            failures.append(f"{key}: {', '.join(left)}")
    assert not failures, "English words in Portuguese texts (add a real loanword to glossary.LOANWORDS):\n" + "\n".join(failures)


def test_no_text_uses_jargon_the_material_never_introduces():
    failures = [f"{key} ({lang}): {text[:80]}" for key, by_lang in every_text().items() for lang, text in by_lang.items()
                if any(re.search(p, text, re.IGNORECASE) for p in glossary.JARGON)]
    assert not failures, "\n".join(failures)


def test_one_head_notation_in_both_languages():
    failures = [f"{key} ({lang}): {glossary.HEAD_CODES.search(text).group(0)}"
                for key, by_lang in every_text().items() for lang, text in by_lang.items()
                if glossary.HEAD_CODES.search(text)]
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("cabeças “sumidouro” põem tudo no token 0", "vala"),
        ("massa no sink", "vala"),
        ("Linha = query (destino)", "consulta"),
        ("O que o cache KV compra", "compra"),
        ("as linhas erram a soma 1", "erram a soma"),
        ("o KV cache guarda K e V", "cache KV"),
        # the app's own earlier wording, which the Portuguese material words otherwise
        ("A primeira ideia do capítulo.", "apostila"),
        ("cabeças vala", "vala"),
        ("as cabeças “vala” põem tudo no token 0", "vala"),
        ("toda pontuação de uma posição futura", "score"),
        ("Zerar a pontuação não ajuda", "score"),
        ("O c_attn gera Q, K, V num único matmul", "uma matmul"),
        ("Um único matmul (c_attn) gera Q, K e V", "uma matmul"),
        ("Sem worker: nada pode rodar.", "segundo plano"),
        ("Desligar C{layer} H{head}", "camada 0, cabeça 1"),
        ("Mostrar C2 H3", "camada 0, cabeça 1"),
    ],
)
def test_the_check_catches_the_variants_seen_in_the_app(text, expected):
    assert any(expected in problem for problem in glossary.problems(text))


@pytest.mark.parametrize(
    "pt, en, left",
    [
        ("Sem worker: nada pode rodar.", "No worker: nothing can run.", ["worker"]),
        ("os mesmos pesos do GPT-2 small com a máscara removed", "the same weights with the mask removed", ["removed"]),
        ("Aperte Rodar para gerar tokens com o cache", "Press Run to generate tokens with the cache", []),
        ("tokenizer.json em {folder}", "tokenizer.json in {folder}", []),
    ],
)
def test_english_left_in_portuguese_is_found_and_loanwords_pass(pt, en, left):
    assert glossary.english_left(pt, en) == left


def test_jargon_and_head_codes_are_caught():
    assert any(re.search(p, "entropia 1,33 nats", re.IGNORECASE) for p in glossary.JARGON)
    assert any(re.search(p, "before they join the residual stream", re.IGNORECASE) for p in glossary.JARGON)
    for code in ("Knock out L{layer} H{head}", "Desligar C{layer} H{head}", "head {layer}.{head}", "C0 H1"):
        assert glossary.HEAD_CODES.search(code), code
    assert not glossary.HEAD_CODES.search("camada {layer}, cabeça {head}")


def test_the_check_leaves_the_chapter_words_and_placeholders_alone():
    chapter = (
        "Multi-head: dividir, não multiplicar. As cabeças posicionais (distância ≈ 1) e as de “vala” "
        "(entropia baixíssima, tudo no token 0); o cache KV; vazamento de rótulo; {key} <b>x</b> <|endoftext|>"
    )
    assert glossary.problems(chapter) == []


def test_roles_read_their_portuguese_name_from_the_glossary():
    every_text()
    translator_language = i18n.translator.language
    try:
        i18n.translator.set_language("pt_BR")
        assert i18n.tr("roles.sink.name") == glossary.pt("sink")  # the chapter's roles, the one role system
    finally:
        i18n.translator.set_language(translator_language)
