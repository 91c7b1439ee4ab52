"""Qt's own words follow the interface's language: a standard button, a text field's menu.

In Portuguese the Key ideas, About and crash-notice boxes said "Close" (Qt's English): the
app now installs Qt's translations (shipped with PySide6) for the language it speaks."""

from __future__ import annotations

from PySide6.QtWidgets import QDialogButtonBox

from attention_lab.ui.i18n import translator


def _close_text() -> str:
    box = QDialogButtonBox(QDialogButtonBox.StandardButton.Close | QDialogButtonBox.StandardButton.Cancel)
    try:
        return " ".join(box.button(b).text().replace("&", "")
                        for b in (QDialogButtonBox.StandardButton.Close, QDialogButtonBox.StandardButton.Cancel))
    finally:
        box.deleteLater()


def test_standard_buttons_speak_portuguese_and_english_again(qapp):
    assert _close_text() == "Close Cancel"
    translator.set_language("pt_BR")
    try:
        assert _close_text() == "Fechar Cancelar"
    finally:
        translator.set_language("en")
    assert _close_text() == "Close Cancel"  # the translation goes with the language


def test_switching_back_and_forth_keeps_one_set_of_qt_words(qapp):
    """Issue 18: each switch to Portuguese made a new QTranslator (with its 290 KB catalogue)
    that stayed a child of the translator for good once removed: ~140 of them in the 30-minute
    soak.  Each language's words are loaded once and re-used."""
    from PySide6.QtCore import QTranslator

    before = len(translator.findChildren(QTranslator))
    try:
        for _ in range(6):
            translator.set_language("pt_BR")
            assert _close_text() == "Fechar Cancelar"
            translator.set_language("en")
            assert _close_text() == "Close Cancel"
    finally:
        translator.set_language("en")
    assert len(translator.findChildren(QTranslator)) <= max(before, 1)
