"""One paint of the window per turn of the event loop, not one per pass of each graphics scene.

A ``QGraphicsScene`` processes its items' changes in a queued call of its own, and at its end
sends its views' window the update request there and then (Qt's
``QGraphicsViewPrivate::dispatchPendingUpdateRequests``: ``sendPostedEvents(window,
UpdateRequest)``): the window's whole dirty region -- every dock a relayout touched, not only
that view -- is painted inside the scene's call, once per scene per pass.  A turn that changes
several views, or lays a plot out over a few passes, painted the window several times over: 5-8
whole-window paints in the leakage panel's turn of a language switch, 60 of its 80-105 ms of GUI
CPU (the 30-minute soak, ``Qt C++ (layout, painting...)`` in its slow actions).

:class:`ScenePaints` watches the scenes' queued calls and the window's update requests: a
request that arrives after a scene's call began is held, and the window is painted once, by a
request of its own posted with Qt's own low priority, behind the turn's other posted work: as
that turn left it.  (An event filter sees a call begin, not end: the end is marked by an event
posted at the call's start with a high priority, the next of those posted from then on.)
Nothing else changes: a widget's ``update()`` posts the same request, Qt paints the same region.

Measured side by side (3-minute soaks, seed 0, the same steps, interleaved without / with): the
GUI thread's CPU in each step's longest stall, summed, 16.54 / 16.80 -> 14.71 / 14.87 s on one
hour, 17.20 / 16.43 -> 15.35 / 15.69 s on another (the runs with it on a machine 20 % slower at
painting the whole window); a layer step reaches the window as 8-9 paints instead of 10.

pyqtgraph's ``GraphicsScene.__init__`` is wrapped so that every scene the app makes is watched
(each plot widget makes its own, deep in pyqtgraph): a filter on the application instead would
run Python for every event of every object.
"""

from __future__ import annotations

import weakref

import pyqtgraph as pg
import shiboken6
from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt
from PySide6.QtWidgets import QWidget

_MetaCall = QEvent.Type.MetaCall
_UpdateRequest = QEvent.Type.UpdateRequest
_PAINT_HELD = QEvent.Type(QEvent.registerEventType())
_SCENE_CALL_OVER = QEvent.Type(QEvent.registerEventType())


class ScenePaints(QObject):
    """The filter on every pyqtgraph scene and on the windows whose paints it holds."""

    def __init__(self) -> None:
        super().__init__()
        self._scene_call = False  # a scene's queued call is running: until its end marker, or a request held
        self._sending = False  # our own request to a window, going through
        self._waiting: weakref.WeakSet = weakref.WeakSet()  # windows whose paint was held
        self.held = 0  # requests held (tests read it)

    def watch_window(self, window: QWidget) -> None:
        window.installEventFilter(self)

    def watch_scene(self, scene) -> None:
        scene.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 -- Qt's name
        kind = event.type()
        if kind == _MetaCall:
            if isinstance(watched, pg.GraphicsScene) and not self._scene_call:
                self._scene_call = True
                # posted with a high priority, it is the next of the events posted from now on: it
                # comes after the scene's call (and what that call posts), not in a later turn
                QCoreApplication.postEvent(self, QEvent(_SCENE_CALL_OVER), Qt.EventPriority.HighEventPriority.value)
            return False
        if kind != _UpdateRequest or self._sending or not self._scene_call:
            return False
        self._scene_call = False
        self.held += 1
        if not self._waiting:
            QCoreApplication.postEvent(self, QEvent(_PAINT_HELD), Qt.EventPriority.LowEventPriority.value)
        self._waiting.add(watched)
        return True

    def event(self, event) -> bool:  # noqa: D102 -- the held paints, at the end of the turn's posted work
        if event.type() == _SCENE_CALL_OVER:
            self._scene_call = False
            return True
        if event.type() != _PAINT_HELD:
            return super().event(event)
        windows = list(self._waiting)
        self._waiting.clear()
        self._sending = True
        try:
            for window in windows:
                if shiboken6.isValid(window):
                    QCoreApplication.sendEvent(window, QEvent(_UpdateRequest))
        finally:
            self._sending = False
        return True


_paints: ScenePaints | None = None


def scene_paints() -> ScenePaints:
    """The process's one filter; pyqtgraph's scenes made from now on are watched by it."""
    global _paints
    if _paints is None:
        _paints = ScenePaints()
        made = pg.GraphicsScene.__init__

        def watched_init(scene, *args, **kwargs):
            made(scene, *args, **kwargs)
            _paints.watch_scene(scene)

        pg.GraphicsScene.__init__ = watched_init
    return _paints


def paint_once_per_turn(window: QWidget) -> ScenePaints:
    """Hold the update requests the scenes of ``window``'s views send it inside their calls."""
    paints = scene_paints()
    paints.watch_window(window)
    return paints
