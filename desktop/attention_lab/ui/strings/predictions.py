"""The tour's predict-then-reveal texts, English and Brazilian Portuguese (the course's own words)."""

from attention_lab.ui.i18n import register

register(
    {
        "predict.title": {"en": "Your prediction", "pt_BR": "O seu palpite"},
        "predict.why_inf": {
            "en": "If the future's score is 0 instead of −∞, will the future still get some weight after the softmax?",
            "pt_BR": "Se o score do futuro for 0 em vez de −∞, o futuro ainda recebe algum peso depois do softmax?",
        },
        "predict.leakage": {
            "en": "If you change the last token, will the positions before it change (with the mask)?",
            "pt_BR": "Se você trocar o último token, as posições antes dele mudam (com a máscara)?",
        },
        "predict.kvcache": {
            "en": "When a token is appended, will the keys and values of the earlier positions change (with the mask)?",
            "pt_BR": "Quando um token é acrescentado, as chaves e os valores (K e V) das posições anteriores mudam (com a máscara)?",
        },
        "predict.mask_designer": {
            "en": "With a sliding window of {w}, can a token be influenced by tokens more than {w} back, after all the layers?",
            "pt_BR": "Com uma janela deslizante de {w}, um token pode ser influenciado por tokens a mais de {w} "
            "para trás, depois de todas as camadas?",
        },
        "predict.knockout": {
            "en": "If the one head this text needs most is switched off, will the model's loss on the text rise?",
            "pt_BR": "Se a cabeça de que este texto mais precisa for desligada, a perda do modelo no texto sobe?",
        },
        "predict.veil": {
            "en": "This panel stays hidden until you answer the Lab tour's question: it would give the answer away.",
            "pt_BR": "Este painel fica escondido até você responder à pergunta do Tour do laboratório: "
            "ele entregaria a resposta.",
        },
        "predict.yes": {"en": "Yes", "pt_BR": "Sim"},
        "predict.no": {"en": "No", "pt_BR": "Não"},
        "predict.unsure": {"en": "Not sure", "pt_BR": "Não sei"},
        "predict.skip": {"en": "Just show me", "pt_BR": "Só mostrar"},
        "predict.hint": {
            "en": "Answer before the measurement is shown. Not graded; kept only on this computer.",
            "pt_BR": "Responda antes de a medição aparecer. Não vale nota; fica só neste computador.",
        },
        "predict.as_predicted": {
            "en": "You said “{said}”: the measurement agrees.",
            "pt_BR": "Você disse “{said}”: a medição concorda.",
        },
        "predict.not_as_predicted": {
            "en": "You said “{said}”; the measurement says “{measured}”. The step's text says why.",
            "pt_BR": "Você disse “{said}”; a medição diz “{measured}”. O texto do passo explica por quê.",
        },
        "predict.was_unsure": {
            "en": "You weren't sure; the measurement says “{measured}”.",
            "pt_BR": "Você não tinha certeza; a medição diz “{measured}”.",
        },
        "predict.summary": {
            "en": "Your predictions: {agreed} of {answered} as measured.",
            "pt_BR": "Os seus palpites: {agreed} de {answered} como a medição mostrou.",
        },
    }
)
