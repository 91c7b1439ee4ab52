"""Every number the app shows, written the way the interface's language writes numbers.

English: 0.918 and 2,304.  Brazilian Portuguese: 0,918 and 2.304 — an English "2,304" reads as two point
three to a Brazilian, so no view formats a number with an f-string: they call these (through QLocale, which
knows each language's separators), and ``tests/ui/test_portuguese_ui.py`` fails on a point-decimal in pt_BR.

Counts (parameters, bytes, tokens) get the thousands separator; measured values (weights, seconds, ratios)
don't, so a column of them lines up on its decimal separator.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QLocale

from attention_lab.ui.i18n import translator

_LOCALES = {
    "en": QLocale(QLocale.Language.English, QLocale.Country.UnitedStates),
    "pt_BR": QLocale(QLocale.Language.Portuguese, QLocale.Country.Brazil),
}
_UNGROUPED: dict[str, QLocale] = {}


def _locale(grouped: bool) -> QLocale:
    language = translator.language if translator.language in _LOCALES else "en"
    if grouped:
        return _LOCALES[language]
    if language not in _UNGROUPED:
        locale = QLocale(_LOCALES[language])
        locale.setNumberOptions(QLocale.NumberOption.OmitGroupSeparator)
        _UNGROUPED[language] = locale
    return _UNGROUPED[language]


def integer(n: int) -> str:
    """A count, with the language's thousands separator: 124,439,808 / 124.439.808."""
    return _locale(grouped=True).toString(int(n))


def fixed(value: float, decimals: int) -> str:
    """``value`` with exactly ``decimals`` decimals (Python's ``:.{decimals}f``), the language's decimal sign."""
    if not math.isfinite(value):
        return str(value)
    return _locale(grouped=False).toString(float(value), "f", decimals)


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, trailing zeros dropped (Python's ``:.{digits}g``)."""
    if not math.isfinite(value):
        return str(value)
    return _locale(grouped=False).toString(float(value), "g", digits)


def scientific(value: float, decimals: int) -> str:
    """``value`` as mantissa and exponent (Python's ``:.{decimals}e``): 7,99e-16 in Portuguese."""
    if not math.isfinite(value):
        return str(value)
    return _locale(grouped=False).toString(float(value), "e", decimals)


def percent(fraction: float, decimals: int = 1) -> str:
    """A fraction as a percentage (Python's ``:.{decimals}%``): 0.167 → 16.7% / 16,7%."""
    return fixed(100.0 * fraction, decimals) + "%"


def trimmed(value: float, decimals: int) -> str:
    """At most ``decimals`` decimals, trailing zeros (and a bare decimal sign) dropped, thousands grouped:
    1,234.5 / 1.234,5."""
    if not math.isfinite(value):
        return str(value)
    locale = _locale(grouped=True)
    text = locale.toString(float(value), "f", decimals)
    point = locale.decimalPoint()
    return text.rstrip("0").rstrip(point) if point in text else text
