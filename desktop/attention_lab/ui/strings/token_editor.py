"""The texts of the tokens panel, English and Brazilian Portuguese (Portuguese terms as in the
chapter's Portuguese edition).  Imported by ``ui/panels/token_editor.py`` for its registrations."""

from attention_lab.ui.i18n import register

register(
    {
        "token_editor.title": {"en": "Tokens", "pt_BR": "Tokens"},
        "token_editor.explain": {
            "en": "<b>The model reads tokens, not words</b> — those of its own tokenizer: {tokenizer}. Each chip: "
            "position · id, and the token's text (␣ = a leading space, which byte-level BPE vocabularies such as "
            "GPT-2's write “Ġ”). Click a chip to pick the <b>edited position</b>, then a replacement: the Leakage "
            "panel measures how much every position changes.",
            "pt_BR": "<b>O modelo lê tokens, não palavras</b> — os do seu próprio tokenizador: {tokenizer}. Cada "
            "ficha: posição · id, e o texto do token (␣ = espaço no início, que vocabulários BPE de bytes como o do "
            "GPT-2 escrevem “Ġ”). Clique numa ficha para escolher a <b>posição editada</b> e depois uma "
            "substituição: o painel Vazamento mede quanto cada posição muda.",
        },
        "token_editor.tokenizer": {
            "en": "{vocab} tokens, the one of {model}",
            "pt_BR": "{vocab} tokens, o de {model}",
        },
        "token_editor.tokenizer.none": {
            "en": "none loaded yet",
            "pt_BR": "nenhum carregado ainda",
        },
        "token_editor.placeholder": {
            "en": "Type a sentence… (e.g. The big dog bit the mailman yesterday)",
            "pt_BR": "Digite uma frase… (ex.: O cachorro grande mordeu o carteiro ontem)",
        },
        "token_editor.count": {"en": "{n} tokens", "pt_BR": "{n} tokens"},
        "token_editor.too_long": {
            "en": "The text is {total} tokens; {model} reads at most {context}. The last {cut} tokens "
            "(highlighted in the text) are cut and not analysed.",
            "pt_BR": "O texto tem {total} tokens; {model} lê no máximo {context}. Os últimos {cut} tokens "
            "(destacados no texto) são cortados e não entram na análise.",
        },
        "token_editor.remark.spaces": {
            "en": "Only spaces: GPT-2 turns them into “␣” tokens, which carry no words for the heads to relate. "
            "Type a sentence to see attention at work.",
            "pt_BR": "Só espaços: o GPT-2 os transforma em tokens “␣”, sem palavras para as cabeças relacionarem. "
            "Digite uma frase para ver a atenção trabalhando.",
        },
        "token_editor.remark.bytes": {
            "en": "Chips like <0xF0> are bytes: GPT-2's BPE is byte-level, so a character its vocabulary lacks "
            "(an emoji, a rare letter) is split into the bytes of its UTF-8 code, one or more per token.",
            "pt_BR": "Fichas como <0xF0> são bytes: o BPE do GPT-2 trabalha com bytes, então um caractere que falta "
            "no seu vocabulário (um emoji, uma letra rara) é dividido nos bytes do seu código UTF-8, um ou mais por token.",
        },
        "token_editor.cut_chip": {"en": "✂ +{cut} cut", "pt_BR": "✂ +{cut} cortados"},
        "token_editor.empty": {"en": "No tokens yet: type some text.", "pt_BR": "Nenhum token ainda: digite um texto."},
        "token_editor.replace_label": {
            "en": "Replace token #{pos} “{token}” by:",
            "pt_BR": "Trocar o token #{pos} “{token}” por:",
        },
        "token_editor.replace_none": {"en": "Click a chip to choose a token.", "pt_BR": "Clique numa ficha para escolher um token."},
        "token_editor.word_placeholder": {"en": "type a word", "pt_BR": "digite uma palavra"},
        "token_editor.use_word": {"en": "Use", "pt_BR": "Usar"},
        "token_editor.current": {
            "en": "Leakage edit: #{pos} “{token}” → “{replacement}”",
            "pt_BR": "Edição do vazamento: #{pos} “{token}” → “{replacement}”",
        },
        "token_editor.predictions": {
            "en": "Model's guesses here:",
            "pt_BR": "Palpites do modelo aqui:",
        },
        "token_editor.no_predictions": {
            "en": "Position 0 has no prediction (nothing comes before it).",
            "pt_BR": "A posição 0 não tem previsão (nada vem antes dela).",
        },
        "token_editor.apply": {"en": "Write into the text", "pt_BR": "Escrever no texto"},
        "token_editor.bos": {
            "en": "Start with <|endoftext|> (BOS)",
            "pt_BR": "Começar com <|endoftext|> (BOS)",
        },
        "token_editor.bos_tip": {
            "en": "GPT-2 was trained on documents separated by <|endoftext|>; putting it first gives the sink heads"
            " their usual target at position 0.",
            "pt_BR": "O GPT-2 foi treinado com documentos separados por <|endoftext|>; colocá-lo no início dá às "
            "cabeças de vala o alvo de costume na posição 0.",
        },
        "token_editor.chip_tip": {
            "en": "position {pos} · id {id} · “{text}”",
            "pt_BR": "posição {pos} · id {id} · “{text}”",
        },
    }
)
