"""When each panel draws a new analysis: one panel per turn of the event loop (one step per
turn for a panel that cuts its drawing into steps: ``Panel.redraw_steps``), panels out of
sight when they are shown.

One panel per turn: the window keeps answering (typing, the mouse, repaints) between panels,
so it waits for one panel's drawing at most, not for all seven in a row.  A newer state stops
the older one's round.  Panels no one can see (a dock behind another tab, or closed) are
drawn when their dock is shown: each edit cost them ~25 ms of the GUI thread and the mask
panel four model passes.  The same for a language switch: panels out of sight are
re-labelled when shown, the ones in sight one per turn (all nine re-labelled and redrawn
at once held the GUI thread 300-400 ms).
"""

from __future__ import annotations

import itertools
import logging
import traceback
from typing import Callable

from PySide6.QtCore import QObject, Signal

from attention_lab.ui import gc_pause
from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.base import Panel
from attention_lab.ui.qt_compat import call_after_posted_work, call_later

log = logging.getLogger(__name__)


_schedulers = itertools.count(1)  # never reused, unlike id(): a new window is a new key


def let_go_of_older_state(panel: Panel, state) -> None:
    """A panel left for later (out of sight) drops the state it last drew: it is drawn with the
    newest one when it is shown, never with that one again.

    Kept, each panel out of sight held the analysis it last showed, a long text's attention maps
    with it (the demo at 256 tokens: 7 MB; GPT-2 small at 1,024: ~100 MB), after the text in sight
    had moved on (the soak's memory drift), and after a model switch that state's model (weights,
    tokenizer: 500 MB for GPT-2 small; 4 hidden panels held 4 old demo models after 24 switches).
    What it drew stays on screen until then: nobody sees it."""
    if getattr(panel, "state", None) is not None and panel.state is not state:
        panel.state = None


class RedrawScheduler(QObject):
    """Draws states on the built panels (``panels``: id → Panel, shared with the window)."""

    round_done = Signal(object)  # AnalysisState: every panel in sight shows it now

    def __init__(
        self,
        panels: dict,
        out_of_sight: Callable[[str], bool],
        on_error: Callable[[str, str], None],
        parent: QObject | None = None,
    ):
        super().__init__(parent)
        self.serial = next(_schedulers)  # which window drew (gc_pause collects when it or the model changes)
        self.panels = panels
        self.out_of_sight = out_of_sight
        self.on_error = on_error
        self.last_state = None  # the state every panel in sight shows
        self.showing = None  # the state whose panels are being drawn
        self.stale: set[str] = set()  # panels out of sight, drawn when their dock is shown
        self.untranslated: set[str] = set()  # panels still in the previous language
        self._to_relabel: list[str] = []  # those in sight, re-labelled one per turn
        #: called after each panel in sight took its new words (the window holds the docks' paint)
        self.relabelled: Callable[[], None] | None = None
        self.stopped = False
        self.cleaning = False  # a switch's collection and heap trim still to come (in turns of their own)

    def show(self, state) -> None:
        """Start drawing ``state`` (a newer one stops the round of the previous)."""
        self.showing = state
        self.stale = {pid for pid in self.panels if self.out_of_sight(pid)}
        for pid in self.stale:
            let_go_of_older_state(self.panels[pid], state)
        in_sight = [p for pid, p in self.panels.items() if pid not in self.stale]
        self._next(state, [(p, step) for p in in_sight for step in self._steps(p, state)])

    def _steps(self, panel: Panel, state) -> list:
        try:
            return panel.redraw_steps(state)
        except Exception as exc:
            self._failed(panel, exc)
            return []

    def draw(self, panel: Panel, state) -> None:
        self.run_step(panel, lambda: panel.show_state(state))

    def run_step(self, panel: Panel, step: Callable[[], None]) -> None:
        panel.setEnabled(True)
        try:
            step()
        except Exception as exc:  # one broken view must not take the others down
            self._failed(panel, exc)

    def _failed(self, panel: Panel, exc: Exception) -> None:
        log.exception("panel %s failed to show the state", panel.panel_id)
        self.on_error(f"{tr(panel.title_key)}: {exc}", traceback.format_exc())

    def panel_built(self, panel_id: str) -> None:
        """A panel built after states arrived: it draws the newest one now if in sight, else when shown."""
        if self.showing is None and self.last_state is None:
            return
        self.stale.add(panel_id)
        if not self.out_of_sight(panel_id):
            # in sight (its tab clicked, or asked for): draw once the dock has laid it out
            call_later(0, self, lambda: self.catch_up(panel_id) if panel_id in self.stale else None)

    def language_later(self, panel_id: str) -> None:
        """The language changed: the panel follows it later.  Out of sight: when
        its dock is shown.  In sight: in a turn of the event loop of its own, one panel per
        turn, as for a state (each panel's new words cost 30-55 ms of Qt layout and paint after
        them: the three in sight at once still held the thread 110-260 ms under load)."""
        self.untranslated.add(panel_id)
        if not self.out_of_sight(panel_id) and panel_id not in self._to_relabel:
            self._to_relabel.append(panel_id)
            if len(self._to_relabel) == 1:
                call_later(0, self, self._relabel_next)

    def _relabel_next(self) -> None:
        if self.stopped or not self._to_relabel:
            return
        panel_id = self._to_relabel.pop(0)
        if panel_id in self.untranslated and not self.out_of_sight(panel_id):  # (gone out of sight: when shown)
            self.untranslated.discard(panel_id)
            self.panels[panel_id].follow_language()
            if self.relabelled is not None:
                self.relabelled()
        if self._to_relabel:
            call_later(1, self, self._relabel_next)

    @property
    def relabelling(self) -> bool:
        """Whether panels in sight are still to take a switch's words (one per turn)."""
        return bool(self._to_relabel)

    def waits(self, panel_id: str) -> bool:
        """Whether the panel has a state to draw or a language to follow left for when shown."""
        return panel_id in self.stale or panel_id in self.untranslated

    def catch_up(self, panel_id: str) -> None:
        """Re-label a panel left for later in the current language if it missed a switch, and
        draw it with the newest state (the one being drawn, if any)."""
        if panel_id in self.untranslated:
            self.untranslated.discard(panel_id)
            self.panels[panel_id].follow_language()
        if panel_id not in self.stale:
            return
        self.stale.discard(panel_id)
        state = self.showing or self.last_state
        if state is not None:
            self.draw(self.panels[panel_id], state)

    def catch_up_all(self) -> None:
        for pid in list(self.stale | self.untranslated):
            self.catch_up(pid)

    def _next(self, state, queue: list) -> None:
        if self.showing is not state or self.stopped:
            return  # superseded (or closing): the newer state's round shows every panel
        if queue:
            self.run_step(*queue.pop(0))
        if queue:
            call_after_posted_work(self, lambda: self._next(state, queue))
            return
        self.last_state = state
        model = getattr(state, "model", None)  # (a test's stand-in state has none)
        if model is not None:
            # the previous window's or model's cycles freed, then the heap handed back: each in a turn
            # of its own once this drawing is painted (with the last step, the three held the GUI
            # thread ~120 ms when a model was loaded: the soak's load_model stalls)
            self.cleaning = True
            call_after_posted_work(self, lambda key=(self.serial, model.serial): self._collect(key))
        self.round_done.emit(state)

    def _collect(self, key) -> None:
        if not self.stopped and gc_pause.collect_on_switch(key):
            call_after_posted_work(self, self._trim)
        else:
            self.cleaning = False

    def _trim(self) -> None:
        self.cleaning = False
        if not self.stopped:
            gc_pause.trim_after_switch()
