"""The sequence the model's induction scores are measured on, named (English and Brazilian Portuguese);
imported by ``ui/panels/portrait.py`` for its registration."""

from attention_lab.ui.i18n import register

register(
    {
        "portrait.induction.sequence": {
            "en": "Measured on “{first}” said twice after <|endoftext|> ({count} tokens), the sequence the tour's "
            "induction step puts in the editor.",
            "pt_BR": "Medido em “{first}” dito duas vezes após <|endoftext|> ({count} tokens), a sequência que o passo "
            "de indução do tour põe no editor.",
        },
    }
)
