"""``qt_compat.call_later``: ``QTimer.singleShot(ms, context, fn)`` without PySide6 6.12's leak.

The 30-minute soak kept one closed window alive from minute 8 to the end: a call on its
way when the window was quit (the paint hold's check after a resize) held the window through its
callable, because PySide never frees a single-shot's callable whose context is deleted first.
"""

from __future__ import annotations

import ast
import gc
import weakref
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from attention_lab.ui.qt_compat import call_later


class _Owner(QObject):
    """A child of a widget that knows the widget, as the window's helpers know the window."""

    def __init__(self, widget: QWidget, calls: list):
        super().__init__(widget)
        self.widget = widget
        self.calls = calls

    def check(self) -> None:
        self.calls.append("called")


def _delete_now(widget: QWidget) -> None:
    widget.deleteLater()
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    QApplication.processEvents()


def _widget_kept_after_a_pending_call(qtbot, schedule) -> tuple[bool, list]:
    calls: list = []
    widget = QWidget()
    owner = _Owner(widget, calls)
    schedule(owner)
    gone = weakref.ref(widget)
    _delete_now(widget)  # before the event loop ran the call
    del widget, owner
    gc.collect()
    qtbot.wait(20)
    return gone() is not None, calls


def test_a_call_whose_context_is_deleted_first_is_dropped_and_frees_what_it_holds(qtbot):
    kept, calls = _widget_kept_after_a_pending_call(qtbot, lambda owner: call_later(0, owner, owner.check))
    assert not kept, "a pending call kept its deleted context's widget alive"
    assert calls == []


def test_pyside_still_keeps_a_single_shot_callable_whose_context_was_deleted(qtbot):
    """The bug call_later works around (PySide6 6.12): if this starts failing, PySide fixed it and
    call_later can become QTimer.singleShot again."""
    kept, _ = _widget_kept_after_a_pending_call(qtbot, lambda owner: QTimer.singleShot(0, owner, owner.check))
    assert kept


def test_a_call_runs_once_and_leaves_nothing_behind(qtbot):
    calls: list = []
    widget = QWidget()
    qtbot.addWidget(widget)
    owner = _Owner(widget, calls)
    call_later(5, owner, owner.check)
    assert calls == []
    qtbot.waitUntil(lambda: calls == ["called"], timeout=2_000)
    qtbot.wait(20)
    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    assert calls == ["called"]
    assert owner.children() == []  # the call's holder went once it ran


def test_a_zero_delay_call_keeps_its_place_among_single_shots(qtbot):
    """Posted as ``singleShot(0, …)`` is: ``ui/redraw.py`` orders its steps behind posted work."""
    order: list = []
    context = QObject()
    QTimer.singleShot(0, context, lambda: order.append("before"))
    call_later(0, context, lambda: order.append("call_later"))
    QTimer.singleShot(0, context, lambda: order.append("after"))
    qtbot.waitUntil(lambda: len(order) == 3, timeout=2_000)
    assert order == ["before", "call_later", "after"]


def test_the_app_schedules_with_a_context_only_through_call_later():
    """``QTimer.singleShot`` with a context (three arguments) leaks its callable when the context
    goes first; the app's code uses ``call_later`` instead (a context-free single-shot stays
    allowed: the local event loops' ``loop.quit``)."""
    import attention_lab

    package = Path(attention_lab.__file__).parent
    calls = [
        f"{path.relative_to(package)}:{node.lineno}"
        for path in package.rglob("*.py")
        if path.name != "qt_compat.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "singleShot"
        and len(node.args) >= 3
    ]
    assert calls == [], f"QTimer.singleShot with a context keeps its callable if the context goes first: {calls}"
