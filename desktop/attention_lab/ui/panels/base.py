"""What every docked panel has in common.

A panel is a thin view: it receives a finished
:class:`~attention_lab.core.analysis_state.AnalysisState` (plain tensors and dataclasses
computed on the worker) in :meth:`show_state`, re-labels itself in :meth:`retranslate`,
and asks for work only through the signals it declares (its intents), which
:func:`attention_lab.ui.wiring.connect_panel` connects to the session's methods, and the
session's results to the panel's ``show_…`` slots.  Panels never submit work themselves
and never call torch on the GUI thread for anything heavier than indexing.
"""

from __future__ import annotations

from typing import Callable

from PySide6.QtCore import QMetaMethod, Qt, Slot
from PySide6.QtWidgets import QWidget

from attention_lab.ui import number_format
from attention_lab.ui.i18n import translator
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.qt_compat import call_later

#: a panel that asks the worker about what it just drew (or showed) asks this long after: once
#: the layout and paint that drawing queued are done (they run on the next turn of the event
#: loop, before any timer this long).  Asked at once, the worker's model passes held the GIL
#: all through that paint (hundreds of Python calls back from Qt, each waiting its turn): the
#: Mask tab opened after an edit stalled 130-150 ms for ~40 ms of the GUI thread's own work.
ASK_AFTER_PAINT_MS = 40


class Panel(QWidget):
    """The interface every panel honours (tests/ui/test_panel_protocol.py checks each one):
    :meth:`show_state`, :meth:`has_data`, :meth:`retranslate`, :meth:`shutdown`,
    :meth:`session_ready`; and two optional abilities, answered by :attr:`exports_plot` /
    :attr:`exports_table`: :meth:`plot_for_export` and :meth:`table_for_export`."""

    #: stable objectName of the dock (saved layouts depend on it: never rename)
    panel_id: PanelId
    #: i18n key of the dock title
    title_key: str = ""
    #: the dock keeps its vertical scroll bar's room whether the panel scrolls or not: for a panel
    #: whose height follows its width (the head grid's square maps), so the bar its height brings
    #: up does not narrow it and change that height again (a relayout and a repaint per resize)
    keeps_scroll_bar_room: bool = False
    #: set by the window: called with the panel's id when the language changes; the window
    #: re-labels the panel later (:meth:`RedrawScheduler.language_later`: all nine
    #: re-labelled at once held the GUI thread 300-400 ms); None (a panel alone, in a test):
    #: it follows the language at once
    language_later: Callable[[str], None] | None = None

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(self.panel_id + ".widget")
        #: the AnalysisState shown (None until the first one arrives): one name in every panel,
        #: read by the learner checks and the tests
        self.state = None
        # a bound slot, not a lambda: Qt drops the connection when the widget is destroyed
        # (a lambda would outlive it and call retranslate() on a deleted widget)
        translator.language_changed.connect(self._language_changed)
        # spin boxes write their values with the locale they inherit from here (0,50 in Portuguese)
        self.setLocale(number_format.locale())

    @property
    def _state(self):
        """The old name of :attr:`state` in the mask, portrait, KV and shapes panels, kept while
        branches written against it merge; new code reads ``state``."""
        return self.state

    @_state.setter
    def _state(self, value) -> None:
        self.state = value

    #: closed as a window of its own (a panel alone: a test's, pytest-qt closes it and deletes it later)
    #: when the language changed: it takes its words when shown again, not while closed
    _closed_through_a_switch = False

    @Slot(str)
    def _language_changed(self, _language: str) -> None:
        if self.language_later is not None:
            self.language_later(self.panel_id)
            return
        if self.isWindow() and self.isHidden() and self.testAttribute(Qt.WidgetAttribute.WA_WState_ExplicitShowHide):
            # closed, maybe on its way to deletion with its plots: re-worded then, its legend's anchor
            # reached a ViewBox already deleted ("Internal C++ object (ViewBox) already deleted",
            # pyqtgraph's GraphicsWidgetAnchor, in a later test's switch)
            self._closed_through_a_switch = True
            return
        self.follow_language()

    def showEvent(self, event) -> None:  # noqa: N802 -- Qt's name
        super().showEvent(event)
        if self._closed_through_a_switch:
            self._closed_through_a_switch = False
            self.follow_language()

    def follow_language(self) -> None:
        """Re-label the panel and its numbers in the current language."""
        number_format.follow_language(self)
        self.retranslate()

    def retranslate(self) -> None:  # each panel re-labels its own widgets
        raise NotImplementedError

    def show_state(self, state) -> None:  # state: AnalysisState
        raise NotImplementedError

    def has_data(self) -> bool:
        """True once the panel shows a real result (the smoke test checks every panel)."""
        raise NotImplementedError

    def redraw_steps(self, state) -> list:
        """:meth:`show_state` cut into steps (callables) that together draw ``state``; the
        window's redraw scheduler (``ui/redraw.py``) gives each its own turn of the event loop.
        A panel with more than one pyqtgraph view cuts its drawing view by view: Qt paints
        the whole window once for each graphics scene that changed, all in the same turn
        (``QGraphicsScene`` dispatches its views' update requests at once), so two views
        changed together make one long stall instead of two short ones."""
        return [lambda: self.show_state(state)]

    def shutdown(self) -> None:
        """The window is closing: results on their way are not drawn, running work is cancelled."""

    def plot_for_export(self):
        """The plot File › Export writes as PNG/SVG (a pyqtgraph item or view), or None."""
        return None

    def table_for_export(self):
        """(header, rows) File › Export writes as CSV, or None."""
        return None

    @property
    def exports_plot(self) -> bool:
        return type(self).plot_for_export is not Panel.plot_for_export

    @property
    def exports_table(self) -> bool:
        return type(self).table_for_export is not Panel.table_for_export

    def build_later_part(self) -> bool:
        """Build one part of this panel left for later (a tab inside it not opened yet), if
        any; True if one was built.  The idle builder calls it one part per event-loop turn,
        so no turn waits for a whole panel; a part is also built when it is first shown."""
        return False

    def ask_after_paint(self, request: Callable[[], None]) -> None:
        """Call ``request`` (a panel's ask for work on what it shows) once the paint of what it
        just drew or showed is done, so that paint does not wait for the worker."""
        call_later(ASK_AFTER_PAINT_MS, self, request)

    def session_ready(self) -> None:
        """Called once the session listens to this panel's intents (panels that ask for work
        ask now for what they are showing)."""

    def is_served(self, intent: str) -> bool:
        """Whether anything listens to the signal named ``intent`` (a panel alone, in a test,
        has nobody to ask: it says so instead of waiting forever).

        By name, through the meta-object: PySide6 6.12's ``QMetaMethod.fromSignal(self.x)``
        keeps a reference to ``self`` on every call, so a panel that asked once was never
        freed, nor the window around it (+22 MB per closed window; the soak's memory grew
        without bound)."""
        meta = self.metaObject()
        for index in range(meta.methodCount()):
            method = meta.method(index)
            if method.methodType() == QMetaMethod.MethodType.Signal and method.name().data().decode() == intent:
                return self.isSignalConnected(method)
        raise ValueError(f"{type(self).__name__} has no signal {intent!r}")
