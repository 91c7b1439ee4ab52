"""The main window: the table of contents of the app's window.

The window is wiring: the :class:`~attention_lab.ui.session.Session` computes (the worker's
only client), the panels show, and each of the window's other jobs has its own module:

- :mod:`~attention_lab.ui.docks`: one dock per panel, the default layout, Qt's tab-bar leftover;
- :mod:`~attention_lab.ui.wiring`: which panel intent goes to which session method and back;
- :mod:`~attention_lab.ui.redraw`: one panel per event-loop turn, panels out of sight later;
- :mod:`~attention_lab.ui.menus`, :mod:`~attention_lab.ui.status_line`: menus and status bar;
- :mod:`~attention_lab.ui.window_settings`: the settings file, read defensively;
- :mod:`~attention_lab.ui.export`: File › Export; :mod:`~attention_lab.ui.strings`: texts.

Panels are built when their dock is first shown (see ``docks.FIRST_VIEW_PANELS``):
:meth:`MainWindow.panel` builds one, :meth:`MainWindow.built_panel` never does.
"""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path

from PySide6.QtCore import QSettings, Signal
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QMainWindow,
    QWidget,
)

from attention_lab.ui import dialogs
from attention_lab.ui import export as exporting
from attention_lab.ui import window_settings
from attention_lab.ui.docks import EXPECTED_PANELS, FIRST_VIEW_PANELS, PANEL_MODULES, Docks  # noqa: F401
from attention_lab.ui.errors import show_error
from attention_lab.ui.i18n import LANGUAGES, system_language, tr, translator
from attention_lab.ui.menus import Menus
from attention_lab.ui.paint_hold import PaintHold
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.qt_compat import call_later
from attention_lab.ui.redraw import RedrawScheduler
from attention_lab.ui.scene_paints import paint_once_per_turn
from attention_lab.ui.session import Session
from attention_lab.ui.model_label import model_label
from attention_lab.ui.status_line import FittingStatusBar, StatusLine
from attention_lab.ui.strings import window as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.window_settings import SETTINGS_VERSION, SettingsReader, default_settings, fit_to_screen
from attention_lab.ui.wiring import connect_exports, connect_panel
from attention_lab.ui.worker import InferenceWorker

log = logging.getLogger(__name__)


class MainWindow(QMainWindow):
    state_shown = Signal(object)  # AnalysisState: every panel now shows it
    panel_built = Signal(object)  # a Panel, built when its dock is first shown (or asked for)
    closed = Signal()

    def __init__(
        self,
        *,
        settings: QSettings | None = None,
        model_spec: str | None = None,
        language: str | None = None,
        debounce_ms: int | None = None,
        autostart: bool = True,
    ):
        super().__init__()
        self.setObjectName("attention_lab.main_window")
        self.settings = settings if settings is not None else default_settings()
        self.reader = SettingsReader(self.settings)
        self.settings_problems = self.reader.problems
        self.worker = InferenceWorker()
        self.download_worker = InferenceWorker(name="attention-lab-download")
        kwargs = {} if debounce_ms is None else {"debounce_ms": debounce_ms}
        self.session = Session(self.worker, download_worker=self.download_worker, parent=self, **kwargs)
        self.panels: dict[PanelId, Panel] = {}  # the built ones
        self._current_panel = PanelId.HEAD_GRID
        self._shut_down = False
        self._layout_restored = False
        self._sized = False
        self._startup_spec: str | None = None
        self._dock_visible: dict[str, bool] = {}
        self.redraw = RedrawScheduler(self.panels, self._out_of_sight, self.show_error, parent=self)
        # a resize, Reset layout, a language switch: each docked dock painted once, laid out
        self.paint_hold = PaintHold(self, lambda: [dock for dock in self.docks.values() if not dock.isFloating()])
        # a switch's words reach the panels in sight one per turn: the docks stay held until all have them
        self.redraw.relabelled = self.paint_hold.hold
        self.scene_paints = paint_once_per_turn(self)  # not a paint per pass of each graphics scene

        central = QWidget(self)
        central.setObjectName("central_placeholder")
        central.setMaximumWidth(0)  # (a zero maximum height kept the maps' row at its minimum)
        self.setCentralWidget(central)
        self.setDockNestingEnabled(True)
        options = QMainWindow.DockOption
        self.setDockOptions(options.AnimatedDocks | options.AllowTabbedDocks | options.AllowNestedDocks)

        self.reader.restore_inputs(self.session)
        requested_language = language or self.reader.read_str("language", system_language())
        if requested_language not in LANGUAGES:
            self.reader.problem("language")
            requested_language = system_language()
        if autostart:
            # the worker reads the model and analyses the text while this thread builds the
            # panels (0.1 s + the analysis, of every start-up)
            self._start_text(requested_language)  # the default sentence in the language about to be set
            self._begin_loading(model_spec)
        self.dock_layout = Docks(self, self._dock_shown)
        self.docks = self.dock_layout.docks
        self.missing_panels = self.dock_layout.missing
        for pid in FIRST_VIEW_PANELS:
            if pid in self.docks:
                self.panel(pid)
        self.dock_layout.arrange()
        self._apply_default_sizes()
        self._default_state = self.saveState(SETTINGS_VERSION)
        self.menus = Menus(self)
        self.help_menu = self.menus.help_menu  # the tour adds its entry there
        self.setStatusBar(FittingStatusBar(self))  # a passing message is shortened, never cut by the labels beside it
        self.status = StatusLine(self.statusBar())
        self.downloads = dialogs.DownloadProgress(self, self.session, self.statusBar().showMessage)
        self.exports = exporting.PanelExports(self)
        connect_exports(self.session, self.exports)
        self._connect()

        if translator.language != requested_language:
            translator.set_language(requested_language)
        else:
            self.retranslate()
        self._restore_settings()
        self._warn_about_settings()
        importlib.import_module("attention_lab.ui.tour_install").install_tour(self)  # the lab's five steps as a path
        importlib.import_module("attention_lab.ui.first_run").install_first_run_offer(self)  # real GPT-2, offered once
        if autostart and self._startup_spec is not None and self.session.model is None:
            self.statusBar().showMessage(tr("status.loading", spec=self._startup_spec))

    # ------------------------------------------------------------------ panels
    def panel(self, panel_id: PanelId) -> Panel:
        """The panel of ``panel_id``, built now (into its dock, wired) if it wasn't yet; it
        draws the newest state now if its dock is in sight, else when shown."""
        panel_id = PanelId(panel_id)
        if panel_id in self.panels:
            return self.panels[panel_id]
        holder = self.dock_layout.holder(panel_id)
        panel: Panel = self.dock_layout.classes[panel_id](holder)
        holder.layout().addWidget(panel)
        self.panels[panel_id] = panel
        panel.language_later = self.redraw.language_later
        connect_panel(self.session, panel, self)  # the session exists before any panel
        self.panel_built.emit(panel)
        self.redraw.panel_built(panel_id)
        return panel

    def built_panel(self, panel_id: PanelId) -> Panel | None:
        """The panel of ``panel_id`` if it is built; None otherwise (asking never builds it)."""
        return self.panels.get(PanelId(panel_id))

    def build_all_panels(self) -> None:
        """Build every panel now (the full smoke test, tests, the tour's screenshots)."""
        for pid in self.docks:
            self.panel(pid)

    def current_panel(self) -> Panel | None:
        panel = self.panels.get(self._current_panel)
        return panel if panel is not None else next(iter(self.panels.values()), None)

    def _connect(self) -> None:
        s = self.session
        s.state_ready.connect(self.redraw.show)
        self.redraw.round_done.connect(self._on_state_shown)
        s.busy.connect(self.status.set_busy)
        s.error.connect(self.show_error)
        s.notice.connect(self._on_notice)
        s.model_changed.connect(self._on_model_changed)
        s.model_loading.connect(lambda spec: self.statusBar().showMessage(tr("status.loading", spec=spec)))
        s.model_failed.connect(self._on_model_failed)
        translator.language_changed.connect(self._on_language_changed)
        QApplication.instance().focusChanged.connect(self._focus_changed)

    # ------------------------------------------------------------------ startup / models
    def start(self, model_spec: str | None = None) -> None:
        """Load the model (argument, saved, or default) and analyse the saved or seed text."""
        self._start_text()
        self._begin_loading(model_spec)

    def _begin_loading(self, model_spec: str | None) -> None:
        """Submit the model's loading; the analysis follows when it arrives (on this thread,
        so after the window is built even when the loading began before)."""
        from attention_lab.core.models import default_model_spec

        spec = model_spec or self.reader.read_str("model_spec", "") or default_model_spec()
        self._startup_spec = spec
        self.session.load_model(spec, analyse_along=True)

    def _start_text(self, language: str | None = None) -> None:
        from attention_lab.core.lab import seed_text_for

        self.session.text = seed_text_for(language or translator.language, self.session.text)
        self.text_panel_set(self.session.text)

    def text_panel_set(self, text: str) -> None:
        panel = self.built_panel(PanelId.TOKEN_EDITOR)
        if panel is not None:
            panel.set_text(text)

    def _on_model_changed(self, model) -> None:
        self._startup_spec = None
        self.settings.setValue("model_spec", model.spec)
        self.statusBar().showMessage(tr("status.loaded", name=model_label(model)), 5000)
        self._update_status()

    def _on_model_failed(self, spec: str, _reason: str) -> None:
        self.statusBar().clearMessage()  # "Loading …" is over: the error dialog says what happened
        # A saved model that has gone away: fall back to the default once, at startup.
        if self.session.model is None and self._startup_spec == spec:
            from attention_lab.core.models import default_model_spec
            fallback = default_model_spec()
            self._startup_spec = None
            if fallback != spec:
                self.session.load_model(fallback)

    def open_model_folder(self, folder: str | None = None) -> None:
        if folder is None:
            folder = QFileDialog.getExistingDirectory(self, tr("dialog.open_folder"))
        if folder:
            self.session.load_model(str(folder))

    def open_cached_model(self, repo_id: str | None = None) -> None:
        if repo_id is None:
            items = dialogs.cached_hub_models() or ["gpt2"]
            repo_id, ok = QInputDialog.getItem(self, tr("dialog.cached_title"), tr("dialog.cached_label"), items, 0, True)
            if not ok:
                return
        if repo_id.strip():
            self.session.load_model(repo_id.strip())

    def download_model(self, repo_id: str | None = None) -> None:
        repo_id = dialogs.ask_repo_to_download(self) if repo_id is None else repo_id.strip()
        if repo_id:
            self.downloads.start(repo_id)

    # ------------------------------------------------------------------ what the panels ask of the window
    def apply_replacement(self) -> None:
        self.session.apply_replacement()
        self.text_panel_set(self.session.text)

    def select_head(self, layer: int, head: int) -> None:
        self.session.set_layer(layer)
        grid = self.built_panel(PanelId.HEAD_GRID)
        if grid is not None:
            grid.show_head(layer, head)
            self.docks[PanelId.HEAD_GRID].raise_()

    def show_status(self, message: str) -> None:
        self.statusBar().showMessage(message, 6000)

    def show_error(self, message: str, details: str = "") -> None:
        if self._shut_down:
            return
        show_error(self, message, details)

    # ------------------------------------------------------------------ analysis results
    @property
    def last_state(self):
        """The state every panel in sight shows (None before the first)."""
        return self.redraw.last_state

    @property
    def panels_waiting(self) -> set[str]:
        """Panels out of sight that haven't drawn the latest state yet."""
        return set(self.redraw.stale)

    def draw_hidden_panels(self) -> None:
        """Draw the panels left for later (out of sight) now: the smoke test checks them all."""
        self.redraw.catch_up_all()

    def _out_of_sight(self, panel_id: str) -> bool:
        # as QDockWidget.visibilityChanged last said (a tabbed-away dock keeps isVisible()); none yet: in sight
        return not self._dock_visible.get(panel_id, True)

    def _on_state_shown(self, state) -> None:
        if self._shut_down:
            return
        self.state_shown.emit(state)
        token_panel = self.built_panel(PanelId.TOKEN_EDITOR)
        if token_panel is not None and not state.truncated and state.text == self.session.text:
            token_panel.show_notice("")  # (an older text's analysis, redrawn, keeps "type some text")
        self._update_status()

    def _on_notice(self, message: str) -> None:
        token_panel = self.built_panel(PanelId.TOKEN_EDITOR)
        if token_panel is not None:
            token_panel.show_notice(message)
        self.statusBar().showMessage(message, 6000)
        for pid, panel in self.panels.items():
            if pid != PanelId.TOKEN_EDITOR:
                panel.setEnabled(False)  # greyed: what they show is no longer the text
        self._update_status()

    def _update_status(self) -> None:
        model = self.session.model
        self.status.update(model, self.last_state if self.session.text else None)
        self.setWindowTitle(tr("app.title_model", model=model_label(model)) if model is not None else tr("app.title"))

    # ------------------------------------------------------------------ docks and export
    def _focus_changed(self, _old, new) -> None:
        widget = new
        while widget is not None:
            if isinstance(widget, QDockWidget) and widget.objectName() in self.docks:
                self._current_panel = PanelId(widget.objectName())
                return
            widget = widget.parentWidget()

    def _dock_shown(self, panel_id: PanelId, visible: bool) -> None:
        self._dock_visible[panel_id] = visible
        if visible and panel_id not in self.panels and not self._shut_down:
            self.panel(panel_id)  # its first time in sight
        if visible and self.redraw.waits(panel_id) and not self._shut_down:
            self.redraw.catch_up(panel_id)  # its first look at the newest state (and language)
        if visible and panel_id != PanelId.TOKEN_EDITOR and self.isVisible():
            self._current_panel = panel_id

    def export_current(self, kind: str, path: str | os.PathLike | None = None, panel_id: str | None = None) -> Path | None:
        """File › Export of the current panel (``export.PanelExports``): png/svg written when this
        returns, csv on the worker (the status line says when); None: nothing exported."""
        if panel_id is not None:
            self._current_panel = PanelId(panel_id)
        return self.exports.export_current(kind, path)

    # ------------------------------------------------------------------ language / help
    def set_language(self, language: str) -> None:
        translator.set_language(language)
        self.settings.setValue("language", translator.language)

    def _on_language_changed(self, _language: str) -> None:
        self.statusBar().clearMessage()  # a passing message ("Model loaded: …") is in the old language
        self.retranslate()
        self.paint_hold.hold()  # after the new words: the check it posts comes after the relayout they posted

    def retranslate(self) -> None:
        self.menus.retranslate()
        for pid, dock in self.docks.items():
            dock.setWindowTitle(tr(self.dock_layout.classes[pid].title_key))
        self._update_status()

    def show_key_ideas(self) -> None:
        dialogs.show_key_ideas(self)

    def show_about(self) -> None:
        dialogs.show_about(self, model_label(self.session.model) if self.session.model is not None else None)

    def focus_text(self) -> None:
        panel = self.built_panel(PanelId.TOKEN_EDITOR)
        if panel is not None:
            self.docks[PanelId.TOKEN_EDITOR].show()
            self.docks[PanelId.TOKEN_EDITOR].raise_()
            panel.editor.setFocus()

    # ------------------------------------------------------------------ layout / settings
    def reset_layout(self) -> None:
        fit_to_screen(self)
        if self.dock_layout.as_last_reset_left_it(self.panel):  # nothing to re-apply: no relayout, no repaint
            return
        self.paint_hold.hold()
        self.dock_layout.reset(self._default_state, SETTINGS_VERSION)
        self._apply_default_sizes()
        self.dock_layout.hide_stale_tab_bars()
        self.dock_layout.remember_reset(self.panel)

    def _apply_default_sizes(self) -> None:
        self.dock_layout.apply_default_sizes(self.panel)

    def _restore_settings(self) -> None:
        if self.session.text:
            self.text_panel_set(self.session.text)
        token_panel = self.built_panel(PanelId.TOKEN_EDITOR)
        if token_panel is not None:
            token_panel.set_bos(self.session.bos)
        geometry = self.reader.read_bytes("geometry")
        if geometry is not None and not self.restoreGeometry(geometry):
            self.reader.problem("geometry")
        if geometry is None:
            self.resize(1600, 1000)
        fit_to_screen(self)  # a default or saved size larger than this screen (a 1366×768 laptop)
        state = self.reader.read_bytes("window_state")
        if state is not None:
            if self.restoreState(state, SETTINGS_VERSION):
                self._layout_restored = True
            else:
                self.reader.problem("window_state")
                self.restoreState(self._default_state, SETTINGS_VERSION)

    def _warn_about_settings(self) -> None:
        # e.g. a read-only home or a settings path under a file: say so now, not at quit
        self.settings_writable = self.settings.isWritable()
        if not self.settings_writable:
            self.status.warn_settings(tr("status.settings_unwritable", file=self.settings.fileName()))
        message = self.reader.warning()
        if message:
            log.warning(message)
            call_later(0, self, lambda: self.statusBar().showMessage(message, 15000))

    def save_settings(self) -> None:
        window_settings.save(self.settings, self.session, translator.language, self.saveGeometry(),
                             self.saveState(SETTINGS_VERSION))

    # ------------------------------------------------------------------ teardown
    def shutdown(self, timeout: float = 1.5) -> bool:
        """Save settings, stop the panels' work, cancel and join the workers.  Safe to call twice."""
        if self._shut_down:
            return True
        self._shut_down = True
        self.redraw.stopped = True
        try:
            self.save_settings()
        except Exception:  # an unwritable settings file must not block quitting
            log.exception("could not save settings")
        for signal, slot in ((QApplication.instance().focusChanged, self._focus_changed),
                             (translator.language_changed, self._on_language_changed)):
            try:
                signal.disconnect(slot)
            except (RuntimeError, TypeError):
                pass
        for panel in self.panels.values():
            panel.shutdown()
        return self.session.shutdown(timeout)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if not self._layout_restored:  # a learner's own layout wins over the default sizes
                call_later(0, self, self._apply_default_sizes)
            call_later(0, self, self.dock_layout.hide_stale_tab_bars)

    def resizeEvent(self, event) -> None:  # noqa: N802
        self.paint_hold.hold()  # before the docks are laid out again (the head grid's height follows over turns)
        super().resizeEvent(event)

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        self.closed.emit()
        super().closeEvent(event)
