"""The texts of the error dialog, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/errors.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "errors.title": {"en": "Attention Lab: something went wrong", "pt_BR": "Attention Lab: algo deu errado"},
        "errors.copy": {"en": "Copy details", "pt_BR": "Copiar detalhes"},
        "errors.close": {"en": "Close", "pt_BR": "Fechar"},
        "errors.copied": {"en": "Copied.", "pt_BR": "Copiado."},
        "errors.show_details": {"en": "Show details", "pt_BR": "Mostrar detalhes"},
        "errors.hide_details": {"en": "Hide details", "pt_BR": "Ocultar detalhes"},
        "errors.usable": {
            "en": "The app is still usable: you can keep working.",
            "pt_BR": "O aplicativo continua utilizável: você pode seguir trabalhando.",
        },
        "errors.unexpected": {"en": "Unexpected error: {reason}", "pt_BR": "Erro inesperado: {reason}"},
    }
)
