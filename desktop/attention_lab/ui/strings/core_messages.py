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
    "download.unreachable": "não foi possível alcançar {host}: verifique a conexão com a internet",
    "download.offline_mode": "o modo offline está ligado (o ambiente define HF_HUB_OFFLINE ou TRANSFORMERS_OFFLINE)",
    "download.no_such_model": "não existe o modelo “{repo}” em {host} (confira o nome, p. ex. gpt2)",
    "download.gated": "“{repo}” em {host} exige a permissão de uma conta; o Attention Lab baixa apenas modelos públicos",
}

register({f"core.{key}": {"en": english, "pt_BR": PORTUGUESE[key]} for key, english in ENGLISH.items()})
