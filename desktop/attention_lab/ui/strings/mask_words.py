"""The mask in words, English and Brazilian Portuguese: every control and sentence that names the
mask says it this way (never its spec, "window:3").  The English is the core's own
(``core/inputs.py``); imported by ``ui/mask_words.py`` for its registrations."""

from attention_lab.core.inputs import ENGLISH_MASK_WORDS
from attention_lab.ui.i18n import register

PORTUGUESE = {
    "causal": "causal (a do GPT-2)",
    "bidirectional": "bidirecional (sem máscara)",
    "prefix": "prefix-LM (as {size} primeiras nos dois sentidos)",
    "window": "janela deslizante de {size}",
    "documents": "documentos separados em '{separator}'",
    "custom": "personalizada (suas células)",
}

register({f"mask.{kind}": {"en": english, "pt_BR": PORTUGUESE[kind]} for kind, english in ENGLISH_MASK_WORDS.items()})

register(
    {
        "head_grid.with_mask": {"en": "With the mask: {mask}", "pt_BR": "Com a máscara: {mask}"},
        "leakage.summary.designed_words": {
            "en": "(“Causal” here is the mask designer's mask: {mask}.)",
            "pt_BR": "(“Causal” aqui é a máscara desenhada no painel de máscaras: {mask}.)",
        },
        "status.mode_mask": {"en": "mask: {mask} (designer)", "pt_BR": "máscara: {mask} (desenhada)"},
    }
)
