"""The English text of the core's failures a learner meets, by key.

Core stays Qt-free and English (the CLI prints ``str(err)``); a failure that carries a ``key`` and its
``values`` lets the window say the same thing in the interface's language: the window's string
tables register ``core.<key>`` in English (this text) and Portuguese, and the suite checks that
every key here has both.
"""

from __future__ import annotations

import errno as _errno

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
    "model.weights_damaged": "the weights in {folder} are damaged: {tensor} contains NaN or infinite values",
    "model.weights_missing": "the weights in {folder} don't match its config.json: missing tensor {tensor}",
    "model.weights_shape": (
        "the weights in {folder} don't match its config.json: {tensor} has shape {shape}, the config expects {expected}"
    ),
    "model.unreadable_weights": (
        "{file} in {folder} is not a readable safetensors file (truncated or corrupt: {detail})"
    ),
    "model.cant_open": "can't open {folder}: {reason}",
    "model.cant_list": "can't list {folder}: {reason}",
    "model.config_not_object": "config.json in {folder} is not a JSON object",
    "model.other_type": "{folder} holds a {type} model ({architectures}); Attention Lab loads only {supported}",
    "model.unknown_type": "{folder} holds a model of unknown type ({architectures}); Attention Lab loads only {supported}",
    "model.no_lm_head": (
        "{folder} holds a GPT-2 {architectures}, which has no language-model head; supported: {supported}"
    ),
    "model.cross_attention": "{folder} is a GPT-2 with cross-attention (an encoder-decoder part); not supported",
    "model.config_unusable": "config.json in {folder} is not usable: {detail}",
    "model.bad_json": "{name} in {folder} is not valid JSON ({detail})",
    "model.vocab_mismatch": (
        "the tokenizer in {folder} has {tokens} tokens but the model's vocabulary has {vocab}: they don't belong together"
    ),
    "weights.missing": "weights: missing tensor {tensor}",
    "weights.shape": "weights: {tensor} has shape {shape}, the config expects {expected}",
    "weights.nan": "weights: {tensor} contains NaN or infinite values",
    "tokenizer.missing": "no tokenizer in {folder}: it needs tokenizer.json, or vocab.json and merges.txt",
    "tokenizer.unreadable": "tokenizer.json in {folder} is unreadable: {detail}",
    "tokenizer.vocab_unreadable": "vocab.json / merges.txt in {folder} are unreadable: {detail}",
    "tokenizer.no_eos": "the tokenizer has no end-of-text token ({token})",
    "download.unreachable": "{host} can't be reached: check the internet connection",
    "download.stalled": "the server stopped sending data for {seconds} s; try again later",
    "download.stalled_during": "the server stopped sending data for {seconds} s during {file}; try again later",
    "download.timeout": "{host} stopped sending data; try again later",
    "download.timeout_during": "{host} stopped sending data during {file}; try again later",
    "download.timeout_partial": "{host} stopped sending data during {file} ({done} of {size} arrived); try again later",
    "download.broke_off": "the connection to {host} broke off; try again",
    "download.broke_off_during": "the connection to {host} broke off during {file}; try again",
    "download.broke_off_partial": "the connection to {host} broke off during {file} ({done} of {size} arrived); try again",
    "download.incomplete": "{file} arrived incomplete: the server sent less than it announced; try again",
    "download.incomplete_partial": (
        "{file} arrived incomplete ({done} of {size} arrived): the server sent less than it announced; try again"
    ),
    "download.http_error": "{host} answered with an error (HTTP {code}); try again later",
    "download.http_error_during": "{host} answered with an error (HTTP {code}) during {file}; try again later",
    "download.cache_unwritable": "can't write the Hugging Face cache: {reason}",
    "download.cant_start": "the download could not start: {reason}",
    "download.process_died": "the download process stopped unexpectedly (exit code {code})",
    "download.offline_mode": "offline mode is on (the environment sets HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE)",
    "download.no_such_model": "there is no model “{repo}” on {host} (check the name, e.g. gpt2)",
    "download.gated": "“{repo}” on {host} needs an account's permission; Attention Lab downloads public models only",
}


def os_error(exc: OSError) -> dict[str, str]:
    """The values of a failure an OS error caused: ``reason``, the OS's English text (what the CLI
    prints), and ``errno``, its name (ENOENT, EACCES…), by which the window says the common ones
    in its own language."""
    lines = str(exc).strip().splitlines()
    reason = exc.strerror or (lines[0] if lines else type(exc).__name__)
    return {"reason": reason, "errno": _errno.errorcode.get(exc.errno, "") if isinstance(exc.errno, int) else ""}


def english(key: str, values: dict[str, str]) -> str:
    return ENGLISH[key].format(**values)


class KeyedError(Exception):
    """A failure a learner meets, in English (``str(err)``, what the CLI prints), with the ``key`` and
    ``values`` the window says it with in its own language; ``key`` is None for the rare ones."""

    def __init__(self, message: str, *, key: str | None = None, values: dict[str, str] | None = None):
        super().__init__(message)
        self.key = key
        self.values = dict(values or {})

    @classmethod
    def keyed(cls, key: str, **values: object):
        texts = {name: str(value) for name, value in values.items()}
        return cls(english(key, texts), key=key, values=texts)


class KeyedValueError(ValueError):
    """A ``ValueError`` whose text is ``ENGLISH[key]`` filled with ``values``: the code that turns it into a
    learner's message (``models.load_folder``) passes the key on instead of the English."""

    def __init__(self, key: str, **values: object):
        self.key = key
        self.values = {name: str(value) for name, value in values.items()}
        super().__init__(english(key, self.values))


def keyed_event(key: str, **values: str) -> dict:
    """A download process's failure event (``{"error": …}``) with the key and values the window translates."""
    return {"error": english(key, values), "key": key, "values": values}
