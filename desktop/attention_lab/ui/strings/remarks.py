"""The token editor's remark on byte tokens, naming the loaded model's tokenizer (English and Brazilian
Portuguese); imported by ``ui/panels/token_editor.py`` for its registration."""

from attention_lab.ui.i18n import register

register(
    {
        "token_editor.remark.bytes_of": {
            "en": "Chips like <0xF0> are bytes: {model}'s tokenizer is byte-level BPE, so a character its vocabulary "
            "lacks (an emoji, a rare letter) is split into the bytes of its UTF-8 code, one or more per token.",
            "pt_BR": "Fichas como <0xF0> são bytes: o tokenizador de {model} é um BPE de bytes, então um caractere que "
            "falta no seu vocabulário (um emoji, uma letra rara) é dividido nos bytes do seu código UTF-8, um ou "
            "mais por token.",
        },
    }
)
