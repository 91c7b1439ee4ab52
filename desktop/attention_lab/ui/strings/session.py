"""The texts of the session's messages, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/session.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "session.empty_text": {
            "en": "Type some text to analyse: the panels show the last analysis until then.",
            "pt_BR": "Digite um texto para analisar: os painéis mostram a última análise até lá.",
        },
        "session.no_model": {
            "en": "No model is loaded: open a model folder or choose one in the File menu.",
            "pt_BR": "Nenhum modelo carregado: abra uma pasta de modelo ou escolha um no menu Arquivo.",
        },
        "session.model_failed": {
            "en": "Could not load the model “{spec}”: {reason}",
            "pt_BR": "Não foi possível carregar o modelo “{spec}”: {reason}",
        },
        "session.model_kept": {
            "en": "The previous model, {name}, is still active.",
            "pt_BR": "O modelo anterior, {name}, continua ativo.",
        },
        "session.analysis_failed": {
            "en": "The analysis failed: {reason}",
            "pt_BR": "A análise falhou: {reason}",
        },
        "session.download_failed": {
            "en": "The download of “{repo}” failed: {reason}",
            "pt_BR": "O download de “{repo}” falhou: {reason}",
        },
        "session.download_cancelled": {
            "en": "Download of “{repo}” cancelled; nothing was kept.",
            "pt_BR": "Download de “{repo}” cancelado; nada foi guardado.",
        },
        "session.replacement_empty": {
            "en": "Type a word to put in place of the token.",
            "pt_BR": "Digite uma palavra para colocar no lugar do token.",
        },
        "session.replacement_many": {
            "en": "“{word}” is {count} tokens ({pieces}); the leakage test swaps exactly one token: "
            "pick a shorter word or one from the list.",
            "pt_BR": "“{word}” tem {count} tokens ({pieces}); o teste de vazamento troca exatamente um token: "
            "escolha uma palavra mais curta ou uma da lista.",
        },
    }
)
