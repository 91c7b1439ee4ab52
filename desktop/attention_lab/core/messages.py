"""The English text of the core's failures a learner meets, by key.

Core stays Qt-free and English (the CLI prints ``str(err)``); a failure that carries a ``key`` and its
``values`` lets the window say the same thing in the interface's language: ``ui/strings/core_messages.py``
registers ``core.<key>`` in English (this text) and Portuguese, and ``tests/ui/test_core_messages.py``
checks every key here has both.
"""

from __future__ import annotations

ENGLISH = {
    "model.folder_not_found": "model folder not found: {folder}",
    "model.not_a_folder": "{folder} is not a folder: a model is a folder with config.json and *.safetensors",
    "model.no_config": (
        "no config.json in {folder}: a GPT-2 model folder holds config.json, *.safetensors weights and tokenizer files"
    ),
    "model.pickle_only": (
        "{folder} has only a pickle checkpoint ({files}), which was not opened: loading a pickle can run arbitrary "
        "code, so Attention Lab reads only .safetensors weights (convert it on a trusted machine, e.g. "
        "save_pretrained(..., safe_serialization=True))"
    ),
    "model.other_format": "{folder} has weights only in {files}; Attention Lab reads PyTorch weights in .safetensors format",
    "model.no_weights": "no weights in {folder}: expected model.safetensors (or shards with {index})",
    "download.unreachable": "{host} can't be reached: check the internet connection",
    "download.offline_mode": "offline mode is on (the environment sets HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)",
    "download.no_such_model": "there is no model “{repo}” on {host} (check the name, e.g. gpt2)",
    "download.gated": "“{repo}” on {host} needs an account's permission; Attention Lab downloads public models only",
}


def english(key: str, values: dict[str, str]) -> str:
    return ENGLISH[key].format(**values)


def keyed_event(key: str, **values: str) -> dict:
    """A download process's failure event (``{"error": …}``) with the key and values the window translates."""
    return {"error": english(key, values), "key": key, "values": values}
