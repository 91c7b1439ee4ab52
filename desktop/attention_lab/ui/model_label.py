"""A loaded model's name as the interface shows it (window title, status bar, panels, tour)."""

from __future__ import annotations

from attention_lab.ui.i18n import tr
from attention_lab.ui.number_format import integer
from attention_lab.ui.strings import window as _texts  # noqa: F401 -- registers the texts


def model_label(model) -> str:
    """The model's name as the interface says it: a bundled demo is described in the interface's language
    (its core name is English, and starts with the app's name, which the window title already shows)."""
    if not model.is_demo:
        return model.name
    vocab = model.tokenizer.vocab_size
    tokenizer = tr("model.demo.gpt2_tokenizer") if vocab == 50257 else tr("model.demo.own_bpe", n=integer(vocab))
    return tr("model.demo", layers=model.config.n_layer, heads=model.config.n_head, tokenizer=tokenizer)
