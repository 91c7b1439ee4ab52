"""Nothing a learner must read is cut at 1366×768, a common laptop screen, in either language.

The window is sized to a laptop's screen (less a title bar and a taskbar), every dock is shown, every tab
opened once and the lab tour opened; then every visible label, table header and plot title is measured
against the room it is given (``visible_texts.clipped_texts``).  Word wrap, eliding with a tooltip and a
vertical scroll area are all fine; silent clipping is not.  A failure lists each cut text with the pixels
it needs and has: fix the panel's layout (wrap, elide with a tooltip, a shorter string), not the test.
"""

from __future__ import annotations

import pytest
from visible_texts import clipped_texts, open_everything

LAPTOP = (1366, 768)
DESKTOP_CHROME_PX = 60  # a window manager's title bar and a taskbar


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_nothing_is_cut_on_a_laptop_screen(qtbot, make_window, language):
    window = make_window(model_spec="demo", language=language)
    window.resize(LAPTOP[0], LAPTOP[1] - DESKTOP_CHROME_PX)
    open_everything(qtbot, window)
    qtbot.wait(300)
    found = []
    for dock in window.docks.values():  # each tab group: every dock once in front, its texts measured
        dock.raise_()
        qtbot.wait(100)
        found += [line for line in clipped_texts(window) if line not in found]
    # the passing messages a learner reads in the status bar, beside its permanent labels
    from attention_lab.ui.i18n import tr
    from attention_lab.ui.model_label import model_label
    from attention_lab.ui.number_format import fixed

    for message in (
        tr("status.loaded", name=model_label(window.session.model)),
        tr("kvbench.status", x=fixed(1.56, 2), identical=tr("kvbench.yes", k=20)),
    ):
        window.statusBar().showMessage(message)
        qtbot.wait(50)
        found += [line for line in clipped_texts(window) if line.startswith("status bar")]
    assert not found, f"{language}: {len(found)} texts cut at {LAPTOP[0]}×{LAPTOP[1]}:\n" + "\n".join(found)


@pytest.mark.parametrize("size", [LAPTOP, (1280, 720)], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_status_bar_shows_the_tour_offer_and_a_message_whole(qtbot, make_window, language, size):
    """Seen by a learner: the first start's tour offer was cut ("…do lab do capítu") by the labels beside
    it, and a passing message ran into the model's name ("connecti‹demo model")."""
    from PySide6.QtWidgets import QStatusBar

    from attention_lab.ui.i18n import tr
    from attention_lab.ui.model_label import model_label

    window = make_window(model_spec="demo", language=language)
    window.resize(size[0], size[1] - DESKTOP_CHROME_PX)
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=60_000)
    qtbot.wait(200)
    offer = window.tour.offer
    assert offer is not None and offer.isVisible()
    bar = window.statusBar()
    assert bar.minimumSizeHint().width() <= size[0]
    assert not [line for line in clipped_texts(window) if line.startswith("status bar") or "tour.offer" in line]
    assert offer.label.width() >= offer.label.fontMetrics().horizontalAdvance(offer.label.text())
    for message in (
        tr("status.loaded", name=model_label(window.session.model)),
        "proxy.example.org can't be reached: check the internet connection",
    ):
        bar.showMessage(message, 5000)
        qtbot.wait(50)
        painted = QStatusBar.currentMessage(bar)  # what Qt paints, left of the permanent labels
        assert bar.currentMessage() == message
        assert not [line for line in clipped_texts(window) if line.startswith("status bar")]
        assert painted == message or (painted.endswith("…") and bar.toolTip() == message)
        assert len(painted) >= min(len(message), 25), f"only “{painted}” of the message is shown"
    bar.clearMessage()
    qtbot.wait(50)
    assert window.status.model.squeeze == window.status.mode.squeeze == 0  # their room back


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_the_head_grids_query_axis_name_is_in_sight_without_scrolling(qtbot, make_window, language):
    """Seen by a learner: the mosaic of a layer's heads is taller than its dock at 1366×768, and the
    name of its rows' axis, centred on it, was cut by the dock's scroll ("onsulta (destino) ↓")."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QScrollArea

    from attention_lab.ui.panels.ids import PanelId

    window = make_window(model_spec="demo", language=language)
    window.resize(LAPTOP[0], LAPTOP[1] - DESKTOP_CHROME_PX)
    qtbot.waitUntil(lambda: window.last_state is not None and window.panel(PanelId.HEAD_GRID).has_data(), timeout=60_000)
    qtbot.wait(300)
    grid = window.panel(PanelId.HEAD_GRID)
    view = grid.grid_view
    scroll = window.docks[PanelId.HEAD_GRID].findChild(QScrollArea)
    assert view.height() > scroll.viewport().height()  # the case: the maps run below the dock
    label = grid.grid_plot.getAxis("left").label
    rect = view.mapFromScene(label.sceneBoundingRect()).boundingRect()
    top_left = view.mapTo(scroll.viewport(), rect.topLeft())
    in_viewport = QRect(top_left, rect.size())
    assert scroll.viewport().rect().contains(in_viewport), (in_viewport, scroll.viewport().rect())
