"""Numbers inside core's sentences, written the way the sentence's language writes them.

English 0.918 and 2,304; Brazilian Portuguese 0,918 and 2.304 (an English "2,304" reads as two
point three to a Brazilian).  The window's views format through Qt's QLocale;
core's texts (the roles' "where" sentences, the KV benchmark's words) are also printed by the
Qt-free command-line lab, so they format here, with the same result for these two languages.
"""

from __future__ import annotations

from typing import Any, Mapping

_SWAP = str.maketrans({",": ".", ".": ","})


def number(value: float, spec: str, lang: str) -> str:
    """``format(value, spec)`` with ``lang``'s decimal and thousands signs."""
    text = format(value, spec)
    return text.translate(_SWAP) if lang == "pt_BR" else text


def download_size(n_bytes: int, lang: str) -> str:
    """How much of a download arrived, as a learner reads it: 3.1 MB (3,1 MB) from 100 kB up, else 48 kB."""
    if n_bytes >= 100_000:
        return number(n_bytes / 1e6, ".1f", lang) + " MB"
    return number(n_bytes / 1e3, ".0f", lang) + " kB"


class _Localised(float):
    """A float that formats itself in its language: ``"{x:.2f}".format(x=_Localised(0.5, "pt_BR"))`` → 0,50."""

    def __new__(cls, value: float, lang: str) -> "_Localised":
        obj = super().__new__(cls, value)
        obj.lang = lang
        return obj

    def __format__(self, spec: str) -> str:
        return number(float(self), spec, self.lang)


def localised(values: Mapping[str, Any], lang: str) -> dict[str, Any]:
    """``values`` with every float formatting itself in ``lang`` (for ``str.format``)."""
    return {k: _Localised(v, lang) if isinstance(v, float) and not isinstance(v, bool) else v for k, v in values.items()}


def words(table: Mapping[str, Mapping[str, str]], key: str, lang: str, **values: Any) -> str:
    """``table[key]`` in ``lang`` (English when the language is unknown), its numbers written as
    ``lang`` writes them: the one way core's string tables are read."""
    texts = table[key]
    return texts.get(lang, texts["en"]).format(**localised(values, lang))
