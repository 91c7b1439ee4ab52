"""The core's failures a learner meets (a model that won't load, a download that can't start), in the
interface's language.  The English is the core's own text (``core/messages.py``, also what the CLI prints);
the Portuguese follows the chapter's Portuguese edition."""

from attention_lab.core.messages import ENGLISH
from attention_lab.ui.i18n import register

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
        "{file} em {folder} não é um arquivo safetensors legível (truncado ou corrompido: {detail})"
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
    "model.config_unusable": "o config.json em {folder} não pode ser usado: {detail}",
    "model.bad_json": "{name} em {folder} não é um JSON válido ({detail})",
    "model.vocab_mismatch": (
        "o tokenizador em {folder} tem {tokens} tokens, mas o vocabulário do modelo tem {vocab}: eles não combinam"
    ),
    "weights.missing": "pesos: falta o tensor {tensor}",
    "weights.shape": "pesos: {tensor} tem a forma {shape}, o config espera {expected}",
    "weights.nan": "pesos: {tensor} contém valores NaN ou infinitos",
    "tokenizer.missing": "não há tokenizador em {folder}: é preciso tokenizer.json, ou vocab.json e merges.txt",
    "tokenizer.unreadable": "o tokenizer.json em {folder} está ilegível: {detail}",
    "tokenizer.vocab_unreadable": "vocab.json / merges.txt em {folder} estão ilegíveis: {detail}",
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
    "download.process_died": "o processo de download parou inesperadamente (código de saída {code})",
    "download.offline_mode": "o modo offline está ligado (o ambiente define HF_HUB_OFFLINE ou TRANSFORMERS_OFFLINE)",
    "download.no_such_model": "não existe o modelo “{repo}” em {host} (confira o nome, p. ex. gpt2)",
    "download.gated": "“{repo}” em {host} exige a permissão de uma conta; o Attention Lab baixa apenas modelos públicos",
}

register({f"core.{key}": {"en": english, "pt_BR": PORTUGUESE[key]} for key, english in ENGLISH.items()})
