"""What must hold after every learner action, once the window has settled.

:class:`FaultTrap` records what must never happen at all: an exception escaping on any
thread (``sys.excepthook``, ``threading.excepthook``) and any Qt warning (wrong-thread
access, "Cannot queue arguments", a deleted object touched...).  :func:`window_problems`
reads the settled window and lists where it disagrees with the learner's inputs: a panel
in sight showing an older analysis, controls that don't follow the text, a busy worker,
the wrong model, a tour that kept its own settings.  Shared by the stateful test and the
soak; it reads the window's internals in one place so a restructured UI changes only this
module and :mod:`attention_lab.devtools.learner_driver`.
"""

from __future__ import annotations

import sys
import threading
import traceback

from PySide6.QtCore import QtMsgType, qInstallMessageHandler

from attention_lab.ui.i18n import tr

#: Qt messages that say nothing about the app (offscreen platform chatter)
HARMLESS_QT = (
    "This plugin does not support",  # offscreen: propagateSizeHints, raise(), grabbing the keyboard
    "QFont::setPointSize",
    "Populating font family aliases",
)


class FaultTrap:
    """Collects uncaught exceptions (every thread) and Qt warnings while installed."""

    def __init__(self) -> None:
        self.faults: list[str] = []
        self._previous: tuple | None = None

    def install(self) -> "FaultTrap":
        def excepthook(exc_type, exc, tb):
            self.faults.append("exception: " + "".join(traceback.format_exception(exc_type, exc, tb)))

        def thread_hook(args):
            self.faults.append(
                f"exception in thread {getattr(args.thread, 'name', '?')}: "
                + "".join(traceback.format_exception(args.exc_type, args.exc_value, args.exc_traceback))
            )

        def qt_handler(kind, _context, message):
            if kind == QtMsgType.QtFatalMsg:  # Qt aborts right after: say why first
                sys.stderr.write(f"Qt fatal: {message}\n")
            if kind == QtMsgType.QtDebugMsg or kind == QtMsgType.QtInfoMsg:
                return
            if any(message.startswith(h) for h in HARMLESS_QT):
                return
            self.faults.append(f"Qt {kind.name}: {message}")

        self._previous = (sys.excepthook, threading.excepthook)
        sys.excepthook, threading.excepthook = excepthook, thread_hook
        self._previous_qt = qInstallMessageHandler(qt_handler)
        return self

    def uninstall(self) -> None:
        if self._previous is not None:
            sys.excepthook, threading.excepthook = self._previous
            qInstallMessageHandler(self._previous_qt)
            self._previous = None

    def take(self) -> list[str]:
        faults, self.faults = self.faults, []
        return faults

    def __enter__(self) -> "FaultTrap":
        return self.install()

    def __exit__(self, *exc) -> None:
        self.uninstall()


def shown_state(panel):
    """The AnalysisState a panel draws (``Panel.state``, one name in every panel)."""
    return panel.state


def _error_dialog_message(window) -> str | None:
    """The open error dialog's message (None: no dialog open)."""
    from attention_lab.ui.errors import ErrorDialog

    dialog = window.findChild(ErrorDialog, "error_dialog")
    return dialog.message.text() if dialog is not None and dialog.isVisible() else None


def window_problems(driver) -> list[str]:
    """Every way the settled window disagrees with the learner's inputs (empty: all is well)."""
    w, s, intent = driver.window, driver.window.session, driver.intent
    problems: list[str] = []
    busy = driver.pending()
    if busy:
        problems.append(f"still busy after settling: {busy}")
    if w.worker.busy:
        problems.append("the worker is not idle although nothing is pending")
    asked = driver.file_asked
    if asked is not None and not asked.is_file():
        problems.append(f"the export to {asked.name} was never written")
    message = _error_dialog_message(w)
    if message is not None and not (intent.expected_error and intent.expected_error in message):
        problems.append("an error dialog is open: " + message)

    # the model: a failed load keeps the previous one working
    if s.model is None or s.model.spec != intent.model_spec:
        problems.append(f"model {getattr(s.model, 'spec', None)!r}, expected {intent.model_spec!r}")

    # the text field, the session and the analysis on display agree
    tokens = w.built_panel("panel.token_editor")
    if tokens is not None and tokens.text() != s.text:
        problems.append(f"text field {tokens.text()!r:.60} but the session has {s.text!r:.60}")
    state = w.last_state
    has_tokens = s.model is not None and bool(s.model.tokenizer.encode(s.text)) if s.text else False
    if state is not None and has_tokens:
        n = state.n_tokens
        expected = dict(
            text=s.text, layer=s.layer, causal=s.causal, bos=s.bos, model=s.model,
            position=n - 1 if s.position is None else min(s.position, n - 1),
        )
        shown = dict(
            text=state.text, layer=state.layer, causal=state.causal, bos=bool(state.extras.get("bos")),
            model=state.model, position=state.position,
        )
        for key, value in expected.items():
            if shown[key] is not value and shown[key] != value:
                problems.append(f"the analysis shown has {key}={_short(shown[key])}, the inputs {key}={_short(value)}")
        if s.replacement_id is not None and state.replacement_id != s.replacement_id and state.ids[state.position] != s.replacement_id:
            problems.append(f"replacement {state.replacement_id} shown, {s.replacement_id} asked")
        problems += _panels_show(w, state)
        problems += _controls_follow(w, state, intent)
    elif s.model is not None and not has_tokens:
        if tokens is not None and tokens.message.isHidden():  # (hidden with its dock is fine)
            problems.append("a text without tokens, and no notice says so")
    problems += _one_mask(w)
    problems += _tour_left_things_as_they_were(driver)
    problems += _tour_step_in_sight(driver)
    problems += _no_answer_in_sight(w)
    return problems


#: how a mask's spec is spelt (core.masks); a learner reads the mask in words, never this way
_SPEC_SPELLINGS = ("window:", "prefix:", "documents:")


def _one_mask(w) -> list[str]:
    """Every control that shows the mask shows the same mask, the session's, in words."""
    from attention_lab.core.inputs import describe_mask, same_mask
    from attention_lab.ui.mask_words import mask_in_words

    shown = w.session.inputs.shown_mask
    problems = []
    grid = w.built_panel("panel.head_grid")
    if grid is not None:
        if grid.bidirectional.isChecked() != (shown.kind == "bidirectional"):
            problems.append(f"the head grid's mode says {'no mask' if grid.bidirectional.isChecked() else 'with the mask'},"
                            f" the mask is {describe_mask(shown)}")
        on = w.session.inputs.mask_when_on
        # (its words in the language it follows: one out of sight is re-worded when it is shown)
        if on.kind != "causal" and "panel.head_grid" not in w.redraw.untranslated \
                and mask_in_words(on) not in grid.causal.text():
            problems.append(f"the head grid's 'with the mask' says {grid.causal.text()!r}, the mask is {describe_mask(on)}")
    designer = w.built_panel("panel.mask_designer")
    # (a choice the designer could not send -- a separator that is not one token -- is said beside it)
    if designer is not None and designer.kind() != shown.kind and not designer._error:
        problems.append(f"the mask designer shows {designer.kind()}, the mask is {describe_mask(shown)}")
    elif designer is not None and shown.kind != "custom" and designer.spec() is not None \
            and not designer._error and not same_mask(designer.spec(), shown):  # (a separator that is not one token: said, not sent)
        problems.append(f"the mask designer shows {describe_mask(designer.spec())}, the mask is {describe_mask(shown)}")
    texts = {"the head grid's mode": grid.causal.text() if grid is not None else "",
             "the status bar": w.status.mode.text()}
    leakage = w.built_panel("panel.leakage")
    if leakage is not None:
        texts["the leakage summary"] = leakage.summary.text()
    if w.tour.isVisible():
        texts["the tour"] = w.tour.fact_label.text() + w.tour.text.text()
    for where, text in texts.items():
        if any(spelling in text for spelling in _SPEC_SPELLINGS):
            problems.append(f"{where} names the mask by its spec: {text!r:.80}")
    return problems


def _short(value) -> str:
    text = repr(getattr(value, "spec", value))
    return text if len(text) < 60 else text[:57] + "..."


def _panels_show(w, state) -> list[str]:
    """Every built panel in sight draws the current analysis, never an older one."""
    problems = []
    waiting = w.panels_waiting
    for pid, panel in w.panels.items():
        if pid in waiting:
            continue  # out of sight: drawn when its dock is shown
        if shown_state(panel) is not state:
            problems.append(f"{pid} (in sight) shows request {getattr(shown_state(panel), 'request_id', None)}, not {state.request_id}")
        elif not panel.isEnabled():
            problems.append(f"{pid} is greyed out although it shows the current text")
    return problems


def _controls_follow(w, state, intent) -> list[str]:
    """The controls a learner reads say the same as the analysis."""
    problems = []
    n = state.n_tokens
    tokens = w.built_panel("panel.token_editor")
    if tokens is not None and tokens.state is state:
        if tokens.chips.tokens != state.tokens:
            problems.append("the chips are not the tokens of the text")
        if tokens.count.text() != tr("token_editor.count", n=n):
            problems.append(f"token count says {tokens.count.text()!r}, {n} tokens")
    grid = w.built_panel("panel.head_grid")
    if grid is not None and grid.state is state:
        if grid.layer.value() != state.layer:
            problems.append(f"the layer box says {grid.layer.value()}, layer {state.layer} shown")
        if grid.causal.isChecked() != (state.causal and state.extras.get("mask_spec") != "bidirectional"):
            problems.append("the causal switch disagrees with the maps shown")
    leakage = w.built_panel("panel.leakage")
    if leakage is not None and leakage.state is state and leakage.position.value() != state.position:
        problems.append(f"the leakage position box says {leakage.position.value()}, position {state.position} shown")
    kv = w.built_panel("panel.kvbench")
    if kv is not None and shown_state(kv) is state and not kv.running:
        room = state.model.lens.config.n_positions - n
        if kv.new_tokens.maximum() != max(1, room):
            problems.append(f"KV 'New tokens' allows up to {kv.new_tokens.maximum()} with room for {room}")
        wanted = min(intent.kv_new_tokens, max(1, room))
        if kv.new_tokens.value() != wanted:
            problems.append(f"KV 'New tokens' is {kv.new_tokens.value()}, the learner's {intent.kv_new_tokens} fits as {wanted}")
        # its words in the language it follows: one out of sight follows a switch when it is shown
        # (redraw.language_later), so until then it says "fills the context" in the previous one
        if "panel.kvbench" not in w.redraw.untranslated:
            full = tr("kvbench.no_room", ctx=state.model.lens.config.n_positions)
            if room > 0 and kv.message.text() == full:
                problems.append(f"KV says the text fills the context with room for {room} tokens")
            if room <= 0 and kv.message.text() != full:
                problems.append("the text fills the context and the KV panel doesn't say so")
    if kv is not None and kv.running and kv.result() is not None:
        problems.append("the KV panel keeps the previous run's result beside a new run")
    knockout = w.built_panel("panel.knockout")
    if knockout is not None and knockout.state is state and "panel.knockout" not in w.redraw.untranslated:
        # the ranking's caption belongs to the ranking shown, in the language shown
        captioned = knockout.top_label.text().startswith(tr("knockout.map.key"))
        if captioned != (knockout.ranking() is not None):
            problems.append(f"the knockout caption {knockout.top_label.text()!r:.60} with "
                            f"{'a' if knockout.ranking() is not None else 'no'} ranking shown")
    mask = w.built_panel("panel.mask")
    if mask is not None and not w.tour.isVisible() and mask.selected_mode() != intent.mask_mode:
        problems.append(f"mask mode {mask.selected_mode()!r}, the learner chose {intent.mask_mode!r}")
    return problems


#: the tour steps' promise holds from a laptop's 1366×768 window up
TOUR_SIGHT_SIZE = (1366, 768)


def _tour_step_in_sight(driver) -> list[str]:
    """A tour step just set up shows what it talks about, and its own words and buttons fit the dock
    (in its place beside the tokens, in a window of at least 1366×768)."""
    from PySide6.QtCore import Qt

    w = driver.window
    tour = w.tour
    # only right after a tour action set the step up: any other action may move what it showed
    if driver.tour_step_set_up != driver.steps or not tour.isVisible() or tour.isFloating():
        return []
    if w.dockWidgetArea(tour) != Qt.DockWidgetArea.TopDockWidgetArea or w.width() < TOUR_SIGHT_SIZE[0] \
            or w.height() < TOUR_SIGHT_SIZE[1] or not (tour.asking or tour.settled()):
        return []
    return [f"tour step {tour.step.key}: out of sight: {part}" for part in tour.out_of_sight()]


def _no_answer_in_sight(w) -> list[str]:
    """While the tour asks its question in sight, the panel that would answer it is covered whole, and
    no panel is covered otherwise."""
    from PySide6.QtWidgets import QDockWidget

    tour = w.tour
    shown = tour.veils.shown()
    if not (tour.asking and tour.isVisible()):
        return [f"a panel is still hidden for a question ({tour.step.key}) no longer asked"] if shown else []
    dock = w.findChild(QDockWidget, tour.step.panel)
    if dock is None or not dock.isVisible():
        return []
    host = dock.widget()
    if not any(v.host is host and v.geometry() == host.geometry() for v in shown):
        return [f"tour step {tour.step.key} asks, and {tour.step.panel} shows its answer uncovered"]
    return []


def _tour_left_things_as_they_were(driver) -> list[str]:
    """A tour that ended gives the learner's own inputs back (unless they changed them during it)."""
    ended, driver.tour_ended = driver.tour_ended, None
    if ended is None:
        return []
    before, touched = ended
    if touched or before is None:
        return []
    after = driver._inputs()
    return [
        f"after the tour {key} is {_short(after[key])}, before it {_short(value)}"
        for key, value in before.items()
        if after[key] != value
    ]
