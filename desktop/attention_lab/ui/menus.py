"""The window's menu bar: File (models, export), View (docks, layer, mask), Language, Help.

Each action keeps its i18n key (``i18n_key`` property) and is re-labelled by
:meth:`Menus.retranslate`; the export entries name the current panel, so the window
re-titles them when a menu opens.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import QMainWindow

from attention_lab.ui.i18n import LANGUAGES, tr, translator


class Menus:
    def __init__(self, window: QMainWindow):
        w, s = window, window.session
        self.window = window
        self.actions: list[QAction] = []
        bar = window.menuBar()
        self.file_menu = bar.addMenu("")
        self._action(self.file_menu, "menu.open_folder", w.open_model_folder, QKeySequence.StandardKey.Open)
        self._action(self.file_menu, "menu.open_cached", w.open_cached_model, "Ctrl+Shift+O")
        self._action(self.file_menu, "menu.use_demo", lambda: s.load_model("demo"))
        self._action(self.file_menu, "menu.download", w.download_model)
        self.file_menu.addSeparator()
        self.export_menu = self.file_menu.addMenu("")
        self.export_png = self._action(self.export_menu, "menu.export_png", lambda: w.export_current("png"), "Ctrl+E")
        self.export_svg = self._action(self.export_menu, "menu.export_svg", lambda: w.export_current("svg"), "Ctrl+Shift+E")
        self.export_csv = self._action(self.export_menu, "menu.export_csv", lambda: w.export_current("csv"), "Ctrl+Alt+E")
        self.file_menu.aboutToShow.connect(self.retitle_export)
        self.export_menu.aboutToShow.connect(self.retitle_export)
        self.file_menu.addSeparator()
        self._action(self.file_menu, "menu.quit", w.close, QKeySequence.StandardKey.Quit)

        self.view_menu = bar.addMenu("")
        for dock in w.docks.values():
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        self._action(self.view_menu, "menu.reset_layout", w.reset_layout, "Ctrl+Shift+R")
        self.view_menu.addSeparator()
        self._action(self.view_menu, "menu.next_layer", lambda: s.set_layer(s.layer + 1), "Ctrl+]")
        self._action(self.view_menu, "menu.previous_layer", lambda: s.set_layer(s.layer - 1), "Ctrl+[")
        self._action(self.view_menu, "menu.toggle_mask", lambda: s.set_causal(not s.causal), "Ctrl+M")
        self._action(self.view_menu, "menu.rerun", s.analyse_now, QKeySequence.StandardKey.Refresh)
        self._action(self.view_menu, "menu.focus_text", w.focus_text, "Ctrl+L")

        self.language_menu = bar.addMenu("")
        self.language_group = QActionGroup(window)
        self.language_group.setExclusive(True)
        self.language_actions: dict[str, QAction] = {}
        for code, name in LANGUAGES.items():
            action = QAction(name, window, checkable=True)
            action.triggered.connect(lambda _checked=False, c=code: w.set_language(c))
            self.language_group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[code] = action

        self.help_menu = bar.addMenu("")
        self._action(self.help_menu, "menu.key_ideas", w.show_key_ideas, QKeySequence.StandardKey.HelpContents)
        self._action(self.help_menu, "menu.about", w.show_about)

    def _action(self, menu, key: str, slot, shortcut=None) -> QAction:
        action = QAction(self.window)
        action.setProperty("i18n_key", key)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self.actions.append(action)
        return action

    def retitle_export(self) -> None:
        """The export entries name the current panel; those it can't export are disabled."""
        panel = self.window.current_panel()
        name = tr(panel.title_key) if panel is not None else ""
        self.export_png.setText(tr("menu.export_png", panel=name))
        self.export_svg.setText(tr("menu.export_svg", panel=name))
        self.export_csv.setText(tr("menu.export_csv", panel=name))
        self.export_png.setEnabled(panel is not None and panel.exports_plot)
        self.export_svg.setEnabled(panel is not None and panel.exports_plot)
        self.export_csv.setEnabled(panel is not None and panel.exports_table)

    def retranslate(self) -> None:
        self.file_menu.setTitle(tr("menu.file"))
        self.export_menu.setTitle(tr("menu.export"))
        self.view_menu.setTitle(tr("menu.view"))
        self.language_menu.setTitle(tr("menu.language"))
        self.help_menu.setTitle(tr("menu.help"))
        for action in self.actions:
            key = action.property("i18n_key")
            if key and not key.startswith("menu.export_"):
                action.setText(tr(key))
        self.retitle_export()
        for code, action in self.language_actions.items():
            action.setChecked(code == translator.language)
