"""Every panel honours the interface of ``ui/panels/base.Panel``, alone, from a real state,
with no window and no session: it shows a state, says it has data, re-labels itself, shuts
down, and exports what it declares it exports.  And the wiring has an entry for each one."""

from __future__ import annotations

import importlib
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.ui.docks import PANEL_MODULES  # noqa: E402
from attention_lab.ui.i18n import translator  # noqa: E402
from attention_lab.ui.panels.base import Panel  # noqa: E402
from attention_lab.ui.panels.ids import PanelId  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.wiring import WIRES, connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import build_state, load  # noqa: E402

LONG = 60_000
CLASSES = [getattr(importlib.import_module(module), name) for module, name, _slot in PANEL_MODULES]


@pytest.fixture(scope="module")
def state(tiny_checkpoint):
    return build_state(load(tiny_checkpoint))


@pytest.fixture
def panel(request, qtbot):
    widget = request.param()
    qtbot.addWidget(widget)
    widget.resize(900, 600)
    widget.show()
    yield widget
    translator.set_language("en")


def test_every_panel_has_one_id_and_a_wiring_entry():
    ids = [cls.panel_id for cls in CLASSES]
    assert sorted(ids) == sorted(PanelId) and len(set(ids)) == len(ids)
    assert set(WIRES) == set(PanelId)
    assert all(issubclass(cls, Panel) for cls in CLASSES)


@pytest.mark.parametrize("panel", CLASSES, indirect=True, ids=lambda cls: cls.__name__)
def test_shows_a_state_and_says_so(panel, state):
    assert panel.objectName() == f"{panel.panel_id}.widget"
    assert not panel.has_data() and panel.state is None
    panel.show_state(state)
    assert panel.has_data()
    assert panel.state is state  # one attribute name in every panel (the learner checks read it)


@pytest.mark.parametrize("panel", CLASSES, indirect=True, ids=lambda cls: cls.__name__)
def test_relabels_itself_in_each_language(panel, state):
    panel.show_state(state)
    for language in ("pt_BR", "en"):
        translator.set_language(language)  # emits language_changed: the panel's retranslate()
        panel.retranslate()
        assert panel.has_data()


@pytest.mark.parametrize("panel", CLASSES, indirect=True, ids=lambda cls: cls.__name__)
def test_exports_what_it_declares(panel, state, qtbot):
    """Once its own work is done (served by a session, as in the window), a panel exports
    exactly what it declares."""
    session = Session(InferenceWorker(name="test-panel-protocol"), parent=panel)
    try:
        connect_panel(session, panel)
        if panel.panel_id is PanelId.MASK:
            with qtbot.waitSignal(panel.modes_ready, timeout=LONG):
                panel.show_state(state)
        elif panel.panel_id is PanelId.KVBENCH:
            panel.show_state(state)
            panel.new_tokens.setValue(2)
            with qtbot.waitSignal(panel.benchmark_finished, timeout=LONG):
                assert panel.run_benchmark()
        elif panel.panel_id is PanelId.GENERATE:
            panel.show_state(state)
            with qtbot.waitSignal(panel.generation_shown, timeout=LONG):
                assert panel.next_token()  # the CSV is inside the head of a step: one step made
        else:
            panel.show_state(state)
        plot, table = panel.plot_for_export(), panel.table_for_export()
        assert (plot is not None) == panel.exports_plot
        assert (table is not None) == panel.exports_table
        if table is not None:
            header, rows = table
            assert header and rows and all(len(row) == len(header) for row in rows)
    finally:
        assert session.shutdown(5.0)


@pytest.mark.parametrize("panel", CLASSES, indirect=True, ids=lambda cls: cls.__name__)
def test_shuts_down_and_stays_usable(panel, state):
    panel.show_state(state)
    panel.shutdown()
    panel.shutdown()  # twice: the window's close and a test's teardown
    panel.show_state(state)
    assert panel.has_data()


def _map_plots(panel) -> list:
    """Every plot of the panel that holds an image (a map), colour bars aside."""
    import pyqtgraph as pg

    plots = []
    for view in panel.findChildren(pg.GraphicsView):
        for item in view.scene().items():
            if isinstance(item, pg.PlotItem) and not isinstance(item, pg.ColorBarItem):
                if any(isinstance(child, pg.ImageItem) for child in item.items):
                    plots.append(item)
    return plots


@pytest.mark.parametrize("panel", CLASSES, indirect=True, ids=lambda cls: cls.__name__)
def test_map_plots_never_auto_range(panel, state):
    """A map's range is always set by its panel (0 … n); auto-range left on measured all
    the plot's items on every item added and every range set (140 ms for the enlarged head).
    Checked when the panel is built and after it showed a state (the head grid builds its
    plots for the model's head count), with the parts it leaves for later built too."""
    while panel.build_later_part():  # the KV panel's stability tab, as the idle builder would
        pass
    before = _map_plots(panel)
    for plot in before:
        assert plot.getViewBox().state["autoRange"] == [False, False], plot
    panel.show_state(state)
    for plot in _map_plots(panel):
        assert plot.getViewBox().state["autoRange"] == [False, False], plot
    if panel.panel_id in (PanelId.HEAD_GRID, PanelId.LEAKAGE, PanelId.MASK, PanelId.KVBENCH):
        assert _map_plots(panel), "a panel with maps: the check above must have seen them"
