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
    """Each switch to Portuguese made a new QTranslator (with its 290 KB catalogue)
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


def test_a_switch_spares_the_widgets_qt_s_broadcast(qapp, qtbot):
    """Installing or removing Qt's words made Qt send ``LanguageChange`` to every
    widget of the window, each repainted (2,500-4,400 events per switch, about half of the
    switch's first turn, before any panel took its words).  The app's own words follow the translator's
    signal; Qt's words still follow the language in what is made after the switch."""
    from paint_counter import EventCounter, PaintCounter
    from PySide6.QtCore import QEvent
    from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

    window = QWidget()
    qtbot.addWidget(window)
    label = QLabel("words", window)
    QVBoxLayout(window).addWidget(label)
    window.show()
    qtbot.waitExposed(window)
    qapp.processEvents()
    told = [EventCounter(widget, QEvent.Type.LanguageChange) for widget in (window, label)]
    painted = PaintCounter(label)
    heard = []
    translator.language_changed.connect(heard.append)
    try:
        translator.set_language("pt_BR")
        qapp.processEvents()
        assert _close_text() == "Fechar Cancelar"
        translator.set_language("en")
        qapp.processEvents()
        assert _close_text() == "Close Cancel"
    finally:
        translator.language_changed.disconnect(heard.append)
        translator.set_language("en")
    assert heard == ["pt_BR", "en"]
    assert [counter.count for counter in told] == [0, 0]
    assert painted.count == 0
