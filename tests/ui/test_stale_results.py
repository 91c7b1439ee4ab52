"""A result belongs to the inputs and the language it was made for: when they change it goes or
says it is old.  Each test here reproduces what a learner saw: the KV chart mixing a cancelled
run's curve with the previous run's fitted line and speedup, the knockout ranking's caption in
the previous language, the previous text's chips under "no tokens yet", the replacement word
of another position."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.ui.i18n import tr, translator  # noqa: E402
from attention_lab.ui.panels.kv_bench import KVBenchPanel  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.wiring import connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import load  # noqa: E402

LONG = 60_000


@pytest.fixture
def worker():
    w = InferenceWorker(name="test-stale")
    yield w
    assert w.shutdown(5.0)


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load(tiny_checkpoint)


def shown(qtbot, panel, w=1000, h=700):
    qtbot.addWidget(panel)
    panel.resize(w, h)
    panel.show()
    return panel


def served(panel, worker, model):
    """A session on ``worker`` with ``model``, wired to ``panel`` as the window wires it (states drawn at once)."""
    session = Session(worker, parent=panel, debounce_ms=0)
    connect_panel(session, panel)
    session.state_ready.connect(panel.show_state)
    session.set_model(model)
    return session


def analysed(qtbot, session, text):
    session.set_text(text)
    with qtbot.waitSignal(session.state_ready, timeout=LONG) as blocker:
        session.analyse_now()
    return blocker.args[0]


def test_a_cancelled_kv_run_shows_no_fitted_line_or_speedup_of_the_run_before(qtbot, worker, model):
    panel = shown(qtbot, KVBenchPanel())
    session = Session(worker, parent=panel, debounce_ms=0)
    connect_panel(session, panel)
    session.set_model(model)
    panel.show_state(analysed(qtbot, session, "The cat sat on the mat because it was warm"))
    panel.new_tokens.setValue(8)
    panel.repetitions.setValue(1)
    with qtbot.waitSignal(panel.benchmark_finished, timeout=LONG):
        panel.run_benchmark()
    finished_speedup = panel._result_labels["speedup"].text()
    assert len(panel.fitted_lines()["with-cache"][0]) == 2 and finished_speedup != "—"
    old_legend = [label.text for _sample, label in panel.plot_legend.items]
    panel.new_tokens.setValue(40)
    panel.repetitions.setValue(20)  # long enough to be cancelled half-way
    with qtbot.waitSignal(panel.benchmark_step, timeout=LONG):
        panel.run_benchmark()
    # during the new run: not the previous run's slopes, speedup or fitted lines
    assert [label.text for _sample, label in panel.plot_legend.items] != old_legend
    assert panel._result_labels["speedup"].text() == "—"
    with qtbot.waitSignal(panel.benchmark_cancelled, timeout=LONG):
        panel.cancel_benchmark()
    panel._draw_live()  # (any redraw after the cancel: a resize, the language)
    assert panel.fitted_lines()["with-cache"][0] is None or len(panel.fitted_lines()["with-cache"][0]) == 0  # was the finished run's line over the new partial curve
    assert panel._result_labels["speedup"].text() == "—"
    assert panel.result() is None
    assert [label.text for _sample, label in panel.plot_legend.items] == [tr("kvbench.with"), tr("kvbench.without")]
    qtbot.waitUntil(lambda: not worker.busy, timeout=LONG)
    translator.set_language("en")


def test_the_knockout_rankings_caption_follows_the_language_and_goes_with_its_text(qtbot, worker, model):
    from attention_lab.ui.panels.knockout import KnockoutPanel

    panel = shown(qtbot, KnockoutPanel())
    session = served(panel, worker, model)
    translator.set_language("pt_BR")
    analysed(qtbot, session, "O gato sentou no tapete porque estava quente")
    with qtbot.waitSignal(session.ranking_ready, timeout=LONG):
        panel.rank()
    portuguese = panel.top_label.text()
    assert portuguese.startswith(tr("knockout.map.key"))
    translator.set_language("en")
    panel.retranslate()  # (what the window does for a panel in sight after a switch)
    assert panel.top_label.text() != portuguese and panel.top_label.text().startswith(tr("knockout.map.key"))
    analysed(qtbot, session, "A different text about the weather")
    assert panel.ranking() is None and panel.top_label.text() == ""  # was the previous text's caption
    # a ranking cancelled, then a new text: its note goes too; and a language switch says it again
    panel.rank()
    with qtbot.waitSignal(session.ranking_cancelled, timeout=LONG):
        session.cancel_ranking()
    assert panel.top_label.text() == tr("knockout.ranking_cancelled")
    translator.set_language("pt_BR")
    panel.retranslate()
    assert panel.top_label.text() == tr("knockout.ranking_cancelled")
    translator.set_language("en")
    analysed(qtbot, session, "Yet another text")
    assert panel.top_label.text() == ""


def test_an_emptied_text_leaves_no_chips_of_the_text_before(qtbot, worker, model):
    from attention_lab.ui.panels.token_editor import TokenEditorPanel

    panel = shown(qtbot, TokenEditorPanel())
    session = Session(worker, parent=panel, debounce_ms=0)
    connect_panel(session, panel)
    session.state_ready.connect(panel.show_state)
    session.notice.connect(panel.show_notice)  # (the window's _on_notice)
    session.set_model(model)
    state = analysed(qtbot, session, "The cat sat on the mat")
    assert panel.chips.tokens == list(state.tokens)
    panel.editor.clear()  # the learner empties the field
    qtbot.waitUntil(lambda: not panel.message.isHidden(), timeout=LONG)
    assert panel.chips.tokens == []  # were the previous text's chips, under "no tokens yet"
    panel.show_state(session.state)  # the last analysis redrawn (a mode switch, a language change)
    assert panel.chips.tokens == []
    panel.editor.setPlainText("A new start")
    qtbot.waitUntil(lambda: panel.chips.tokens == list(session.state.tokens) and session.state.text == "A new start",
                    timeout=LONG)


def test_replace_by_forgets_its_word_when_another_position_is_edited(qtbot, worker, model):
    from attention_lab.ui.panels.token_editor import TokenEditorPanel

    panel = shown(qtbot, TokenEditorPanel())
    session = served(panel, worker, model)
    analysed(qtbot, session, "The old man and the sea")
    session.set_position(1)
    panel.word.setText("young")
    session.set_replacement(1, model.tokenizer.encode(" young")[0])
    assert panel.word.text() == "young"  # the word stays while it is the edit of its position
    session.set_position(3)
    assert panel.word.text() == ""  # kept "young" beside another position


class _HeldRunner:
    """A worker stand-in that keeps each job's callbacks: the test plays the worker's part."""

    is_shut_down = False

    def __init__(self):
        from PySide6.QtCore import QObject, Signal

        class _Busy(QObject):
            busy_changed = Signal(bool)

        self._busy = _Busy()
        self.busy_changed = self._busy.busy_changed
        self.jobs = []

    def submit(self, kind, fn, *args, **callbacks):
        self.jobs.append((kind, args, callbacks))

        class _Job:
            done = False

            def cancel(self):
                pass

        return _Job()

    def cancel(self, kind=None):
        pass

    def shutdown(self, timeout=0):
        return True


def test_a_run_on_gpt2_smalls_shapes_shows_the_gibberish_it_generated(qtbot, model):
    """The panel said the text of a random-weights run is gibberish while "Generated text" stayed
    empty: the live steps (no tokenizer to write them with) marked the box as written."""
    from attention_lab.core.jobs import TargetKVRun
    from attention_lab.core.kvbench import KVStep, run_kv_benchmark
    from state_factory import build_state

    panel = shown(qtbot, KVBenchPanel())
    runner = _HeldRunner()
    session = Session(runner, parent=panel)
    connect_panel(session, panel)
    panel.show_state(build_state(model))
    panel.set_benchmark_model("gpt2-shapes")
    panel.new_tokens.setValue(3)
    panel.repetitions.setValue(1)
    assert panel.run_benchmark()
    kind, _args, callbacks = runner.jobs[-1]
    result = run_kv_benchmark(model.lens, [5, 6, 7], 3, repetitions=1)  # a real result, as the worker would give
    for i, token in enumerate(result.generated_ids):  # the live steps come first
        callbacks["on_progress"](KVStep("with-cache", i, 0.001, token, 0, 3))
        panel._draw_live()
    callbacks["on_result"](TargetKVRun(result, "gpt2-small-shapes (random weights)", [5, 6, 7], model.tokenizer,
                                       model.lens.config, True))
    qtbot.wait(10)
    generated = model.tokenizer.decode(list(result.generated_ids))
    assert generated.strip() and generated in panel.generated.toPlainText()  # was empty

