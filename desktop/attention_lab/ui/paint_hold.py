"""One paint of the docks after a burst of relayout, not one per pass (the soak's resize stalls).

A resize or Reset layout relays the window out over several turns of the event loop: the docks first, then pyqtgraph's layouts (posted), then the head grid's height for
its new width, then the scroll areas around the panels.  Qt painted every dock after each
pass: 3-4 paints of every plot in sight for one resize (153-183 paint events, counted per
widget), 70-100 ms of the 80-150 ms of GUI-thread CPU a resize took, most of it in one stall of
the soak's heartbeat (its ``resize``, ``set_language`` and ``reset_layout`` rows: the most
over-goal stalls of the 30-minute soak).

:class:`PaintHold` turns the docked docks' updates off (``setUpdatesEnabled(False)``: their paint
events are dropped, not queued) while the window relays out, watches for layout requests and
resizes under the window, and turns them on again once a turn of the event loop passed without
any (or at ``MAX_HOLD_MS`` whatever happens): Qt then
paints each dock once, as it is laid out in the end.  The window itself (menu, status bar, the
separators) still paints as it likes: held on the top-level window, ``setUpdatesEnabled(False)``
across several turns left it never painted again (Qt 6, offscreen platform, measured), and a
floating dock is a window of its own, so neither is held.

A language switch is held too, from the window's new words to the last panel in sight's (they
take them one per turn: ``RedrawScheduler.language_later``).  Painted in their own turns, each
panel's words cost a paint of the whole window per pass of each graphics scene they changed:
``QGraphicsScene`` sends its views' window the update request at once when it processes its
changes (Qt's ``dispatchPendingUpdateRequests``), and the leakage panel's two scenes made 5-8
passes in its turn, 60 of its 80-105 ms of GUI CPU.  Held, the switch's longest turn (the
release's one paint of the docks) took 27-51 ms of GUI CPU to English and 25-51 to Portuguese,
against 63-103 and 80-160 (medians 41 and 39 against 85 and 107), side by side on the same
replayed soak state (README, eighth session).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QWidget

from attention_lab.ui.qt_compat import call_later

#: the longest the docks go unpainted: a burst longer than this (a slow machine) is painted as it is,
#: and painted again when it ends, as without the hold
MAX_HOLD_MS = 400
_RELAYOUT = (QEvent.Type.LayoutRequest, QEvent.Type.Resize)


class PaintHold(QObject):
    """Holds the painting of ``held_widgets()`` (children of ``window``) through a burst of relayout
    of the window; one paint of each when it settles."""

    def __init__(self, window: QWidget, held_widgets: Callable[[], list[QWidget]], max_hold_ms: int = MAX_HOLD_MS):
        super().__init__(window)
        self.window = window
        self.held_widgets = held_widgets
        self.max_hold_ms = max_hold_ms
        self.holds = 0  # bursts held since the window was made (tests read it)
        self._held: list[QWidget] = []
        self._since = 0.0
        self._relayouts = 0  # layout requests and resizes under the window since the last check
        self._check_pending = False

    @property
    def held(self) -> bool:
        return bool(self._held)

    def hold(self) -> None:
        """Stop painting the docks until the window's layout settles (a turn with no relayout)."""
        if not self._held:
            # not on screen, or not painted at all (the fuzzer's window): no paint to spare
            if not self.window.isVisible() or not self.window.updatesEnabled():
                return
            self._held = [w for w in self.held_widgets() if w.updatesEnabled()]
            if not self._held:
                return
            self.holds += 1
            self._since = time.monotonic()
            self._relayouts = 0
            QApplication.instance().installEventFilter(self)
            for widget in self._held:
                widget.setUpdatesEnabled(False)
        self._schedule_check()

    def _schedule_check(self) -> None:
        if not self._check_pending:
            self._check_pending = True
            call_later(0, self, self._check)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        if event.type() in _RELAYOUT and isinstance(watched, QWidget) and self.window.isAncestorOf(watched):
            self._relayouts += 1
        return False

    def _check(self) -> None:
        self._check_pending = False
        if not self._held:
            return
        overdue = (time.monotonic() - self._since) * 1000 >= self.max_hold_ms
        if not overdue and self._relayouts:
            self._relayouts = 0  # another pass ran: look again after the next turn
            self._schedule_check()
            return
        self.release()

    def release(self) -> None:
        """Paint the held docks again (Qt updates each whole: one paint, as it is laid out now)."""
        held, self._held = self._held, []
        if not held:
            return
        QApplication.instance().removeEventFilter(self)
        for widget in held:
            widget.setUpdatesEnabled(True)
