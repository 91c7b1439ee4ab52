"""Drive the real main window the way a learner does: the one place that knows how.

Used by the stateful test (``tests/ui/test_learner_fuzz.py``) and the soak run
(:mod:`attention_lab.devtools.soak`).  Every action goes through the widgets a learner touches
(QTest key presses and mouse clicks on the text field, the chips, the guesses, the radio
buttons and push buttons; the View / Language / Help actions), except where Qt would open
a native file dialog (export, open folder): those call the window's own method with the
path a learner would have picked.  When the window's structure changes, this module (and
:mod:`attention_lab.devtools.learner_checks`, which reads the window) is what adapts.

:class:`LearnerDriver` also keeps what the learner asked for (the text field's content,
the KV panel's "new tokens", the mask mode, the model that should be loaded) so the checks
can compare the window with it.  ``ACTIONS`` lists every action with the choices of its
arguments, so the test (hypothesis strategies) and the soak (a seeded ``random.Random``)
draw from the same catalogue.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtWidgets import QApplication, QDockWidget

from attention_lab.core.lab import SEED_TEXT
from attention_lab.core.lens import MaskMode
from attention_lab.ui.window_settings import SETTINGS_VERSION


class _LazyQTest:
    """QTest, imported when first used: the installer leaves QtTest out (packaging/freeze_config.py),
    and the app imports this module only for the developer commands (soak, the fuzzer)."""

    def __getattr__(self, name):
        from PySide6.QtTest import QTest as qtest

        return getattr(qtest, name)


QTest = _LazyQTest()

TOKENS_PANEL, HEADS_PANEL, KV_PANEL, MASK_PANEL = "panel.token_editor", "panel.head_grid", "panel.kvbench", "panel.mask"
GENERATE_PANEL = "panel.generate"
GENERATE_BUTTONS = ("next", "back", "reset", "play")
GENERATE_SWITCHES = ("stale", "sample")
DESIGNER_PANEL, KNOCKOUT_PANEL = "panel.mask_designer", "panel.knockout"
PANEL_IDS = (
    "panel.token_editor", "panel.head_grid", "panel.kvbench", "panel.leakage",
    "panel.mask", "panel.portrait", "panel.shapes", DESIGNER_PANEL, KNOCKOUT_PANEL,
)
_SENTENCE = "The quick brown fox jumps over the lazy dog while the cat sleeps. "
#: what a learner types or pastes: the ordinary, the empty, the odd, and the too long
TEXTS = {
    "seed": SEED_TEXT,
    "short": "Hello world",
    "pt": "O Brasil é gigante pela própria natureza",
    "empty": "",
    "spaces": "   ",
    "emoji": "🙂 attention 👍🏽 works",
    "rtl": "שלום עולם مرحبا بالعالم",
    "cjk": "注意力机制很重要",
    "nul": "a\x00b after a NUL",
    "newlines": "line one\nline two\n\n",
    "context_long": _SENTENCE * 20,  # ~280 tokens: fills the demo model's 256 positions
    "over_long": _SENTENCE * 80,  # ~1100 tokens: cut at every model's context
}
#: what a learner types a few keys at a time (QTest.keyClicks: one key event per character)
TYPED = (" and more", " x", "!", " déjà vu", " 2024")
WORDS = (" cat", "dog", " the", "banana split", "", "  ", "🙂")
LANGUAGE_CODES = ("en", "pt_BR")
MASK_MODES = tuple(m.value for m in MaskMode)
MASK_KINDS = ("causal", "bidirectional", "prefix", "window", "documents", "custom")
#: what a learner types as the documents' separator: one token, an escaped newline, a word, not one token
SEPARATORS = (".", "\\n", " the", "xyzzy plugh")
#: a cell or head at a fraction of the way along each side of the grid
FRACTIONS = (0.0, 0.3, 0.6, 0.99)
#: the window sizes a learner resizes to (width and height drawn apart), the first the start size:
#: on a desktop monitor (the fuzzer's, and the soak's ``--screen desktop``)
SIZES = ((1400, 900), (1000, 700), (1900, 1150), (800, 600))
#: ... and on the 1366×768 laptop learners have (the soak's default screen): its largest the whole
#: width inside the window's frame (Qt's offscreen frame is 2 px a side) under a title bar and a task
#: bar, its smallest the fuzzer's smallest
LAPTOP_SIZES = ((1362, 700), (1200, 660), (1024, 620), (800, 600))
EXPORT_KINDS = ("png", "svg", "csv")
#: File › Download a model…: a repository the hub serves, one it doesn't have (404: an error
#: dialog), one whose weights stall half-way (the learner presses Cancel)
DOWNLOADS = ("served", "missing", "stalled")
SETTLE_TIMEOUT_S = 60.0


@dataclass
class Intent:
    """What the learner asked for, to compare the window with (the test's model)."""

    model_spec: str = ""  # the model that should be in use (a failed load keeps the previous one)
    kv_new_tokens: int = 50  # the KV panel's "New tokens" as the learner last set it
    mask_mode: str = MaskMode.NEG_INF.value
    language: str = "en"
    expected_error: str = ""  # what the error dialog may say: the learner opened a broken model
    #: the session's inputs when the tour was opened, and whether the learner changed them since
    before_tour: dict | None = None
    touched_during_tour: bool = False
    log: list[str] = field(default_factory=list)  # the actions so far, for reports


def type_keys(widget, text: str) -> None:
    """One key press per character, any character (QTest.keyClicks asserts on non-ASCII)."""
    for ch in text:
        QTest.sendKeyEvent(QTest.KeyAction.Click, widget, Qt.Key.Key_unknown, ch, Qt.KeyboardModifier.NoModifier)


class LearnerDriver:
    """Acts on ``window`` (a shown MainWindow); ``models`` maps a name to a model spec."""

    def __init__(self, window, models: dict[str, str], workdir: Path, *, settle_timeout_s: float = SETTLE_TIMEOUT_S,
                 open_window=None, paint: bool = True, hubs: dict[str, tuple[str, str]] | None = None,
                 kv_new_tokens: int = Intent.kv_new_tokens, kv_repetitions: int | None = None,
                 sizes: tuple[tuple[int, int], ...] = SIZES):
        #: False: the window is never painted (``setUpdatesEnabled(False)``); every panel still
        #: receives and lays out what it shows, which is what the checks read
        self.paint = paint
        #: the window sizes this learner resizes to; a reset brings the window back to the first
        self.sizes = tuple(sizes)
        self.window = window
        window.setUpdatesEnabled(paint)
        #: ``open_window()`` -> a new shown MainWindow on the same settings file (a restart);
        #: None: the "quit and start again" action does nothing
        self.open_window = open_window
        self.restarts = 0
        self.models = dict(models)
        #: DOWNLOADS name -> (hub endpoint, repository id); none (the soak): downloads do nothing,
        #: as for a learner offline.  Only loopback hubs: the fuzzer never reaches the network.
        self.hubs = dict(hubs or {})
        self.workdir = Path(workdir)
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.settle_timeout_s = settle_timeout_s
        #: the KV panel's "New tokens" and "Repetitions" at the start of each sequence (typed in
        #: by :meth:`reset`; None: the panel's own default).  The fuzzer checks that the panel
        #: stays consistent, not how fast the cache is: the fewest tokens and one repetition
        #: make a run cost milliseconds instead of a second, and a learner can pick them too.
        self.kv_start_tokens = kv_new_tokens
        self.kv_start_repetitions = kv_repetitions
        self.intent = Intent(model_spec=models.get("start", ""), kv_new_tokens=kv_new_tokens)
        self.steps = 0
        self.exports = 0
        #: the file (CSV or PNG) the last such export asked the worker for (the checks: on disk once settled)
        self.file_asked: Path | None = None

    def set_paint(self, paint: bool) -> None:
        """Paint the window (True) or only lay it out (False: no paint events at all)."""
        self.paint = paint
        self.window.setUpdatesEnabled(paint)

    # ------------------------------------------------------------------ plumbing
    @property
    def app(self):
        return QApplication.instance()

    def panel(self, panel_id: str):
        """The panel, built if needed (a learner opening its tab builds it too)."""
        return self.window.panel(panel_id)

    def dock(self, panel_id: str) -> QDockWidget:
        return self.window.docks[panel_id]

    def bring(self, panel_id: str):
        """Open the panel's dock (re-open it if closed) and its tab, as a learner does first."""
        dock = self.dock(panel_id)
        if dock.isHidden():
            dock.toggleViewAction().trigger()
        dock.raise_()
        self.app.processEvents()
        return self.panel(panel_id)

    def _record(self, what: str) -> None:
        self.steps += 1
        self.intent.log.append(what)

    def _learner_input(self) -> None:
        """The learner changed an input themselves (during the tour: theirs wins at its end)."""
        if self.intent.before_tour is not None:
            self.intent.touched_during_tour = True

    def pending(self) -> list[str]:
        """What is still on its way: an empty list once the window has settled."""
        w = self.window
        busy = []
        if w.session.pending:
            busy.append("session")
        if w.worker.busy:
            busy.append(f"worker ({w.worker.running_kind})")
        if w.download_worker.busy:
            busy.append("download worker")
        if w.exports.writing:
            busy.append(f"export ({len(w.exports.writing)})")
        showing = w.redraw.showing
        if showing is not None and showing is not w.last_state:
            busy.append("drawing")
        if any(not w._out_of_sight(pid) for pid in w.panels_waiting):
            busy.append("catch-up")
        if w.redraw.relabelling:
            busy.append("language (panels in sight re-labelled one per turn)")
        if w.redraw.cleaning:
            busy.append("collection after a switch")
        if w.tour.entry_pending:
            busy.append("tour step (set up after the dock's paint)")
        if w.tour.revealing:
            busy.append("tour step (what it points at brought into view)")
        if w.paint_hold.held:
            busy.append("relayout (painting held)")  # its one paint is still to come
        return busy

    def settle(self, timeout_s: float | None = None) -> float:
        """Run the event loop until nothing is pending (and three quiet turns in a row);
        returns the seconds it took.  Raises TimeoutError naming what is still busy."""
        from PySide6.QtCore import QEventLoop, QTimer

        app = self.app
        start = time.monotonic()
        deadline = start + (timeout_s or self.settle_timeout_s)
        quiet = 0
        # While something is pending the loop sleeps until an event arrives (a worker's
        # result, the redraw's next 1 ms turn, the debounce) instead of polling every 2 ms
        # (QTest.qWait): a redraw round of seven panels cost seven polls, ~20 ms a step.
        # The heartbeat wakes it for the deadline even if nothing ever arrives.
        heartbeat = QTimer()
        heartbeat.setInterval(20)
        heartbeat.start()
        try:
            while quiet < 3:
                app.processEvents()
                if self.pending():
                    quiet = 0
                    if time.monotonic() > deadline:
                        raise TimeoutError(
                            f"the window did not settle in {timeout_s or self.settle_timeout_s:.0f} s: {self.pending()}")
                    app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents)  # sleeps: the worker gets the cores
                else:
                    quiet += 1
        finally:
            heartbeat.stop()
        return time.monotonic() - start

    def dismiss_error(self) -> bool:
        """Close the error dialog with its Close button, if one is open; True if it was."""
        from attention_lab.ui.errors import ErrorDialog

        dialog = self.window.findChild(ErrorDialog, "error_dialog")
        if dialog is None or not dialog.isVisible():
            return False
        dialog.reject()  # the Close button of its QDialogButtonBox
        self.app.processEvents()
        self.intent.expected_error = ""
        return True

    # ------------------------------------------------------------------ the text
    def _editor(self):
        return self.bring(TOKENS_PANEL).editor

    def paste_text(self, name: str) -> None:
        """Select everything in the text field and paste a text over it (one edit)."""
        self._record(f"paste_text({name!r})")
        self._learner_input()
        editor = self._editor()
        editor.setFocus()
        editor.selectAll()
        if TEXTS[name]:
            editor.insertPlainText(TEXTS[name])  # what Ctrl+V does, without the clipboard
        else:
            QTest.keyClick(editor, Qt.Key.Key_Delete)

    def type_text(self, typed: str) -> None:
        """Type at the end of the text, one key press per character."""
        self._record(f"type_text({typed!r})")
        self._learner_input()
        editor = self._editor()
        editor.setFocus()
        editor.moveCursor(QTextCursor.MoveOperation.End)
        type_keys(editor, typed)

    def backspace(self, count: int) -> None:
        self._record(f"backspace({count})")
        self._learner_input()
        editor = self._editor()
        editor.setFocus()
        editor.moveCursor(QTextCursor.MoveOperation.End)
        for _ in range(count):
            QTest.keyClick(editor, Qt.Key.Key_Backspace)

    def clear_text(self) -> None:
        self._record("clear_text()")
        self._learner_input()
        editor = self._editor()
        editor.setFocus()
        QTest.keyClick(editor, Qt.Key.Key_A, Qt.KeyboardModifier.ControlModifier)
        QTest.keyClick(editor, Qt.Key.Key_Delete)

    def toggle_bos(self) -> None:
        self._record("toggle_bos()")
        self._learner_input()
        box = self.bring(TOKENS_PANEL).bos
        QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))

    # ------------------------------------------------------------------ the leakage edit
    def click_chip(self, fraction: float) -> None:
        """Click the chip at ``fraction`` of the way along the tokens (0: first, 1: last)."""
        panel = self.bring(TOKENS_PANEL)
        chips = panel.chips
        self._record(f"click_chip({fraction})")
        self._learner_input()
        if not chips.tokens:
            return
        index = min(len(chips.tokens) - 1, int(fraction * len(chips.tokens)))
        rect = chips.chip_rect(index)
        panel.chip_scroll.ensureVisible(rect.center().x(), rect.center().y(), 0, rect.height())
        self.app.processEvents()
        QTest.mouseClick(chips, Qt.MouseButton.LeftButton, pos=rect.center())

    def type_replacement(self, word: str) -> None:
        """Type a word in the replacement field and press Enter."""
        self._record(f"type_replacement({word!r})")
        self._learner_input()
        field_ = self.bring(TOKENS_PANEL).word
        field_.setFocus()
        field_.selectAll()
        QTest.keyClick(field_, Qt.Key.Key_Delete)
        type_keys(field_, word)
        QTest.keyClick(field_, Qt.Key.Key_Return)

    def pick_guess(self, index: int) -> None:
        """Click one of the model's guesses for the chosen position."""
        self._record(f"pick_guess({index})")
        self._learner_input()
        guesses = self.bring(TOKENS_PANEL).predictions
        if guesses.count() == 0:
            return
        item = guesses.item(index % guesses.count())
        guesses.scrollToItem(item)
        self.app.processEvents()
        rect = guesses.visualItemRect(item)
        if rect.isEmpty() or not guesses.viewport().rect().contains(rect.center()):
            return  # out of the list's one visible row: a learner can't click it either
        QTest.mouseClick(guesses.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())

    def write_into_text(self) -> None:
        """"Write into the text": the leakage edit becomes part of the text."""
        self._record("write_into_text()")
        self._learner_input()
        button = self.bring(TOKENS_PANEL).apply
        QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    # ------------------------------------------------------------------ heads
    def set_causal(self, causal: bool) -> None:
        self._record(f"set_causal({causal})")
        self._learner_input()
        grid = self.bring(HEADS_PANEL)
        button = grid.causal if causal else grid.bidirectional
        QTest.mouseClick(button, Qt.MouseButton.LeftButton, pos=QPoint(8, button.height() // 2))

    def step_layer(self, up: bool) -> None:
        """The layer spin box's arrow keys."""
        self._record(f"step_layer(up={up})")
        self._learner_input()
        spin = self.bring(HEADS_PANEL).layer
        spin.setFocus()
        QTest.keyClick(spin, Qt.Key.Key_Up if up else Qt.Key.Key_Down)

    def layer_shortcut(self, up: bool) -> None:
        """View › Next / Previous layer."""
        self._record(f"layer_shortcut(up={up})")
        self._learner_input()
        self._trigger("menu.next_layer" if up else "menu.previous_layer")

    def set_head(self, head: int) -> None:
        """One head enlarged: its tab, then the head's number."""
        self._record(f"set_head({head})")
        grid = self.bring(HEADS_PANEL)
        grid.tabs.setCurrentIndex(1)
        grid.head_spin.setValue(head)

    def head_grid_tab(self, index: int) -> None:
        self._record(f"head_grid_tab({index})")
        grid = self.bring(HEADS_PANEL)
        bar = grid.tabs.tabBar()
        QTest.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())

    # ------------------------------------------------------------------ docks, layout, language
    def open_tab(self, panel_id: str) -> None:
        self._record(f"open_tab({panel_id!r})")
        self.bring(panel_id)

    def close_dock(self, panel_id: str) -> None:
        """The dock's × (View menu entry unchecked)."""
        self._record(f"close_dock({panel_id!r})")
        dock = self.dock(panel_id)
        if not dock.isHidden():
            dock.toggleViewAction().trigger()

    def reset_layout(self) -> None:
        self._record("reset_layout()")
        self._trigger("menu.reset_layout")

    def set_language(self, code: str) -> None:
        self._record(f"set_language({code!r})")
        self.window.menus.language_actions[code].trigger()
        self.intent.language = code

    def resize(self, width: int, height: int) -> None:
        self._record(f"resize({width}, {height})")
        self.window.resize(width, height)

    def _trigger(self, key: str) -> None:
        for action in self.window.menus.actions:
            if action.property("i18n_key") == key:
                action.trigger()
                return
        raise LookupError(key)

    # ------------------------------------------------------------------ mask panel
    def set_mask_mode(self, mode: str) -> None:
        self._record(f"set_mask_mode({mode!r})")
        self._learner_input()
        choice = self.bring(MASK_PANEL).mode_choice
        # what picking it in the list does: the mode changes (if it differs), and the list says
        # the learner picked it (even the one already shown: Qt's ``activated``)
        index = choice.findData(mode)
        choice.setCurrentIndex(index)
        choice.activated.emit(index)
        self.intent.mask_mode = mode

    # ------------------------------------------------------------------ mask designer
    def designer_kind(self, kind: str) -> None:
        """Pick a mask in the designer's list."""
        self._record(f"designer_kind({kind!r})")
        self._learner_input()
        choice = self.bring(DESIGNER_PANEL).kind_choice
        index = choice.findData(kind)
        choice.setCurrentIndex(index)
        choice.activated.emit(index)

    def designer_size(self, size: int) -> None:
        """Type k (prefix-LM) or w (sliding window) in its box, when the mask chosen has one."""
        self._record(f"designer_size({size})")
        box = self.bring(DESIGNER_PANEL).size_box
        if not box.isVisible():
            return
        self._learner_input()
        box.setFocus()
        box.selectAll()
        QTest.keyClicks(box, str(size))
        QTest.keyClick(box, Qt.Key.Key_Return)

    def designer_separator(self, text: str) -> None:
        """Type the documents' separator and press Enter, when the documents mask is chosen."""
        self._record(f"designer_separator({text!r})")
        edit = self.bring(DESIGNER_PANEL).separator_edit
        if not edit.isVisible():
            return
        self._learner_input()
        edit.setFocus()
        edit.selectAll()
        QTest.keyClick(edit, Qt.Key.Key_Delete)
        type_keys(edit, text)
        QTest.keyClick(edit, Qt.Key.Key_Return)

    def designer_edit_as_custom(self) -> None:
        self._record("designer_edit_as_custom()")
        button = self.bring(DESIGNER_PANEL).to_custom
        if button.isVisible():
            self._learner_input()
            QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    def designer_click_cell(self, row: float, column: float) -> None:
        """Click a cell of the custom grid at fractions of its side (the grid's click handler:
        the cell a click lands on is the heat image's business, tested apart)."""
        self._record(f"designer_click_cell({row}, {column})")
        designer = self.bring(DESIGNER_PANEL)
        state = designer.state
        if state is None or designer.kind() != "custom":
            return
        self._learner_input()
        n = state.n_tokens
        designer._grid_click(None, (min(n - 1, int(row * n)), min(n - 1, int(column * n))))

    # ------------------------------------------------------------------ head knockout
    def knockout_head(self, layer: float, head: float) -> None:
        """Click a head of the knockout map (at fractions of its layers and heads): out, or back in."""
        self._record(f"knockout_head({layer}, {head})")
        panel = self.bring(KNOCKOUT_PANEL)
        state = panel.state
        if state is None:
            return
        self._learner_input()
        cfg = state.model.lens.config
        panel._map_click(None, (min(cfg.n_layer - 1, int(layer * cfg.n_layer)), min(cfg.n_head - 1, int(head * cfg.n_head))))

    def knockout_mode(self, mode: str) -> None:
        self._record(f"knockout_mode({mode!r})")
        self._learner_input()
        choice = self.bring(KNOCKOUT_PANEL).mode_choice
        choice.setCurrentIndex(choice.findData(mode))

    def knockout_clear(self) -> None:
        self._record("knockout_clear()")
        self._learner_input()
        QTest.mouseClick(self.bring(KNOCKOUT_PANEL).clear_button, Qt.MouseButton.LeftButton)

    def knockout_rank(self) -> None:
        self._record("knockout_rank()")
        button = self.bring(KNOCKOUT_PANEL).rank_button
        if button.isEnabled():
            QTest.mouseClick(button, Qt.MouseButton.LeftButton)

    def knockout_rank_then_cancel(self, turns: int) -> None:
        """Rank, let ``turns`` turns of the event loop pass, then Cancel (maybe after the end)."""
        self._record(f"knockout_rank_then_cancel({turns})")
        panel = self.bring(KNOCKOUT_PANEL)
        if not panel.rank_button.isEnabled():
            return
        QTest.mouseClick(panel.rank_button, Qt.MouseButton.LeftButton)
        for _ in range(turns):
            QTest.qWait(1)
        if panel.cancel_button.isEnabled():
            QTest.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)

    # ------------------------------------------------------------------ KV benchmark
    def _kv(self):
        panel = self.bring(KV_PANEL)
        panel.tabs.setCurrentWidget(panel.bench_tab)
        return panel

    def set_new_tokens(self, count: int) -> None:
        """Type a number in "New tokens" (the spin box keeps it within its range)."""
        self._record(f"set_new_tokens({count})")
        spin = self._kv().new_tokens
        if not spin.isEnabled():
            return
        spin.setFocus()
        spin.selectAll()
        QTest.keyClicks(spin, str(count))
        QTest.keyClick(spin, Qt.Key.Key_Return)
        self.intent.kv_new_tokens = spin.value()

    def kv_run(self) -> None:
        self._record("kv_run()")
        QTest.mouseClick(self._kv().run_button, Qt.MouseButton.LeftButton)

    def kv_run_then_cancel(self, turns: int) -> None:
        """Run, let ``turns`` turns of the event loop pass, then Cancel (maybe after the end)."""
        self._record(f"kv_run_then_cancel({turns})")
        panel = self._kv()
        QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        for _ in range(turns):
            QTest.qWait(1)
        QTest.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)

    def kv_restart(self) -> None:
        """Run, Cancel, Run again."""
        self._record("kv_restart()")
        panel = self._kv()
        QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)
        QTest.mouseClick(panel.cancel_button, Qt.MouseButton.LeftButton)
        QTest.qWait(1)
        QTest.mouseClick(panel.run_button, Qt.MouseButton.LeftButton)

    def kv_stability_tab(self) -> None:
        self._record("kv_stability_tab()")
        panel = self.bring(KV_PANEL)
        panel.tabs.setCurrentWidget(panel.stability_tab)

    # ------------------------------------------------------------------ generation, one token at a time
    def generate_press(self, button: str) -> None:
        """Next token, Back, Reset or Play/Pause in the Generate tab (Play keeps stepping at its pace
        while the learner does other things, until paused, reset or the context is full)."""
        self._record(f"generate_press({button!r})")
        panel = self.bring(GENERATE_PANEL)
        QTest.mouseClick(getattr(panel, f"{button}_button"), Qt.MouseButton.LeftButton)

    def generate_switch(self, what: str) -> None:
        """Tick or untick "without the mask, with a cache anyway" or "Sample": the generation starts again."""
        self._record(f"generate_switch({what!r})")
        panel = self.bring(GENERATE_PANEL)
        box = panel.stale if what == "stale" else panel.sample
        QTest.mouseClick(box, Qt.MouseButton.LeftButton, pos=QPoint(8, box.height() // 2))

    # ------------------------------------------------------------------ the tour
    def _tour(self):
        return self.window.tour

    def _inputs(self) -> dict:
        from attention_lab.core.inputs import describe_mask

        s = self.window.session
        mask = self.window.panels.get(MASK_PANEL)
        return dict(
            position=s.position, replacement_id=s.replacement_id, layer=s.layer, causal=s.causal,
            mask_mode=mask.selected_mode() if mask is not None else self.intent.mask_mode,
            mask=describe_mask(s.inputs.shown_mask), text=s.text,
        )

    def tour_open(self) -> None:
        """Help › Lab tour."""
        self._record("tour_open()")
        if self.intent.before_tour is None:
            self.intent.before_tour = self._inputs()
            self.intent.touched_during_tour = False
        self.window.tour.menu_action.trigger()
        self.tour_step_set_up = self.steps

    def tour_next(self) -> None:
        self._record("tour_next()")
        tour = self._tour()
        if tour.isVisible():
            QTest.mouseClick(tour.next_button, Qt.MouseButton.LeftButton)
            self.tour_step_set_up = self.steps
            self._tour_maybe_ended()

    def tour_predict(self, choice: str) -> None:
        """Answer the step's question (yes, no, not sure, or "Just show me"), when it asks one."""
        self._record(f"tour_predict({choice!r})")
        tour = self._tour()
        if tour.isVisible() and tour.predict_box.isVisible():
            QTest.mouseClick(tour.predict_box.buttons[choice], Qt.MouseButton.LeftButton)
            self.tour_step_set_up = self.steps

    def tour_back(self) -> None:
        self._record("tour_back()")
        tour = self._tour()
        if tour.isVisible() and tour.back_button.isEnabled():
            QTest.mouseClick(tour.back_button, Qt.MouseButton.LeftButton)
            self.tour_step_set_up = self.steps

    def tour_close(self) -> None:
        self._record("tour_close()")
        tour = self._tour()
        if tour.isVisible():
            QTest.mouseClick(tour.close_button, Qt.MouseButton.LeftButton)
        self._tour_maybe_ended()

    def tour_run_benchmark(self) -> None:
        self._record("tour_run_benchmark()")
        tour = self._tour()
        if tour.isVisible() and tour.run_button.isVisible() and tour.run_button.isEnabled():
            QTest.mouseClick(tour.run_button, Qt.MouseButton.LeftButton)

    def _tour_maybe_ended(self) -> None:
        if not self._tour().isVisible():
            self.tour_ended = (self.intent.before_tour, self.intent.touched_during_tour)
            self.intent.before_tour = None

    tour_ended: tuple | None = None  # (inputs before it, touched?) of the tour that just ended
    tour_step_set_up = -1  # the step count at which a tour action last set a step up (opened, moved, answered)

    # ------------------------------------------------------------------ files and models
    def export(self, kind: str, panel_id: str) -> None:
        """File › Export on ``panel_id`` (the path a learner would pick in the dialog)."""
        self._record(f"export({kind!r}, {panel_id!r})")
        self.bring(panel_id)
        self.exports += 1
        target = self.workdir / f"export-{self.exports % 8}.{kind}"
        on_worker = kind in ("csv", "png")
        if on_worker:  # written on the worker: gone until then, so the check sees the new file arrive
            target.unlink(missing_ok=True)
        written = self.window.export_current(kind, target, panel_id=panel_id)
        self.file_asked = written if on_worker else self.file_asked

    def load_model(self, name: str) -> None:
        """File › Open model folder (or Use the demo model)."""
        self._record(f"load_model({name!r})")
        self._learner_input()
        spec = self.models[name]
        if name == "demo":
            self._trigger("menu.use_demo")
        else:
            self.window.open_model_folder(spec)
        if name == "broken":
            self.intent.expected_error = spec
        else:
            self.intent.model_spec = spec

    def download(self, which: str) -> None:
        """File › Download a model…, with the repository id a learner types (the window's
        method: the id box is a QInputDialog); "stalled" is cancelled with the progress
        dialog's Cancel button once the transfer has begun."""
        self._record(f"download({which!r})")
        if which not in self.hubs:
            return
        import os

        self._learner_input()
        endpoint, repo = self.hubs[which]
        os.environ["HF_ENDPOINT"] = endpoint  # read by the download process when it starts
        self.window.download_model(repo)
        if which == "served":
            self.intent.model_spec = repo  # downloaded, then loaded by its id
        elif which == "missing":
            self.intent.expected_error = repo
        else:
            from PySide6.QtWidgets import QPushButton

            downloads = self.window.downloads
            deadline = time.monotonic() + self.settle_timeout_s
            while downloads.dialog is not None and downloads.bar.value() <= 0 and time.monotonic() < deadline:
                QTest.qWait(5)  # until the weights' first bytes arrive (then they stall)
            if downloads.dialog is not None:
                QTest.mouseClick(downloads.dialog.findChild(QPushButton), Qt.MouseButton.LeftButton)

    def quit_and_start_again(self) -> None:
        """File › Quit, then start the app again: the settings bring the text, the model,
        the language and the layout back; the panels start afresh."""
        self._record("quit_and_start_again()")
        if self.open_window is None:
            return
        from attention_lab.ui.launch import teardown

        self._trigger("menu.quit")
        teardown(self.app, self.window)
        self.window = self.open_window()
        self.window.setUpdatesEnabled(self.paint)
        self.restarts += 1
        self.intent.kv_new_tokens = Intent.kv_new_tokens
        self.intent.mask_mode = Intent.mask_mode
        self.intent.expected_error = ""
        if self.intent.before_tour is not None:  # the tour comes back open: not the learner's doing
            self.intent.touched_during_tour = True

    # ------------------------------------------------------------------ a known starting point
    def reset(self, start_model: str = "start") -> None:
        """Bring the window back to the start of a sequence: English, default layout, tour
        closed, the start model, the seed text and default inputs; then settle.

        What is already at its start is left alone (the layout, the size, the analysis of
        the seed text, the KV panel's count): a sequence that didn't touch them costs no
        relayout and no new analysis, and the fuzzer runs hundreds of sequences."""
        w = self.window
        self.dismiss_error()
        if self._tour().isVisible():
            self._tour().close()
        # where the tour opens is in the settings: a sequence must not inherit the last one's
        # (the same steps would do something else, and a shrunk failure would not replay)
        self._tour().rewind()
        self.intent = Intent(model_spec=self.models[start_model], kv_new_tokens=self.kv_start_tokens)
        self.tour_ended = None
        self.settle()
        if w.menus.language_actions["en"].isChecked() is False:
            w.menus.language_actions["en"].trigger()
        if w.session.model is None or w.session.model.spec != self.models[start_model]:
            w.open_model_folder(self.models[start_model])
            self.settle()
        kv = w.panels.get(KV_PANEL)
        if kv is not None:
            kv.cancel_benchmark()
        elif self.kv_start_tokens != Intent.kv_new_tokens or self.kv_start_repetitions is not None:
            kv = w.panel(KV_PANEL)  # built now: built later, it would start from its own defaults
        if kv is not None and self.kv_start_repetitions is not None:
            kv.repetitions.setValue(self.kv_start_repetitions)
        w.session.set_mask_mode(self.intent.mask_mode)  # (the Mask panel shows the session's)
        # not brought forward (a raise and an event turn): the start layout below shows it
        tokens = w.panel(TOKENS_PANEL)
        if not self._at_seed_analysis():
            tokens.set_bos(False)
            w.session.set_bos(False)
            w.session.set_layer(0)
            w.session.set_mask(None)
            w.session.set_causal(True)
            w.session.set_knockout(())
            w.session.set_position(None)
            tokens.editor.setPlainText(SEED_TEXT)
            # the seed text's analysis from an earlier reset, when it is this model's and these
            # inputs' (the session compares the request): the panels redraw it without the
            # worker computing it again; anything else goes to the worker as usual
            seed = self._seed_analysis
            w.session.analyse_now(prefetched=seed if seed is not None and seed[1].model is w.session.model else None)
            self.settle()
        if self._at_seed_analysis():
            # the session's own request for the inputs now (the driver is a test's helper)
            self._seed_analysis = (w.session._request(0), w.last_state)
        # the layout after the text: the panels it brings into sight then draw the seed
        # text's analysis once (before it, they drew the last sequence's first, then this)
        self._reset_layout()
        self.settle()
        if self._start_layout is None:
            self._start_layout = bytes(w.saveState(SETTINGS_VERSION))
        if kv is not None and kv.new_tokens.value() != self.intent.kv_new_tokens:
            # the box's range follows the text the panel shows: out of sight, it still has the
            # last sequence's (a full context: 1); drawn with the seed text first, it takes the
            # value (bringing its tab forward instead cost a relayout and a Reset layout)
            if KV_PANEL in w.panels_waiting:
                w.redraw.catch_up(KV_PANEL)
            kv.new_tokens.setValue(self.intent.kv_new_tokens)
            self.settle()

    #: the window's saveState() at the start of the first sequence (after a Reset layout, at
    #: the first of ``sizes``); each later reset compares the window with it and restores it only if it differs
    _start_layout: bytes | None = None
    #: (request, state) of the seed text's analysis at a reset: given back to the session as a
    #: prefetched analysis while the model is the same object
    _seed_analysis: tuple | None = None

    def _reset_layout(self) -> None:
        """The start layout at the start size (``sizes[0]``), restored only when the sequence changed it: one
        restoreState of the saved bytes (at the right size already: a Reset layout fits the
        window to the screen first, then a resize laid everything out a second time); the
        full Reset layout only the first time, or if the restored bytes still differ."""
        w = self.window
        if (w.width(), w.height()) != self.sizes[0]:
            w.resize(*self.sizes[0])
        start = self._start_layout
        if start is not None:
            if bytes(w.saveState(SETTINGS_VERSION)) == start:
                return
            w.dock_layout.reset(start, SETTINGS_VERSION)
            w.dock_layout.hide_stale_tab_bars()
            if bytes(w.saveState(SETTINGS_VERSION)) == start:
                return
        w.reset_layout()
        w.resize(*self.sizes[0])
        self._start_layout = None  # saved by reset() once the window has settled

    def _at_seed_analysis(self) -> bool:
        """The window shows the seed text's analysis with every input at its default."""
        w, session = self.window, self.window.session
        state = w.last_state
        tokens = w.panels.get(TOKENS_PANEL)
        return (
            state is not None and tokens is not None and not self.pending()
            and tokens.text() == SEED_TEXT and session.text == SEED_TEXT and state.text == SEED_TEXT
            and state.model is session.model and not session.bos and not tokens.bos.isChecked()
            and session.layer == 0 and state.layer == 0 and session.causal and state.causal
            and session.position is None and session.replacement_id is None
            and session.mask is None and not session.knockout
            and not state.extras.get("bos") and state.extras.get("follow_last", False)
        )


def resize_choices(sizes: tuple[tuple[int, int], ...]) -> dict[str, tuple]:
    """The resize action's choices for a learner resizing to ``sizes`` (as many as ``SIZES``: a
    seeded run draws the same actions whichever sizes it uses)."""
    return {"width": tuple(s[0] for s in sizes), "height": tuple(s[1] for s in sizes)}


#: (action, {argument: choices}) for every learner action; choices are sequences (the test
#: draws with ``sampled_from``, the soak with ``random.choice``)
ACTIONS: dict[str, dict[str, tuple]] = {
    "paste_text": {"name": tuple(TEXTS)},
    "type_text": {"typed": TYPED},
    "backspace": {"count": (1, 3, 12)},
    "clear_text": {},
    "toggle_bos": {},
    "click_chip": {"fraction": (0.0, 0.25, 0.5, 0.8, 0.99)},
    "type_replacement": {"word": WORDS},
    "pick_guess": {"index": (0, 1, 2, 5)},
    "write_into_text": {},
    "set_causal": {"causal": (True, False)},
    "step_layer": {"up": (True, False)},
    "layer_shortcut": {"up": (True, False)},
    "set_head": {"head": (0, 3, 11)},
    "head_grid_tab": {"index": (0, 1, 2)},
    "open_tab": {"panel_id": PANEL_IDS},
    "close_dock": {"panel_id": PANEL_IDS},
    "reset_layout": {},
    "set_language": {"code": LANGUAGE_CODES},
    "resize": resize_choices(SIZES),
    "set_mask_mode": {"mode": MASK_MODES},
    "set_new_tokens": {"count": (1, 5, 20, 300)},
    "designer_kind": {"kind": MASK_KINDS},
    "designer_size": {"size": (1, 3, 8)},
    "designer_separator": {"text": SEPARATORS},
    "designer_edit_as_custom": {},
    "designer_click_cell": {"row": FRACTIONS, "column": FRACTIONS},
    "knockout_head": {"layer": FRACTIONS, "head": FRACTIONS},
    "knockout_mode": {"mode": ("zero", "mean")},
    "knockout_clear": {},
    "knockout_rank": {},
    "knockout_rank_then_cancel": {"turns": (0, 2, 10)},
    "kv_run": {},
    "kv_run_then_cancel": {"turns": (0, 2, 10)},
    "kv_restart": {},
    "kv_stability_tab": {},
    "generate_press": {"button": GENERATE_BUTTONS},
    "generate_switch": {"what": GENERATE_SWITCHES},
    "tour_open": {},
    "tour_next": {},
    "tour_predict": {"choice": ("yes", "no", "unsure", "skip")},
    "tour_back": {},
    "tour_close": {},
    "tour_run_benchmark": {},
    "export": {"kind": EXPORT_KINDS, "panel_id": PANEL_IDS},
    "load_model": {"name": ("start", "demo", "other", "broken")},
    "download": {"which": DOWNLOADS},
    "quit_and_start_again": {},
}


def act(driver: LearnerDriver, action: str, **arguments) -> None:
    """Perform ``action`` (a key of ACTIONS) and let the window settle."""
    getattr(driver, action)(**arguments)
    driver.settle()
