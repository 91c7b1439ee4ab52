"""Mask, head portrait, KV cache and shapes panels on a real model run (pytest-qt, offscreen).

Each panel is fed an AnalysisState computed by the app's own analysis function on the tiny
checkpoint; model work runs on the real InferenceWorker, so results arrive through the same
queued signals as in the app.  Waits use qtbot.waitSignal / waitUntil, never sleep.
"""

from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest
import pyqtgraph as pg
import torch

pytest.importorskip("pytestqt")

from PySide6.QtCore import QEvent, QObject, Qt, Signal  # noqa: E402
from PySide6.QtGui import QPaintEvent  # noqa: E402

from attention_lab.core.analysis import (  # noqa: E402
    head_portrait,
    kv_stability,
    mask_mode_report,
)
from attention_lab.core import kvbench  # noqa: E402
from attention_lab.core.jobs import TargetKVRun
from attention_lab.core.job_protocol import KV_BENCH, MASK_MODES  # noqa: E402
from attention_lab.core.kvbench import KVResult, KVStep  # noqa: E402
from attention_lab.core.lens import MaskMode  # noqa: E402
from attention_lab.ui.i18n import tr, translator  # noqa: E402
from attention_lab.ui.number_format import integer  # noqa: E402
from attention_lab.ui.panels.kv_bench import KVBenchPanel, time_ceiling  # noqa: E402
from attention_lab.ui.panels.mask import MODES, MaskPanel  # noqa: E402
from attention_lab.ui.panels.panel_kit import fmt_number  # noqa: E402
from attention_lab.core import roles  # noqa: E402
from attention_lab.ui.panels.portrait import COLUMNS, PortraitPanel  # noqa: E402
from attention_lab.ui.panels.shapes import ShapesPanel, format_shape  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.wiring import connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import build_state, load  # noqa: E402

LONG = 60_000  # ms: the machine is shared with a training run


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(autouse=True)
def no_thread_left():
    before = set(threading.enumerate())
    yield
    left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
    assert not left, f"threads left running: {left}"


@pytest.fixture(autouse=True)
def english():
    translator.set_language("en")
    yield
    translator.set_language("en")


@pytest.fixture(scope="module")
def tiny_model(tiny_checkpoint):
    return load(tiny_checkpoint)


@pytest.fixture(scope="module")
def state(tiny_model):
    return build_state(tiny_model)  # the chapter's sentence, 8 tokens, edit at the last one


@pytest.fixture
def worker(qtbot):
    w = InferenceWorker(name="test-panels-b")
    yield w
    assert w.shutdown(5.0), "the worker thread did not stop"


class SyncRunner(QObject):
    """A worker stand-in that runs each job at once on the calling thread (the worker's
    protocol: ``cancel`` and ``progress`` keywords, callbacks on the caller's thread)."""

    busy_changed = Signal(bool)
    is_shut_down = False

    def __init__(self):
        super().__init__()
        self.submitted: list[str] = []

    def submit(self, kind, fn, *args, on_result=None, on_error=None, on_progress=None, on_cancelled=None):
        self.submitted.append(kind)
        try:
            result = fn(*args, cancel=threading.Event(), progress=on_progress or (lambda _p: None))
        except Exception as exc:  # noqa: BLE001
            if on_error:
                on_error(exc, repr(exc))
        else:
            if on_result:
                on_result(result)

        class _Job:
            done = True

            def cancel(self):
                pass

        return _Job()

    def cancel(self, kind=None):
        pass


def serve(panel, worker):
    """Wire ``panel`` to a session on ``worker``, as the main window does (the session lives as
    long as the panel)."""
    session = Session(worker, parent=panel)
    connect_panel(session, panel)
    return session


def shown(qtbot, panel, w=1000, h=700):
    qtbot.addWidget(panel)
    panel.resize(w, h)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


# ---------------------------------------------------------------------------- mask
def test_mask_panel_grid_ascii_and_modes(qtbot, worker, state, tiny_model):
    panel = shown(qtbot, MaskPanel())
    serve(panel, worker)
    assert not panel.has_data()
    with qtbot.waitSignal(panel.modes_ready, timeout=LONG):
        panel.show_state(state)
    assert panel.has_data()
    n = state.n_tokens
    # the bar plots are built one per turn after the first paint: the modes can arrive before the second
    qtbot.waitUntil(lambda: len(panel.bar_plots.findChildren(pg.PlotWidget)) == 2, timeout=LONG)

    # the grid: n × n, allowed cells light, the future dark
    image = panel.grid_image.image
    assert image.shape[:2] == (n, n)
    assert (image[0, 1, :3] != image[1, 0, :3]).any()
    assert (image[1, 0] == image[n - 1, 0]).all() and (image[0, n - 1] == image[n - 2, n - 1]).all()

    # the print: one line per token, "." above the diagonal only
    lines = panel.ascii_text().splitlines()
    assert len(lines) == n + 1
    cells = [line.split("[", 1)[1].rstrip("]").split() for line in lines[1:]]
    assert [row.count(".") for row in cells] == [n - 1 - i for i in range(n)]

    details = panel.mode_details()
    assert set(details) == set(MODES)
    # the panel's numbers are the core's report for the same edit
    report = {r.mode: r for r in mask_mode_report(tiny_model.lens, state.ids, state.layer, state.position, state.replacement_id)}
    for mode, d in details.items():
        assert d.row.max_leak_before == report[mode].max_leak_before
        assert d.row.future_weight == report[mode].future_weight
        assert d.leak[: state.position].max() == pytest.approx(report[mode].max_leak_before, abs=0)

    # −∞ (and its finite stand-ins): rows sum to 1, no weight on the future, exactly no leak
    for mode in ("-inf", "finfo.min", "-1e9"):
        assert abs(details[mode].row_sums - 1).max() < 1e-5
        assert details[mode].row.future_weight == 0.0
        assert (details[mode].leak[: state.position] == 0).all()
    # zeroing the weight after the softmax: rows no longer sum to 1
    zas = details["zero-after-softmax"].row_sums
    assert zas.min() < 0.99
    assert details["zero-after-softmax"].row.future_weight == 0.0
    # zeroing the score: e⁰ = 1, the future gets weight and leaks into the past
    assert details["zero-score"].row.future_weight > 0
    assert details["zero-score"].row.max_leak_before > 0

    # the table says so, and the selected mode's explanation follows the selector
    verdicts = {MODES[r]: panel.table.item(r, 4).text() for r in range(len(MODES))}
    assert verdicts["-inf"] == "works"
    assert "leaks" in verdicts["zero-score"]
    assert "sum" in verdicts["zero-after-softmax"]
    panel.set_mode(MaskMode.ZERO_SCORE)
    assert "still gets up to" in panel.selected_text.text()
    assert panel.sums_bars.opts["height"] is not None and len(panel.sums_bars.opts["height"]) == n
    panel.set_mode("zero-after-softmax")
    assert "instead of 1" in panel.selected_text.text()
    header, rows = panel.table_for_export()
    assert len(rows) == len(MODES) and header[0] == "mode"


def test_mask_panel_ascii_prints_a_head(qtbot, state):
    panel = shown(qtbot, MaskPanel())
    panel.show_state(state)
    panel.ascii_choice.setCurrentIndex(1 + 3)  # head 3
    lines = panel.ascii_text().splitlines()
    first = lines[1].split("[", 1)[1].rstrip("]").split()
    assert first[0] == "1.00" and first[1:] == ["."] * (state.n_tokens - 1)
    last = [float(v) for v in lines[-1].split("[", 1)[1].rstrip("]").split()]
    assert last == pytest.approx(state.attention_causal[3, -1].tolist(), abs=0.006)


def test_mask_panel_computes_only_when_visible(qtbot, state):
    runner = SyncRunner()
    panel = MaskPanel()
    qtbot.addWidget(panel)
    serve(panel, runner)
    panel.show_state(state)
    assert runner.submitted == []  # hidden (e.g. a tab behind another): nothing runs
    assert panel.has_data()  # the grid and the print come from the state alone
    panel.show()
    qtbot.waitUntil(lambda: panel.mode_details() is not None, timeout=LONG)
    assert runner.submitted == [MASK_MODES]
    panel.show_state(state)  # same text, same edit: no recompute
    assert runner.submitted == [MASK_MODES]


def test_mask_panel_asks_for_its_modes_after_the_paint(qtbot, state, tiny_model):
    """Shown, or drawing a new edit in sight, the panel asks the worker on a later turn, once the
    paint that queued is done: asked at once, the worker's model passes held the GIL through that
    paint (the Mask tab opened after an edit: a 130-150 ms stall)."""
    runner = SyncRunner()
    panel = shown(qtbot, MaskPanel())
    serve(panel, runner)

    panel.show_state(state)  # an edit drawn in sight
    assert runner.submitted == []  # not with the drawing itself: on a later turn
    qtbot.waitUntil(lambda: panel.mode_details() is not None, timeout=LONG)
    assert runner.submitted == [MASK_MODES]

    panel.hide()
    panel.show_state(build_state(tiny_model, position=state.position - 1))  # another edit, out of sight
    qtbot.wait(100)
    assert runner.submitted == [MASK_MODES]  # out of sight: nothing asked
    panel.show()  # the tab opened
    assert runner.submitted == [MASK_MODES]
    qtbot.waitUntil(lambda: panel.mode_details() is not None, timeout=LONG)
    assert runner.submitted == [MASK_MODES] * 2


class HoldingRunner(SyncRunner):
    """A worker stand-in that takes each job and runs it only when ``release`` is called: a
    measurement under way meanwhile."""

    def __init__(self):
        super().__init__()
        self.held: list = []

    def submit(self, kind, fn, *args, on_result=None, on_error=None, on_progress=None, on_cancelled=None):
        self.submitted.append(kind)
        self.held.append((fn, args, on_result))

        class _Job:
            done = False

            def cancel(self):
                pass

        return _Job()

    def release(self) -> None:
        held, self.held = self.held, []
        for fn, args, on_result in held:
            on_result(fn(*args, cancel=threading.Event(), progress=lambda _p: None))


def test_mask_panel_asking_for_its_modes_changes_only_its_status(qtbot, state, tiny_model):
    """Asking the worker (on the turn after the paint) filled the table and the bar plots
    again with what they already showed, and all three plots were repainted while the worker measured
    (each of their Python calls waiting on its GIL): the Mask tab's first opening's longest stall.
    Meanwhile the sentence under the table keeps its room, so the plots keep their size."""
    runner = HoldingRunner()
    panel = shown(qtbot, MaskPanel())
    serve(panel, runner)
    panel.show_state(state)
    qtbot.waitUntil(lambda: bool(runner.held), timeout=LONG)
    runner.release()
    qtbot.waitUntil(lambda: panel.mode_details() is not None and panel._bar_plots_built == 2, timeout=LONG)
    qtbot.wait(50)  # laid out
    sentence = panel.selected_text.height()
    plots = [panel.sums_plot, panel.leak_plot]
    sizes = [plot.size() for plot in plots]

    panel.show_state(build_state(tiny_model, position=state.position - 1))  # an edit: no modes yet
    assert panel.status.text() == tr("mask.computing") and panel.selected_text.text() == ""
    panel.table.item(0, 0).setData(Qt.ItemDataRole.UserRole, "drawn by show_state")
    qtbot.waitUntil(lambda: bool(runner.held), timeout=LONG)  # asked, on a later turn
    assert panel.table.item(0, 0).data(Qt.ItemDataRole.UserRole) == "drawn by show_state"  # not filled again
    assert panel.status.text() == tr("mask.computing")
    qtbot.wait(50)
    assert panel.selected_text.height() == sentence
    assert [plot.size() for plot in plots] == sizes
    runner.release()
    assert panel.mode_details() is not None and panel.selected_text.text() != "" and panel.status.text() == ""


def test_switching_the_mask_mode_lays_out_no_plot_and_keeps_the_grid_and_table(qtbot, state):
    """Against the soak's ``set_mask_mode`` stalls, a mode switch changes the future cells' word,
    the selected row and the sentence and bars under the table, nothing else.  The sentence grew and
    shrank by a line between modes (the two bar plots under it laid out again, every switch), the
    grid's legend came and went (the grid's plot resized), and the picture, the axes and the table's
    25 cells were made again each time.  Now the sentence keeps the room of the tallest one shown
    (once every mode has been seen, no switch lays a plot out), the legend's room stays while a mode
    needs it, and the cells are changed in place where they differ."""
    from paint_counter import EventCounter

    panel = shown(qtbot, MaskPanel())
    serve(panel, SyncRunner())
    panel.show_state(state)
    qtbot.waitUntil(lambda: panel.mode_details() is not None and panel._bar_plots_built == 2, timeout=LONG)
    qtbot.wait(50)  # laid out
    plots = {"grid": panel.grid_plot, "sums": panel.sums_plot, "leak": panel.leak_plot}
    picture = panel.grid_image.image
    panel.table.item(0, 0).setData(Qt.ItemDataRole.UserRole, "made once")
    verdicts = [panel.table.item(r, 4).text() for r in range(len(MODES))]
    for mode in MODES[1:]:  # the learner has seen every mode once
        panel.set_mode(mode)
        qtbot.wait(30)
    resizes = {name: EventCounter(plot, QEvent.Type.Resize) for name, plot in plots.items()}
    sentences = set()
    for mode in [MODES[0], *MODES[1:], *MODES]:
        panel.set_mode(mode)
        qtbot.wait(30)
        sentences.add(panel.selected_text.text())
        # what the mode shows follows it: its row, its word in the future's cells, its sentence
        assert panel.table.currentRow() == MODES.index(mode)
        future = {text for text, x, y in panel.cell_labels.texts() if x > y}
        assert future == {tr(f"mask.cell.{mode}")}
        assert tr(f"mask.mode.{mode}") in panel.selected_text.text()
        assert panel.sums_bars.opts["height"] == pytest.approx(panel.mode_details()[mode].row_sums.mean(0))
    assert len(sentences) > 2
    assert {name: counter.count for name, counter in resizes.items()} == {name: 0 for name in plots}
    assert panel.grid_image.image is picture
    assert panel.table.item(0, 0).data(Qt.ItemDataRole.UserRole) == "made once"
    assert [panel.table.item(r, 4).text() for r in range(len(MODES))] == verdicts

    # a new edit's numbers still reach the kept cells
    panel.show_state(build_state(panel.state.model, position=state.position - 1))
    qtbot.waitUntil(lambda: panel.mode_details() is not None, timeout=LONG)
    details = panel.mode_details()
    assert panel.table.item(0, 3).text() == fmt_number(details[MODES[0]].row.max_leak_before)


def test_mask_panel_builds_its_bar_plots_one_per_part_or_when_first_painted(qtbot, state, tiny_model):
    """The two bar plots are left for later (the whole panel in one turn was the idle build's
    longest step): one per :meth:`build_later_part`, drawn with the newest numbers when the
    second arrives; a panel painted before they are built builds them on the next two turns."""
    def measured_panel():
        panel = MaskPanel()
        qtbot.addWidget(panel)
        serve(panel, SyncRunner())
        return panel

    def plots(panel):
        return [w for w in panel.bar_plots.findChildren(pg.PlotWidget)]

    early = measured_panel()
    assert plots(early) == []
    assert early.build_later_part() and len(plots(early)) == 1  # one plot per part
    assert early.build_later_part() and len(plots(early)) == 2
    assert not early.build_later_part()
    late = measured_panel()
    late.show_state(state)
    late.resize(1000, 700)
    built_per_turn = []  # the plots there after each turn's build
    build = late._build_bar_plots
    late._build_bar_plots = lambda: (build(), built_per_turn.append(len(plots(late))))
    late.show()  # in sight before its parts: built on the two turns after its first paint, one each
    qtbot.waitUntil(lambda: late.mode_details() is not None and len(plots(late)) == 2, timeout=LONG)
    assert built_per_turn == [1, 2]  # (both in one turn: the soak's set_mask_mode stalls)
    early.show_state(state)
    early.resize(1000, 700)
    early.show()
    qtbot.waitUntil(lambda: early.mode_details() is not None, timeout=LONG)
    for panel in (early, late):  # the same drawing, whichever way the plots came
        assert panel.sums_plot.getPlotItem().getAxis("left").labelText == tr("mask.rowsums.y")
        assert len(panel.sums_bars.opts["height"]) == state.n_tokens
        assert len(panel.leak_bars.opts["height"]) == state.n_tokens
    assert list(early.leak_bars.opts["height"]) == list(late.leak_bars.opts["height"])
    assert early.selected_text.text() == late.selected_text.text() != ""


def test_mask_panel_painted_many_times_before_its_plots_asks_for_one_build(qtbot, state):
    """Each paint before the bar plots exist posted another zero-delay build (harmless, guarded,
    but a timer per paint): one build is on its way until it has run (it posts the second plot's)."""
    panel = MaskPanel()
    qtbot.addWidget(panel)
    serve(panel, SyncRunner())
    builds = []
    build = panel._build_bar_plots
    panel._build_bar_plots = lambda: (builds.append(1), build())  # what the paint posts
    panel.show_state(state)
    panel.resize(1000, 700)
    panel.show()
    for _ in range(4):  # painted four times in one turn, before the event loop runs the posted build
        panel.paintEvent(QPaintEvent(panel.rect()))
    qtbot.waitUntil(lambda: len(panel.bar_plots.findChildren(pg.PlotWidget)) == 2, timeout=LONG)
    qtbot.wait(50)
    assert builds == [1, 1]  # one turn per plot, not one per paint
    panel.paintEvent(QPaintEvent(panel.rect()))  # built: painting posts nothing more
    qtbot.wait(50)
    assert builds == [1, 1]


# ---------------------------------------------------------------------------- portrait
def test_portrait_table_scatter_induction_and_click(qtbot, worker, state, tiny_model):
    panel = shown(qtbot, PortraitPanel())
    serve(panel, worker)
    panel.show_state(state)
    heads = tiny_model.lens.config.n_head
    assert panel.has_data()
    assert panel.table.rowCount() == heads
    assert len(panel.scatter.points()) == heads

    # numbers are the core's portrait of the same layer
    expected = head_portrait(state.attention_causal, layer_offset=state.layer)
    assert [(s.head, s.mean_distance) for s in panel.stats()] == [(s.head, s.mean_distance) for s in expected]
    col = {panel.table.horizontalHeaderItem(c).text(): c for c in range(panel.table.columnCount())}
    panel.table.sortItems(col["Head"], Qt.SortOrder.AscendingOrder)
    assert float(panel.table.item(5, col["Entropy"]).text()) == pytest.approx(expected[5].entropy, abs=5e-4)

    # induction scores arrive from the worker, once per model
    qtbot.waitUntil(lambda: panel.induction_for(0) is not None, timeout=LONG)
    direct, _ids = roles.model_induction(tiny_model.lens, tiny_model.tokenizer)  # the one measurement
    for h in range(heads):
        assert panel.induction_for(h) == pytest.approx(float(direct[state.layer, h]), abs=1e-6)
    assert panel.table.item(0, col["Induction"]).text() == f"{float(direct[state.layer, 0]):.3f}"

    # sortable numerically
    panel.table.sortItems(col["Entropy"], Qt.SortOrder.AscendingOrder)
    shown_entropies = [float(panel.table.item(r, col["Entropy"]).text()) for r in range(heads)]
    assert shown_entropies == sorted(shown_entropies)

    # clicking a row selects that head in the grid (signal to the window)
    row = 4
    head = int(panel.table.item(row, col["Head"]).text())
    rect = panel.table.visualItemRect(panel.table.item(row, col["Roles"]))
    with qtbot.waitSignal(panel.head_selected, timeout=5000) as blocker:
        qtbot.mouseClick(panel.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert blocker.args == [state.layer, head]
    # and clicking a point of the scatter does too
    point = panel.scatter.points()[7]
    with qtbot.waitSignal(panel.head_selected, timeout=5000) as blocker:
        panel.scatter.sigClicked.emit(panel.scatter, [point], None)
    assert blocker.args == [state.layer, 7]

    # a new state of the same model does not recompute induction
    calls = []
    panel.induction_wanted.connect(calls.append)
    panel.show_state(build_state(tiny_model, "A different text for the same model"))
    assert calls == []
    assert panel.induction_for(0) is not None


def _chapter_roles(state, tiny_model, rules=None):
    scores, _ids = roles.model_induction(tiny_model.lens, tiny_model.tokenizer)
    return roles.role_map(state.overview, state.n_tokens, scores, rules)


def test_portrait_thresholds_recompute_the_chapters_roles(qtbot, state, tiny_model):
    panel = shown(qtbot, PortraitPanel())
    serve(panel, SyncRunner())
    panel.show_state(state)
    assert panel.induction_for(0) is not None  # the synchronous runner already delivered
    # the controls are core.roles.RoleRules' fields with its defaults
    assert panel.thresholds() == roles.RoleRules()
    panel.set_threshold("sink", 0.0)  # every head now parks "enough" on token 0
    assert all("sink" in panel.roles_of(s.head) for s in panel.stats())
    col = len(COLUMNS) - 1
    assert all("sink" in panel.table.item(r, col).text() for r in range(panel.table.rowCount()))
    panel.reset_thresholds()
    expected = {r.head: r.roles for r in _chapter_roles(state, tiny_model) if r.layer == state.layer}
    assert {s.head: panel.roles_of(s.head) for s in panel.stats()} == expected
    header, rows = panel.table_for_export()
    assert header[:2] == ["layer", "head"] and len(rows) == len(expected)
    assert [row[-1] for row in rows] == [" ".join(expected[row[1]]) for row in rows]


def test_portrait_says_where_a_missing_role_is_and_show_opens_it(qtbot, state, tiny_model):
    """A threshold between the shown layer's best previous-token weight and another layer's:
    the shown layer has none, the line names the other layer's heads with their measured
    weights, and "Show" asks for the strongest of them."""
    panel = shown(qtbot, PortraitPanel())
    serve(panel, SyncRunner())
    by_layer = {}
    for s in state.overview:
        by_layer.setdefault(s.layer, []).append(s.previous_token)
    shown_layer, other = sorted(by_layer, key=lambda layer: max(by_layer[layer]))  # the weaker layer is shown
    cut = (max(by_layer[shown_layer]) + max(by_layer[other])) / 2
    layer_state = state if state.layer == shown_layer else build_state(tiny_model, layer=shown_layer)
    panel.show_state(layer_state)
    panel.set_threshold("previous_token", cut)  # (the random model's weights differ in the third decimal)
    rules = panel.thresholds()
    table = _chapter_roles(layer_state, tiny_model, rules)
    found = roles.where(table, "previous-token", shown_layer)
    assert not found.here and found.nearest_layer == other
    line = panel.where_box.lines["previous-token"].text()
    assert line == roles.where_sentence(found, "en")
    assert f"none in layer {shown_layer}" in line and f"layer {other} has" in line
    best = found.nearest()[0]
    assert f"head {best.head} ({best.score:.2f})" in line  # the measured weight, not a fixed text
    assert panel.where_box.buttons["previous-token"].isVisibleTo(panel)
    with qtbot.waitSignal(panel.head_selected, timeout=5000) as blocker:
        qtbot.mouseClick(panel.where_box.buttons["previous-token"], Qt.MouseButton.LeftButton)
    assert blocker.args == [other, best.head]
    # a role the shown layer holds has no button
    panel.set_threshold("previous_token", 0.0)
    assert not panel.where_box.buttons["previous-token"].isVisibleTo(panel)
    # and in Portuguese
    panel.set_threshold("previous_token", rules.previous_token)
    translator.set_language("pt_BR")
    assert panel.where_box.lines["previous-token"].text() == roles.where_sentence(found, "pt_BR")
    assert f"nenhuma na camada {shown_layer}" in panel.where_box.lines["previous-token"].text()


def test_portrait_refill_in_place_keeps_sort_and_shows_the_new_numbers(qtbot, state, tiny_model):
    """A new analysis changes the rows' texts (no new items: those relaid the table out on
    every edit) and keeps the user's sort."""
    panel = shown(qtbot, PortraitPanel())
    serve(panel, SyncRunner())
    panel.show_state(state)
    col = {panel.table.horizontalHeaderItem(c).text(): c for c in range(panel.table.columnCount())}
    panel.table.sortItems(col["Entropy"], Qt.SortOrder.DescendingOrder)
    items_before = {id(panel.table.item(r, c)) for r in range(panel.table.rowCount()) for c in range(len(col))}

    other = build_state(tiny_model, "A different text for the same model, a little longer")
    panel.show_state(other)
    expected = {s.head: s for s in head_portrait(other.attention_causal, layer_offset=other.layer)}
    rows = panel.table.rowCount()
    assert rows == len(expected)
    for r in range(rows):
        head = int(panel.table.item(r, col["Head"]).text())
        assert float(panel.table.item(r, col["Entropy"]).text()) == pytest.approx(expected[head].entropy, abs=5e-4)
        assert panel.table.item(r, col["Roles"]).text()  # every cell filled
    shown_entropies = [float(panel.table.item(r, col["Entropy"]).text()) for r in range(rows)]
    assert shown_entropies == sorted(shown_entropies, reverse=True)
    items_after = {id(panel.table.item(r, c)) for r in range(rows) for c in range(len(col))}
    assert items_after == items_before
    # the scatter's "h3" labels are reused too, one per head, at the head's point
    labels = panel._labels.shown
    assert 1 <= len(labels) <= rows  # heads whose labels would overlap share one ("h4, h8")
    named = [name.strip() for label in labels for name in label.toPlainText().split(",")]
    assert sorted(named) == sorted(f"h{h}" for h in expected)  # every head named once


# ---------------------------------------------------------------------------- KV cache
def test_kv_benchmark_runs_on_request_and_completes(qtbot, worker, state, tiny_model):
    panel = shown(qtbot, KVBenchPanel())
    serve(panel, worker)
    panel.show_state(state)
    assert panel.has_data()
    assert panel.new_tokens.value() == 50
    assert panel.result() is None and not panel.running  # never by surprise
    assert "2 (K and V) × 2 layers × 12 heads × 4 (d_k)" in panel._result_labels["cache_size"].text()

    assert panel.repetitions.value() == kvbench.DEFAULT_REPETITIONS  # core's default
    panel.new_tokens.setValue(12)
    panel.repetitions.setValue(1)
    steps = []
    panel.benchmark_step.connect(steps.append)
    redraws = []
    set_data = panel.curve_with.setData
    panel.curve_with.setData = lambda *a, **k: (redraws.append(panel.plot.getPlotItem().viewRange()), set_data(*a, **k))[1]
    with qtbot.waitSignal(panel.benchmark_finished, timeout=LONG) as blocker:
        assert panel.run_benchmark()
        assert panel.running and not panel.run_button.isEnabled() and panel.cancel_button.isEnabled()
    result = blocker.args[0]
    assert result.identical is True
    assert result.new_tokens == 12 and len(result.generated_ids) == 12
    assert len(steps) == 24  # 12 per mode, delivered live
    # the live curve follows at most ~10 times a second (a repaint per token stalled the
    # window), and the finished run is drawn in full
    assert 1 <= len(redraws) < len(steps)
    # no auto-range: the token axis spans the run's 12 tokens from the first redraw on (each
    # redraw sees the range the one before set), and the time axis tops out at a 1-2-5
    # ceiling over the slowest token
    start = state.n_tokens
    assert all(tuple(x) == (start - 0.5, start + 11.5) for x, _y in redraws[1:])
    assert tuple(panel.plot.getPlotItem().viewRange()[0]) == (start - 0.5, start + 11.5)
    vb = panel.plot.getPlotItem().getViewBox()
    assert vb.state["autoRange"] == [False, False]
    slowest = max(max(result.per_token_with), max(result.per_token_without)) * 1000.0
    qtbot.waitUntil(lambda: vb.viewRange()[1] == [0, time_ceiling(slowest * 1.08)])  # fitted a turn after the curves
    assert not panel.running and panel.run_button.isEnabled() and not panel.cancel_button.isEnabled()
    assert panel.progress.value() == panel.progress.maximum()
    assert panel._result_labels["identical"].text().startswith("yes")
    assert len(panel.curve_with.getData()[1]) == 12 and len(panel.curve_without.getData()[1]) == 12
    expected_bytes = 2 * 2 * 12 * 4 * result.cache_positions * 4
    assert result.cache_bytes == expected_bytes
    assert f"{expected_bytes:,} B" in panel._result_labels["cache_size"].text()
    generated = tiny_model.tokenizer.decode(result.generated_ids)
    assert generated.strip() == "" or generated.strip()[:5] in panel.generated.toPlainText()
    header, rows = panel.table_for_export()
    assert len(rows) == 12 and header[0] == "token_index"


class CannedRunner(SyncRunner):
    """Answers every job with ``result`` (a KVResult made to order), recording the arguments."""

    def __init__(self, result):
        super().__init__()
        self.result = result
        self.args: list[tuple] = []

    def submit(self, kind, fn, *args, on_result=None, **_callbacks):
        self.submitted.append(kind)
        self.args.append((fn.__name__, args))
        if on_result is not None and kind == KV_BENCH:
            on_result(self.result)

        class _Job:
            done = True

            def cancel(self):
                pass

        return _Job()


def _kv_result(speedup: float, with_ms: list[float], without_ms: list[float]) -> KVResult:
    per_with, per_without = [t / 1e3 for t in with_ms], [t / 1e3 for t in without_ms]
    return KVResult(new_tokens=len(with_ms), prompt_length=8, repetitions=3, seconds_with_cache=sum(per_with),
                    seconds_without_cache=sum(per_with) * speedup, tokens_per_second_with=1.0,
                    tokens_per_second_without=1.0, speedup=speedup, identical=True, generated_ids=[0] * len(with_ms),
                    generated_ids_without=[0] * len(with_ms), cache_positions=8, cache_bytes=0,
                    per_token_with=per_with, per_token_without=per_without,
                    slope_ms_with=kvbench.fitted_slope_ms(per_with), slope_ms_without=kvbench.fitted_slope_ms(per_without))


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_kv_result_says_the_slopes_and_never_calls_a_small_gain_faster(qtbot, state, language):
    """The fitted lines and the words come from the result: a run whose uncached side grows
    0.04 ms per position and whose cached side is flat, at 0.59× and then at 2.5×."""
    translator.set_language(language)
    steps = 20
    flat = [1.0] * steps
    rising = [1.0 + 0.04 * i for i in range(steps)]
    slow = _kv_result(0.59, flat, rising)
    panel = shown(qtbot, KVBenchPanel())
    serve(panel, CannedRunner(slow))
    panel.show_state(state)
    assert panel.run_benchmark() and panel.result() is slow
    speedup = panel._result_labels["speedup"].text()
    assert speedup == kvbench.speedup_sentence(slow, language)
    assert "0.59×" not in speedup and "faster" not in speedup and "mais rápido" not in speedup
    assert str(kvbench.LONG_RUN_TOKENS) in speedup
    growth = panel._result_labels["growth"].text()
    assert growth == kvbench.growth_sentence(slow, language)
    assert ("0,04 ms" if language == "pt_BR" else "0.04 ms") in growth and ("flat" in growth or "plano" in growth)
    # the dashed lines are the fits: through the uncached side's 1 + 0.04·i, flat for the cached one
    lines = panel.fitted_lines()
    xs, ys = lines["without-cache"]
    assert list(xs) == [state.n_tokens + 1, state.n_tokens + steps - 1]
    assert list(ys) == pytest.approx([1.04, 1.0 + 0.04 * (steps - 1)])
    assert list(lines["with-cache"][1]) == pytest.approx([1.0, 1.0])
    legend = [label.text for _sample, label in panel.plot_legend.items]
    assert any(("+0,04" if language == "pt_BR" else "+0.04") in text for text in legend)

    fast = _kv_result(2.5, flat, [1.0 + 0.1 * i for i in range(steps)])
    panel.findChild(Session).worker.result = fast
    assert panel.run_benchmark()
    assert panel._result_labels["speedup"].text().startswith("2,5×" if language == "pt_BR" else "2.5×")
    assert list(panel.fitted_lines()["without-cache"][1]) == pytest.approx([1.1, 1.0 + 0.1 * (steps - 1)])


class HeldRunner(CannedRunner):
    """Keeps the KV job's callbacks: the test plays the worker's steps and result itself."""

    def submit(self, kind, fn, *args, on_result=None, on_progress=None, **callbacks):
        self.on_result, self.on_progress = on_result, on_progress
        return super().submit(kind, fn, *args, **callbacks)


def held_kv_panel(qtbot, state, new_tokens: int, repetitions: int) -> tuple[KVBenchPanel, HeldRunner]:
    """A shown KV panel on ``state`` whose worker the test plays (``runner.on_progress``, ``on_result``)."""
    panel = shown(qtbot, KVBenchPanel())
    runner = HeldRunner(None)
    serve(panel, runner)
    panel.show_state(state)
    panel.new_tokens.setValue(new_tokens)
    panel.repetitions.setValue(repetitions)
    return panel, runner


def test_the_live_time_axis_only_grows_and_the_result_is_fitted_a_turn_later(qtbot, state):
    """Live curves are lines, a finished run's have a dot per token.  Each repetition starts its
    curves again: the live time axis keeps the top it has grown to (a new top is new ticks and a
    repaint of the whole plot; it fell and rose 2-3 times a repetition).  The finished run's curves are drawn on that axis, and the axis is fitted to
    them in the next turn of the event loop, apart from the results' texts."""
    panel, runner = held_kv_panel(qtbot, state, 4, 2)
    vb = panel.plot.getPlotItem().getViewBox()
    ranges = []
    set_range = vb.setRange
    vb.setRange = lambda *a, **k: (ranges.append(k.get("yRange")), set_range(*a, **k))[1]
    before = vb.viewRange()[1]
    assert panel.run_benchmark()
    assert vb.viewRange()[1] == before  # nothing timed yet: the time axis as it was
    tops = []
    for rep, (with_ms, without_ms) in enumerate([(3.0, 9.0), (1.0, 1.5)]):  # the second repetition is faster
        for mode, ms in (("with-cache", with_ms), ("without-cache", without_ms)):
            for i in range(4):
                runner.on_progress(KVStep(mode, i, ms / 1e3, 7, rep, 4))
                panel._draw_live()  # what the redraw timer does
                tops.append(vb.viewRange()[1][1])
    assert tops == sorted(tops)  # never lower while running
    # lines only while it runs: each live redraw re-rendered and painted every dot of both curves
    assert panel.curve_with.opts["symbol"] is None and panel.curve_without.opts["symbol"] is None
    assert tops[-1] == time_ceiling(9.0 * 1.08) == 10.0
    assert len([r for r in ranges if r is not None]) <= 2  # 3 ms and 9 ms: not at the start, nor per repetition
    result = _kv_result(2.0, [1.0] * 4, [1.5] * 4)  # each position's fastest: 1.5 ms at most
    runner.on_result(result)
    assert panel.result() is result and not panel.running
    assert list(panel.curve_without.getData()[1]) == pytest.approx([1.5] * 4)  # the result's curves at once
    assert vb.viewRange()[1] == [0, 10.0]  # on the axis they grew
    assert panel._fit_timer.isActive()
    panel._fit_timer.stop()
    panel._fit_time_axis()  # what the timer does on a later turn
    assert vb.viewRange()[1] == [0, time_ceiling(1.5 * 1.08)] == [0, 2.0]  # then fitted: 2 ms
    # the dots on a turn of their own again (with the new axis, the longest turn of a run)
    assert panel.curve_with.opts["symbol"] is None
    qtbot.waitUntil(lambda: panel.curve_with.opts["symbol"] == "o")
    assert panel.curve_with.opts["symbol"] == "o" == panel.curve_without.opts["symbol"]  # a dot per token now
    assert len(panel.curve_without.scatter.data) == 4
    assert panel.run_benchmark()  # the next run: lines again
    assert panel.curve_with.opts["symbol"] is None


def test_the_kv_plot_spans_the_next_runs_positions_so_its_start_changes_no_range(qtbot, state):
    """Before any run the token axis spans the positions the next run fills (and follows the new
    tokens' box): starting the run sets no range, whose new ticks repainted the whole plot in the
    first run's busiest turn."""
    panel, runner = held_kv_panel(qtbot, state, 6, 1)
    vb = panel.plot.getPlotItem().getViewBox()
    n = state.n_tokens
    assert vb.viewRange()[0] == pytest.approx([n - 0.5, n + 6 - 0.5])
    panel.new_tokens.setValue(4)
    assert vb.viewRange()[0] == pytest.approx([n - 0.5, n + 4 - 0.5])
    ranges = []
    set_range = vb.setRange
    vb.setRange = lambda *a, **k: (ranges.append(k), set_range(*a, **k))[1]
    assert panel.run_benchmark()
    assert ranges == []  # the run's start: the axes as they were
    runner.on_progress(KVStep("with-cache", 0, 0.002, 7, 0, 4))
    panel._draw_live()
    assert vb.viewRange()[0] == pytest.approx([n - 0.5, n + 4 - 0.5]) and vb.viewRange()[1][1] == time_ceiling(2.0 * 1.08)


def test_the_kv_time_axis_keeps_its_width_as_the_live_ceiling_grows(qtbot, state):
    """Each new ceiling of the live curves has labels of another width (0.5, 5, 20 ms); an axis
    that narrowed or widened to them re-laid the plot out and painted it whole again."""
    panel, runner = held_kv_panel(qtbot, state, 3, 1)
    axis = panel.plot.getPlotItem().getAxis("left")
    assert panel.run_benchmark()
    qtbot.wait(50)  # painted: the axis has measured its labels
    widths = []
    for i, ms in enumerate((0.4, 4.0, 18.0)):
        runner.on_progress(KVStep("with-cache", i, ms / 1e3, 7, 0, 3))
        panel._draw_live()  # what the redraw timer does
        qtbot.wait(50)  # painted (the axis measures its new labels when it paints them)
        widths.append(axis.width())
    assert panel.plot.getPlotItem().getViewBox().viewRange()[1][1] == time_ceiling(18.0 * 1.08)
    assert len(set(widths)) == 1, widths


def test_the_kv_progress_bar_is_painted_with_the_next_frame_not_at_once(qtbot, state):
    """QProgressBar.setValue repaints synchronously (the bar and its parents behind it, 2-3 ms
    per live redraw); the panel only marks it dirty, and the next frame shows the new step."""
    panel, runner = held_kv_panel(qtbot, state, 4, 1)
    assert panel.run_benchmark()
    qtbot.wait(50)
    paints = []

    class CountPaints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Type.Paint:
                paints.append(obj)
            return False

    counter = CountPaints()
    panel.progress.installEventFilter(counter)
    runner.on_progress(KVStep("without-cache", 2, 0.003, 7, 0, 4))
    panel._draw_live()  # what the redraw timer does
    assert paints == []  # nothing painted inside the handler
    assert panel.progress.value() == 4 + 3  # all of the cached side, 3 of the uncached
    assert "3" in panel.progress.format() and "4" in panel.progress.format()
    qtbot.waitUntil(lambda: len(paints) > 0)  # and the bar is painted with the next frame
    panel.progress.removeEventFilter(counter)


def test_a_kv_result_relabels_the_legend_in_place(qtbot, state):
    """A run's result adds each fitted line's slope to its curve's entry by re-wording the label,
    not by clearing and rebuilding the legend (a third of the GUI thread's work in the turn a run
    ended), and keeps two entries (four filled the plot at 1366x768, words over the
    curves); a language switch re-words the same labels."""
    steps = 20
    flat = [1.0] * steps
    panel = shown(qtbot, KVBenchPanel())
    runner = CannedRunner(_kv_result(0.59, flat, [1.0 + 0.04 * i for i in range(steps)]))
    serve(panel, runner)
    panel.show_state(state)
    first = list(panel.plot_legend.items)
    assert [s.item for s, _label in first] == [panel.curve_with, panel.curve_without]
    assert [label.text for _s, label in first] == [tr("kvbench.with"), tr("kvbench.without")]
    assert panel.run_benchmark()
    assert [(id(s), id(label)) for s, label in panel.plot_legend.items] == [(id(s), id(label)) for s, label in first]
    assert first[1][1].text == "without cache<br>dashed fit: +0.04 ms/pos."  # the fit on a line of its own
    assert first[0][1].text.startswith("with cache<br>dashed fit: ") and "+0.04" not in first[0][1].text
    runner.result = _kv_result(2.5, flat, [1.0 + 0.1 * i for i in range(steps)])
    assert panel.run_benchmark()
    second = list(panel.plot_legend.items)
    assert [(id(s), id(label)) for s, label in second] == [(id(s), id(label)) for s, label in first]  # the same items
    assert "+0.1 ms" in second[1][1].text and "+0.04" not in second[1][1].text
    translator.set_language("pt_BR")
    assert second[1][1].text == "sem cache<br>ajuste: +0,1 ms/pos."
    assert [(id(s), id(label)) for s, label in panel.plot_legend.items] == [(id(s), id(label)) for s, label in first]


def test_a_flat_fitted_slope_reads_in_decimals_not_in_scientific_notation():
    from attention_lab.ui.panels.kv_bench import _ms

    assert _ms(9.4e-05) == "+0.0001" and _ms(-0.0176) == "-0.0176" and _ms(0.0546) == "+0.0546"
    assert _ms(0.301) == "+0.301" and _ms(1e-6) == _ms(-1e-6) == "0"
    translator.set_language("pt_BR")
    assert _ms(0.0546) == "+0,0546"


def test_kv_model_choice_and_longer_run_reach_the_session(qtbot, state, tiny_model):
    """GPT-2 small's shapes: the session runs the job that builds that model on the worker, on
    the learner's text; its result is read with its own prompt and labelled random weights.
    The longer run asks for core's LONG_RUN_TOKENS (as many as the context leaves)."""
    panel = shown(qtbot, KVBenchPanel())
    result = _kv_result(3.0, [1.0] * 4, [1.0, 1.2, 1.4, 1.6])
    runner = CannedRunner(None)
    serve(panel, runner)
    panel.show_state(state)
    wanted = []
    panel.benchmark_wanted.connect(lambda *args: wanted.append(args))
    cfg = tiny_model.lens.config
    panel.set_benchmark_model("gpt2-shapes")
    # the session wraps the job's answer; the canned one stands in for core's TargetKVRun
    runner.result = TargetKVRun(result, "gpt2-small-shapes (random weights)", [1, 2, 3], tiny_model.tokenizer, cfg, True)
    assert panel.run_long_benchmark()
    assert wanted[-1][1] == min(kvbench.LONG_RUN_TOKENS, cfg.n_positions - state.n_tokens)
    assert wanted[-1][3] == "gpt2-shapes"
    name, args = runner.args[-1]
    assert name == "kv_benchmark_target_job" and args[0] == "gpt2-shapes" and args[1] == state.text
    assert kvbench.kv_text("kv.random_weights", "en") in panel.ran_on.text()
    assert "prompt of 3 tokens" in panel.ran_on.text()
    panel.set_benchmark_model("loaded")
    runner.result = result
    assert panel.run_benchmark()
    assert runner.args[-1][0] == "kv_benchmark_job" and "random" not in panel.ran_on.text()
    translator.set_language("pt_BR")
    assert panel.model_choice.itemText(1) == "formatos do GPT-2 small, pesos aleatórios"


class StandInTokenizer:
    """A tokenizer only the run holds (the test can watch it die); it writes ids as <id>."""

    def decode(self, ids):
        return "".join(f"<{i}>" for i in ids)

    def token_texts(self, ids):
        return [f"<{i}>" for i in ids]


def test_a_finished_kv_run_lets_go_of_its_models_tokenizer_and_keeps_its_text(qtbot, state, tiny_model):
    """The panel kept the tokenizer of the model its last run timed (to write the run's
    text), after the learner had switched to another model.  Once the run is over and its text
    is written out, the text box keeps it and the tokenizer is free."""
    import gc
    import weakref

    panel = shown(qtbot, KVBenchPanel())
    result = _kv_result(3.0, [1.0] * 4, [1.0, 1.2, 1.4, 1.6])
    runner = CannedRunner(None)
    serve(panel, runner)
    panel.show_state(state)
    panel.set_benchmark_model("gpt2-shapes")
    tokenizer = StandInTokenizer()
    held = weakref.ref(tokenizer)
    runner.result = TargetKVRun(result, "gpt2-small-shapes (random weights)", [7, 8, 9], tokenizer, tiny_model.lens.config, True)
    del tokenizer
    assert panel.run_benchmark()
    qtbot.wait(20)
    runner.result = None
    gc.collect()
    assert "<7><8><9><0><0><0><0>" in panel.generated.toPlainText()  # the run's prompt and its text
    assert held() is None, "the finished run's tokenizer is still held"
    assert "prompt of 3 tokens" in panel.ran_on.text()


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_kv_cache_size_before_a_run_is_the_chosen_models(qtbot, state, tiny_model, language):
    """With GPT-2 small's shapes chosen, the line before a run is that model's formula (12 × 12 × 64),
    not the loaded model's; choosing the loaded model again brings its formula back."""
    translator.set_language(language)
    panel = shown(qtbot, KVBenchPanel())
    panel.show_state(state)
    cfg = tiny_model.lens.config
    loaded_line = panel._result_labels["cache_size"].text()
    assert f"× {cfg.n_head} " in loaded_line
    panel.set_benchmark_model("gpt2-shapes")
    line = panel._result_labels["cache_size"].text()
    big = kvbench.benchmark_config("gpt2-shapes")
    assert (big.n_layer, big.n_head, big.head_dim) == (12, 12, 64)
    per_position = 2 * 12 * 12 * 64 * 4
    assert line.startswith(tr("kvbench.model.gpt2-shapes"))
    assert "× 12 " in line and "× 64 " in line and integer(per_position) in line
    assert line != loaded_line
    panel.set_benchmark_model("loaded")
    assert panel._result_labels["cache_size"].text() == loaded_line


@pytest.mark.parametrize("language", ["en", "pt_BR"])
def test_kv_stability_tab_says_why_it_is_empty(qtbot, state, language):
    """No state: the "why the cache works" tab says what it will show instead of empty plots;
    a state but no session to measure it: it says nothing can run."""
    translator.set_language(language)
    panel = shown(qtbot, KVBenchPanel())
    panel.show_stability_tab()
    assert panel.stab_summary.text() == tr("kvstab.empty")
    panel.show_state(state)  # nobody serves the stability intent: it cannot be measured
    assert panel.stab_summary.text() == tr("kvbench.no_worker")


def test_kv_stability_tab_is_built_a_part_per_turn(qtbot, state):
    """Its whole build in one event-loop turn was ~80-150 ms of GUI-thread CPU: the idle build
    makes one part per call, and a learner opening the tab first gets its words at once and
    the finished tab a few turns later."""
    idle = shown(qtbot, KVBenchPanel())
    made = []
    while idle.build_later_part():
        made.append((len(idle.stab_plots), hasattr(idle, "stab_colorbar"), idle._stability_built))
    assert made == [(0, False, False), (1, False, False), (2, False, False), (2, True, False), (2, True, True)]

    clicked = shown(qtbot, KVBenchPanel())
    clicked.show_state(state)
    clicked.tabs.setCurrentWidget(clicked.stability_tab)
    assert clicked.stab_explain.source_text() == tr("kvstab.explain") and not clicked.stab_plots  # this turn: its words
    qtbot.waitUntil(lambda: clicked._stability_built, timeout=2000)  # no idle builder: the tab finishes itself
    assert set(clicked.stab_plots) == {"causal", "bidirectional"} and clicked.stab_colorbar.scene() is not None
    assert clicked.stab_summary.text() == tr("kvbench.no_worker")  # filled with what it knows
    assert not clicked.build_later_part()


def test_the_live_kv_curves_are_one_pixel_lines(qtbot):
    """A wider antialiased line takes the raster engine's slow path: the live plot repainted
    ten times a second during a benchmark."""
    panel = KVBenchPanel()
    qtbot.addWidget(panel)
    for curve in (panel.curve_with, panel.curve_without):
        assert curve.curve.opts["pen"].widthF() <= 1.0


def test_time_ceiling_is_the_next_1_2_5_step():
    assert [time_ceiling(v) for v in (0.0, 0.7, 1.0, 1.3, 3.0, 7.2, 12.0, 480.0)] == [0.001, 1.0, 1.0, 2.0, 5.0, 10.0, 20.0, 500.0]


def test_kv_benchmark_cancel_mid_run(qtbot, worker, state):
    panel = shown(qtbot, KVBenchPanel())
    serve(panel, worker)
    panel.show_state(state)
    panel.new_tokens.setValue(40)
    panel.repetitions.setValue(20)  # long enough that it is still running when cancelled
    with qtbot.waitSignal(panel.benchmark_step, timeout=LONG):
        panel.run_benchmark()
    with qtbot.waitSignal(panel.benchmark_cancelled, timeout=LONG):
        panel.cancel_benchmark()
    assert not panel.running and panel.result() is None
    assert panel.run_button.isEnabled()
    assert "Cancelled" in panel.message.text()
    qtbot.waitUntil(lambda: not worker.busy, timeout=LONG)  # the thread really stopped working


def test_kv_benchmark_shutdown_while_running_is_clean(qtbot, state):
    worker = InferenceWorker(name="test-kv-close")
    panel = shown(qtbot, KVBenchPanel())
    serve(panel, worker)
    panel.show_state(state)
    panel.new_tokens.setValue(40)
    panel.repetitions.setValue(20)
    with qtbot.waitSignal(panel.benchmark_step, timeout=LONG):
        panel.run_benchmark()
    panel.shutdown()
    panel.close()
    assert worker.shutdown(5.0)  # what the window's closeEvent does: cancelled and joined


def test_kv_stability_view(qtbot, worker, state, tiny_model):
    panel = shown(qtbot, KVBenchPanel())
    serve(panel, worker)
    panel.show_state(state)
    assert panel.stability() is None  # its tab is not on screen yet
    with qtbot.waitSignal(panel.stability_ready, timeout=LONG) as blocker:
        panel.show_stability_tab()
    result = blocker.args[0]
    L, n = tiny_model.lens.config.n_layer, state.n_tokens
    for t in (result.causal_keys, result.causal_values):
        assert t.shape == (L, n)
        assert (t == 0).all()  # exactly, not approximately
    for t in (result.bidirectional_keys, result.bidirectional_values):
        assert (t[0] == 0).all()  # layer 0: token + position only
        assert (t[1:] > 0).all()
    # the view draws those numbers, and the summary states them
    causal_img = panel.stab_images["causal"].image
    bidir_img = panel.stab_images["bidirectional"].image
    assert causal_img.shape == (L, n) and (causal_img == 0).all()
    assert bidir_img[1:].min() > 0
    summary = panel.stab_summary.text()
    assert f"all {2 * L * n} K and V changes" in summary and "exactly 0" in summary
    # against a direct computation
    direct = kv_stability(tiny_model.lens, state.ids)
    assert torch.equal(direct.bidirectional_keys, result.bidirectional_keys)
    panel.stab_what.setCurrentIndex(1)
    assert torch.equal(torch.as_tensor(panel.stab_images["bidirectional"].image), direct.bidirectional_values.float())


# ---------------------------------------------------------------------------- shapes
def test_shapes_table_matches_the_lens(qtbot, state, tiny_model):
    panel = shown(qtbot, ShapesPanel())
    panel.show_state(state)
    assert panel.has_data()
    out = tiny_model.lens(state.ids, keep_attentions=False)
    rows = [(panel.table.item(r, 0).text(), panel.table.item(r, 1).text()) for r in range(panel.table.rowCount())]
    assert rows == [(row.name, format_shape(row.shape)) for row in out.shapes]
    cfg = tiny_model.lens.config
    assert ("Q, K, V", f"({cfg.n_head}, {state.n_tokens}, {cfg.head_dim})") in rows

    multi, single, multiplied = panel.cost_numbers()
    lw = tiny_model.lens.weights.layers[0]
    real = lw.c_attn_w.numel() + lw.c_attn_b.numel() + lw.c_proj_w.numel() + lw.c_proj_b.numel()
    assert multi.per_layer == single.per_layer == real  # multi-head costs no more than one head
    assert multiplied.per_layer > multi.per_layer
    text = panel.cost_table.item(1, 0).text()
    assert f"{cfg.n_embd} × {3 * cfg.n_embd}" in text and text.endswith(f"= {lw.c_attn_w.numel() + lw.c_attn_b.numel():,}")
    assert f"{real:,}" in panel.cost_verdict.text()


# ---------------------------------------------------------------------------- language
def test_language_switch_relabels_every_panel(qtbot, state):
    mask, portrait, kv, shapes = (shown(qtbot, cls()) for cls in (MaskPanel, PortraitPanel, KVBenchPanel, ShapesPanel))
    serve(portrait, SyncRunner())
    for p in (mask, portrait, kv, shapes):
        p.show_state(state)
    before = (mask.why_box.title(), portrait.table.horizontalHeaderItem(0).text(), kv.run_button.text(),
              shapes.table.horizontalHeaderItem(0).text(), kv.tabs.tabText(1), mask.explain.text())
    assert before[:5] == ("Why −∞ and not zero?", "Head", "Run", "Step", "Why the cache works")
    translator.set_language("pt_BR")
    after = (mask.why_box.title(), portrait.table.horizontalHeaderItem(0).text(), kv.run_button.text(),
             shapes.table.horizontalHeaderItem(0).text(), kv.tabs.tabText(1), mask.explain.text())
    assert after[:5] == ("Por que −∞ e não zero?", "Cabeça", "Rodar", "Etapa", "Por que o cache funciona")
    assert after[5] != before[5] and "máscara causal" in after[5]
    assert mask.table.item(0, 4).text() in ("", "funciona")
    assert "Cabeças" not in shapes.cost_table.horizontalHeaderItem(0).text()
    assert "cabeças" in shapes.cost_table.horizontalHeaderItem(0).text()
    translator.set_language("en")
    assert kv.run_button.text() == "Run"


# ---------------------------------------------------------------------------- edges
def test_one_token_and_no_worker(qtbot, state):
    import dataclasses

    one = dataclasses.replace(
        state,
        ids=state.ids[:1],
        tokens=state.tokens[:1],
        original_length=1,
        position=0,
        attention_causal=state.attention_causal[:, :1, :1],
        attention_bidirectional=state.attention_bidirectional[:, :1, :1],
    )
    runner = SyncRunner()
    mask, portrait, kv = (shown(qtbot, cls()) for cls in (MaskPanel, PortraitPanel, KVBenchPanel))
    while mask.build_later_part():  # its bar plots, as the idle builder would (under the others' windows, it never paints)
        pass
    serve(mask, runner)
    serve(portrait, runner)
    mask.show_state(one)
    portrait.show_state(one)
    qtbot.waitUntil(lambda: mask.mode_details() is not None, timeout=LONG)  # asked once the grid painted
    assert mask.has_data()
    assert "first" in mask.selected_text.text()  # nothing before position 0 to leak into
    assert portrait.has_data() and portrait.table.rowCount() == 0
    assert "at least 2 tokens" in portrait.explain.text()
    kv.show_state(one)
    assert not kv.run_benchmark()  # no worker set: says so instead of pretending
    assert kv.message.text() == tr("kvbench.no_worker")  # said in words, no "worker"


def test_exports_png_and_csv(qtbot, state, tmp_path):
    # SVG is left out here: pyqtgraph 0.14's SVGExporter fails on any plot under PySide6 6.12
    # (Qt now writes "Z" in paths); that is export.py's to solve, for every panel at once.
    from attention_lab.ui.export import export_csv, export_plot

    runner = SyncRunner()
    panels = [shown(qtbot, cls()) for cls in (MaskPanel, PortraitPanel, KVBenchPanel, ShapesPanel)]
    for p in panels:
        serve(p, runner)
        p.show_state(state)
    mask, portrait, kv, shapes = panels
    kv.show_stability_tab()
    assert kv.stability() is not None
    for p in (mask, portrait, kv):
        item = p.plot_for_export()
        assert item is not None, p.panel_id
        path = export_plot(item, tmp_path / f"{p.panel_id}.png")
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the stability tab's export is its whole layout (both maps and the colour bar), at twice its size:
    # not its scene, whose rect only grows (a 21,922 px PNG in the soak), nor the part of it in view
    from PySide6.QtGui import QImage

    from attention_lab.ui.export import PNG_SCALE

    assert kv.plot_for_export() is kv.stab_view.ci
    image = QImage(str(tmp_path / f"{kv.panel_id}.png"))
    assert image.width() == int(kv.stab_view.ci.mapRectToDevice(kv.stab_view.ci.boundingRect()).width()) * PNG_SCALE
    for p in (mask, portrait, shapes):
        header, rows = p.table_for_export()
        path = export_csv(tmp_path / f"{p.panel_id}.csv", header, rows)
        assert len(path.read_text(encoding="utf-8").splitlines()) == len(rows) + 1


def test_a_kv_runs_start_and_result_lay_nothing_out_again(qtbot, state):
    """The run's start clears "Press Run to measure." and its result fills the results' lines:
    both had room from the start, so neither resizes the plot or the results (a relayout of the
    panel: ~7 ms of the GUI thread at the run's start, and the panel grew 28 px with the result)."""
    from paint_counter import EventCounter

    panel, runner = held_kv_panel(qtbot, state, 4, 1)
    panel.resize(900, 430)  # the dock's part of a 1366x768 window
    watched = (panel.plot, panel.results_box, panel.generated, panel.message, *panel._result_labels.values(), panel.ran_on)
    resizes = [EventCounter(widget, QEvent.Type.Resize) for widget in watched]
    for language in ("en", "pt_BR"):
        translator.set_language(language)
        qtbot.wait(50)  # laid out and painted
        assert panel.message.text() == tr("kvbench.idle")
        for counter in resizes:
            counter.count = 0
        minimum = panel.minimumSizeHint()
        assert panel.run_benchmark()
        assert panel.message.text() == ""
        qtbot.wait(50)
        assert [c.count for c in resizes] == [0] * len(watched), language
        for i in range(4):
            for mode in ("with-cache", "without-cache"):
                runner.on_progress(KVStep(mode, i, 0.002, 7, 0, 4))
        result = _kv_result(0.59, [1.0] * 4, [1.0 + 0.04 * i for i in range(4)])  # the longest speedup sentence
        runner.on_result(result)
        qtbot.wait(150)  # the axis fitted, the dots shown, all painted
        assert panel._result_labels["speedup"].text() == kvbench.speedup_sentence(result, language) and panel.ran_on.text()
        assert [c.count for c in resizes] == [0] * len(watched), language
        assert panel.minimumSizeHint() == minimum
        panel._set_message("kvbench.idle")  # the next language's run starts from the idle words again


def test_the_kv_legend_has_a_see_through_background_of_the_plots_colour(qtbot):
    """At 1366x768 the legend's words sit over the curves: a half-opaque patch of the plot's own
    background keeps them readable over a noisy curve, which still shows through."""
    panel = shown(qtbot, KVBenchPanel())
    colour = panel.plot_legend.opts["brush"].color()
    background = panel.plot.backgroundBrush().color()
    assert (colour.red(), colour.green(), colour.blue()) == (background.red(), background.green(), background.blue())
    assert 0 < colour.alpha() < 255
