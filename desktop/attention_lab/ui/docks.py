"""The window's docks: one per panel, where each goes by default, and Qt's tab-bar leftover.

Every panel sits in a ``QDockWidget`` whose objectName is the panel's id (saved layouts
depend on it); the panel itself goes into the dock's holder widget when it is built (see
FIRST_VIEW_PANELS), so the dock's widget never changes.  The holder is inside a scroll
area: a panel keeps the size it needs to be read, and a dock smaller than that scrolls
instead of raising the window's minimum size (a 1366×768 laptop screen: the docks' own
minimums added up to a window 878 px tall, 1010 px once every tab had been opened).
"""

from __future__ import annotations

import importlib
import logging
from typing import Callable

from PySide6.QtCore import QEvent, QSize, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QMainWindow, QScrollArea, QTabBar, QVBoxLayout, QWidget

from attention_lab.ui.i18n import tr
from attention_lab.ui.panels.ids import PanelId
from attention_lab.ui.qt_compat import call_later

log = logging.getLogger(__name__)

# (module, class, where it docks by default) of every panel, in menu order.  All nine ship;
# a module missing from a broken install is skipped with a warning and the smoke test fails.
PANEL_MODULES = (
    ("attention_lab.ui.panels.token_editor", "TokenEditorPanel", "top"),
    ("attention_lab.ui.panels.head_grid", "HeadGridPanel", "left"),
    ("attention_lab.ui.panels.kv_bench", "KVBenchPanel", "left"),
    ("attention_lab.ui.panels.leakage", "LeakagePanel", "right"),
    ("attention_lab.ui.panels.mask", "MaskPanel", "right"),
    ("attention_lab.ui.panels.portrait", "PortraitPanel", "right"),
    ("attention_lab.ui.panels.shapes", "ShapesPanel", "right"),
    ("attention_lab.ui.panels.mask_designer", "MaskDesignerPanel", "right"),
    ("attention_lab.ui.panels.knockout", "KnockoutPanel", "left"),  # a tab beside the heads it changes (the right has five)
    ("attention_lab.ui.panels.generate", "GeneratePanel", "left"),  # a tab beside the KV benchmark it shows step by step
)
EXPECTED_PANELS = len(PANEL_MODULES)
#: the panels in sight in the default layout, built with the window; the others (behind a
#: tab) are built the first time their dock is shown, or asked for: the four of them were
#: 0.16 s of every start-up, and their first drawing another 0.13 s (measured)
FIRST_VIEW_PANELS = (PanelId.TOKEN_EDITOR, PanelId.HEAD_GRID, PanelId.LEAKAGE)
AREAS = {
    "top": Qt.DockWidgetArea.TopDockWidgetArea,
    "left": Qt.DockWidgetArea.LeftDockWidgetArea,
    "right": Qt.DockWidgetArea.RightDockWidgetArea,
}


class PanelScroll(QScrollArea):
    """A dock's scroll area that asks for what its panel would like (QScrollArea caps its size
    hint near 24 lines of text, so the layout handed the spare height to the token strip: 572
    of 768 px, measured).  Its minimum is the panel's width (plus the vertical scroll bar: a
    panel scrolls up and down, never sideways) and a few lines of height."""

    MIN_HEIGHT = 120

    def setWidget(self, widget: QWidget) -> None:  # noqa: N802 (Qt naming)
        super().setWidget(widget)
        widget.installEventFilter(self)  # its layout requests: a panel built or grown later

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt naming)
        if watched is self.widget() and event.type() == QEvent.Type.LayoutRequest:
            self.schedule_widen()
        return False

    def schedule_widen(self) -> None:
        if not self._widen_pending:  # one check per event-loop turn, however many requests
            self._widen_pending = True
            call_later(0, self, self.widen_dock_to_fit)  # dropped if the window closes first

    _widen_pending = False

    def widen_dock_to_fit(self) -> None:
        """The window sized its docks before this panel was built (panels behind tabs are built when first
        opened, and can be wider than the dock they land in): widen the dock to the panel's minimum, or its
        right edge is cut, since a panel never scrolls sideways."""
        self._widen_pending = False
        dock = self.parentWidget()
        window = dock.parentWidget() if dock is not None else None
        if not isinstance(dock, QDockWidget) or not isinstance(window, QMainWindow):
            return
        if dock.isFloating() or not dock.isVisible():
            return
        inner = self.widget()
        need = inner.minimumSizeHint().width() if inner is not None else 0
        if self.viewport().width() < need:
            scroll_bar = 0 if self.verticalScrollBar().isVisible() else self.verticalScrollBar().sizeHint().width()
            chrome = dock.width() - self.viewport().width() + scroll_bar  # the dock's frame, the scroll bar
            window.resizeDocks([dock], [need + chrome], Qt.Orientation.Horizontal)

    def sizeHint(self):  # noqa: N802
        inner = self.widget()
        return inner.sizeHint() if inner is not None else super().sizeHint()

    def minimumSizeHint(self):  # noqa: N802
        inner = self.widget()
        if inner is None:
            return super().minimumSizeHint()
        width = inner.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()
        return QSize(width, min(self.MIN_HEIGHT, inner.minimumSizeHint().height()))


class Docks:
    """The docks of ``window`` (built here, empty) and their default arrangement."""

    def __init__(self, window: QMainWindow, on_visibility: Callable[[PanelId, bool], None]):
        self.window = window
        self.classes: dict[PanelId, type] = {}
        self.docks: dict[PanelId, QDockWidget] = {}
        self.slots: dict[str, list[PanelId]] = {"top": [], "left": [], "right": []}
        self.missing: list[str] = []
        self._strip_refit_pending = False  # the strip is fitted again after the first analysis
        self._after_reset: tuple | None = None  # the window as the last Reset layout left it (reset_key)
        for module_name, class_name, slot in PANEL_MODULES:
            try:
                module = importlib.import_module(module_name)
            except ModuleNotFoundError as exc:
                if exc.name != module_name:
                    raise
                log.warning("panel module %s is missing; its dock is skipped", module_name)
                self.missing.append(module_name)
                continue
            cls = getattr(module, class_name)
            pid = PanelId(cls.panel_id)
            dock = QDockWidget(tr(cls.title_key), window)
            dock.setObjectName(pid.value)
            scroll = PanelScroll(dock)
            scroll.setObjectName(pid.value + ".scroll")
            scroll.setWidgetResizable(True)  # the panel fills the dock when the dock is big enough
            scroll.setFrameShape(QFrame.Shape.NoFrame)
            scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)  # the dock is as wide as the panel
            if cls.keeps_scroll_bar_room:
                scroll.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
            holder = QWidget()
            holder.setObjectName(pid.value + ".holder")
            QVBoxLayout(holder).setContentsMargins(0, 0, 0, 0)
            scroll.setWidget(holder)
            dock.setWidget(scroll)
            dock.setFeatures(
                QDockWidget.DockWidgetFeature.DockWidgetMovable
                | QDockWidget.DockWidgetFeature.DockWidgetClosable
                | QDockWidget.DockWidgetFeature.DockWidgetFloatable
            )
            dock.visibilityChanged.connect(lambda visible, pid=pid: on_visibility(pid, visible))
            dock.visibilityChanged.connect(lambda visible, scroll=scroll: visible and scroll.schedule_widen())
            self.classes[pid] = cls
            self.docks[pid] = dock
            self.slots[slot].append(pid)

    def holder(self, pid: PanelId) -> QWidget:
        """Where ``pid``'s panel goes (inside its dock's scroll area)."""
        return self.docks[pid].widget().widget()

    def arrange(self) -> None:
        """Tokens across the top; heads (and the KV tab) left; the lab steps as tabs on the right."""
        for slot, ids in self.slots.items():
            for i, pid in enumerate(ids):
                self.docks[pid].setFloating(False)
                if i == 0:
                    self.window.addDockWidget(AREAS[slot], self.docks[pid])
                else:
                    # straight into the tab group: adding first would stack the docks for a
                    # moment, and the window would keep the sum of their heights as its minimum
                    self.window.tabifyDockWidget(self.docks[ids[0]], self.docks[pid])
                self.docks[pid].show()
            if ids:
                self.docks[ids[0]].raise_()

    def apply_default_sizes(self, panel_of: Callable[[PanelId], QWidget]) -> None:
        """Column widths and the token strip's height; only meaningful once the window has its size.
        ``panel_of(id)``: the panel (built if it isn't yet)."""
        d, w = self.docks, self.window
        left, right, top = self.slots["left"], self.slots["right"], self.slots["top"]
        width = max(w.width(), 1000)
        if left and right:
            w.resizeDocks([d[left[0]], d[right[0]]], [int(width * 0.54), int(width * 0.46)], Qt.Orientation.Horizontal)
        if top:
            # the token strip gets the height it needs, the maps everything below it (the docks
            # scroll, so nothing else bounds the strip: a lone resize let it take 570 of 768 px)
            dock = d[top[0]]
            # + the dock's title bar (the dock is sized, not its panel); 24 before it is laid out
            title = dock.height() - dock.widget().height() if dock.isVisible() and dock.widget().height() > 0 else 24
            panel = panel_of(top[0])
            strip = self._height_for_window_width(dock, panel) + title
            below = [d[ids[0]] for ids in (left, right) if ids]
            rest = max(w.height() - strip - 80, 120)  # 80: menu, dock titles, tab bars, status bar
            w.resizeDocks([d[top[0]], *below], [strip] + [rest] * len(below), Qt.Orientation.Vertical)
            if panel.state is None and not self._strip_refit_pending:
                # sized before the first analysis: no chips and no guesses yet, shorter than the
                # strip will be (it scrolled by 8 px at 1200×720): fit it again once they are in
                self._strip_refit_pending = True
                w.state_shown.connect(lambda _state: call_later(0, w, lambda: self._refit_strip(panel_of)),
                                      Qt.ConnectionType.SingleShotConnection)

    def _reset_key(self, panel_of: Callable[[PanelId], QWidget]) -> tuple:
        """What a Reset layout depends on and sets: the window's size, the token strip's height for its
        text, and every dock's place, tab and size (``saveState``)."""
        top = self.slots["top"]
        strip = self._height_for_window_width(self.docks[top[0]], panel_of(top[0])) if top else 0
        return self.window.size().toTuple(), strip, bytes(self.window.saveState())

    def remember_reset(self, panel_of: Callable[[PanelId], QWidget]) -> None:
        """Note the layout a Reset layout has just set (its sizes applied: the layout activated)."""
        self.window.layout().activate()
        self._after_reset = self._reset_key(panel_of)

    def as_last_reset_left_it(self, panel_of: Callable[[PanelId], QWidget]) -> bool:
        """Whether the window is still as the last Reset layout left it: a Reset now would re-apply the
        same places and sizes, and its paint hold alone repaints every dock (turning updates back on
        updates the whole widget): ~130 paint events and 30-100 ms of GUI CPU for nothing."""
        return self._after_reset is not None and self._reset_key(panel_of) == self._after_reset

    def _refit_strip(self, panel_of: Callable[[PanelId], QWidget]) -> None:
        self._strip_refit_pending = False
        top = self.docks[self.slots["top"][0]]
        if top.width() < 0.9 * self.window.width():  # the tour beside it chose the row's height for both
            return
        self.apply_default_sizes(panel_of)

    def _height_for_window_width(self, dock: QDockWidget, panel: QWidget) -> int:
        """The height ``panel`` needs at the width it gets in ``dock`` (a top dock spans the
        window).  Not its sizeHint(): that lays its word-wrapped texts out for a narrower width,
        more lines, and the Tokens strip kept 40-60 px of blank under the guesses at 1366×768."""
        scroll = dock.widget()
        chrome = 0  # the dock's frame around the panel, less a scroll bar the right height removes
        if dock.isVisible() and dock.width() > 0:
            bar = scroll.verticalScrollBar()
            chrome = dock.width() - scroll.viewport().width() - (bar.width() if bar.isVisible() else 0)
        layout = panel.layout()
        if layout is None or not layout.hasHeightForWidth():
            return panel.sizeHint().height()
        return layout.totalHeightForWidth(max(self.window.width() - chrome, panel.minimumSizeHint().width()))

    def size_like_tab_in_sight(self, pid: PanelId, out_of_sight: Callable[[PanelId], bool]) -> bool:
        """Give ``pid``'s dock, behind a tab, the size of the dock in sight in its tab group; True if it changed.

        Qt lays out only the tab in sight: a dock behind it keeps the size it had when it was added
        (566 × 312 in a 1600 × 1000 window; the KV panel's 100 × 30) and gets its real size when its tab
        is first opened.  A panel built and drawn there in idle time was then laid out again, its plots
        resized and their axes drawn anew, in the turn of that first opening (the Mask panel's longest stall).
        Qt keeps the size it is given here (it only moves a dock behind a tab out of the window)."""
        dock = self.docks[pid]
        if dock.isFloating() or not out_of_sight(pid):
            return False
        in_sight = [other for other in self.window.tabifiedDockWidgets(dock)
                    if other.objectName() in self.docks and not out_of_sight(PanelId(other.objectName()))]
        if not in_sight or in_sight[0].size() == dock.size():
            return False
        dock.resize(in_sight[0].size())
        return True

    def in_default_places(self) -> bool:
        """Every dock in sight docked where :meth:`arrange` puts it: in its slot's area, in its slot's
        tab group with the other docks in sight (a closed dock is out of its group until shown again)."""
        window = self.window
        for slot, ids in self.slots.items():
            shown = [pid for pid in ids if not self.docks[pid].isHidden()]
            for pid in shown:
                dock = self.docks[pid]
                if dock.isFloating() or window.dockWidgetArea(dock) != AREAS[slot]:
                    return False
                group = {other.objectName() for other in window.tabifiedDockWidgets(dock)}
                if group != {other.value for other in shown if other is not pid}:
                    return False
        return True

    def reset(self, default_state, version: int) -> None:
        """The default layout again.  Docks still in their default places are only shown and raised:
        ``restoreState`` rebuilds every dock area, hides and shows every widget of every panel, and
        leaves two more tab bars behind each time (Qt 6.12: the old bars stay shown, stacked under
        the new ones and painted with them), so each Reset cost more than the last (300-350 ms in
        the 30-minute soak).  The sizes are set again by the window (:meth:`apply_default_sizes`)."""
        in_place = self.in_default_places()
        if in_place:
            for dock in self.docks.values():  # a closed dock comes back to its place...
                dock.show()
            self.window.layout().activate()
            in_place = self.in_default_places()  # ... unless it was moved before it was closed
        if not in_place:
            for dock in self.docks.values():
                if dock.isFloating():  # setFloating(False) on a docked one still costs ~5 ms (Qt 6.12)
                    dock.setFloating(False)
            bars_before = self._tab_bars()
            self.window.restoreState(default_state, version)
            self._hide_replaced_tab_bars(bars_before)
            for dock in self.docks.values():
                dock.show()
        for ids in self.slots.values():
            if ids:
                self.docks[ids[0]].raise_()

    def _tab_bars(self) -> list[QTabBar]:
        return [bar for bar in self.window.findChildren(QTabBar) if bar.parent() is self.window]

    @staticmethod
    def _tab_docks(bar: QTabBar) -> list:
        # each tab by the dock it stands for (Qt keeps the dock's address as the tab's data), not by its title
        return [bar.tabText(i) if bar.tabData(i) is None else bar.tabData(i) for i in range(bar.count())]

    def _hide_replaced_tab_bars(self, bars_before: list[QTabBar]) -> None:
        """``restoreState`` makes a new tab bar for each tab group and leaves the old one shown, with
        the same tabs, under it (Qt 6.12; only the new one is used from then on: the old ones stay
        hidden through resizes and docks closed and opened again, measured); the bar of a group a
        moved dock had left keeps its old tabs too.  Hide each old bar with a dock that a new bar now
        holds (a dock has one tab group); a bar Qt took back into use shares no dock with a new one."""
        self.window.layout().activate()  # the new bars get their tabs
        in_new_bars = {dock for bar in self._tab_bars() if bar not in bars_before for dock in self._tab_docks(bar)}
        for bar in bars_before:
            if bar.isVisible() and in_new_bars.intersection(self._tab_docks(bar)):
                bar.hide()

    def hide_stale_tab_bars(self) -> None:
        """Qt leaves behind the tab bar it made for a tab group's first two docks when a
        third one joins: still shown, and over the other dock area once the layout moves
        (a "Leakage diff | Mask" strip across the head grid, measured on Qt 6.12).  A bar
        whose tabs are the first tabs of a longer bar is such a leftover: it is hidden (Qt
        shows each bar it uses whenever it lays the docks out)."""
        bars = self._tab_bars()
        # each tab by the dock it stands for, not by its title: the leftover keeps the titles of its time,
        # so in a window opened in Portuguese it said "Leakage diff | Mask" beside "Vazamento | Máscara | …",
        # was never matched, and showed over the maps
        tabs = {id(bar): self._tab_docks(bar) for bar in bars}
        for bar in bars:
            mine = tabs[id(bar)]
            if any(len(tabs[id(other)]) > len(mine) and tabs[id(other)][: len(mine)] == mine for other in bars):
                bar.hide()
