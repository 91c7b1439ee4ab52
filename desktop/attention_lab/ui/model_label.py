"""A loaded model's name as the interface shows it (window title, status bar, panels, tour)."""

from __future__ import annotations

from typing import Callable

from attention_lab.ui.i18n import tr
from attention_lab.ui.number_format import integer
from attention_lab.ui.strings import window as _texts  # noqa: F401 -- registers the texts


def model_label(model) -> str:
    """The model's name as the interface says it: a bundled demo is described in the interface's language
    (its core name is English, and starts with the app's name, which the window title already shows)."""
    return model_label_later(model)()


def model_label_later(model) -> Callable[[], str]:
    """:func:`model_label` said when called, in the language of that moment (a text kept across a language
    switch: the tour's "measured on …"), holding the few numbers it needs, not the model."""
    if not model.is_demo:
        name = model.name
        return lambda: name
    vocab, layers, heads = model.tokenizer.vocab_size, model.config.n_layer, model.config.n_head

    def demo_label() -> str:
        tokenizer = tr("model.demo.gpt2_tokenizer") if vocab == 50257 else tr("model.demo.own_bpe", n=integer(vocab))
        return tr("model.demo", layers=layers, heads=heads, tokenizer=tokenizer)

    return demo_label
