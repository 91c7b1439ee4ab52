"""The Generate panel, served by a real session and worker: Next, Back, Reset, Play, the stale-cache
switch, inside the head, switching text or model mid-way, both languages."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attention_lab.core.generation import Generation, GenerationSettings  # noqa: E402
from attention_lab.core.models import load_model  # noqa: E402
from attention_lab.ui.i18n import translator  # noqa: E402
from attention_lab.ui.panels.generate import GeneratePanel  # noqa: E402
from attention_lab.ui.session import Session  # noqa: E402
from attention_lab.ui.wiring import connect_panel  # noqa: E402
from attention_lab.ui.worker import InferenceWorker  # noqa: E402

from state_factory import build_state, load  # noqa: E402

LONG = 60_000


@pytest.fixture(scope="module")
def model(tiny_checkpoint):
    return load(tiny_checkpoint)


@pytest.fixture(scope="module")
def state(model):
    return build_state(model)


@pytest.fixture
def panel(qtbot):
    widget = GeneratePanel()
    qtbot.addWidget(widget)
    widget.resize(900, 1000)
    widget.show()
    session = Session(InferenceWorker(name="test-generate"), parent=widget)
    connect_panel(session, widget)
    yield widget
    translator.set_language("en")
    widget.shutdown()
    assert session.shutdown(5.0)


def steps_shown(panel) -> int:
    view = panel.view()
    return -1 if view is None or panel._pending_key is not None else len(view.steps)


def press(panel, qtbot, button, times: int = 1) -> None:
    for _ in range(times):
        button.click()
    qtbot.waitUntil(lambda: steps_shown(panel) == panel.steps(), timeout=LONG)


def test_next_token_grows_the_map_by_one_row_and_fills_every_view(panel, state, model, qtbot):
    panel.show_state(state)
    assert panel.has_data()  # the text's own rows, before any step
    press(panel, qtbot, panel.next_button, 3)
    view = panel.view()
    reference = Generation(model.lens, state.ids, GenerationSettings(), model.tokenizer)
    reference.advance_to(3)
    assert [s.token_id for s in view.steps] == [s.token_id for s in reference.steps]
    n = len(state.ids)
    assert panel.map_image.image.shape == (n + 2, n + 2)  # n − 1 rows of text, then a row per step
    assert "changed by exactly 0" in panel.rows_label.text()
    assert panel.top_table.item(0, 0).text() == view.steps[-1].top[0].token
    assert f"2 (K and V) × 2 layers × 12 heads × 4 (d_k) × {n + 2} × 4 bytes" in panel.cache_label.text()
    assert panel.work_table.item(0, 0).text() and panel.work_table.item(1, 1).text()
    assert panel.inside_table.rowCount() == 1 + 2 * (n + 2) + 4 + 3  # q, keys, 4 rows, values, output, concat, W^O
    assert view.inside.max_error_vs_layer <= 1e-5
    assert "Step 3" in panel.status.text() and "room for" in panel.status.text()
    header, rows = panel.table_for_export()
    assert header == ["quantity", "row", "column", "value"]
    assert [r[3] for r in rows if r[0] == "q"] == view.inside.q.double().tolist()  # full precision


def test_back_then_next_gives_the_same_step(panel, state, qtbot):
    panel.show_state(state)
    press(panel, qtbot, panel.next_button, 2)
    last = panel.view().steps[-1]
    press(panel, qtbot, panel.back_button)
    assert len(panel.view().steps) == 1
    press(panel, qtbot, panel.next_button)
    assert panel.view().steps[-1].same_step(last)
    press(panel, qtbot, panel.reset_button)
    assert panel.view().steps == () and not panel.back_button.isEnabled()
    assert panel.map_image.image.shape == (len(state.ids) - 1,) * 2


def test_play_steps_on_its_own_until_paused(panel, state, qtbot):
    panel.show_state(state)
    panel.pace.setValue(100)
    panel.play_button.click()
    assert panel.play_button.text() == "Pause"
    qtbot.waitUntil(lambda: steps_shown(panel) >= 3, timeout=LONG)
    panel.play_button.click()
    qtbot.waitUntil(lambda: steps_shown(panel) == panel.steps(), timeout=LONG)
    reached = panel.steps()
    qtbot.wait(400)
    assert panel.steps() == reached and panel.play_button.text() == "Play"


def test_without_the_mask_the_cache_goes_stale(panel, state, qtbot):
    panel.show_state(state)
    press(panel, qtbot, panel.next_button, 2)
    panel.stale.setChecked(True)  # other settings: from the text again
    qtbot.waitUntil(lambda: steps_shown(panel) == 0, timeout=LONG)
    press(panel, qtbot, panel.next_button, 2)
    view = panel.view()
    assert not view.settings.causal
    assert "changed by up to" in panel.rows_label.text()
    assert "stale cache" in panel.stale_label.text() and "L1" in panel.stale_label.text()
    assert max(view.steps[-1].kv_drift[1:]) > 1e-3


def test_sampling_with_a_seed_is_reproducible(panel, state, qtbot):
    panel.show_state(state)
    panel.sample.setChecked(True)
    panel.temperature.setValue(2.0)
    panel.seed.setValue(5)
    press(panel, qtbot, panel.next_button, 3)
    first = [s.token_id for s in panel.view().steps]
    press(panel, qtbot, panel.reset_button)
    press(panel, qtbot, panel.next_button, 3)
    assert [s.token_id for s in panel.view().steps] == first
    assert panel.view().settings == GenerationSettings(temperature=2.0, seed=5)


def test_switching_text_or_model_mid_way_starts_again(panel, state, qtbot):
    panel.show_state(state)
    press(panel, qtbot, panel.next_button, 2)
    other = build_state(state.model, "A cat sat on the mat")
    panel.show_state(other)
    assert panel.steps() == 0
    qtbot.waitUntil(lambda: steps_shown(panel) == 0, timeout=LONG)
    assert panel.view().ids == tuple(other.ids)
    demo = build_state(load_model("demo"))
    panel.show_state(demo)
    press(panel, qtbot, panel.next_button)
    view = panel.view()
    assert view.config.n_embd == 192 and view.ids[: len(demo.ids)] == tuple(demo.ids)
    assert panel.head_box.maximum() == 11 and panel.layer_box.maximum() == 3


def test_picking_another_head_keeps_the_steps(panel, state, qtbot):
    panel.show_state(state)
    press(panel, qtbot, panel.next_button, 2)
    tokens = [s.token_id for s in panel.view().steps]
    panel.layer_box.setValue(1)
    panel.head_box.setValue(7)
    qtbot.waitUntil(lambda: steps_shown(panel) == 2 and panel.view().head == 7, timeout=LONG)
    view = panel.view()
    assert [s.token_id for s in view.steps] == tokens and (view.layer, view.inside.layer, view.inside.head) == (1, 1, 7)
    assert panel.map_box.title() == "Layer 1, head 7"


def test_portuguese(panel, state, qtbot):
    panel.show_state(state)
    press(panel, qtbot, panel.next_button)
    translator.set_language("pt_BR")
    panel.retranslate()
    assert panel.next_button.text() == "Próximo token" and panel.reset_button.text() == "Recomeçar"
    assert "mudaram exatamente 0" in panel.rows_label.text()
    assert "cabeças" in panel.cache_label.text() and panel.inside_box.title() == "Dentro desta cabeça"


def test_alone_it_says_no_one_generates(qtbot, state):
    panel = GeneratePanel()
    qtbot.addWidget(panel)
    panel.show_state(state)
    assert panel.has_data() and panel.status.text() == "No one generates here."
    panel.next_token()
    assert panel.view() is None and panel.status.text() == "No one generates here."
