"""The redraw scheduler (ui/redraw.py) gives every drawing step its own turn of the event loop,
and a panel with two pyqtgraph views (the leakage panel) draws them in two steps (because
Qt paints the whole window once per changed graphics scene, all in the same turn)."""

from __future__ import annotations

import dataclasses
import os
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np
from PySide6.QtCore import Qt, QTimer

from attention_lab.ui.panels.leakage import LeakagePanel
from attention_lab.ui.panels.plot_setters import nice_ceiling
from attention_lab.ui.redraw import RedrawScheduler
from synthetic_state import synthetic_leakage, synthetic_state


class StepPanel:
    """What the scheduler needs of a panel, drawing in ``steps`` steps that log their turn."""

    title_key = "x"

    def __init__(self, name: str, steps: int, log: list, turn: dict):
        self.panel_id, self.steps, self.log, self.turn = name, steps, log, turn

    def setEnabled(self, _on: bool) -> None:
        pass

    def redraw_steps(self, state) -> list:
        return [lambda i=i: self.log.append((self.panel_id, i, state, self.turn["n"])) for i in range(self.steps)]

    def show_state(self, state) -> None:
        for step in self.redraw_steps(state):
            step()


def scheduler(panels: list, hidden=()):
    """(scheduler of ``panels``, the states whose round is done, the ticker counting turns)."""
    ticker = QTimer()  # counts the turns of the event loop
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: TURN.__setitem__("n", TURN["n"] + 1))
    ticker.start()
    redraw = RedrawScheduler({p.panel_id: p for p in panels}, lambda pid: pid in hidden, lambda *_: None)
    done = []
    redraw.round_done.connect(done.append)
    return redraw, done, ticker


TURN = {"n": 0}


def test_each_step_of_each_panel_in_sight_gets_its_own_turn(qtbot):
    log = []
    redraw, done, _ticker = scheduler([StepPanel("a", 2, log, TURN), StepPanel("b", 1, log, TURN),
                                       StepPanel("c", 1, log, TURN)], hidden={"c"})
    redraw.show("s1")
    assert [(pid, i) for pid, i, _s, _t in log] == [("a", 0)]  # the first step at once, the rest on later turns
    qtbot.waitUntil(lambda: done == ["s1"], timeout=2000)
    assert [(pid, i) for pid, i, _s, _t in log] == [("a", 0), ("a", 1), ("b", 0)]  # "c" is out of sight
    turns = [t for *_rest, t in log]
    assert turns[0] < turns[1] < turns[2]  # the event loop ran between any two steps
    assert redraw.stale == {"c"}


def test_the_next_step_waits_for_the_previous_ones_paint_and_the_timers_due_by_then(qtbot):
    """A step's paint runs after it in the pass over posted events; the next step must not be
    due before a timer that was already waiting (the perf probe's heartbeat, a learner's input):
    otherwise two panels' drawing and painting share one turn."""
    log = []
    beats = {"n": 0}
    heartbeat = QTimer()
    heartbeat.setTimerType(Qt.TimerType.PreciseTimer)
    heartbeat.setInterval(5)
    heartbeat.timeout.connect(lambda: beats.__setitem__("n", beats["n"] + 1))

    class PaintingPanel(StepPanel):
        def redraw_steps(self, state) -> list:
            def paint() -> None:  # what Qt does after a step: the scene's repaint, posted
                time.sleep(0.02)
                log.append(("painted", beats["n"]))
            return [lambda: QTimer.singleShot(0, paint), lambda: log.append(("second step", beats["n"]))]

    redraw, done, _ticker = scheduler([PaintingPanel("a", 2, log, TURN)])
    heartbeat.start()  # due in 5 ms: during the paint
    redraw.show("s")
    qtbot.waitUntil(lambda: done == ["s"], timeout=2000)
    heartbeat.stop()
    (painted, beats_painted), (second, beats_second) = log
    assert (painted, second) == ("painted", "second step")
    assert beats_second > beats_painted  # the heartbeat, due during the paint, ran before the next step


def test_a_model_switch_collects_and_trims_in_turns_of_their_own_after_the_drawing(qtbot, monkeypatch):
    """A model load's last drawing step, the collection of the previous model's cycles and
    the heap's trim ran in one turn (~120 ms of the GUI thread, the soak's load_model stalls).  Now
    the round ends with the drawing, then one turn collects and a later one trims."""
    from types import SimpleNamespace

    from attention_lab.ui import gc_pause

    log = []
    monkeypatch.setattr(gc_pause, "_drawn_key", None)
    monkeypatch.setattr(gc_pause, "_trim_due", False)
    monkeypatch.setattr(gc_pause.gc, "collect", lambda *a: log.append(("collect", TURN["n"])) or 0)
    monkeypatch.setattr(gc_pause, "give_back_free_heap", lambda: log.append(("trim", TURN["n"])) or True)
    redraw, done, _ticker = scheduler([StepPanel("a", 1, log, TURN)])
    first, second = (SimpleNamespace(model=SimpleNamespace(serial=serial)) for serial in (1, 2))
    redraw.show(first)
    qtbot.waitUntil(lambda: done == [first] and not redraw.cleaning, timeout=2000)
    assert [entry[0] for entry in log] == ["a"]  # the first model drawn: nothing to collect
    log.clear()
    redraw.show(second)  # another model: its one step, then the collection
    assert [entry[0] for entry in log] == ["a"] and done == [first, second]  # the round is done, nothing collected yet
    assert redraw.cleaning
    qtbot.waitUntil(lambda: not redraw.cleaning, timeout=2000)
    (_a, _i, _s, drawn), (collect, collected), (trim, trimmed) = log
    assert (collect, trim) == ("collect", "trim")
    assert drawn < collected < trimmed  # three turns: the event loop (and the paint) ran between them


def test_a_newer_state_stops_the_older_rounds_steps(qtbot):
    log = []
    redraw, done, _ticker = scheduler([StepPanel("a", 3, log, TURN)])
    redraw.show("old")
    redraw.show("new")
    qtbot.waitUntil(lambda: done == ["new"], timeout=2000)
    assert [s for _pid, _i, s, _t in log] == ["old", "new", "new", "new"]


def test_leakage_draws_its_bars_and_its_layer_maps_in_two_steps(qtbot):
    panel = LeakagePanel()
    qtbot.addWidget(panel)
    first = synthetic_state()
    panel.show_state(first)
    heat = panel._heat[True][1]
    old_maps = np.array(heat.image)
    second = dataclasses.replace(first, leakage=synthetic_leakage(position=1))
    steps = panel.redraw_steps(second)
    assert len(steps) == 2
    steps[0]()  # the controls and the bars: the new edit ...
    np.testing.assert_array_equal(panel.causal_bars.opts["height"], second.leakage.causal.numpy())
    np.testing.assert_array_equal(heat.image, old_maps)  # ... the layer maps not yet
    steps[1]()
    np.testing.assert_array_equal(heat.image, second.leakage.causal_layers.numpy())


def test_leakage_bars_keep_their_range_while_the_largest_change_moves_a_little(qtbot):
    panel = LeakagePanel()
    qtbot.addWidget(panel)
    state = synthetic_state()
    tops = []
    for largest in (0.61, 0.64, 0.70, 2.0):
        leak = state.leakage
        bidirectional = leak.bidirectional * (largest / float(leak.bidirectional.max()))
        panel.show_state(dataclasses.replace(state, leakage=dataclasses.replace(leak, bidirectional=bidirectional)))
        y0, y1 = panel.bar_plot.getPlotItem().getViewBox().viewRange()[1]
        assert y0 == 0 and y1 >= 1.3 * largest * (1 - 1e-6)  # room for the legend above the bars
        tops.append(y1)
    assert tops[0] == tops[1] == tops[2] == 1.0 and tops[3] == 5.0


def test_nice_ceiling_is_the_next_1_2_5_step_above_the_smallest():
    assert [nice_ceiling(v) for v in (0.0, 0.7, 1.3, 480.0)] == [0.001, 1.0, 2.0, 500.0]
    assert nice_ceiling(0.0, smallest=1e-6) == 1e-6
    assert nice_ceiling(3e-5, smallest=1e-6) == 5e-5


def test_leakage_paints_each_view_once_for_a_new_text(qtbot, tiny_checkpoint):
    """A new text's view ranges reached the view boxes' transforms inside the paint
    (pyqtgraph's ``sigPrepareForPaint``), which made the scenes dirty again: the bars and the
    layer maps were each painted twice, the second time in the next panel's turn."""
    from paint_counter import PaintCounter
    from state_factory import build_state, load

    model = load(tiny_checkpoint)
    panel = LeakagePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    panel.show_state(build_state(model, "The big dog bit the mailman yesterday."))
    qtbot.wait(300)
    bars, layers = PaintCounter(panel.bar_plot.viewport()), PaintCounter(panel.layers_view.viewport())
    for text in ("the dog bit the man and the man bit the dog " * 6, "a cat sat " * 3):
        bars.count = layers.count = 0
        for step in panel.redraw_steps(build_state(model, text)):
            step()
            qtbot.wait(100)
        qtbot.wait(200)
        assert (bars.count, layers.count) == (1, 1)


class HoldingPanel(StepPanel):
    """A stand-in that keeps the state it drew, as every Panel does (``Panel.state``)."""

    def __init__(self, name: str, log: list):
        super().__init__(name, 1, log, TURN)
        self.state = None

    def redraw_steps(self, state) -> list:
        return [lambda: setattr(self, "state", state)] + super().redraw_steps(state)


def test_a_panel_out_of_sight_lets_go_of_the_state_it_drew_and_is_drawn_with_the_newest_when_shown(qtbot):
    """A panel left for later kept the state it last drew: a long text's attention maps
    (GPT-2 small at 1,024 tokens: ~100 MB) after the text had moved on, and after a model switch
    that state's model (500 MB), one per hidden panel.  Now it holds nothing while out of sight,
    after an edit as after a switch, and draws the newest state when it is shown."""
    model = dataclasses.make_dataclass("Model", ["serial"])
    first, second = model(1), model(2)
    log = []
    hidden_ids = {"hidden", "never_drawn"}
    hidden = HoldingPanel("hidden", log)
    never_drawn = HoldingPanel("never_drawn", log)
    seen = HoldingPanel("seen", log)
    redraw, done, _ticker = scheduler([seen, hidden, never_drawn], hidden=hidden_ids)
    a = dataclasses.make_dataclass("S", ["model", "name"])
    hidden.state = a(first, "drawn before it was hidden")

    edit = a(first, "an edit")
    redraw.show(edit)
    qtbot.waitUntil(lambda: done == [edit], timeout=2000)
    assert redraw.stale == {"hidden", "never_drawn"}  # left for when they are shown, as before
    assert (seen.state, hidden.state, never_drawn.state) == (edit, None, None)

    switched = a(second, "another model")
    redraw.show(switched)
    qtbot.waitUntil(lambda: done == [edit, switched], timeout=2000)
    assert redraw.stale == {"hidden", "never_drawn"}  # nothing held: nothing to draw on a switch
    assert (seen.state, hidden.state) == (switched, None)
    assert [entry[0] for entry in log] == ["seen", "seen"]  # only the panel in sight was drawn

    hidden_ids.discard("hidden")  # its tab is opened
    redraw.catch_up("hidden")
    assert hidden.state is switched and redraw.stale == {"never_drawn"}
