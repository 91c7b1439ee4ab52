"""English and Brazilian Portuguese strings for everything the app shows.

Each view's table (``register({"key": {"en": ..., "pt_BR": ...}})``) lives in its own module
of :mod:`attention_lab.ui.strings`, imported by the view: the texts in one place, apart from
the views' logic.  ``tr(key, **fmt)``
looks a key up in the current language; :data:`translator` emits ``language_changed`` and
every panel re-labels itself in ``retranslate()``.  A plain dict beats Qt Linguist here: no
lrelease step in the build, and a test can check that every key has both languages.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QLibraryInfo, QLocale, QObject, QTranslator, Signal

LANGUAGES = {"en": "English", "pt_BR": "Português (Brasil)"}
_TABLE: dict[str, dict[str, str]] = {}


def register(strings: dict[str, dict[str, str]]) -> None:
    for key, by_lang in strings.items():
        missing = set(LANGUAGES) - set(by_lang)
        if missing:
            raise ValueError(f"string {key!r} lacks {sorted(missing)}")
        _TABLE[key] = by_lang


def all_keys() -> list[str]:
    return sorted(_TABLE)


def system_language() -> str:
    return "pt_BR" if QLocale.system().name().lower().startswith("pt") else "en"


class _QuietQtBroadcast(QObject):
    """Keeps Qt's own ``LanguageChange`` broadcast from the widgets while its words are swapped.

    Installing or removing a QTranslator sends ``LanguageChange`` to the application, which
    posts it to every top-level widget, and each widget hands it to all its children and
    repaints: 2,500-4,400 events and a repaint of the whole window (every plot with it) per
    switch, before any panel took its new words (the soak's ``set_language`` stalls: the
    switch's first turn took 39 ms of the GUI thread's CPU with it, 20 ms without, medians of
    16 switches at 1400×900 on a loaded 2-core machine).  No widget the app has needs it: the app's own words follow
    :attr:`_Translator.language_changed`, and Qt's words (a dialog's standard buttons, a text
    field's menu) are taken when those are made, after the switch (every widget's text,
    tooltip, accessible name, tab and action text in a window with all panels built came out
    the same with and without the broadcast, checked once)."""

    def eventFilter(self, watched, event) -> bool:
        return event.type() == QEvent.Type.LanguageChange and watched is QCoreApplication.instance()


class _Translator(QObject):
    language_changed = Signal(str)

    def __init__(self) -> None:
        super().__init__()
        self.language = "en"
        self._qt_words: QTranslator | None = None  # installed in the application now
        #: each language's Qt words, loaded once: a learner switching back and forth re-uses them
        #: (a new QTranslator per switch stayed a child of this object for good, each with its
        #: 290 KB catalogue: the soak switched language ~275 times in 30 minutes)
        self._qt_words_loaded: dict[str, QTranslator | None] = {}
        self._quiet = _QuietQtBroadcast(self)

    def set_language(self, language: str) -> None:
        if language not in LANGUAGES:
            language = "en"
        if language != self.language:
            self.language = language
            self._follow_with_qt(language)
            self.language_changed.emit(language)

    def _follow_with_qt(self, language: str) -> None:
        """Qt's own words in the language too: standard buttons (a message box's "Close" was
        English in Portuguese), a text field's context menu (Undo, Copy, Paste…), the file
        dialogs.  Qt's translations ship with PySide6 (``qtbase_pt_BR.qm``); where they are
        missing (a bundle without them) Qt keeps its English, as before."""
        app = QCoreApplication.instance()
        if app is None:
            return
        app.installEventFilter(self._quiet)  # (installTranslator sends its LanguageChange at once)
        try:
            self._swap_qt_words(app, language)
        finally:
            app.removeEventFilter(self._quiet)

    def _swap_qt_words(self, app: QCoreApplication, language: str) -> None:
        if self._qt_words is not None:
            app.removeTranslator(self._qt_words)
            self._qt_words = None
        if language == "en":
            return
        if language not in self._qt_words_loaded:
            words = QTranslator(self)
            if not words.load(f"qtbase_{language}", QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)):
                words.deleteLater()
                words = None
            self._qt_words_loaded[language] = words
        words = self._qt_words_loaded[language]
        if words is not None:
            app.installTranslator(words)
            self._qt_words = words


translator = _Translator()


def tr(key: str, **fmt: object) -> str:
    """The string for ``key`` in the current language (the key itself if unknown, so a gap shows)."""
    text = _TABLE.get(key, {}).get(translator.language, key)
    return text.format(**fmt) if fmt else text
