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


def locale() -> QLocale:
    """The interface language's locale for widgets that format numbers themselves (spin boxes): a panel
    sets it on itself, and Qt hands it down to every child that has not set its own."""
    return QLocale(_locale(grouped=False))


def tick_strings(values: list[float], scale: float, spacing: float) -> list[str]:
    """pyqtgraph's axis tick labels (``AxisItem.tickStrings``: as many decimals as the tick spacing needs,
    ``%g`` for the very small and the very large) with the interface language's decimal sign."""
    places = max(0, math.ceil(-math.log10(spacing * scale))) if spacing * scale > 0 else 0
    strings = []
    for value in values:
        scaled = value * scale
        if abs(scaled) < 0.001 or abs(scaled) >= 10000:
            strings.append(significant(scaled, 6))
        else:
            strings.append(fixed(scaled, places))
    return strings


def _plain_integer(text: str) -> bool:
    """A tick text the same in every language: digits, maybe signed ("−3", "12")."""
    return text.lstrip("-−").isdigit()


def localize_axis_ticks() -> None:
    """Make every pyqtgraph axis write its tick numbers through :func:`tick_strings`.  Patched on the class
    (once, where the app configures pyqtgraph) rather than subclassed, because pyqtgraph builds the axes
    of every ``PlotWidget``/``addPlot`` itself; an axis in log mode keeps pyqtgraph's own labels."""
    import pyqtgraph as pg

    original = pg.AxisItem.tickStrings
    if getattr(original, "_follows_interface_language", False):
        return

    def localized(axis, values, scale, spacing):
        if axis.logMode:
            return original(axis, values, scale, spacing)
        return tick_strings(values, scale, spacing)

    localized._follows_interface_language = True
    pg.AxisItem.tickStrings = localized

    draw_specs = pg.AxisItem.generateDrawSpecs

    def marked_draw_specs(axis, painter):
        specs = draw_specs(axis, painter)
        if specs is not None:
            # whether the tick texts it draws are written otherwise in another language (see
            # follow_language): those drawn, not those asked for (pyqtgraph asks every level's,
            # "0.5" between "0" and "1" too, and leaves out the ones that have no room)
            axis._ticks_follow_language = not all(_plain_integer(text) for _rect, _flags, text in specs[2])
        return specs

    pg.AxisItem.generateDrawSpecs = marked_draw_specs


def follow_language(widget) -> None:
    """Give ``widget`` (and through Qt, its children: spin boxes) the interface language's locale, and
    redraw its plots' axes, which cache their tick labels until their range changes."""
    import pyqtgraph as pg

    widget.setLocale(locale())
    for view in widget.findChildren(pg.GraphicsView):
        for item in view.scene().items() if view.scene() is not None else ():
            # only an axis that writes its own numbers: one given its ticks (a map's tokens, its
            # layers) has the panel's words, set again by its re-wording, and drawing it anew
            # (pyqtgraph's generateDrawSpecs, in Python) was a hot spot of the language switch
            if isinstance(item, pg.AxisItem) and item._tickLevels is None and item.picture is not None:
                # an axis whose ticks are whole numbers ("0", "1", "12") writes them alike in both
                # languages: its drawing kept (an axis with grid lines repaints its whole plot).  The
                # mark is left by its drawing (localize_axis_ticks); unmarked, it is drawn again
                if getattr(item, "_ticks_follow_language", True):
                    item.picture = None
                    item.update()
