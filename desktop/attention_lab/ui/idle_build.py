"""The panels behind a tab, built (and drawn) while the window is idle after start-up.

The window builds only the panels in sight with itself (``docks.FIRST_VIEW_PANELS``): the
others cost 0.16 s of every start-up.  Built when their tab was first clicked, they made
that click wait 0.2-0.5 s (the KV-cache panel's construction, the mask's first drawing:
measured with the perf probe).  Here, once the first analysis is on screen, a
timer builds one such panel per turn of the event loop, shows it (in its dock behind a tab:
polished and laid out, out of sight) on the next turn, draws the newest analysis into it on
the turn after, then, one per turn, the parts the panel left for later
(:meth:`Panel.build_later_part`: the KV panel's stability tab, ~0.1 s; the mask's two bar
plots; the head grid's "one head" plots and colour bar), so the window answers input between every two steps and the first click on a tab
only shows what exists.  It waits while an analysis is being drawn (the learner's edit comes first) and
while the worker computes (for a while), and stops when every panel is built and drawn.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from attention_lab.ui.docks import FIRST_VIEW_PANELS
from attention_lab.ui.panels.ids import PanelId

START_DELAY_MS = 400  # after the first analysis is drawn: its repaint and the first input come first
TURN_MS = 60  # between two steps: time for input, repaints and the heartbeat of a frame or three
#: turns a step waits for the worker to finish (what a drawn panel asked for: the mask's modes,
#: the portrait's induction scores...) before it runs anyway (a benchmark may run for minutes)
WORKER_WAIT_TURNS = 25


class IdleBuilder(QObject):
    """Builds ``window``'s unbuilt panels one per turn, then draws the newest state in each."""

    def __init__(self, window, *, start_delay_ms: int = START_DELAY_MS, turn_ms: int = TURN_MS):
        super().__init__(window)
        self.window = window
        self.start_delay_ms, self.turn_ms = start_delay_ms, turn_ms
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self.step)
        self._to_show: PanelId | None = None  # built (hidden) on the last turn, shown on this one
        self._to_draw: PanelId | None = None  # shown on the last turn, drawn on this one
        self._parts_of: PanelId | None = None  # drawn: its later parts are built, one per turn
        self._to_repaint: PanelId | None = None  # painted off-screen last turn: painted again on this one
        # ("build" | "show" | "draw" | "part" | "wait", panel): what each turn did ("wait": for the
        # worker, before the step for that panel, None: before the next build)
        self.steps: list[tuple[str, PanelId | None]] = []
        self.done = False
        self._worker_waits = 0  # turns the current step has waited for the worker
        window.state_shown.connect(self._state_shown)

    def _state_shown(self, _state) -> None:
        if not self.done and not self.timer.isActive():
            self.timer.start(self.start_delay_ms)

    def _pending(self) -> list[PanelId]:
        return [pid for pid in self.window.docks if self.window.built_panel(pid) is None]

    def step(self) -> None:
        """One step: draw the panel built last turn, else build a part it left for later, else
        build the next panel."""
        window, redraw = self.window, self.window.redraw
        if self.done or redraw.stopped:
            return
        if redraw.showing is not redraw.last_state:  # an analysis being drawn: after it
            self.timer.start(self.turn_ms)
            return
        if window.session.worker.busy and self._worker_waits < WORKER_WAIT_TURNS:
            # after the worker's job: its model passes and this turn's Python would hold the GIL
            # by turns, each of the GUI thread's calls back from Qt waiting for it (a step of
            # 20-30 ms of CPU stalled 100-300 ms while the mask's modes were measured)
            self._worker_waits += 1
            self.steps.append(("wait", self._to_show or self._to_draw or self._parts_of))
            self.timer.start(self.turn_ms)
            return
        self._worker_waits = 0
        if self._to_show is not None:
            pid, self._to_show, self._to_draw = self._to_show, None, self._to_show
            panel = window.built_panel(pid)
            # laid out at the size it will have when its tab is opened, not at its dock's stale one
            window.dock_layout.size_like_tab_in_sight(pid, redraw.out_of_sight)
            if panel is not None and panel.isHidden():
                panel.show()  # (a tab behind another is "visible" to Qt: its panel is polished and laid out now)
            self.steps.append(("show", pid))
            self.timer.start(self.turn_ms)
            return
        if self._to_draw is not None:
            pid, self._to_draw = self._to_draw, None
            if pid in redraw.stale:
                redraw.catch_up(pid)
            self._parts_of = pid
            self.steps.append(("draw", pid))
            self.timer.start(self.turn_ms)
            return
        if self._parts_of is not None:
            pid, panel = self._parts_of, window.built_panel(self._parts_of)
            if panel is not None and panel.build_later_part():
                self.steps.append(("part", pid))
                self.timer.start(self.turn_ms)
                return
            self._parts_of = None
            if panel is not None and window.redraw.out_of_sight(pid):
                paint_off_screen(panel)
                self.steps.append(("paint", pid))
                self._to_repaint = pid
                self.timer.start(self.turn_ms)
                return
        if self._to_repaint is not None:
            pid, self._to_repaint = self._to_repaint, None
            panel = window.built_panel(pid)
            if panel is not None and window.redraw.out_of_sight(pid):
                # again, once the axes' new widths are laid out: pyqtgraph keeps each axis' drawing
                # from this paint until its size or range changes, so the first opening draws only
                # what changed since (the mask's bar plots: ~10 ms of CPU each, 1-2 ms replayed)
                paint_off_screen(panel)
                self.steps.append(("paint", pid))
                self.timer.start(self.turn_ms)
                return
        for pid in FIRST_VIEW_PANELS:
            # the parts of the panels in sight first: one click away (the head grid's "one head"
            # tab), while a hidden panel is a tab and a click away; last in line, the soak's
            # learner opened that tab before they were built, 45-150 ms of CPU
            panel = window.built_panel(pid)
            if panel is not None and panel.build_later_part():
                self.steps.append(("part", pid))
                self.timer.start(self.turn_ms)
                return
        pending = self._pending()
        if not pending:
            for pid, panel in list(window.panels.items()):  # panels a learner opened before this reached them
                if panel.build_later_part():
                    self.steps.append(("part", pid))
                    self.timer.start(self.turn_ms)
                    return
            self.done = True
            return
        # built hidden: showing it (Qt's polish and layout of every new widget, pyqtgraph's resize
        # handling) took as long again as building it, in the same turn (the KV panel: 25 + 40 ms
        # of CPU); it gets a turn of its own
        window.panel(pending[0]).hide()
        self._to_show = pending[0]
        self.steps.append(("build", pending[0]))
        self.timer.start(self.turn_ms)


def paint_off_screen(panel) -> None:
    """Paint ``panel`` once into an image nobody sees (it is behind a tab, never painted yet).

    pyqtgraph measures an axis' tick labels only when it paints them, then gives the axis the width
    they need: a panel's first paint re-laid its plots out (each one's left axis 53 → 42 px wide,
    the mask's token axis wider), so its tab's first opening painted every plot twice (the Mask
    panel's: three plots, ~30 ms of CPU more in that turn).  Painted here, the axes have
    their widths, and the layout they ask for is done in the turns after this one, all out of sight."""
    panel.grab()


def install_idle_build(window, **timing) -> IdleBuilder:
    """Build ``window``'s remaining panels in idle time from its first analysis on."""
    builder = IdleBuilder(window, **timing)
    window.idle_builder = builder  # kept with the window (and reachable from tests and the probe)
    return builder
