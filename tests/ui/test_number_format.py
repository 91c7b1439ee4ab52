"""Numbers follow the interface's language: 0.918 and 2,304 in English, 0,918 and 2.304 in Portuguese."""

from __future__ import annotations

import pytest

from attention_lab.ui import number_format
from attention_lab.ui.i18n import translator
from attention_lab.ui.panels.panel_kit import fmt_bytes, fmt_number


@pytest.fixture
def language():
    before = translator.language

    def use(code: str) -> None:
        translator.set_language(code)

    yield use
    translator.set_language(before)


@pytest.mark.parametrize(
    "code, expected",
    [
        ("en", ["2,304", "0.918", "1234.5", "0.5", "7.99e-16", "16.7%", "1,234.5", "0.00563", "396.0 KiB"]),
        ("pt_BR", ["2.304", "0,918", "1234,5", "0,5", "7,99e-16", "16,7%", "1.234,5", "0,00563", "396,0 KiB"]),
    ],
)
def test_numbers_use_the_languages_separators(language, code, expected):
    language(code)
    shown = [
        number_format.integer(2304),
        number_format.fixed(0.9184, 3),
        number_format.fixed(1234.5, 1),
        number_format.significant(0.5, 3),
        number_format.scientific(7.99e-16, 2),
        number_format.percent(0.167),
        fmt_number(1234.5),
        fmt_number(0.005634),
        fmt_bytes(405_504),
    ]
    assert shown == expected


def test_exact_zero_and_non_finite_values_stay_readable(language):
    language("pt_BR")
    assert fmt_number(0.0) == "0"
    assert number_format.fixed(float("inf"), 3) == "inf"
