"""The guided "Lab tour": a dock that walks the chapter's five lab steps (plus three prose points).

Each step brings the right panel forward and sets the app up for it through public API
(the session's setters, the panels' own methods), says in a few sentences what to look at,
and states the step's fact measured on the current model and text (computed by
:func:`attention_lab.core.tour.compute_fact` on the inference worker, never canned).
Step 5 offers a "Run the benchmark" button: the benchmark only ever starts when asked.

Progress lives in the window's QSettings (``tour/step``, ``tour/index``, ``tour/finished``)
so the tour resumes where the learner left it; on the very first start a small non-modal
offer sits in the status bar (``tour/offered`` remembers it was made).  Help › Lab tour
(Ctrl+T; F1 is already "key ideas") opens it any time.

:func:`attention_lab.ui.tour_install.install_tour` puts it into the main window; what it
keeps in the settings is ``tour_saved``'s, its fact's words ``tour_fact_text``'s, the room it takes
in the top strip ``tour_room``'s.
"""

from __future__ import annotations

import dataclasses
import html
import logging
from typing import Any, Callable

from PySide6.QtCore import QEvent, QSettings, Qt, Signal, Slot
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (
    QBoxLayout,
    QDockWidget,
    QFrame,
    QHBoxLayout,
    QLabel,
    QMainWindow,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSizePolicy,
    QVBoxLayout,
    QWidget,
)

from attention_lab.core.inputs import same_mask
from attention_lab.core.job_protocol import TOUR_FACT, text_key
from attention_lab.core.masks import parse_mask_spec
from attention_lab.core.predictions import CHOICES, NO, YES, measured_answer, question_for, tally
from attention_lab.core.kvbench import growth_sentence
from attention_lab.core.roles import ROLES, where_sentence
from attention_lab.core.tour import CHAPTER, TOUR_WINDOW, Fact, TourContext, TourStep, repeated_words_text
from attention_lab.ui.i18n import tr, translator
from attention_lab.ui.in_view import KeepInSight, Target, bring_into_view, fully_in_sight, in_sight
from attention_lab.ui.model_label import model_label, model_label_later
from attention_lab.ui.prediction_box import SKIP, PredictionBox, verdict_html
from attention_lab.ui.qt_compat import call_after_posted_work, call_later
from attention_lab.ui.strings import tour as _texts  # noqa: F401 -- registers the texts
from attention_lab.ui.answer_veil import Veils
from attention_lab.ui.tour_fact_text import format_fact
from attention_lab.ui.tour_room import give_room_back
from attention_lab.ui.tour_saved import (
    MEASURED_GROUP,
    PREDICTIONS_GROUP,
    load_answers,
    load_progress,
    save_answer,
    save_progress,
)
from attention_lab.ui.tour_targets import step_target
from attention_lab.ui.panels.panel_kit import MORE, ExplanationLabel, monospace_font
from attention_lab.ui.panels.head_grid import ONE_MODE, SIDE_BY_SIDE
from attention_lab.ui.panels.ids import PanelId

log = logging.getLogger(__name__)

DOCK_NAME = "dock.tour"
SIDE_BY_SIDE_WIDTH = 560  # wider than this, the explanation and the fact sit side by side
PAINT_WAIT_MS = 100  # a step's set-up waits this long at most for its words' paint (none comes if nothing changed)
SET_UP_POLL_MS = 50  # how often a step not yet set up looks again (the head it opened drawn, its fact asked)
REVEAL_TRIES, REVEAL_RETRY_MS = 60, 30  # a target still out of sight is looked at again for up to ~2 s: a panel
# just brought forward on a busy laptop can take more than the 0.3 s of ten tries to lay itself out


# ---------------------------------------------------------------------------- the dock
class _MaskCells:
    """A mask as the tour compares it: the same choice, a custom grid's cells included."""

    def __init__(self, spec) -> None:
        self.spec = spec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _MaskCells) and same_mask(self.spec, other.spec)

    def __repr__(self) -> str:
        return f"_MaskCells({self.spec})"


class TourDock(QDockWidget):
    """The tour's dock: step title, what to look at, the measured fact, Back / Next / Close."""

    # the step's key, once what it set up is on screen: its fact measured on the state shown, no
    # analysis on its way, the head it opens open on its layer (screenshots wait for it)
    step_settled = Signal(str)

    def __init__(self, window: QMainWindow):
        super().__init__(tr("tour.title"), window)
        self.setObjectName(DOCK_NAME)
        self.window_ = window
        self.settings: QSettings = window.settings
        self.progress = load_progress(self.settings)
        # step -> the learner's choice (yes, no, unsure, skip), and step -> what its fact measured
        self.predictions = load_answers(self.settings, PREDICTIONS_GROUP, (*CHOICES, SKIP))
        self.measured = load_answers(self.settings, MEASURED_GROUP, (YES, NO))
        self.fact: Fact | None = None
        self.fact_error: str | None = None
        self.fact_model = ""  # (said in the language of each showing: see the property)
        self._fact_key: tuple | None = None  # what the shown (or pending) fact was measured on
        self._pending_key: tuple | None = None
        self._pending_model: Callable[[], str] = str  # the model the pending fact is measured on, named
        self._open_head_once = False
        self._entry_pending = False  # opened, the step's set-up still to come (open_tour)
        self._entry_serial = 0  # which opening or step the waiting set-up belongs to
        self._opened_head: tuple[int, int] | None = None  # (layer, head) the step opened in the head grid
        # what the step points at is still to be brought into view (once per step entered, once set up)
        self._target_pending = False
        self._reveal_tries = 0  # looks again at a target still being laid out when first brought into view
        self._keeper = KeepInSight(self, self.target)  # a settled step's target, kept in sight when a late layout moves it
        self._looking_again = False  # a look at the step's set-up is due (see _emit_if_settled)
        self._kv_result: tuple[tuple, Any] | None = None  # (text key of the run, KVResult)
        self.menu_action: QAction | None = None
        self.top_height_before: int | None = None  # the top strip's height before the tour widened it
        self.offer: QWidget | None = None  # the first start's offer in the status bar (tour_install)
        # the learner's own inputs when the tour began, and what the tour's steps set them
        # to: its end gives back each one the learner has not changed since
        self._before: dict | None = None
        self._set_by_tour: dict = {}
        self._setting_up = False  # a step is setting the inputs up (its choices are not the learner's)
        self.setFeatures(
            QDockWidget.DockWidgetFeature.DockWidgetMovable
            | QDockWidget.DockWidgetFeature.DockWidgetClosable
            | QDockWidget.DockWidgetFeature.DockWidgetFloatable
        )

        body = QWidget(self)
        body.setObjectName("tour.body")
        self.counter = QLabel(body)
        self.counter.setObjectName("tour.counter")
        self.counter.setStyleSheet("color: #666")
        self.title = QLabel(body)
        self.title.installEventFilter(self)  # its paint lets a step's set-up begin (_enter_step_after_paint)
        self.title.setObjectName("tour.step_title")
        self.title.setWordWrap(True)
        font = self.title.font()
        font.setPointSizeF(font.pointSizeF() * 1.25)
        font.setBold(True)
        self.title.setFont(font)
        self.text = ExplanationLabel(body)  # a long step's rest behind "More…"
        self.text.setObjectName("tour.text")
        self.text.setWordWrap(True)
        self.text.setTextFormat(Qt.TextFormat.RichText)
        self.fact_frame = QFrame(body)
        self.fact_frame.setObjectName("tour.fact_frame")
        self.fact_frame.setFrameShape(QFrame.Shape.StyledPanel)
        self.fact_frame.setStyleSheet("#tour\\.fact_frame { background: #f3f7fb; border: 1px solid #c9d8e8; border-radius: 4px; }")
        self.fact_caption = QLabel(self.fact_frame)
        self.fact_caption.setObjectName("tour.fact_caption")
        self.fact_caption.setStyleSheet("color: #2b5c8a; font-weight: bold")
        # the model's name is HTML-escaped into it: without tags Qt would guess plain text
        # and show "GPT-2&#x27;s" literally
        self.fact_caption.setTextFormat(Qt.TextFormat.RichText)
        # wrapped: unwrapped, a long model name set the column's minimum width, squeezed the
        # step's text into a strip ~80 px wide and still ran past the dock (1366×768, measured)
        self.fact_caption.setWordWrap(True)
        self.fact_label = ExplanationLabel(self.fact_frame)  # the fact's first sentence, the rest behind "More…"
        self.fact_label.setObjectName("tour.fact")
        self.fact_label.setWordWrap(True)
        self.fact_label.setTextFormat(Qt.TextFormat.RichText)
        self.fact_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.block = QPlainTextEdit(body)  # the lab's print: measured text, shown as printed
        self.block.setObjectName("tour.print")
        self.block.setReadOnly(True)
        self.block.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        mono = monospace_font()
        mono.setPointSizeF(max(7.0, mono.pointSizeF() * 0.8))
        self.block.setFont(mono)
        self.block.setFrameShape(QFrame.Shape.NoFrame)
        self.block.setStyleSheet("background: transparent")
        self.block.document().setDocumentMargin(2)  # the lab's print and the step's words fit the dock at 1366×768
        self.block.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        self.block.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        fact_layout = QVBoxLayout(self.fact_frame)
        fact_layout.setContentsMargins(8, 6, 8, 8)
        fact_layout.addWidget(self.fact_caption)
        # whether the learner's prediction held (and, on the last step, how many did)
        self.verdict_label = QLabel(self.fact_frame)
        self.verdict_label.setObjectName("tour.verdict")
        self.verdict_label.setWordWrap(True)
        self.verdict_label.setTextFormat(Qt.TextFormat.RichText)
        self.verdict_label.setStyleSheet("color: #7a5a00; font-weight: bold")
        self.verdict_label.hide()
        fact_layout.addWidget(self.verdict_label)
        fact_layout.addWidget(self.fact_label)
        # step 4: open the nearest head of a role the layer shown lacks (core.roles.where)
        self.show_head_button = QPushButton(self.fact_frame)
        self.show_head_button.setObjectName("tour.show_head")
        self.show_head_button.clicked.connect(self.show_role_head)
        self.show_head_button.hide()
        self._role_target: tuple[str, int, int] | None = None
        fact_layout.addWidget(self.show_head_button, 0, Qt.AlignmentFlag.AlignLeft)
        self.run_button = QPushButton(body)
        self.run_button.setObjectName("tour.run_benchmark")
        self.run_button.clicked.connect(self.run_benchmark)

        explain = QVBoxLayout()
        explain.setContentsMargins(0, 0, 0, 0)
        explain.setSpacing(4)
        # a measured step's question, asked before its set-up shows the answer
        self.veils = Veils()
        self.predict_box = PredictionBox(body)
        self.predict_box.chosen.connect(self.predict)
        self.predict_box.hide()
        explain.addWidget(self.predict_box)
        explain.addWidget(self.text)
        explain.addWidget(self.block)
        explain.addWidget(self.run_button, 0, Qt.AlignmentFlag.AlignLeft)
        explain.addStretch(1)
        measured = QVBoxLayout()
        measured.setContentsMargins(0, 0, 0, 0)
        measured.addWidget(self.fact_frame)
        measured.addStretch(1)
        # side by side when the dock is wide (its default place, beside the tokens), stacked when narrow
        self.columns = QBoxLayout(QBoxLayout.Direction.TopToBottom)
        self.columns.setSpacing(12)
        self.columns.addLayout(explain, 1)
        self.columns.addLayout(measured, 1)
        column = QVBoxLayout()
        header = QHBoxLayout()  # one line: the tour has to share the top strip with the tokens
        header.addWidget(self.title, 1)
        header.addWidget(self.counter, 0, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        column.setContentsMargins(0, 0, 4, 0)
        column.setSpacing(4)
        column.addLayout(header)
        column.addLayout(self.columns, 1)
        inner = QWidget(body)
        inner.setLayout(column)
        scroll = QScrollArea(body)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        scroll.setWidget(inner)

        self.back_button = QPushButton(body)
        self.back_button.setObjectName("tour.back")
        self.back_button.clicked.connect(self.back)
        self.next_button = QPushButton(body)
        self.next_button.setObjectName("tour.next")
        self.next_button.setDefault(True)
        self.next_button.clicked.connect(self.next)
        self.close_button = QPushButton(body)
        self.close_button.setObjectName("tour.close")
        self.close_button.clicked.connect(self.close_tour)
        buttons = QHBoxLayout()
        buttons.addWidget(self.back_button)
        buttons.addWidget(self.next_button)
        buttons.addStretch(1)
        buttons.addWidget(self.close_button)
        layout = QVBoxLayout(body)
        layout.setContentsMargins(8, 2, 8, 6)
        layout.setSpacing(4)
        layout.addWidget(scroll, 1)
        layout.addLayout(buttons)
        body.setMinimumWidth(300)
        body.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Expanding)
        self.setWidget(body)

        window.state_shown.connect(self._on_state)  # after the panels: the fact matches what they show
        self.visibilityChanged.connect(self._on_visibility)
        translator.language_changed.connect(self._on_language)
        session = window.session  # the facts are its jobs; its KV runs say what text they ran on
        session.fact_ready.connect(self._on_fact)
        session.mask_mode_picked.connect(self._learner_picked_mode)
        session.job_failed.connect(self._on_fact_error)
        session.kv_bench_step.connect(self._on_bench_step)
        session.kv_bench_finished.connect(self._on_bench_finished)
        session.kv_bench_cancelled.connect(self._on_bench_cancelled)
        self.retranslate()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        wide = self.width() >= SIDE_BY_SIDE_WIDTH
        direction = QBoxLayout.Direction.LeftToRight if wide else QBoxLayout.Direction.TopToBottom
        if self.columns.direction() != direction:
            self.columns.setDirection(direction)

    def closeEvent(self, event) -> None:  # noqa: N802 -- the title bar's ×, Close, and Finish
        self._entry_pending = False  # a step not yet set up is not set up at all
        self._save()
        super().closeEvent(event)
        give_room_back(self.window_, self)
        self._give_back_inputs()
        self.veils.cover_only(None)

    # ------------------------------------------------------------------ the learner's own inputs
    def _inputs(self) -> dict:
        """The inputs a step may change, from the session's value: the leakage edit, layer, mode,
        the Mask panel's mode, the text and the designer's mask."""
        now = self.window_.session.inputs
        return {"edit": (now.position, now.replacement_id), "layer": now.layer, "causal": now.causal,
                "mask_mode": now.mask_mode, "text": now.text, "bos": now.bos, "designer": _MaskCells(now.mask)}

    def _note_set_by_tour(self, keys) -> None:
        """Remember what the tour has just set these inputs to."""
        now = self._inputs()
        for key in keys:
            self._set_by_tour[key] = now[key]

    def _adopt_learner_changes(self) -> None:
        """What the learner changed since the last step is theirs: given back at the end
        instead of the value from before the tour, even if a later step sets it again (a mode
        picked at step 1, then -inf selected by the mask step, came back as the old mode)."""
        now = self._inputs()
        for key, value in now.items():
            expected = self._set_by_tour.get(key, self._before[key])
            if value != expected:
                self._before[key] = value
                self._set_by_tour.pop(key, None)

    def _learner_picked_mode(self, mode: str) -> None:
        """A mask mode the learner picked during the tour is theirs at its end, even the mode a
        step had already selected: the step-to-step comparison sees no change then, and the end
        gave back the mode from before (the soak's step 322: finfo.min, then the mask step's
        -inf picked again by the learner, closed on finfo.min)."""
        if self._before is not None and not self._setting_up:
            self._before["mask_mode"] = mode
            self._set_by_tour.pop("mask_mode", None)

    def _give_back(self, back: dict) -> None:
        """The learner's own values of ``back``'s inputs, as one new value through the session (every
        control follows it); the edit belongs to the text it comes back with."""
        session = self.window_.session
        changes = {key: back[key] for key in ("text", "layer", "causal", "mask_mode", "bos") if key in back}
        if "designer" in back:
            changes["mask"] = back["designer"].spec
        if "edit" in back:
            changes["position"], changes["replacement_id"] = back["edit"]
        session.set_inputs(session.inputs.replace(**changes))

    def _give_back_text(self) -> None:
        """The learner's own text and BOS switch, when the tour replaced them and nobody changed them since."""
        back = {}
        for key in ("text", "bos"):
            set_to = self._set_by_tour.pop(key, None)
            now = self._inputs()[key]
            if set_to is not None and self._before is not None and now == set_to and self._before[key] != set_to:
                back[key] = self._before[key]
        if back:
            self._give_back(back)

    def _give_back_inputs(self) -> None:
        before, self._before = self._before, None
        set_by_tour, self._set_by_tour = self._set_by_tour, {}
        if before is None:
            return
        now = self._inputs()
        self._give_back({key: before[key] for key, value in set_by_tour.items()
                         if now[key] == value and before[key] != value})

    # ------------------------------------------------------------------ access to the window
    def _new_token_count(self) -> int:
        """The KV benchmark's new-token count, from the learner's inputs."""
        return self.window_.session.inputs.kv_new_tokens

    def _dock(self, panel_id: str) -> QDockWidget | None:
        return self.window_.findChild(QDockWidget, panel_id)

    @property
    def step(self) -> TourStep:
        return self.progress.step

    # ------------------------------------------------------------------ predict, then reveal
    @property
    def asking(self) -> bool:
        """The step asks a question the learner has not answered (nor skipped) in this tour."""
        return question_for(self.step.key) is not None and self.step.key not in self.predictions

    def predict(self, choice: str) -> None:
        """The learner's answer to the step's question (or SKIP); then the step is set up and measured."""
        if not self.asking or choice not in (*CHOICES, SKIP):
            return
        key = self.step.key
        self.predictions[key] = choice
        save_answer(self.settings, PREDICTIONS_GROUP, key, choice)
        self.retranslate()  # the step's words at once, its set-up after their paint
        self._enter_step_after_paint()

    def _forget_predictions(self) -> None:
        """A tour started again asks again."""
        self.predictions.clear()
        self.measured.clear()
        for group in (PREDICTIONS_GROUP, MEASURED_GROUP):
            self.settings.remove(group)

    def _note_measured_answer(self, fact: Fact) -> None:
        key = self.step.key
        answer = measured_answer(key, fact)  # (None for a step that asks nothing)
        if self.measured.get(key) != answer:
            if answer is None:
                self.measured.pop(key, None)
            else:
                self.measured[key] = answer
            save_answer(self.settings, MEASURED_GROUP, key, answer)

    def summary(self) -> str:
        """The summary of the tour's answered steps (N of M as measured); empty before any answer."""
        counted = tally(self.predictions, self.measured)
        if counted.answered == 0:
            return ""
        return tr("predict.summary", agreed=counted.as_predicted, answered=counted.answered)

    def _verdict(self) -> str:
        if self.fact is None:
            return ""
        key = self.step.key  # (the fact's measured answer was noted when it arrived)
        said = self.predictions.get(key) if question_for(key) is not None else None
        return verdict_html(said, self.measured.get(key), self.summary() if self.progress.at_end else "")

    # ------------------------------------------------------------------ navigation
    def open_tour(self) -> None:
        """Show the tour where the learner left it (from the start once it was finished)."""
        if self.progress.finished:
            self.progress.restart()
            self._forget_predictions()
            self._save()
            self.retranslate()  # the first step's words while its set-up waits
        self.show()
        self.raise_()
        self._enter_step_after_paint()

    def _enter_step_after_paint(self) -> None:
        """Set the step up (its panel brought forward, a view opened, a mode picked) once the window
        has laid out and painted the tour's dock and words, in a turn of its own: both in one turn held
        the GUI thread 80-130 ms in the 30-minute soak (the first opening or step in a new window)."""
        self._entry_pending = True
        # after the words' own paint (a timer behind the posted work could fire before an offscreen
        # window's paint), and in any case after PAINT_WAIT_MS
        self._entry_serial += 1
        serial = self._entry_serial
        call_later(PAINT_WAIT_MS, self, lambda: serial == self._entry_serial and self._enter_pending_step())

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        if watched is self.title and event.type() == QEvent.Type.Paint and self._entry_pending:
            call_after_posted_work(self, self._enter_pending_step)  # a turn of its own after this paint
        return False

    @property
    def entry_pending(self) -> bool:
        """The tour was opened and its step is still to be set up (a turn of the event loop away)."""
        return self._entry_pending

    def _enter_pending_step(self) -> None:
        if self._entry_pending:  # (a step entered since, or the tour closed: nothing left to do)
            self._entry_pending = False
            if self.isVisible():
                self._enter_step()

    def next(self) -> None:
        if self.progress.at_end:
            self.progress.next()  # finished
            self._save()
            self.close()
            self.window_.statusBar().showMessage(tr("tour.finished"), 8000)
            return
        self.progress.next()
        self._save()
        self._show_new_step_words()
        self._enter_step_after_paint()

    def back(self) -> None:
        if self.progress.back():
            self._save()
            self._show_new_step_words()
            self._enter_step_after_paint()

    def _show_new_step_words(self) -> None:
        """The step's words at once, its set-up after their paint; the last step's fact is not shown under them."""
        self._forget_fact()
        self._keeper.stop()
        self._pending_key = None  # the last step's fact, if still on its way, is not shown when it comes
        self.retranslate()

    def _forget_fact(self) -> None:
        self.fact = None
        self.fact_error = None
        self._fact_key = None

    def goto(self, where: int | str) -> None:
        self.progress.goto(where)
        self._save()
        self._enter_step()

    def close_tour(self) -> None:
        self.close()

    def rewind(self) -> None:
        """Back to the first step, unfinished, without showing it (as on a first start)."""
        if not self.progress.at_start or self.progress.finished:
            self.progress.restart()
            self._forget_predictions()
            self._save()

    def _save(self) -> None:
        save_progress(self.settings, self.progress)

    # ------------------------------------------------------------------ setting the app up
    def _enter_step(self) -> None:
        """Bring the step's panel forward and select what it needs, then measure its fact (a step
        with a question still to answer only asks it: its set-up would show the answer)."""
        self._entry_pending = False
        self._keeper.stop()
        if self.asking:
            self.retranslate()
            return
        step = self.step
        session = self.window_.session
        if self._before is None:
            self._before = self._inputs()
        else:
            self._adopt_learner_changes()
        if not step.repeated_text:
            self._give_back_text()  # the induction step's sequence is the learner's text again
        touched = {key for key, on in (("layer", step.layer is not None), ("causal", step.causal is not None),
                                        ("edit", step.edit_last_token), ("mask_mode", step.mask_mode is not None),
                                        ("text", step.repeated_text), ("bos", step.repeated_text),
                                        ("designer", step.designer_mask is not None)) if on}
        dock = self._dock(step.panel)
        if dock is not None:
            dock.show()
            dock.raise_()
        self._setting_up = True  # (the step's own choices are not the learner's picks)
        try:
            if step.layer is not None:
                session.set_layer(step.layer)
            if step.causal is not None:
                session.set_causal(step.causal)
            if step.edit_last_token and session.position is not None:
                session.set_position(None)  # the lab edits the end of the sentence
            if step.mask_mode is not None:
                session.set_mask_mode(step.mask_mode)
            if step.offers_benchmark:
                self.window_.panel(PanelId.KVBENCH).show_benchmark()
            if step.generate_steps:
                self.window_.panel(PanelId.GENERATE).step_to(step.generate_steps)
            if step.view is not None:
                self.window_.panel(PanelId.HEAD_GRID).open_view(step.view)
            if step.repeated_text and session.model is not None:
                # the induction step: a random word sequence said twice after BOS, in the editor too (given
                # back after): the very sequence the model's induction scores are measured on (the portrait's)
                session.set_inputs(session.inputs.replace(text=repeated_words_text(session.model.tokenizer),
                                                          bos=True))
            if step.designer_mask is not None:
                session.set_mask(parse_mask_spec(step.designer_mask))
        finally:
            self._setting_up = False
        self._note_set_by_tour(touched)
        self._open_head_once = step.open_head
        self._opened_head = None
        self._target_pending = True
        self._reveal_tries = 0
        self._forget_fact()
        self.retranslate()
        self._rank_beside_the_fact()
        self._request_fact()
        self._emit_if_settled()

    def _open_head(self, fact: Fact) -> None:
        """Step 2: the head whose causal and bidirectional maps differ most, side by side; the
        induction step: the best induction head, enlarged (its stripe on the repeated half)."""
        if not self._open_head_once:
            return
        if "bidir_head" in fact.values:
            view, layer, head = SIDE_BY_SIDE, fact.values["layer"], fact.values["bidir_head"]
        elif "best_head" in fact.values:
            view, layer, head = ONE_MODE, fact.values["best_layer"], fact.values["best_head"]
        else:
            return
        self._open_head_once = False
        self._opened_head = (int(layer), int(head))
        self.window_.panel(PanelId.HEAD_GRID).set_view(view)
        self.window_.select_head(int(layer), int(head))
        self._note_set_by_tour({"layer"})

    # ------------------------------------------------------------------ the fact
    def _context(self, state) -> TourContext:
        model = state.model
        new_tokens = self._new_token_count()
        kv_result = None
        if self._kv_result is not None and self._kv_result[0] == text_key(state):
            kv_result = self._kv_result[1]
        portrait = self.window_.built_panel(PanelId.PORTRAIT)
        rules = portrait.thresholds() if portrait is not None else None  # core.roles.RoleRules
        tok = model.tokenizer
        return TourContext(
            lens=model.lens,
            ids=list(state.ids),
            tokens=list(state.tokens),
            layer=state.layer,
            position=state.position,
            replacement_id=state.replacement_id,
            kv_result=kv_result,
            new_tokens=new_tokens,
            rules=rules,
            token_text=lambda i: tok.token_texts([int(i)])[0],
            tokenizer=tok,
            model_name=model.name,
            allowed=state.extras.get("allowed"),
            mask_spec=state.extras.get("mask_spec", "causal"),
            knockout_mode=self.window_.session.inputs.knockout_mode,
        )

    def _request_key(self, state) -> tuple:
        kv = self._kv_result[1] if self._kv_result is not None and self._kv_result[0] == text_key(state) else None
        return (self.step.key, state.request_id, text_key(state), state.layer, state.position, state.replacement_id, id(kv))

    def _request_fact(self) -> None:
        if not self.isVisible() or self._entry_pending or self.asking:  # (the step's set-up asks, on the state it sets up)
            return
        session = self.window_.session
        state = session.state
        if state is None or session.pending:
            self._show_fact()  # "waiting": the state this step asked for is on its way
            return
        key = self._request_key(state)
        if key == self._fact_key or key == self._pending_key:
            return
        self._pending_key = key
        self.fact_error = None
        self._pending_model = model_label_later(state.model)
        session.measure_fact(key, self.step, self._context(state))
        self._show_fact()

    @Slot(object, object)
    def _on_fact(self, key: tuple, fact: Fact) -> None:
        if key != self._pending_key:
            return
        self._pending_key = None
        self._fact_key = key
        self.fact = fact
        self._note_measured_answer(fact)
        self._fact_model_words = self._pending_model
        self._show_fact()
        self._open_head(fact)
        self._emit_if_settled()

    @Slot(str, object, str, str)
    def _on_fact_error(self, kind: str, key: tuple, message: str, details: str) -> None:
        if kind != TOUR_FACT or key != self._pending_key:
            return
        self._pending_key = None
        self._fact_key = key
        self.fact = None
        self.fact_error = message
        log.warning("tour fact %s failed: %s", key[0], details)
        self._show_fact()

    def fact_text(self) -> str:
        """The fact as shown (plain text), for tests and screen readers."""
        from PySide6.QtGui import QTextDocument

        doc = QTextDocument()
        doc.setHtml(self.fact_label.source_text().replace(MORE, ""))  # both parts, whether "More…" is open or not
        return doc.toPlainText()

    @property
    def fact_ready(self) -> bool:
        # (not while the step's set-up is still to come: a fact kept from before is not its fact yet)
        return self.fact is not None and self._pending_key is None and not self._entry_pending

    def _role_lines(self, fact: Fact) -> str:
        """Step 4: where each of the chapter's roles is, seen from the layer shown; remembers the
        first role this layer lacks that another layer has, for the "Show" button."""
        found = fact.data.get("where") or {}
        self._role_target = None
        lines = []
        for role in ROLES:
            where = found.get(role)
            if where is None:
                continue
            # the fact itself names the positional heads (this layer's, else the nearest layer's) and
            # this layer's sink heads, with their numbers
            if not (role == "positional" or where.here and role == "sink"):
                lines.append(html.escape(where_sentence(where, translator.language)))
            if not where.here and where.nearest() and self._role_target is None:
                hit = where.nearest()[0]
                self._role_target = (role, hit.layer, hit.head)
        return "<br>".join(lines)

    def _growth_line(self, fact: Fact) -> str:
        """Step 5: the fitted growth per position in words (core.kvbench.growth_sentence: a slope
        lost in the noise is said so, never "−0.1 ms more")."""
        if not fact.key.startswith("kvcache.done") or self._kv_result is None:
            return ""
        return html.escape(growth_sentence(self._kv_result[1], translator.language))

    def show_role_head(self) -> None:
        """Switch the grid to the layer of the step's missing role and enlarge its strongest head."""
        if self._role_target is not None:
            _role, layer, head = self._role_target
            self.window_.select_head(layer, head)
            self._note_set_by_tour({"layer"})  # the tour's button: the learner's own layer comes back at the end

    @property
    def fact_model(self) -> str:
        """The model the fact was measured on, named in the current language (a demo is described in
        words: kept as measured, it stayed English in a tour switched to Portuguese)."""
        return self._fact_model_words()

    @fact_model.setter
    def fact_model(self, name: str) -> None:
        self._fact_model_words = lambda: name

    def _show_fact(self) -> None:
        self._role_target = None
        if self.fact is not None:
            self.fact_caption.setText(tr("tour.measured", model=html.escape(self.fact_model)))
            extra = self._role_lines(self.fact) or self._growth_line(self.fact)
            fact = self.fact
            if "model" in fact.values:  # named in the interface's language (the demo has a Portuguese name)
                fact = dataclasses.replace(fact, values={**fact.values, "model": self.fact_model})
            self.fact_label.setText(format_fact(fact) + (f"<br><br>{extra}" if extra else ""))
            verdict = self._verdict()
            self.verdict_label.setText(verdict)
            self.verdict_label.setVisible(bool(verdict))
            block = self.fact.block
            if block:
                shown, n = self.fact.values.get("shown"), self.fact.values.get("n")
                caption = tr("tour.print", shown=shown, n=n) if shown is not None and shown != n else tr("tour.print.all")
                self.block.setPlainText(caption + "\n" + block)
                self._size_block()
            self.block.setVisible(bool(block))
        else:
            self.fact_caption.setText(tr("tour.title"))
            if self.fact_error is not None:
                self.fact_label.setText(html.escape(tr("tour.failed", message=self.fact_error)))
            elif self.window_.session.state is None:
                self.fact_label.setText(tr("tour.waiting"))
            else:
                self.fact_label.setText(tr("tour.measuring"))
            self.block.hide()
            self.verdict_label.hide()
        target = self._role_target
        self.show_head_button.setVisible(target is not None)
        if target is not None:
            self.show_head_button.setText(
                tr("tour.show_head", role=tr(f"roles.{target[0]}.name"), layer=target[1], head=target[2]))

    def _size_block(self) -> None:
        """Exactly as tall and (up to a limit) as wide as the print: it never scrolls vertically."""
        doc = self.block.document()
        layout = doc.documentLayout()
        height = sum(layout.blockBoundingRect(doc.findBlockByNumber(i)).height() for i in range(doc.blockCount()))
        lines = self.block.toPlainText().splitlines() or [""]
        width = max(self.block.fontMetrics().horizontalAdvance(line) for line in lines)
        margin = 2 * (doc.documentMargin() + self.block.frameWidth()) + 2
        self.block.setFixedHeight(int(height + margin + 0.5))
        self.block.setMinimumWidth(int(min(width + margin, 420)))

    # ------------------------------------------------------------------ step 5's benchmark
    def run_benchmark(self) -> bool:
        """Start the KV benchmark (the learner pressed the button); False if it can't start."""
        kv = self.window_.panel(PanelId.KVBENCH)
        dock = self._dock(PanelId.KVBENCH)
        if dock is not None:
            dock.show()
            dock.raise_()
        kv.show_benchmark()
        started = bool(kv.run_benchmark())
        self._update_run_button()
        return started

    @Slot(object)
    def _on_bench_step(self, _step) -> None:
        self._update_run_button()

    @Slot(object)
    def _on_bench_finished(self, run) -> None:
        """``run``: the session's KVRun, which says which text (and model) it ran on."""
        self._kv_result = (run.key, run.result)
        self._update_run_button()
        if self.isVisible() and self.step.offers_benchmark:
            self._request_fact()

    @Slot()
    def _on_bench_cancelled(self) -> None:
        self._update_run_button()

    def _update_run_button(self) -> None:
        step = self.step
        self.run_button.setVisible(step.offers_benchmark and not self.asking and self._dock(PanelId.KVBENCH) is not None)
        running = self.window_.session.kv_benchmark_running
        self.run_button.setText(tr("tour.running") if running else tr("tour.run"))
        self.run_button.setEnabled(not running and self.window_.session.state is not None)

    # ------------------------------------------------------------------ events
    def _rank_beside_the_fact(self) -> None:
        """The knockout step quotes the head that matters most: the knockout panel's map and table show
        the same ranking (the same core function on the same text and mask), not a blank map."""
        if not self.step.ranks_heads or self._entry_pending or self.asking or not self.isVisible():
            return
        panel = self.window_.built_panel(PanelId.KNOCKOUT)
        if panel is not None and panel.state is self.window_.session.state and not self.window_.session.pending:
            panel.rank_once()

    @Slot(object)
    def _on_state(self, _state) -> None:
        if self.isVisible():
            self._rank_beside_the_fact()
            self._request_fact()
            self._update_run_button()
            self._emit_if_settled()

    def settled(self) -> bool:
        """Whether the step's set-up is on screen: the fact is measured on the analysis shown,
        none is on its way (a layer switch the step made included), the head the step opens is
        open and drawn on its layer, and what the step points at was brought into view.  The
        induction step switches to its best head's layer after its fact arrives; until that
        layer's analysis is drawn this is false."""
        return self._set_up() and not self._target_pending

    def _set_up(self) -> bool:
        """:meth:`settled` but for bringing the step's target into view."""
        session = self.window_.session
        state = session.state
        if not self.isVisible() or self.asking or not self.fact_ready or session.pending or state is None:
            return False
        if self._fact_key != self._request_key(state) or self._open_head_once:
            return False
        if self._opened_head is not None:
            grid = self.window_.built_panel(PanelId.HEAD_GRID)
            layer, head = self._opened_head
            if grid is None or grid.state is not state or state.layer != layer or grid.head != head:
                return False
            if not grid.has_data():  # drawn, not just received
                return False
        return True

    def _emit_if_settled(self) -> None:
        if not self._set_up():
            if self._target_pending and self.isVisible() and not self.asking and self.fact_error is None:
                # not everything that completes a set-up signals (the head it opens is drawn a part per
                # turn; an edit can end without a new analysis): look again shortly, or the step waits for good
                self._look_again_later()
            return
        if self._target_pending:
            # once the set-up's layout is done (a tab opened, a map drawn): its places are final then
            call_after_posted_work(self, self._bring_target_into_view)
        else:
            self.step_settled.emit(self.step.key)

    def _look_again_later(self) -> None:
        if not self._looking_again:
            self._looking_again = True
            call_later(SET_UP_POLL_MS, self, self._look_again)

    def _look_again(self) -> None:
        self._looking_again = False
        if self.isVisible() and not self._entry_pending:
            self._request_fact()  # (nothing when the fact shown, or the one on its way, is the state's)
            self._emit_if_settled()

    @property
    def revealing(self) -> bool:
        """The step is set up and what it points at is being brought into view (a few turns at most)."""
        return self._target_pending and self._set_up()

    def target(self) -> Target | None:
        """What the step points at, in the window as laid out now (``ui.tour_targets``)."""
        return step_target(self.window_, self.step.key)

    def out_of_sight(self) -> list[str]:
        """What the learner cannot see of a settled step (empty: all in sight): its target, or one of the
        tour's own parts (its title, its words up to "More…", the question, the print, the fact and the
        buttons), which must fit the dock without scrolling."""
        missing = []
        if not self.asking:
            target = self.target()
            if target is None or not in_sight(target.widget, target.rect):
                missing.append(f"target {target.name if target is not None else self.step.key}")
        parts = [self.title, self.predict_box, self.block, self.run_button, self.fact_frame,
                 self.back_button, self.next_button, self.close_button]
        if not self.text.expanded:  # opened, its rest may scroll
            parts.append(self.text)
        if self.fact_label.expanded:
            parts.remove(self.fact_frame)
        for part in parts:
            if not part.isHidden() and not fully_in_sight(part):
                missing.append(part.objectName() or type(part).__name__)
        return missing

    def _bring_target_into_view(self) -> None:
        """Once per step: scroll (select, widen) what the step talks about into the learner's sight.
        A panel just brought forward may still be laying itself out (a scroll area's range not yet
        grown, a table's columns not yet sized): it is looked at again a few turns later, and the
        step is settled once it is in sight (or the tries are spent)."""
        if not self._target_pending:
            return
        if not self._set_up():  # undone since it was asked for (an edit on its way): looked at again
            self._emit_if_settled()
            return
        target = self.target()
        if target is not None:
            if target.reveal is not None:
                target.reveal()
                target = self.target() or target  # (revealing may move it: a splitter, a table's scroll)
            bring_into_view(target.widget, target.rect)
            if not in_sight(target.widget, target.rect) and self._reveal_tries < REVEAL_TRIES:
                self._reveal_tries += 1
                call_later(REVEAL_RETRY_MS, self, self._bring_target_into_view)
                return
        self._target_pending = False
        self._keeper.watch(target)
        self.step_settled.emit(self.step.key)

    @Slot(bool)
    def _on_visibility(self, visible: bool) -> None:
        if visible:
            self._request_fact()
        else:
            self._keeper.stop()
            self._save()
        self._veil_the_answer()

    def _veil_the_answer(self) -> None:
        """While the question waits in sight, the step's panel (whose measurement answers it) is covered."""
        dock = self._dock(self.step.panel) if self.asking and self.isVisible() else None
        self.veils.cover_only(dock.widget() if dock is not None else None)

    @Slot(str)
    def _on_language(self, _language: str) -> None:
        self.retranslate()

    def retranslate(self) -> None:
        self.setWindowTitle(tr("tour.title"))
        step, progress = self.step, self.progress
        where = tr("tour.counter.lab", lab=step.lab_step) if step.lab_step else tr("tour.counter.prose")
        self.counter.setText(f"{tr('tour.counter', i=progress.index + 1, count=progress.count)} · {where}")
        self.title.setText(tr(f"tour.step.{step.key}.title"))
        model = self.window_.session.model
        cfg = model.lens.config if model is not None else CHAPTER
        # the loaded model's numbers and name (the chapter's GPT-2 small before one is loaded)
        self.text.setText(tr(f"tour.step.{step.key}.body", new=self._new_token_count(),
                             d=cfg.n_embd, heads=cfg.n_head, dk=cfg.head_dim, w=TOUR_WINDOW,
                             model=html.escape(model_label(model)) if model is not None else "GPT-2"))
        self.back_button.setText(tr("tour.back"))
        self.back_button.setEnabled(not progress.at_start)
        self.next_button.setText(tr("tour.finish") if progress.at_end else tr("tour.next"))
        self.close_button.setText(tr("tour.close"))
        asking = self.asking
        question = question_for(step.key)
        if question is not None:
            self.predict_box.ask(question.text_key, w=TOUR_WINDOW)
        self.predict_box.setVisible(asking)
        self.text.setVisible(not asking)  # the step's words tell the answer
        self.fact_frame.setVisible(not asking)
        if self.menu_action is not None:
            self.menu_action.setText(tr("tour.menu"))
        self._update_run_button()
        self._show_fact()
        self._veil_the_answer()

