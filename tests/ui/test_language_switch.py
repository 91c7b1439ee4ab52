"""A language switch re-words the panels; it does not draw them again (issue 18: the switch's
stall, the panels' new words and what they set off in Qt's layout and paint)."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attention_lab.ui.i18n import translator, tr
from attention_lab.ui.panels.leakage import LeakagePanel
from synthetic_state import synthetic_state


def _count_calls(monkeypatch, obj, name: str, calls: list) -> None:
    original = getattr(obj, name)
    monkeypatch.setattr(obj, name, lambda *args, **kwargs: (calls.append(name), original(*args, **kwargs))[1])


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
