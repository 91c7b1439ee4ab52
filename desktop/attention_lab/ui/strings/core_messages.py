"""The core's failures a learner meets (a model that won't load, a download that can't start), in the
interface's language.  The English is the core's own text (``core/messages.py``, also what the CLI prints);
the Portuguese follows the chapter's Portuguese edition.

What only a library or the OS can say, in English (safetensors' "{detail}", an OS error's text), is not
inside a Portuguese sentence: the sentence stands on its own and :func:`core_message` hands the English
back apart, for a "Detalhes: …" after everything else.  The OS errors a learner meets most (a file not
found, permission denied, a full disk…) are said in Portuguese instead; the sizes a download reached are
written with the language's decimal sign (3,1 MB)."""

from attention_lab.core.messages import ENGLISH
from attention_lab.core.numbers import download_size
from attention_lab.ui.i18n import register, tr, translator

PORTUGUESE = {
    "model.folder_not_found": "pasta do modelo não encontrada: {folder}",
    "model.not_a_folder": "{folder} não é uma pasta: um modelo é uma pasta com config.json e *.safetensors",
    "model.no_config": (
        "não há config.json em {folder}: a pasta de um modelo GPT-2 contém config.json, pesos *.safetensors "
        "e os arquivos do tokenizador"
    ),
    "model.pickle_only": (
        "{folder} tem apenas um checkpoint pickle ({files}), que não foi aberto: carregar um pickle pode executar "
        "código arbitrário, por isso o Attention Lab lê apenas pesos .safetensors (converta-o numa máquina "
        "confiável, p. ex. save_pretrained(..., safe_serialization=True))"
    ),
    "model.other_format": "{folder} tem pesos apenas em {files}; o Attention Lab lê pesos do PyTorch no formato .safetensors",
    "model.no_weights": "não há pesos em {folder}: esperava-se model.safetensors (ou partes listadas em {index})",
    "model.weights_damaged": "os pesos em {folder} estão danificados: {tensor} contém valores NaN ou infinitos",
    "model.weights_missing": "os pesos em {folder} não correspondem ao seu config.json: falta o tensor {tensor}",
    "model.weights_shape": (
        "os pesos em {folder} não correspondem ao seu config.json: {tensor} tem a forma {shape}, o config espera {expected}"
    ),
    "model.unreadable_weights": (
        "{file} em {folder} não é um arquivo safetensors legível (truncado ou corrompido)"
    ),
    "model.config_not_object": "o config.json em {folder} não é um objeto JSON",
    "model.other_type": "{folder} contém um modelo {type} ({architectures}); o Attention Lab carrega apenas {supported}",
    "model.unknown_type": (
        "{folder} contém um modelo de tipo desconhecido ({architectures}); o Attention Lab carrega apenas {supported}"
    ),
    "model.no_lm_head": (
        "{folder} contém um GPT-2 {architectures}, que não tem a cabeça de modelo de linguagem; suportados: {supported}"
    ),
    "model.cross_attention": "{folder} é um GPT-2 com atenção cruzada (parte de um codificador-decodificador); não suportado",
    "model.config_unusable": "o config.json em {folder} não pode ser usado",
    "model.bad_json": "{name} em {folder} não é um JSON válido",
    "model.cant_open": "não foi possível abrir {folder}: {reason}",
    "model.cant_list": "não foi possível listar o conteúdo de {folder}: {reason}",
    "model.vocab_mismatch": (
        "o tokenizador em {folder} tem {tokens} tokens, mas o vocabulário do modelo tem {vocab}: eles não combinam"
    ),
    "weights.missing": "pesos: falta o tensor {tensor}",
    "weights.shape": "pesos: {tensor} tem a forma {shape}, o config espera {expected}",
    "weights.nan": "pesos: {tensor} contém valores NaN ou infinitos",
    "tokenizer.missing": "não há tokenizador em {folder}: é preciso tokenizer.json, ou vocab.json e merges.txt",
    "tokenizer.unreadable": "o tokenizer.json em {folder} está ilegível",
    "tokenizer.vocab_unreadable": "vocab.json / merges.txt em {folder} estão ilegíveis",
    "tokenizer.no_eos": "o tokenizador não tem o token de fim de texto ({token})",
    "download.unreachable": "não foi possível alcançar {host}: verifique a conexão com a internet",
    "download.stalled": "o servidor parou de enviar dados por {seconds} s; tente de novo mais tarde",
    "download.stalled_during": "o servidor parou de enviar dados por {seconds} s durante {file}; tente de novo mais tarde",
    "download.timeout": "{host} parou de enviar dados; tente de novo mais tarde",
    "download.timeout_during": "{host} parou de enviar dados durante {file}; tente de novo mais tarde",
    "download.timeout_partial": (
        "{host} parou de enviar dados durante {file} (chegaram {done} de {size}); tente de novo mais tarde"
    ),
    "download.broke_off": "a conexão com {host} caiu; tente de novo",
    "download.broke_off_during": "a conexão com {host} caiu durante {file}; tente de novo",
    "download.broke_off_partial": "a conexão com {host} caiu durante {file} (chegaram {done} de {size}); tente de novo",
    "download.incomplete": "{file} chegou incompleto: o servidor enviou menos do que anunciou; tente de novo",
    "download.incomplete_partial": (
        "{file} chegou incompleto (chegaram {done} de {size}): o servidor enviou menos do que anunciou; tente de novo"
    ),
    "download.http_error": "{host} respondeu com um erro (HTTP {code}); tente de novo mais tarde",
    "download.http_error_during": "{host} respondeu com um erro (HTTP {code}) durante {file}; tente de novo mais tarde",
    "download.cache_unwritable": "não foi possível gravar no cache do Hugging Face: {reason}",
    "download.cant_start": "não foi possível iniciar o download: {reason}",
    "download.process_died": "o processo de download parou inesperadamente (código de saída {code})",
    "download.offline_mode": "o modo offline está ligado (o ambiente define HF_HUB_OFFLINE ou TRANSFORMERS_OFFLINE)",
    "download.no_such_model": "não existe o modelo “{repo}” em {host} (confira o nome, p. ex. gpt2)",
    "download.gated": "“{repo}” em {host} exige a permissão de uma conta; o Attention Lab baixa apenas modelos públicos",
}

register({f"core.{key}": {"en": english, "pt_BR": PORTUGUESE[key]} for key, english in ENGLISH.items()})

#: the OS errors a learner meets most, by errno name, said in the interface's language (English: the OS's own text)
OS_ERRORS = {
    "ENOENT": "arquivo ou pasta não encontrado",
    "EACCES": "permissão negada",
    "EPERM": "operação não permitida",
    "ENOSPC": "não há espaço livre no disco",
    "EDQUOT": "a cota de disco acabou",
    "EROFS": "o sistema de arquivos é somente leitura",
    "ENAMETOOLONG": "o nome do arquivo é longo demais",
    "ENOTDIR": "não é uma pasta",
    "EISDIR": "é uma pasta, não um arquivo",
}
register({f"core.os.{name}": {"en": "{reason}", "pt_BR": text} for name, text in OS_ERRORS.items()})
register({
    "core.os.other": {"en": "{reason}", "pt_BR": "erro do sistema operacional"},
    "core.details": {"en": "Details: {detail}", "pt_BR": "Detalhes: {detail}"},
})


def core_message(key: str, values: dict[str, str]) -> tuple[str, str]:
    """A core failure (``core.<key>`` with the core's ``values``) in the interface's language: its sentence,
    and the English detail the sentence leaves out ("" if none) for a "Details: …" after everything else."""
    shown = dict(values)
    detail = ""
    for name in ("done", "size"):  # what a download reached: the window writes the number
        if f"{name}_bytes" in values:
            shown[name] = download_size(int(values[f"{name}_bytes"]), translator.language)
    code = values.get("errno")
    if code is not None and "reason" in values:
        shown["reason"] = tr(f"core.os.{code}" if code in OS_ERRORS else "core.os.other", reason=values["reason"])
        if shown["reason"] != values["reason"] and code not in OS_ERRORS:
            detail = values["reason"]
    sentence = tr(f"core.{key}", **shown)
    if values.get("detail") and values["detail"] not in sentence:
        detail = values["detail"]
    return sentence, detail


def then(message: str, sentence: str) -> str:
    """``sentence`` after ``message``, with the full stop ``message`` may lack (a core clause has none)."""
    return f"{message}{' ' if message.endswith(('.', '!', '?')) else '. '}{sentence}"


def with_details(message: str, detail: str) -> str:
    """``message``, then the English ``detail`` as a sentence of its own, "Details: …" (nothing when there is none)."""
    return then(message, tr("core.details", detail=detail)) if detail else message
