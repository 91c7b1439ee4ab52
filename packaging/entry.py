"""Entry point of the frozen Attention Lab (PyInstaller runs this file, not ``python -m``).

A workshop laptop may have no network, and the bundle's own folder is read-only once
installed (``/opt/attention-lab``, ``Program Files``, a signed ``.app``).  So before
anything can import ``huggingface_hub`` (which reads its settings once, at import) the
frozen app:

- switches the Hugging Face libraries offline and turns telemetry off;
- points ``HF_HOME`` at a writable folder in the user's data folder, never at the bundle
  or the current working directory;
- keeps reading the user's ordinary hub cache when there is one, so a GPT-2 that the
  learner already downloaded with other tools is still found (read-only: Attention Lab
  never downloads on its own).

A variable the user set on purpose wins (``HF_HUB_OFFLINE=0`` for a workshop that has a
network and wants the explicit "download a model" action).  Running this file from a
source checkout changes nothing unless ``ATTENTION_LAB_FORCE_OFFLINE=1``.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import MutableMapping, NoReturn

APP_DIR_NAME = "attention-lab"

# Always set when frozen; a value already in the environment is kept.
APP_OFFLINE_VAR = "ATTENTION_LAB_APP_OFFLINE"  # read by attention_lab.core.hub_download
HUB_FETCH = "hub-fetch"  # attention_lab.app's internal download command
OFFLINE_DEFAULTS = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_IMPLICIT_TOKEN": "1",
    "DO_NOT_TRACK": "1",
}


def user_data_dir(environ: MutableMapping[str, str] | None = None, platform: str | None = None) -> Path:
    """The per-user data folder of the platform (where the app may write)."""
    env = os.environ if environ is None else environ
    platform = platform or sys.platform
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if platform == "win32":
        base = env.get("LOCALAPPDATA") or str(home / "AppData" / "Local")
        return Path(base) / APP_DIR_NAME
    if platform == "darwin":
        return home / "Library" / "Application Support" / APP_DIR_NAME
    base = env.get("XDG_DATA_HOME") or str(home / ".local" / "share")
    return Path(base) / APP_DIR_NAME


def default_hub_cache(environ: MutableMapping[str, str] | None = None) -> Path:
    """Where ``huggingface_hub`` keeps its cache when nothing is configured."""
    env = os.environ if environ is None else environ
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    cache = Path(env.get("XDG_CACHE_HOME") or str(home / ".cache"))
    return cache / "huggingface" / "hub"


def configure_offline(environ: MutableMapping[str, str] | None = None, platform: str | None = None) -> dict[str, str]:
    """Set the offline/telemetry/cache variables in ``environ``; return what was set.

    Must run before ``huggingface_hub`` or ``transformers`` is imported.
    """
    env = os.environ if environ is None else environ
    changed: dict[str, str] = {}

    def default(name: str, value: str) -> None:
        if not env.get(name):
            env[name] = value
            changed[name] = value

    for name, value in OFFLINE_DEFAULTS.items():
        default(name, value)
    # which offline switches the app set (not the user): the download the learner asks for
    # (attention_lab.core.hub_download) lifts exactly these, for its own process only
    offline_set = [name for name in changed if name.endswith("_OFFLINE")]
    if offline_set:
        env[APP_OFFLINE_VAR] = ",".join(offline_set)
    if not env.get("HF_HUB_CACHE") and not env.get("HF_HOME"):
        # Keep using an existing ordinary cache (read-only use) before HF_HOME moves it.
        existing = default_hub_cache(env)
        if existing.is_dir():
            default("HF_HUB_CACHE", str(existing))
    hf_home = user_data_dir(env, platform) / "huggingface"
    if not env.get("HF_HOME"):
        try:
            hf_home.mkdir(parents=True, exist_ok=True)
        except OSError:
            # A read-only or odd home: a temporary folder still beats the bundle's folder.
            import tempfile

            hf_home = Path(tempfile.gettempdir()) / f"{APP_DIR_NAME}-huggingface"
            hf_home.mkdir(parents=True, exist_ok=True)
        default("HF_HOME", str(hf_home))
    return changed


def is_frozen() -> bool:
    return bool(getattr(sys, "frozen", False))


def main() -> NoReturn:
    # the download process the app starts (attention_lab.core.hub_download) inherits the app's
    # settings, less the offline switches the app lifted for it: it must not set them again
    downloading = sys.argv[1:2] == [HUB_FETCH]
    if (is_frozen() or os.environ.get("ATTENTION_LAB_FORCE_OFFLINE") == "1") and not downloading:
        configure_offline()
    if is_frozen():
        import multiprocessing

        multiprocessing.freeze_support()  # torch may start helper processes from the frozen executable
    from attention_lab.app import run  # only now: transformers/hub read the env at import

    run(sys.argv[1:])  # exits (quickly, after a window: see attention_lab.app.run)


if __name__ == "__main__":
    sys.exit(main())
