"""A language switch re-words the panels; it does not draw them again (the switch's
stall was the panels' new words and what they set off in Qt's layout and paint)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attention_lab.ui.i18n import translator, tr
from attention_lab.ui.panels.leakage import LeakagePanel
from synthetic_state import synthetic_state


def _count_calls(monkeypatch, obj, name: str, calls: list) -> None:
    original = getattr(obj, name)
    monkeypatch.setattr(obj, name, lambda *args, **kwargs: (calls.append(name), original(*args, **kwargs))[1])


def _shown(qtbot, panel, width: int, height: int):
    """``panel`` alone, shown at ``width`` × ``height`` and exposed (closed and deleted after the test)."""
    qtbot.addWidget(panel)
    panel.resize(width, height)
    panel.show()
    qtbot.waitExposed(panel)
    return panel


def test_leakage_takes_its_new_words_without_drawing_its_bars_and_maps_again(qtbot, monkeypatch):
    """Its re-wording cleared and rebuilt the bars' legend and drew the bars and both layer maps
    again (``show_state``): a language changes no number, only words."""
    panel = LeakagePanel()
    qtbot.addWidget(panel)
    panel.resize(900, 700)
    panel.show()
    state = synthetic_state()
    panel.show_state(state)
    qtbot.wait(50)
    english = (panel.summary.text(), [label.text for _sample, label in panel.legend.items], panel.at.itemText(0))
    labels = [label for _sample, label in panel.legend.items]
    drawn: list[str] = []
    for bars in (panel.causal_bars, panel.bidi_bars):
        _count_calls(monkeypatch, bars, "setOpts", drawn)
    for _plot, image, overlay in panel._heat.values():
        _count_calls(monkeypatch, image, "setImage", drawn)
        _count_calls(monkeypatch, overlay, "setImage", drawn)
    translator.set_language("pt_BR")  # a panel alone follows at once (no window to schedule it)
    assert drawn == []
    assert [label for _sample, label in panel.legend.items] == labels  # the same entries, new words
    assert [label.text for _sample, label in panel.legend.items] == [tr("leakage.causal"), tr("leakage.bidirectional")]
    assert panel.legend.items[1][1].text == "bidirecional (sem máscara)"
    assert panel.at.itemText(0) == "estado final (após ln_f)"
    assert panel.summary.text().startswith("Trocando") and panel.summary.text() != english[0]
    zero_words = [text for text, *_rest in panel.zero_labels._labels]
    assert zero_words and set(zero_words) == {"0 (exato)"}
    assert panel._heat[True][0].getAxis("left")._tickLevels[0][0][1] == tr("leakage.emb_short")
    translator.set_language("en")
    assert (panel.summary.text(), [label.text for _sample, label in panel.legend.items], panel.at.itemText(0)) == english
    assert drawn == []


def test_a_switch_draws_again_only_the_axes_that_write_their_own_numbers(qtbot):
    """Every axis of every plot was drawn anew on a switch (its picture dropped), the token and
    layer axes too, whose words the panels set themselves: pyqtgraph's ``generateDrawSpecs`` was
    a hot spot of the switch's stalls."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from attention_lab.ui import number_format

    holder = QWidget()
    qtbot.addWidget(holder)
    plot = pg.PlotWidget(holder)
    QVBoxLayout(holder).addWidget(plot)
    plot.plot([0.0, 0.5, 1.0], [0.25, 0.5, 0.75])
    words = plot.getPlotItem().getAxis("bottom")
    words.setTicks([[(0.0, "the"), (1.0, "dog")]])
    numbers = plot.getPlotItem().getAxis("left")
    holder.resize(400, 300)
    holder.show()
    qtbot.waitExposed(holder)
    holder.grab()  # painted: each axis keeps its picture
    assert words.picture is not None and numbers.picture is not None
    number_format.follow_language(holder)
    assert numbers.picture is None  # 0.5 becomes 0,5: drawn again
    assert words.picture is not None  # its words are the panel's to change


def test_a_window_switched_to_portuguese_shows_no_english(qtbot, make_window):
    """The window opened in English, every dock and tab opened and the tour open, then switched:
    every visible text is Portuguese, as in a window opened in Portuguese
    (``test_portuguese_ui``), though the panels now take their words from the switch alone
    (Qt's own broadcast kept from them) and the Leakage panel re-words without drawing again."""
    from PySide6.QtWidgets import QTabWidget
    from test_portuguese_ui import WORD, english_words, induction_words, model_guesses, problems_in
    from visible_texts import open_everything, visible_texts

    window = make_window(model_spec="demo", language="en")
    qtbot.waitUntil(lambda: window.last_state is not None, timeout=60_000)
    text = "A small cat sat on the warm mat today"  # the learner's own: no new analysis on the switch
    window.panel("panel.token_editor").editor.setPlainText(text)
    qtbot.waitUntil(lambda: window.last_state.text == text, timeout=60_000)
    open_everything(qtbot, window)
    shown = window.last_state
    window.set_language("pt_BR")
    for dock in window.docks.values():  # a panel out of sight takes its words when shown
        dock.raise_()
        qtbot.wait(50)
        for tabs in dock.findChildren(QTabWidget):
            for i in reversed(range(tabs.count())):
                tabs.setCurrentIndex(i)
                qtbot.wait(50)
    qtbot.waitUntil(lambda: not window.redraw.untranslated, timeout=10_000)
    qtbot.wait(300)
    state = window.last_state
    assert state is shown  # the words changed, not what they describe
    allowed = {w.lower() for w in WORD.findall(" ".join(state.tokens) + " " + state.text + " " + window.session.model.spec + " "
                                              + induction_words(window) + " " + model_guesses(window))}
    english = english_words()
    failures = [f"{seen.where}: “{seen.text[:120]}” → {', '.join(found)}"
                for seen in visible_texts(window) if (found := problems_in(seen.text, english, allowed))]
    assert not failures, f"{len(failures)} English texts after the switch:\n" + "\n".join(failures)


def test_a_closed_panel_takes_the_new_words_only_when_shown_again(qtbot, monkeypatch):
    """pytest-qt closes a test's panel and deletes it later (its ``processEvents`` leaves the deletion
    for the next event loop): a later test's switch re-worded it meanwhile, and its legend's anchor
    reached a ViewBox already deleted (seen once).  Closed, a panel follows no switch; shown again,
    it takes the language it missed."""
    panel = LeakagePanel()
    qtbot.addWidget(panel)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_state(synthetic_state())
    reworded: list[str] = []
    _count_calls(monkeypatch, panel, "retranslate", reworded)
    panel.close()
    translator.set_language("pt_BR")
    assert reworded == []
    panel.show()
    qtbot.waitExposed(panel)
    assert reworded == ["retranslate"]
    assert panel.legend.items[1][1].text == "bidirecional (sem máscara)"


def test_the_head_grid_in_sight_takes_its_new_words_without_drawing_its_maps_again(qtbot, monkeypatch):
    """Its re-wording drew the grid in sight again (maps composed, view fitted, repainted): its maps and
    token labels are no words of the interface; its heads' titles and axes' names are."""
    from attention_lab.ui.panels.head_grid import HeadGridPanel

    panel = HeadGridPanel()
    qtbot.addWidget(panel)
    panel.resize(800, 800)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_state(synthetic_state())
    qtbot.waitUntil(panel.has_data)
    qtbot.wait(100)
    drawn: list[str] = []
    _count_calls(monkeypatch, panel.mosaic, "show_mosaic", drawn)
    translator.set_language("pt_BR")
    assert drawn == []
    assert [title.toPlainText() for title in panel._titles[:2]] == ["cabeça 0", "cabeça 1"]
    assert panel.grid_plot.getAxis("left").labelText == tr("head_grid.query_axis")
    assert panel.has_data()
    panel.tabs.setCurrentIndex(1)  # another tab: drawn, in the new words, when opened
    qtbot.waitUntil(panel.has_data)
    translator.set_language("en")
    panel.tabs.setCurrentIndex(0)
    qtbot.waitUntil(panel.has_data)
    assert panel._titles[0].toPlainText() == "head 0"


def _measured_modes(state):
    """The five mask modes of ``state`` as the worker would send them: made-up numbers, one mode leaking."""
    import numpy as np

    from attention_lab.core.analysis import MaskModeRow
    from attention_lab.core.jobs import MaskModes, ModeDetail
    from attention_lab.core.job_protocol import edit_key
    from attention_lab.ui.panels.mask import MODES

    n, heads = state.n_tokens, int(state.attention_causal.shape[0])
    details = {}
    for mode in MODES:
        leaks = mode == "zero-score"
        row = MaskModeRow(mode, 0.0, 0.25 if leaks else 0.0, 0.125 if leaks else 0.0)
        leak = np.array([0.125 if leaks and i < state.position else 0.0 for i in range(n)]) + np.eye(n)[state.position]
        details[mode] = ModeDetail(row, np.ones((heads, n)), leak)
    return MaskModes(edit_key(state), state.layer, state.position, state.replacement_id, details)


def test_the_mask_panel_takes_its_new_words_without_drawing_or_repainting_its_plots(qtbot, monkeypatch):
    """Its re-wording filled the whole panel again: the grid's picture set anew, the print and its
    choices rebuilt, both bar plots drawn again and their axes labelled again, and each group box's new
    title repainted everything inside it (the grid, the table, the bars): the largest re-wording turn
    with the Mask in sight.  Words change; the plots are neither drawn nor repainted, and
    nothing outside the words is laid out again."""
    import pyqtgraph as pg
    from PySide6.QtCore import QEvent

    from attention_lab.ui.panels.mask import MaskPanel
    from paint_counter import EventCounter, PaintCounter

    panel = _shown(qtbot, MaskPanel(), 1000, 800)
    state = synthetic_state()
    panel._pending_key = None
    panel.show_state(state)
    qtbot.waitUntil(lambda: len(panel.bar_plots.findChildren(pg.PlotWidget)) == 2)
    panel._pending_key = _measured_modes(state).key
    panel.show_mask_modes(_measured_modes(state))
    panel.set_mode("zero-score")
    qtbot.wait(100)
    english = (panel.table.item(3, 4).text(), panel.selected_text.text(), panel.ascii_choice.itemText(1),
               panel.sums_plot.getAxis("left").labelText, panel.grid_box.title())
    plots = (panel.grid_plot, panel.sums_plot, panel.leak_plot)
    # half a plot or more: drawn again (a changed axis name repaints its axis' strip, the title its own)
    painted = [PaintCounter(plot.viewport(), min_fraction=0.5, by_region=True) for plot in plots[:1]]
    resized = [EventCounter(widget, QEvent.Type.Resize) for widget in (*plots, panel.table, panel.ascii_view)]
    drawn: list[str] = []
    _count_calls(monkeypatch, panel.grid_image, "setImage", drawn)
    for bars in (panel.sums_bars, panel.leak_bars):
        _count_calls(monkeypatch, bars, "setOpts", drawn)
    _count_calls(monkeypatch, panel.ascii_view, "setPlainText", drawn)
    _count_calls(monkeypatch, panel.ascii_choice, "clear", drawn)
    for plot in plots:
        _count_calls(monkeypatch, plot.getPlotItem(), "setLabel", drawn)
    translator.set_language("pt_BR")  # a panel alone follows at once (no window to schedule it)
    qtbot.wait(100)
    assert drawn == [] and [c.count for c in painted] == [0] and [c.count for c in resized] == [0] * 5
    assert panel.grid_box.title() == "A máscara somada aos scores"  # the material's word for a score
    assert panel.table.horizontalHeaderItem(4).text() == "Veredito"
    assert panel.table.item(3, 4).text() == tr("mask.verdict.leaks") == "o futuro vaza"
    assert panel.selected_text.text().startswith("<b>zerar o score</b>: o futuro ainda recebe até 0,25")
    assert panel.ascii_choice.itemText(1) == tr("mask.ascii.head", head=0, layer=state.layer)
    assert panel.sums_plot.getAxis("left").labelText == "Σ pesos (média)"
    assert panel.grid_plot.getAxis("left").labelText == tr("mask.query")
    translator.set_language("en")
    qtbot.wait(100)
    assert (panel.table.item(3, 4).text(), panel.selected_text.text(), panel.ascii_choice.itemText(1),
            panel.sums_plot.getAxis("left").labelText, panel.grid_box.title()) == english
    assert drawn == [] and [c.count for c in painted] == [0]


def _painted_plot(qtbot, x, y, grid=False):
    """A plot in a shown window, painted once: each axis holds its drawing."""
    import pyqtgraph as pg
    from PySide6.QtWidgets import QVBoxLayout, QWidget

    from attention_lab.ui.panels.plot_setters import show_grid

    holder = QWidget()
    qtbot.addWidget(holder)
    plot = pg.PlotWidget(holder)
    QVBoxLayout(holder).addWidget(plot)
    plot.plot(x, y)
    if grid:
        show_grid(plot.getPlotItem(), y=True)
    holder.resize(400, 300)
    holder.show()
    qtbot.waitExposed(holder)
    holder.grab()
    return holder, plot.getPlotItem()


def test_an_axis_with_whole_numbers_keeps_its_drawing_on_a_switch(qtbot):
    """Positions, layers, token counts: "0 10 20 30" in both languages.  Drawn anew on each switch all the
    same, an axis with grid lines repainted its whole plot (the Mask panel's bar plots)."""
    from attention_lab.ui import number_format

    holder, plot = _painted_plot(qtbot, [0.0, 10.0, 20.0, 30.0], [0.25, 0.5, 0.75, 1.0], grid=True)
    positions, weights = plot.getAxis("bottom"), plot.getAxis("left")
    assert positions.picture is not None and weights.picture is not None
    number_format.follow_language(holder)
    assert positions.picture is not None  # 0 1 2 3: the same words
    assert weights.picture is None  # 0.25 becomes 0,25: drawn again
    holder.grab()
    plot.setXRange(0.0, 1.5, padding=0)  # now its ticks have decimals: they follow the next switch
    holder.grab()
    number_format.follow_language(holder)
    assert positions.picture is None


def test_an_axis_renamed_keeps_its_ticks_drawing(qtbot, monkeypatch):
    """A new name for a shown axis (a language switch): pyqtgraph's ``setLabel`` drew every tick text
    of the axis again, and an axis with grid lines repainted its whole plot.  The name changes, centred
    as pyqtgraph centres it; the ticks' drawing stays."""
    from attention_lab.ui.panels.plot_setters import set_axis_label

    holder, plot = _painted_plot(qtbot, [0.0, 1.0, 2.0], [0.25, 0.5, 0.75], grid=True)
    set_axis_label(plot, "left", "weight")
    set_axis_label(plot, "bottom", "query position")
    qtbot.wait(50)  # (the axes' new room laid out)
    holder.grab()
    left, bottom = plot.getAxis("left"), plot.getAxis("bottom")
    assert left.picture is not None and bottom.picture is not None
    width = left.width()
    drawn: list[str] = []
    _count_calls(monkeypatch, left, "generateDrawSpecs", drawn)
    _count_calls(monkeypatch, bottom, "generateDrawSpecs", drawn)
    set_axis_label(plot, "left", "peso")
    set_axis_label(plot, "bottom", "posição da consulta")
    assert left.picture is not None and bottom.picture is not None
    assert (left.labelText, bottom.labelText) == ("peso", "posição da consulta")
    assert "posição da consulta" in bottom.label.toPlainText()
    label = bottom.label.boundingRect().width()
    assert bottom.label.pos().x() == int(bottom.size().width() / 2 - label / 2)  # centred
    holder.grab()
    assert drawn == [] and left.width() == width
    set_axis_label(plot, "left", "")  # no name: pyqtgraph's own way, the axis narrower
    assert not left.label.isVisible() and left.maximumWidth() < width


def test_an_explanation_measures_each_languages_text_once_per_width(qtbot, monkeypatch):
    """Switching back and forth, each panel's explanation measured its text again at every width the
    window's layout asked about (rich text laid out, ~1 ms each, ~15 per switch with three panels in
    sight): it keeps the heights of its last few texts."""
    from PySide6.QtWidgets import QLabel

    from attention_lab.ui.panels.panel_kit import explanation_label
    from attention_lab.ui.strings import mask as _texts  # noqa: F401 -- registers the texts

    label = explanation_label()
    qtbot.addWidget(label)
    label.resize(400, 100)
    label.show()
    qtbot.waitExposed(label)
    measured: list[int] = []
    original = QLabel.heightForWidth
    monkeypatch.setattr(QLabel, "heightForWidth", lambda self, width: (measured.append(width), original(self, width))[1])
    english = tr("mask.explain")
    translator.set_language("pt_BR")
    portuguese = tr("mask.explain")
    translator.set_language("en")
    for text in (english, portuguese, english, portuguese):
        label.setText(text)
        heights = [label.heightForWidth(width) for width in (300, 600)]
        assert heights[0] > heights[1] > 0
    assert measured == [300, 600, 300, 600]  # each text measured once per width
    label.setText(english + " (changed)")
    label.heightForWidth(300)
    assert measured[-1] == 300 and len(measured) == 5  # a new text: measured


def test_the_token_strip_takes_its_new_words_without_repainting_its_chips(qtbot, monkeypatch):
    """Its re-wording showed the state again: the chips laid out and repainted and the text field's
    marks set again on each switch, though a token and its numbers read the same in any language.
    The learner's selected chip keeps its words, in the new language."""
    from attention_lab.ui.panels.token_editor import TokenEditorPanel
    from paint_counter import PaintCounter

    panel = _shown(qtbot, TokenEditorPanel(), 900, 400)
    state = synthetic_state()
    panel.show_state(state)
    panel.chips.select(1)  # the learner looks at another token than the edited one
    panel._show_selection(1)
    qtbot.wait(50)
    painted = PaintCounter(panel.chips)
    laid_out: list[str] = []
    _count_calls(monkeypatch, panel.chips, "set_tokens", laid_out)
    _count_calls(monkeypatch, panel.chips, "relayout", laid_out)
    translator.set_language("pt_BR")
    qtbot.wait(50)
    assert laid_out == [] and painted.count == 0
    assert panel.replace_label.text() == tr("token_editor.replace_label", pos=1, token=state.tokens[1])
    assert panel.replace_label.text().startswith("Trocar")
    assert panel.count.text() == tr("token_editor.count", n=state.n_tokens)
    translator.set_language("en")
    qtbot.wait(50)
    assert panel.replace_label.text().startswith("Replace") and painted.count == 0


def test_the_head_portrait_takes_its_new_words_without_drawing_its_scatter_again(qtbot, monkeypatch):
    """Its re-wording drew the heads' points again and re-ranged the scatter (its plot repainted), and
    new header items sized every column again: the words change, the points stay."""
    from attention_lab.ui.panels.portrait import COLUMNS, PortraitPanel

    panel = _shown(qtbot, PortraitPanel(), 900, 700)
    panel.show_state(synthetic_state())
    qtbot.wait(50)
    english_legend = panel.legend.text()
    drawn: list[str] = []
    _count_calls(monkeypatch, panel.scatter, "setData", drawn)
    _count_calls(monkeypatch, panel.plot.getPlotItem(), "enableAutoRange", drawn)
    _count_calls(monkeypatch, panel.table, "setHorizontalHeaderLabels", drawn)
    translator.set_language("pt_BR")
    assert drawn == []
    assert [panel.table.horizontalHeaderItem(c).text() for c in range(len(COLUMNS))] == [tr(f"portrait.col.{c}") for c in COLUMNS]
    assert panel.plot.getPlotItem().getAxis("bottom").labelText == tr("portrait.scatter.x")
    assert panel.legend.text() != english_legend and "(" in panel.legend.text()
    translator.set_language("en")
    assert panel.legend.text() == english_legend and drawn == []


def test_the_shapes_tables_take_their_new_words_in_the_cells_they_have(qtbot, monkeypatch):
    """Both tables were filled with new items (and new header items) on each switch: every column
    sized to its contents again and each table repainted whole.  The cells stay, their words change."""
    from PySide6.QtCore import Qt

    from attention_lab.ui.panels.shapes import ShapesPanel

    panel = _shown(qtbot, ShapesPanel(), 900, 700)
    panel.show_state(synthetic_state())
    qtbot.wait(50)
    items = [panel.table.item(r, c) for r in range(panel.table.rowCount()) for c in range(3)]
    replaced: list[str] = []
    for table in (panel.table, panel.cost_table):
        for name in ("setItem", "setHorizontalHeaderLabels", "setVerticalHeaderLabels"):
            _count_calls(monkeypatch, table, name, replaced)
    translator.set_language("pt_BR")
    assert replaced == []
    assert [panel.table.item(r, c) for r in range(panel.table.rowCount()) for c in range(3)] == items
    assert panel.table.horizontalHeaderItem(0).text() == tr("shapes.col.step")
    assert panel.cost_table.verticalHeaderItem(0).text() == tr("shapes.cost.row.width", **panel._numbers())
    assert panel.table.item(1, 1).font().family() == panel._mono.family()
    assert panel.table.item(1, 1).textAlignment() == int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    translator.set_language("en")
    assert panel.table.horizontalHeaderItem(0).text() == tr("shapes.col.step") and replaced == []


def test_switches_back_and_forth_keep_the_panels_splitter_sizes(qtbot, make_window, isolated_settings):
    """A panel in a dock's scroll area is laid out at the height its layout prefers for its width,
    and a splitter of graphics views preferred its views' current heights: without its handle
    the handle's 4 px came off the first view at every relayout (252 → 228 px in six switches,
    down to their 130 px minimum over a soak's ~275); with it, a switch whose labels were laid
    out a turn apart gave the bars a line that the next switch added to (210 → 224 → 238 px)."""
    from attention_lab.ui.panels.ids import PanelId

    isolated_settings.setValue("first_run/gpt2_offer_answered", True)
    isolated_settings.setValue("tour/offered", True)
    window = make_window(model_spec="demo", language="en")
    text = "A small cat sat on the warm mat today"  # the learner's own: no new analysis on a switch
    window.panel(PanelId.TOKEN_EDITOR).editor.setPlainText(text)
    window.resize(1000, 700)

    def quiet() -> bool:
        return (window.last_state is not None and window.last_state.text == text and window.redraw.showing is window.last_state
                and not window.session.pending and not window.worker.busy and not window.redraw.relabelling
                and not window.paint_hold.held and all(window._out_of_sight(p) for p in window.redraw.untranslated))

    def settled_height(panel) -> int:
        """The panel's height once the window's own layout after the resize is done (the docks
        can still move a few turns after the analysis is drawn)."""
        heights = []

        def steady() -> bool:
            heights.append(panel.height())
            return quiet() and len(heights) >= 3 and heights[-1] == heights[-2] == heights[-3]

        qtbot.waitUntil(steady, timeout=60_000)
        return heights[-1]

    for panel_id, splitter in ((PanelId.LEAKAGE, lambda p: p.splitter), (PanelId.MASK, lambda p: p.left_splitter)):
        panel = window.panel(panel_id)
        window.docks[panel_id].raise_()
        # one round trip first: the first switch may lay the panel out once more (the leakage
        # panel's maps take their height per layer row then, 468 → 508 px here); what must not
        # happen is a change at every switch
        for language in ("pt_BR", "en"):
            window.set_language(language)
            settled_height(panel)
        height = settled_height(panel)
        sizes = splitter(panel).sizes()
        assert min(sizes) > 0, f"{panel_id}: {sizes}"
        for language in ("pt_BR", "en", "pt_BR", "en"):
            window.set_language(language)
            assert settled_height(panel) == height, f"{panel_id}'s dock after the switch to {language}"
            assert splitter(window.panel(panel_id)).sizes() == sizes, f"{panel_id} after the switch to {language}"
