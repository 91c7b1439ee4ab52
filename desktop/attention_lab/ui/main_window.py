"""The main window: docked panels, menus, status bar, shortcuts and settings.

The window is wiring: the :class:`~attention_lab.ui.session.Session` computes, the panels
show.  Every panel sits in a ``QDockWidget`` whose objectName is the panel's ``panel_id``,
so ``saveState``/``restoreState`` bring a learner's layout back.  Settings (text, model,
layer, mode, layout, language, geometry) live in one QSettings INI file; anything unreadable
there falls back to its default with a warning in the status bar, never a crash.
"""

from __future__ import annotations

import importlib
import logging
import os
from pathlib import Path

from PySide6.QtCore import QByteArray, QSettings, Qt, QTimer, Signal
from PySide6.QtGui import QAction, QActionGroup, QKeySequence
from PySide6.QtWidgets import (
    QApplication,
    QDockWidget,
    QFileDialog,
    QInputDialog,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QProgressDialog,
    QTabBar,
    QVBoxLayout,
    QWidget,
)

from attention_lab import __version__
from attention_lab.ui import export as exporting
from attention_lab.ui.errors import show_error
from attention_lab.ui.i18n import LANGUAGES, register, system_language, tr, translator
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.session import Session
from attention_lab.ui.worker import InferenceWorker

log = logging.getLogger(__name__)

# (module, class, where it docks by default) of every panel, in menu order.  All seven ship;
# a module missing from a broken install is skipped with a warning and the smoke test fails.
PANEL_MODULES = (
    ("attention_lab.ui.panels.token_editor", "TokenEditorPanel", "top"),
    ("attention_lab.ui.panels.head_grid", "HeadGridPanel", "left"),
    ("attention_lab.ui.panels.kv_bench", "KVBenchPanel", "left"),
    ("attention_lab.ui.panels.leakage", "LeakagePanel", "right"),
    ("attention_lab.ui.panels.mask", "MaskPanel", "right"),
    ("attention_lab.ui.panels.portrait", "PortraitPanel", "right"),
    ("attention_lab.ui.panels.shapes", "ShapesPanel", "right"),
)
EXPECTED_PANELS = len(PANEL_MODULES)
#: the panels in sight in the default layout, built with the window; the others (behind a
#: tab) are built the first time their dock is shown, or asked for: the four of them were
#: 0.16 s of every start-up, and their first drawing another 0.13 s (measured)
FIRST_VIEW_PANELS = ("panel.token_editor", "panel.head_grid", "panel.leakage")


class PanelTable(dict):
    """The built panels by id; asking for one not built yet builds it (see FIRST_VIEW_PANELS).

    Iterating goes over the built panels only: those not built have nothing to update."""

    def __init__(self, build) -> None:
        super().__init__()
        self._build = build

    def __missing__(self, panel_id: str):
        return self._build(panel_id)


SETTINGS_VERSION = 1
ORGANIZATION, APPLICATION = "AttentionLab", "attention-lab"

register(
    {
        "app.title": {"en": "Attention Lab", "pt_BR": "Attention Lab"},
        "app.title_model": {"en": "Attention Lab: {model}", "pt_BR": "Attention Lab: {model}"},
        "menu.file": {"en": "&File", "pt_BR": "&Arquivo"},
        "menu.open_folder": {"en": "&Open model folder…", "pt_BR": "&Abrir pasta de modelo…"},
        "menu.open_cached": {"en": "Load a &cached Hugging Face model…", "pt_BR": "Carregar modelo do &cache do Hugging Face…"},
        "menu.use_demo": {"en": "Use the &demo model", "pt_BR": "Usar o modelo de &demonstração"},
        "menu.download": {"en": "Do&wnload a model…", "pt_BR": "&Baixar um modelo…"},
        "menu.export": {"en": "&Export", "pt_BR": "&Exportar"},
        "menu.export_png": {"en": "Plot of “{panel}” as &PNG…", "pt_BR": "Gráfico de “{panel}” como &PNG…"},
        "menu.export_svg": {"en": "Plot of “{panel}” as &SVG…", "pt_BR": "Gráfico de “{panel}” como &SVG…"},
        "menu.export_csv": {"en": "Numbers of “{panel}” as &CSV…", "pt_BR": "Números de “{panel}” como &CSV…"},
        "menu.quit": {"en": "&Quit", "pt_BR": "&Sair"},
        "menu.view": {"en": "&View", "pt_BR": "&Exibir"},
        "menu.reset_layout": {"en": "&Reset layout", "pt_BR": "&Restaurar disposição"},
        "menu.next_layer": {"en": "Next layer", "pt_BR": "Próxima camada"},
        "menu.previous_layer": {"en": "Previous layer", "pt_BR": "Camada anterior"},
        "menu.toggle_mask": {"en": "Toggle the causal mask", "pt_BR": "Ligar/desligar a máscara causal"},
        "menu.rerun": {"en": "Analyse again", "pt_BR": "Analisar de novo"},
        "menu.focus_text": {"en": "Edit the text", "pt_BR": "Editar o texto"},
        "menu.language": {"en": "&Language", "pt_BR": "&Idioma"},
        "menu.help": {"en": "&Help", "pt_BR": "A&juda"},
        "menu.key_ideas": {"en": "The chapter's &key ideas", "pt_BR": "As &ideias-chave do capítulo"},
        "menu.about": {"en": "&About Attention Lab", "pt_BR": "&Sobre o Attention Lab"},
        "status.no_model": {"en": "no model", "pt_BR": "nenhum modelo"},
        "status.model": {"en": "{name} · {params} parameters · {size}", "pt_BR": "{name} · {params} parâmetros · {size}"},
        "status.tokens": {"en": "{n} tokens", "pt_BR": "{n} tokens"},
        "status.tokens_cut": {"en": "{n} of {total} tokens (cut)", "pt_BR": "{n} de {total} tokens (cortado)"},
        "status.mode_causal": {"en": "causal (mask on)", "pt_BR": "causal (máscara ligada)"},
        "status.mode_bidirectional": {"en": "bidirectional (mask off)", "pt_BR": "bidirecional (máscara desligada)"},
        "status.layer": {"en": "layer {layer}", "pt_BR": "camada {layer}"},
        "status.time": {"en": "computed in {ms} ms", "pt_BR": "calculado em {ms} ms"},
        "status.busy": {"en": "computing…", "pt_BR": "calculando…"},
        "status.loading": {"en": "Loading model {spec}…", "pt_BR": "Carregando o modelo {spec}…"},
        "status.loaded": {"en": "Model loaded: {name}", "pt_BR": "Modelo carregado: {name}"},
        "status.exported": {"en": "Saved {path}", "pt_BR": "Salvo: {path}"},
        "status.nothing_to_export": {
            "en": "“{panel}” has nothing to export yet.",
            "pt_BR": "“{panel}” ainda não tem nada para exportar.",
        },
        "status.settings_reset": {
            "en": "Some saved settings were unreadable and were reset to defaults: {what}",
            "pt_BR": "Algumas configurações salvas estavam ilegíveis e voltaram ao padrão: {what}",
        },
        "status.settings_unwritable": {
            "en": "Settings can't be saved to {file}: your changes last until you quit.",
            "pt_BR": "As configurações não podem ser salvas em {file}: suas mudanças valem até você sair.",
        },
        "status.settings_not_saved": {"en": "settings not saved", "pt_BR": "configurações não salvas"},
        "dialog.open_folder": {"en": "Open a GPT-2 model folder", "pt_BR": "Abrir uma pasta de modelo GPT-2"},
        "dialog.cached_title": {"en": "Cached Hugging Face model", "pt_BR": "Modelo no cache do Hugging Face"},
        "dialog.cached_label": {
            "en": "Model id in the local Hugging Face cache (nothing is downloaded):",
            "pt_BR": "Id do modelo no cache local do Hugging Face (nada é baixado):",
        },
        "dialog.download_title": {"en": "Download a model", "pt_BR": "Baixar um modelo"},
        "dialog.download_label": {
            "en": "Hugging Face model id to download (GPT-2 family, safetensors only; gpt2 is about 550 MB):",
            "pt_BR": "Id do modelo no Hugging Face a baixar (família GPT-2, só safetensors; o gpt2 tem cerca de 550 MB):",
        },
        "dialog.downloading": {"en": "Downloading {repo}: {file}", "pt_BR": "Baixando {repo}: {file}"},
        "dialog.cancel": {"en": "Cancel", "pt_BR": "Cancelar"},
        "dialog.export_title": {"en": "Export", "pt_BR": "Exportar"},
        "about.title": {"en": "About Attention Lab", "pt_BR": "Sobre o Attention Lab"},
        "about.text": {
            "en": "<h3>Attention Lab {version}</h3><p>See multi-head attention and the causal mask inside GPT-2, "
            "offline, on a laptop CPU.</p><p>Model: {model}</p><p>MIT License. The GPT-2 tokenizer data comes "
            "from OpenAI's GPT-2 release (MIT).</p>",
            "pt_BR": "<h3>Attention Lab {version}</h3><p>Veja a atenção multi-cabeça e a máscara causal dentro do "
            "GPT-2, offline, na CPU de um notebook.</p><p>Modelo: {model}</p><p>Licença MIT. Os dados do "
            "tokenizador do GPT-2 vêm da publicação do GPT-2 da OpenAI (MIT).</p>",
        },
        "ideas.title": {"en": "Multi-head and the causal mask: key ideas", "pt_BR": "Multi-head e a máscara causal: ideias-chave"},
        "ideas.text": {
            "en": "<ol>"
            "<li><b>One head is a fixed budget.</b> Each attention row sums to 1, so a single head must average "
            "relations that are qualitatively different (subject, object, time, agreement).</li>"
            "<li><b>Divide, don't multiply.</b> GPT-2 small splits its 768 dimensions into 12 heads of 64: "
            "multi-head costs no more than one head. c_attn makes Q, K, V in one matmul; a reshape separates the "
            "heads; W<sup>O</sup> (c_proj) mixes them again — without it the heads would never talk.</li>"
            "<li><b>The causal mask is the line that defines GPT.</b> Before the softmax, every future position "
            "gets −∞, so its weight is exactly 0 and each row still sums to 1. Zeroing the score would give "
            "e<sup>0</sup> = 1; zeroing after the softmax breaks the sum. causal=True is GPT-2, causal=False is "
            "RoBERTa; everything else is identical.</li>"
            "<li><b>No label leakage.</b> Training predicts every next token at once; without the mask a token "
            "could read its own answer. Change a late token: under the mask earlier positions change by exactly 0.</li>"
            "<li><b>The KV cache is the free gift.</b> Since the past never depends on the future, K and V of "
            "earlier tokens never change: store them and compute only the new token, O(n) per step instead of O(n²).</li>"
            "</ol>",
            "pt_BR": "<ol>"
            "<li><b>Uma cabeça é um orçamento fixo.</b> Cada linha da atenção soma 1, então uma única cabeça precisa "
            "fazer a média de relações qualitativamente diferentes (sujeito, objeto, tempo, concordância).</li>"
            "<li><b>Dividir, não multiplicar.</b> O GPT-2 small divide as suas 768 dimensões em 12 cabeças de 64: "
            "multi-head não custa mais que uma cabeça. O c_attn gera Q, K, V num único matmul; um reshape separa as "
            "cabeças; W<sup>O</sup> (c_proj) as mistura de novo — sem ele as cabeças nunca conversariam.</li>"
            "<li><b>A máscara causal é a linha que define o GPT.</b> Antes do softmax, toda posição futura recebe "
            "−∞, então o peso dela é exatamente 0 e cada linha continua somando 1. Zerar o score daria "
            "e<sup>0</sup> = 1; zerar depois do softmax quebra a soma. causal=True é o GPT-2, causal=False é o "
            "RoBERTa; todo o resto é idêntico.</li>"
            "<li><b>Sem vazamento de rótulo.</b> O treino prevê todos os próximos tokens de uma vez; sem a máscara "
            "um token poderia ler a própria resposta. Troque um token no fim: com a máscara as posições anteriores "
            "mudam exatamente 0.</li>"
            "<li><b>O cache KV é o presente de graça.</b> Como o passado nunca depende do futuro, K e V dos tokens "
            "anteriores nunca mudam: guarde-os e calcule só o token novo, O(n) por passo em vez de O(n²).</li>"
            "</ol>",
        },
    }
)


def default_settings() -> QSettings:
    return QSettings(QSettings.Format.IniFormat, QSettings.Scope.UserScope, ORGANIZATION, APPLICATION)


def _human_count(n: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.1f}{unit}"
    return str(n)


def _human_bytes(n: int) -> str:
    for unit, size in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def cached_hub_models() -> list[str]:
    """Model ids present in the local Hugging Face cache (folder names only; nothing is opened)."""
    try:
        from attention_lab.core.paths import hub_cache_dir

        names = [p.name for p in hub_cache_dir().iterdir() if p.name.startswith("models--")]
    except OSError:
        return []
    return sorted(name[len("models--") :].replace("--", "/") for name in names)


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
        self.settings_problems: list[str] = []
        self.worker = InferenceWorker()
        self.download_worker = InferenceWorker(name="attention-lab-download")
        kwargs = {} if debounce_ms is None else {"debounce_ms": debounce_ms}
        self.session = Session(self.worker, download_worker=self.download_worker, parent=self, **kwargs)
        self.panels: PanelTable = PanelTable(self._build_panel)
        self._panel_classes: dict[str, type] = {}
        self.docks: dict[str, QDockWidget] = {}
        self.missing_panels: list[str] = []
        self._current_panel = "panel.head_grid"
        self._shut_down = False
        self._layout_restored = False
        self._sized = False
        self._download_dialog: QProgressDialog | None = None
        self._download_bar: QProgressBar | None = None  # the download dialog's bar
        self._startup_spec: str | None = None
        self.last_state = None
        self._showing = None  # the state whose panels are being drawn
        self._stale: set[str] = set()  # panels out of sight, drawn when their dock is shown
        self._dock_visible: dict[str, bool] = {}

        central = QWidget(self)
        central.setObjectName("central_placeholder")
        central.setMaximumSize(0, 0)
        self.setCentralWidget(central)
        self.setDockNestingEnabled(True)
        self.setDockOptions(
            QMainWindow.DockOption.AnimatedDocks
            | QMainWindow.DockOption.AllowTabbedDocks
            | QMainWindow.DockOption.AllowNestedDocks
        )

        self._restore_inputs()
        if autostart:
            # the worker reads the model and analyses the text while this thread builds the
            # panels (0.1 s + the analysis, of every start-up)
            self._start_text()
            self._begin_loading(model_spec)
        self._build_panels()
        self._default_layout()
        self._default_state = self.saveState(SETTINGS_VERSION)
        self._build_menus()
        self._build_status_bar()
        self._connect()

        requested_language = language or self._read_str("language", system_language())
        if requested_language not in LANGUAGES:
            self._problem("language")
            requested_language = system_language()
        if translator.language != requested_language:
            translator.set_language(requested_language)
        else:
            self.retranslate()
        self._restore_settings()
        warnings = []
        if self.settings_problems:
            warnings.append(tr("status.settings_reset", what=", ".join(self.settings_problems)))
        # e.g. a read-only home or a settings path under a file: say so now, not at quit
        self.settings_writable = self.settings.isWritable()
        if not self.settings_writable:
            unwritable = tr("status.settings_unwritable", file=self.settings.fileName())
            warnings.append(unwritable)
            self.settings_warning.setText("⚠ " + tr("status.settings_not_saved"))
            self.settings_warning.setToolTip(unwritable)
            self.settings_warning.show()
        if warnings:
            message = " ".join(warnings)
            log.warning(message)
            QTimer.singleShot(0, lambda: self.statusBar().showMessage(message, 15000))

        importlib.import_module("attention_lab.ui.tour").install_tour(self)  # the guided Lab tour (issue 8)
        if autostart:
            if self._startup_spec is not None and self.session.model is None:
                self.statusBar().showMessage(tr("status.loading", spec=self._startup_spec))

    # ------------------------------------------------------------------ construction
    def _build_panels(self) -> None:
        self._slots: dict[str, list[str]] = {"top": [], "left": [], "right": []}
        for module_name, class_name, slot in PANEL_MODULES:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:
                    raise
                log.warning("panel module %s is missing; its dock is skipped", module_name)
                self.missing_panels.append(module_name)
                continue
            cls = getattr(module, class_name)
            pid = cls.panel_id
            dock = QDockWidget(tr(cls.title_key), self)
            dock.setObjectName(pid)
            # the panel goes into this holder when built, so the dock's widget never changes
            holder = QWidget(dock)
            holder.setObjectName(pid + ".holder")
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            dock.setWidget(holder)
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.DockWidgetMovable
                | QDockWidget.DockWidgetFeature.DockWidgetClosable
                | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            )
            dock.visibilityChanged.connect(lambda visible, pid=pid: self._dock_shown(pid, visible))
            self._panel_classes[pid] = cls
            self.docks[pid] = dock
            self._slots[slot].append(pid)
        for pid in FIRST_VIEW_PANELS:
            if pid in self.docks:
                self._build_panel(pid)

    def _build_panel(self, panel_id: str) -> Panel:
        """Make the panel of ``panel_id``'s dock (once), wired like the others; it draws the
        newest state now if its dock is in sight, else when shown."""
        if panel_id in self.panels:
            return self.panels[panel_id]
        if panel_id not in self._panel_classes:
            raise KeyError(panel_id)
        holder = self.docks[panel_id].widget()
        panel: Panel = self._panel_classes[panel_id](holder)
        holder.layout().addWidget(panel)
        dict.__setitem__(self.panels, panel_id, panel)
        if hasattr(panel, "set_worker"):
            panel.set_worker(self.worker)
        if hasattr(panel, "set_word_resolver"):
            panel.set_word_resolver(self.session.replacement_from_word)
        self._connect_panel(panel)  # the session exists before any panel
        self.panel_built.emit(panel)
        if self._showing is not None or self.last_state is not None:
            self._stale.add(panel_id)
            if not self._out_of_sight(panel_id):
                # in sight (its tab clicked, or asked for): draw once the dock has laid it out
                QTimer.singleShot(0, self, lambda: self._catch_up(panel_id) if panel_id in self._stale else None)
        return panel

    def build_all_panels(self) -> None:
        """Build every panel now (the full smoke test, tests, the tour's screenshots)."""
        for pid in self.docks:
            self._build_panel(pid)

    def _default_layout(self) -> None:
        """Tokens across the top; heads (and the KV tab) left; the lab steps as tabs on the right."""
        d = self.docks
        areas = {
            "top": Qt.DockWidgetArea.TopDockWidgetArea,
            "left": Qt.DockWidgetArea.LeftDockWidgetArea,
            "right": Qt.DockWidgetArea.RightDockWidgetArea,
        }
        for slot, ids in self._slots.items():
            for i, pid in enumerate(ids):
                d[pid].setFloating(False)
                if i == 0:
                    self.addDockWidget(areas[slot], d[pid])
                else:
                    # straight into the tab group: adding first would stack the docks for a
                    # moment, and the window would keep the sum of their heights as its minimum
                    self.tabifyDockWidget(d[ids[0]], d[pid])
                d[pid].show()
            if ids:
                d[ids[0]].raise_()
        left, right, top = self._slots["left"], self._slots["right"], self._slots["top"]
        self._apply_default_sizes()

    def _apply_default_sizes(self) -> None:
        """Column widths and the token strip's height; only meaningful once the window has its size."""
        d = self.docks
        left, right, top = self._slots["left"], self._slots["right"], self._slots["top"]
        width = max(self.width(), 1000)
        if left and right:
            self.resizeDocks([d[left[0]], d[right[0]]], [int(width * 0.54), int(width * 0.46)], Qt.Orientation.Horizontal)
        if top:
            panel = self.panels[top[0]]
            self.resizeDocks([d[top[0]]], [panel.sizeHint().height() + 24], Qt.Orientation.Vertical)

    def _action(self, menu, key: str, slot, shortcut=None) -> QAction:
        action = QAction(self)
        action.setProperty("i18n_key", key)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        action.triggered.connect(lambda _checked=False: slot())
        menu.addAction(action)
        self._actions.append(action)
        return action

    def _build_menus(self) -> None:
        self._actions: list[QAction] = []
        bar = self.menuBar()
        self.file_menu = bar.addMenu("")
        self._action(self.file_menu, "menu.open_folder", self.open_model_folder, QKeySequence.StandardKey.Open)
        self._action(self.file_menu, "menu.open_cached", self.open_cached_model, "Ctrl+Shift+O")
        self._action(self.file_menu, "menu.use_demo", lambda: self.session.load_model("demo"))
        self._action(self.file_menu, "menu.download", self.download_model)
        self.file_menu.addSeparator()
        self.export_menu = self.file_menu.addMenu("")
        self.export_png = self._action(self.export_menu, "menu.export_png", lambda: self.export_current("png"), "Ctrl+E")
        self.export_svg = self._action(self.export_menu, "menu.export_svg", lambda: self.export_current("svg"), "Ctrl+Shift+E")
        self.export_csv = self._action(self.export_menu, "menu.export_csv", lambda: self.export_current("csv"), "Ctrl+Alt+E")
        self.file_menu.aboutToShow.connect(self._retitle_export)
        self.export_menu.aboutToShow.connect(self._retitle_export)
        self.file_menu.addSeparator()
        self._action(self.file_menu, "menu.quit", self.close, QKeySequence.StandardKey.Quit)

        self.view_menu = bar.addMenu("")
        for dock in self.docks.values():
            self.view_menu.addAction(dock.toggleViewAction())
        self.view_menu.addSeparator()
        self._action(self.view_menu, "menu.reset_layout", self.reset_layout, "Ctrl+Shift+R")
        self.view_menu.addSeparator()
        self._action(self.view_menu, "menu.next_layer", lambda: self.session.set_layer(self.session.layer + 1), "Ctrl+]")
        self._action(self.view_menu, "menu.previous_layer", lambda: self.session.set_layer(self.session.layer - 1), "Ctrl+[")
        self._action(self.view_menu, "menu.toggle_mask", lambda: self.session.set_causal(not self.session.causal), "Ctrl+M")
        self._action(self.view_menu, "menu.rerun", self.session.analyse_now, QKeySequence.StandardKey.Refresh)
        self._action(self.view_menu, "menu.focus_text", self._focus_text, "Ctrl+L")

        self.language_menu = bar.addMenu("")
        self.language_group = QActionGroup(self)
        self.language_group.setExclusive(True)
        self.language_actions: dict[str, QAction] = {}
        for code, name in LANGUAGES.items():
            action = QAction(name, self, checkable=True)
            action.triggered.connect(lambda _checked=False, c=code: self.set_language(c))
            self.language_group.addAction(action)
            self.language_menu.addAction(action)
            self.language_actions[code] = action

        self.help_menu = bar.addMenu("")
        self._action(self.help_menu, "menu.key_ideas", self.show_key_ideas, QKeySequence.StandardKey.HelpContents)
        self._action(self.help_menu, "menu.about", self.show_about)

    def _build_status_bar(self) -> None:
        status = self.statusBar()
        self.status_model = QLabel(self)
        self.status_tokens = QLabel(self)
        self.status_mode = QLabel(self)
        self.status_time = QLabel(self)
        self.busy_label = QLabel(self)
        self.busy_bar = QProgressBar(self)
        self.busy_bar.setRange(0, 0)  # indeterminate: "working", not a fake percentage
        self.busy_bar.setFixedWidth(90)
        self.busy_bar.setMaximumHeight(14)
        self.busy_bar.setTextVisible(False)
        self.busy_bar.hide()
        self.busy_label.hide()
        for widget in (self.status_model, self.status_tokens, self.status_mode, self.status_time):
            status.addPermanentWidget(widget)
        status.addPermanentWidget(self.busy_label)
        status.addPermanentWidget(self.busy_bar)
        # stays in view (a passing message would be replaced by the next "model loaded")
        self.settings_warning = QLabel(self)
        self.settings_warning.setObjectName("status_settings_warning")
        self.settings_warning.hide()
        status.addPermanentWidget(self.settings_warning)

    def _connect(self) -> None:
        s = self.session
        s.state_ready.connect(self._on_state)
        s.busy.connect(self._on_busy)
        s.error.connect(self.show_error)
        s.notice.connect(self._on_notice)
        s.model_changed.connect(self._on_model_changed)
        s.model_loading.connect(lambda spec: self.statusBar().showMessage(tr("status.loading", spec=spec)))
        s.model_failed.connect(self._on_model_failed)
        s.download_progress.connect(self._on_download_progress)
        s.download_finished.connect(self._on_download_finished)
        translator.language_changed.connect(self._on_language_changed)
        QApplication.instance().focusChanged.connect(self._focus_changed)

    def _connect_panel(self, panel) -> None:
        s = self.session
        wiring = (
            ("text_changed", self._text_edited),
            ("position_requested", s.set_position),
            ("replacement_requested", s.set_replacement),
            ("layer_requested", s.set_layer),
            ("causal_requested", s.set_causal),
            ("bos_toggled", s.set_bos),
            ("apply_requested", self._apply_replacement),
            ("head_selected", self.select_head),
            ("status_message", lambda msg: self.statusBar().showMessage(msg, 6000)),
            ("error_raised", self.show_error),
        )
        for signal, slot in wiring:  # each panel declares the signals it has
            if hasattr(panel, signal):
                getattr(panel, signal).connect(slot)

    # ------------------------------------------------------------------ startup / models
    def start(self, model_spec: str | None = None) -> None:
        """Load the model (argument, saved, or default) and analyse the saved or seed text."""
        self._start_text()
        self._begin_loading(model_spec)

    def _begin_loading(self, model_spec: str | None) -> None:
        """Submit the model's loading; the analysis follows when it arrives (on this thread,
        so after the window is built even when the loading began before)."""
        from attention_lab.core.models import default_model_spec

        spec = model_spec or self._read_str("model_spec", "") or default_model_spec()
        self._startup_spec = spec
        self.session.load_model(spec, analyse_along=True)

    def _start_text(self) -> None:
        from attention_lab.core.lab import SEED_TEXT

        if not self.session.text:
            self.session.text = SEED_TEXT
        self.text_panel_set(self.session.text)

    def text_panel_set(self, text: str) -> None:
        panel = self.panels.get("panel.token_editor")
        if panel is not None:
            panel.set_text(text)

    def _on_model_changed(self, model) -> None:
        self._startup_spec = None
        self.settings.setValue("model_spec", model.spec)
        self.statusBar().showMessage(tr("status.loaded", name=model.name), 5000)
        self._update_status()

    def _on_model_failed(self, spec: str, _reason: str) -> None:
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
            items = cached_hub_models() or ["gpt2"]
            repo_id, ok = QInputDialog.getItem(self, tr("dialog.cached_title"), tr("dialog.cached_label"), items, 0, True)
            if not ok:
                return
        if repo_id.strip():
            self.session.load_model(repo_id.strip())

    def download_model(self, repo_id: str | None = None) -> None:
        if repo_id is None:
            repo_id, ok = QInputDialog.getText(self, tr("dialog.download_title"), tr("dialog.download_label"), text="gpt2")
            if not ok or not repo_id.strip():
                return
        repo_id = repo_id.strip()
        dialog = QProgressDialog(tr("dialog.downloading", repo=repo_id, file="…"), tr("dialog.cancel"), 0, 0, self)
        dialog.setObjectName("download_dialog")
        dialog.setWindowTitle(tr("dialog.download_title"))
        dialog.setWindowModality(Qt.WindowModality.WindowModal)
        dialog.setMinimumDuration(0)
        dialog.setAutoClose(False)
        dialog.setAutoReset(False)
        # our own bar, set directly: QProgressDialog.setValue on a modal dialog runs the event
        # loop, so the next progress or the "finished" event (which closes and deletes the
        # dialog) ran inside it: the likely cause of a segfault there, seen once in CI
        self._download_bar = QProgressBar(dialog)
        dialog.setBar(self._download_bar)
        dialog.canceled.connect(self.session.cancel_download)
        dialog.setProperty("repo", repo_id)
        self._download_dialog = dialog
        dialog.show()
        self.session.download(repo_id)

    def _on_download_progress(self, done: int, total: int, name: str) -> None:
        dialog = self._download_dialog
        if dialog is None:
            return
        dialog.setLabelText(tr("dialog.downloading", repo=dialog.property("repo"), file=name))
        bar = self._download_bar
        if total > 0:
            bar.setRange(0, 1000)
            bar.setValue(int(1000 * min(done, total) / total))
        else:
            bar.setRange(0, 0)

    def _on_download_finished(self, ok: bool, message: str) -> None:
        dialog, self._download_dialog = self._download_dialog, None
        if dialog is not None:
            dialog.canceled.disconnect()
            dialog.close()
            dialog.deleteLater()
        if not ok:
            self.statusBar().showMessage(message, 8000)

    # ------------------------------------------------------------------ analysis results
    def _text_edited(self, text: str) -> None:
        self.session.set_text(text)

    def _apply_replacement(self) -> None:
        self.session.apply_replacement()
        self.text_panel_set(self.session.text)

    def select_head(self, layer: int, head: int) -> None:
        self.session.set_layer(layer)
        grid = self.panels.get("panel.head_grid")
        if grid is not None:
            grid.show_head(layer, head)
            self.docks["panel.head_grid"].raise_()

    def _on_state(self, state) -> None:
        # One panel per turn of the event loop: the window keeps answering (typing, the
        # mouse, repaints) between panels, so it waits for one panel's drawing at most,
        # not for all seven in a row.  A newer state stops this one's round.  Panels no one
        # can see (a dock behind another tab, or closed) are drawn when their dock is shown:
        # each edit cost them ~25 ms of this thread and the mask panel four model passes.
        self._showing = state
        self._stale = {pid for pid in self.panels if self._out_of_sight(pid)}
        self._show_next(state, [p for pid, p in self.panels.items() if pid not in self._stale])

    def _out_of_sight(self, panel_id: str) -> bool:
        # as QDockWidget.visibilityChanged last said (a dock behind a tab keeps isVisible());
        # none said yet (the window not shown): in sight
        return not self._dock_visible.get(panel_id, True)

    def _draw_panel(self, panel, state) -> None:
        panel.setEnabled(True)
        try:
            panel.show_state(state)
        except Exception as exc:  # one broken view must not take the others down
            import traceback

            log.exception("panel %s failed to show the state", panel.panel_id)
            self.show_error(f"{tr(panel.title_key)}: {exc}", traceback.format_exc())

    @property
    def panels_waiting(self) -> set[str]:
        """Panels out of sight that haven't drawn the latest state yet."""
        return set(self._stale)

    def draw_hidden_panels(self) -> None:
        """Draw the panels left for later (out of sight) now: the smoke test checks them all."""
        for pid in list(self._stale):
            self._catch_up(pid)

    def _catch_up(self, panel_id: str) -> None:
        """Draw a panel left for later with the newest state (the one being drawn, if any)."""
        self._stale.discard(panel_id)
        state = self._showing or self.last_state
        if state is not None:
            self._draw_panel(self.panels[panel_id], state)

    def _show_next(self, state, queue: list) -> None:
        if self._showing is not state or self._shut_down:
            return  # superseded (or closing): the newer state's round shows every panel
        if queue:
            self._draw_panel(queue.pop(0), state)
        if queue:
            QTimer.singleShot(1, self, lambda: self._show_next(state, queue))
            return
        self.last_state = state  # every panel shows it now
        self.state_shown.emit(state)
        token_panel = self.panels.get("panel.token_editor")
        if token_panel is not None and not state.truncated and state.text == self.session.text:
            token_panel.show_notice("")  # (an older text's analysis, redrawn, keeps "type some text")
        self._update_status()

    def _on_notice(self, message: str) -> None:
        token_panel = self.panels.get("panel.token_editor")
        if token_panel is not None:
            token_panel.show_notice(message)
        self.statusBar().showMessage(message, 6000)
        for pid, panel in self.panels.items():
            if pid != "panel.token_editor":
                panel.setEnabled(False)  # greyed: what they show is no longer the text

    def _on_busy(self, busy: bool) -> None:
        self.busy_bar.setVisible(busy)
        self.busy_label.setVisible(busy)

    def _update_status(self) -> None:
        model = self.session.model
        if model is None:
            self.status_model.setText(tr("status.no_model"))
        else:
            self.status_model.setText(
                tr("status.model", name=model.name, params=_human_count(model.n_params), size=_human_bytes(model.n_bytes))
            )
        state = self.last_state
        if state is not None:
            if state.truncated:
                self.status_tokens.setText(tr("status.tokens_cut", n=state.n_tokens, total=state.original_length))
            else:
                self.status_tokens.setText(tr("status.tokens", n=state.n_tokens))
            mode = tr("status.mode_causal" if state.causal else "status.mode_bidirectional")
            self.status_mode.setText(f"{mode} · {tr('status.layer', layer=state.layer)}")
            self.status_time.setText(tr("status.time", ms=f"{state.seconds * 1000:.0f}"))
        self.busy_label.setText(tr("status.busy"))
        title = tr("app.title_model", model=model.name) if model is not None else tr("app.title")
        self.setWindowTitle(title)

    def show_error(self, message: str, details: str = "") -> None:
        if self._shut_down:
            return
        show_error(self, message, details)

    # ------------------------------------------------------------------ export
    def _focus_changed(self, _old, new) -> None:
        widget = new
        while widget is not None:
            if isinstance(widget, QDockWidget) and widget.objectName() in self.docks:
                self._current_panel = widget.objectName()
                return
            widget = widget.parentWidget()

    def _dock_shown(self, panel_id: str, visible: bool) -> None:
        self._dock_visible[panel_id] = visible
        if visible and panel_id not in self.panels and not self._shut_down:
            self._build_panel(panel_id)  # its first time in sight
        if visible and panel_id in self._stale and not self._shut_down:
            self._catch_up(panel_id)  # its first look at the newest state
        if visible and panel_id != "panel.token_editor" and self.isVisible():
            self._current_panel = panel_id

    def current_panel(self) -> Panel | None:
        panel = self.panels.get(self._current_panel)
        return panel if panel is not None else next(iter(self.panels.values()), None)

    def _retitle_export(self) -> None:
        panel = self.current_panel()
        name = tr(panel.title_key) if panel is not None else ""
        self.export_png.setText(tr("menu.export_png", panel=name))
        self.export_svg.setText(tr("menu.export_svg", panel=name))
        self.export_csv.setText(tr("menu.export_csv", panel=name))
        self.export_png.setEnabled(panel is not None and hasattr(panel, "plot_for_export"))
        self.export_svg.setEnabled(panel is not None and hasattr(panel, "plot_for_export"))
        self.export_csv.setEnabled(panel is not None and hasattr(panel, "table_for_export"))

    def export_current(self, kind: str, path: str | os.PathLike | None = None, panel_id: str | None = None) -> Path | None:
        """Export the current panel's plot (png/svg) or numbers (csv); asks for a file when ``path`` is None."""
        if panel_id is not None:
            self._current_panel = panel_id
        panel = self.current_panel()
        if panel is None:
            return None
        name = tr(panel.title_key)
        if kind == "csv":
            table = panel.table_for_export() if hasattr(panel, "table_for_export") else None
            target = table
        else:
            target = panel.plot_for_export() if hasattr(panel, "plot_for_export") else None
        if target is None:
            self.statusBar().showMessage(tr("status.nothing_to_export", panel=name), 6000)
            return None
        if path is None:
            suggested = f"{panel.panel_id.removeprefix('panel.')}.{kind}"
            path, _ = QFileDialog.getSaveFileName(self, tr("dialog.export_title"), suggested, f"{kind.upper()} (*.{kind})")
            if not path:
                return None
        path = Path(path)
        if path.suffix.lower() != f".{kind}":
            path = path.with_suffix(f".{kind}")
        try:
            if kind == "csv":
                header, rows = target
                exporting.export_csv(path, header, rows)
            else:
                exporting.export_plot(target, path)
        except Exception as exc:
            import traceback

            self.show_error(f"{name}: {exc}", traceback.format_exc())
            return None
        self.statusBar().showMessage(tr("status.exported", path=str(path)), 6000)
        return path

    # ------------------------------------------------------------------ language / help
    def set_language(self, language: str) -> None:
        translator.set_language(language)
        self.settings.setValue("language", translator.language)

    def _on_language_changed(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        self.file_menu.setTitle(tr("menu.file"))
        self.export_menu.setTitle(tr("menu.export"))
        self.view_menu.setTitle(tr("menu.view"))
        self.language_menu.setTitle(tr("menu.language"))
        self.help_menu.setTitle(tr("menu.help"))
        for action in self._actions:
            key = action.property("i18n_key")
            if key and key.startswith("menu.export_"):
                continue
            if key:
                action.setText(tr(key))
        self._retitle_export()
        for pid, dock in self.docks.items():
            dock.setWindowTitle(tr(self._panel_classes[pid].title_key))
        for code, action in self.language_actions.items():
            action.setChecked(code == translator.language)
        self._update_status()

    def show_key_ideas(self) -> None:
        box = QMessageBox(QMessageBox.Icon.Information, tr("ideas.title"), tr("ideas.text"), QMessageBox.StandardButton.Close, self)
        box.setObjectName("key_ideas")
        box.setTextFormat(Qt.TextFormat.RichText)
        box.open()

    def show_about(self) -> None:
        model = self.session.model.name if self.session.model is not None else tr("status.no_model")
        box = QMessageBox(
            QMessageBox.Icon.NoIcon,
            tr("about.title"),
            tr("about.text", version=__version__, model=model),
            QMessageBox.StandardButton.Close,
            self,
        )
        box.setObjectName("about")
        box.open()

    def _focus_text(self) -> None:
        panel = self.panels.get("panel.token_editor")
        if panel is not None:
            self.docks["panel.token_editor"].show()
            self.docks["panel.token_editor"].raise_()
            panel.editor.setFocus()

    # ------------------------------------------------------------------ layout / settings
    def reset_layout(self) -> None:
        for dock in self.docks.values():
            dock.setFloating(False)
        self.restoreState(self._default_state, SETTINGS_VERSION)
        for dock in self.docks.values():
            dock.show()
        for ids in self._slots.values():
            if ids:
                self.docks[ids[0]].raise_()
        self._apply_default_sizes()
        self._hide_stale_tab_bars()

    def _problem(self, what: str) -> None:
        if what not in self.settings_problems:
            self.settings_problems.append(what)

    def _read_str(self, key: str, default: str) -> str:
        value = self.settings.value(key, default)
        if value is None:
            return default
        if not isinstance(value, str):
            self._problem(key)
            return default
        return value

    def _read_int(self, key: str, default: int, low: int, high: int) -> int:
        value = self.settings.value(key, default)
        try:
            number = int(value)
        except (TypeError, ValueError):
            self._problem(key)
            return default
        if not low <= number <= high:
            self._problem(key)
            return default
        return number

    def _read_bool(self, key: str, default: bool) -> bool:
        value = self.settings.value(key, default)
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        if isinstance(value, int):
            return bool(value)
        self._problem(key)
        return default

    def _read_bytes(self, key: str) -> QByteArray | None:
        value = self.settings.value(key)
        if value is None:
            return None
        if isinstance(value, (QByteArray, bytes)):
            return QByteArray(value)
        self._problem(key)
        return None

    def _restore_inputs(self) -> None:
        """The saved text, layer, mode and BOS switch: read before the model's loading,
        which analyses them right away."""
        s = self.settings
        if s.status() != QSettings.Status.NoError:
            self._problem(f"{s.fileName()} ({s.status().name})")
        text = self._read_str("text", "")
        if len(text) > 1_000_000:  # a settings file is not a place for a book
            self._problem("text")
            text = ""
        if text:
            self.session.text = text
        self.session.layer = self._read_int("layer", 0, 0, 1000)
        self.session.causal = self._read_bool("causal", True)
        self.session.bos = self._read_bool("bos", False)

    def _restore_settings(self) -> None:
        if self.session.text:
            self.text_panel_set(self.session.text)
        token_panel = self.panels.get("panel.token_editor")
        if token_panel is not None:
            token_panel.set_bos(self.session.bos)
        geometry = self._read_bytes("geometry")
        if geometry is not None and not self.restoreGeometry(geometry):
            self._problem("geometry")
        if geometry is None:
            self.resize(1600, 1000)
        state = self._read_bytes("window_state")
        if state is not None:
            if self.restoreState(state, SETTINGS_VERSION):
                self._layout_restored = True
            else:
                self._problem("window_state")
                self.restoreState(self._default_state, SETTINGS_VERSION)

    def save_settings(self) -> None:
        s = self.settings
        s.setValue("settings_version", SETTINGS_VERSION)
        s.setValue("text", self.session.text)
        s.setValue("layer", int(self.session.layer))
        s.setValue("causal", bool(self.session.causal))
        s.setValue("bos", bool(self.session.bos))
        s.setValue("language", translator.language)
        if self.session.model is not None:
            s.setValue("model_spec", self.session.model.spec)
        s.setValue("geometry", self.saveGeometry())
        s.setValue("window_state", self.saveState(SETTINGS_VERSION))
        s.sync()
        if s.status() != QSettings.Status.NoError:  # QSettings never raises: ask
            log.warning("could not save settings to %s (%s)", s.fileName(), s.status().name)

    # ------------------------------------------------------------------ teardown
    def shutdown(self, timeout: float = 1.5) -> bool:
        """Save settings, cancel and join the workers.  Safe to call twice."""
        if self._shut_down:
            return True
        self._shut_down = True
        try:
            self.save_settings()
        except Exception:  # an unwritable settings file must not block quitting
            log.exception("could not save settings")
        try:
            QApplication.instance().focusChanged.disconnect(self._focus_changed)
        except (RuntimeError, TypeError):
            pass
        try:
            translator.language_changed.disconnect(self._on_language_changed)
        except (RuntimeError, TypeError):
            pass
        return self.session.shutdown(timeout)

    def showEvent(self, event) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._sized:
            self._sized = True
            if not self._layout_restored:  # a learner's own layout wins over the default sizes
                QTimer.singleShot(0, self._apply_default_sizes)
            QTimer.singleShot(0, self._hide_stale_tab_bars)

    def _hide_stale_tab_bars(self) -> None:
        """Qt leaves behind the tab bar it made for a tab group's first two docks when a
        third one joins: still shown, and over the other dock area once the layout moves
        (a "Leakage diff | Mask" strip across the head grid, measured on Qt 6.12).  A bar
        whose tabs are the first tabs of a longer bar is such a leftover: it is hidden (Qt
        shows each bar it uses whenever it lays the docks out)."""
        bars = [bar for bar in self.findChildren(QTabBar) if bar.parent() is self]
        tabs = {id(bar): [bar.tabText(i) for i in range(bar.count())] for bar in bars}
        for bar in bars:
            mine = tabs[id(bar)]
            if any(len(tabs[id(other)]) > len(mine) and tabs[id(other)][: len(mine)] == mine for other in bars):
                bar.hide()

    def closeEvent(self, event) -> None:  # noqa: N802
        self.shutdown()
        self.closed.emit()
        super().closeEvent(event)
