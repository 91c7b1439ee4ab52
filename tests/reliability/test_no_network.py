"""Security: ``lab`` needs no network, even with HF_HUB_OFFLINE unset.

Each run goes through a small guard that installs a Python audit hook before the app is
imported and logs every socket / HTTP event (``socket.connect``, ``socket.getaddrinfo``,
``urllib.Request``…) to a file: the test fails on any attempt, whether or not the network
is there.  Where ``unshare -n`` works (root, or user namespaces), the run also happens in
a network namespace with no interfaces, and a control checks that this namespace really
cannot connect.  ``HF_HUB_OFFLINE``, ``TRANSFORMERS_OFFLINE`` and ``HF_DATASETS_OFFLINE``
are removed from the environment: the app must not rely on them.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from model_fixtures import add_to_hub_cache

ROOT = Path(__file__).resolve().parents[2]
OFFLINE_VARS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")

# Runs ``attention_lab.app.main`` with an audit hook that logs network events to $NET_LOG.
GUARD = r"""
import os, sys
LOG = os.environ["NET_LOG"]
WATCHED = ("urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect", "ssl.wrap_socket")
def hook(event, args):
    if event.startswith("socket.") or event in WATCHED:
        if event == "socket.__new__" and args[1] == getattr(__import__("socket"), "AF_UNIX", None):
            return  # a local socket pair is not the network
        with open(LOG, "a", encoding="utf-8") as f:
            f.write(f"{event} {args!r:.300}\n")
sys.addaudithook(hook)
from attention_lab.app import main
raise SystemExit(main(sys.argv[1:]))
"""


@functools.lru_cache(maxsize=1)
def unshare_prefix() -> tuple[list[str] | None, str]:
    """The command prefix that runs a program without network, or None and why not."""
    if not shutil.which("unshare"):
        return None, "unshare is not installed"
    for prefix in (["unshare", "-n"], ["unshare", "-rn"]):  # root / an unprivileged user namespace
        try:
            if subprocess.run([*prefix, "true"], capture_output=True, timeout=30).returncode == 0:
                return prefix, ""
        except (OSError, subprocess.TimeoutExpired):
            continue
    return None, "unshare -n is not permitted here (no root, no user namespaces)"


def offline_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in OFFLINE_VARS}
    env.update(PYTHONPATH=str(ROOT / "desktop"), OMP_NUM_THREADS="1", NET_LOG=str(tmp_path / "net.log"))
    # nothing from the real machine: an empty HF cache and downloads folder unless a test says otherwise
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        env.pop(var, None)
    env.setdefault("HF_HOME", str(tmp_path / "hf-home"))
    env.setdefault("ATTENTION_LAB_MODELS", str(tmp_path / "downloads"))
    env.update(extra)
    return env


def run_guarded(args: list[str], env: dict[str, str], no_network: bool) -> subprocess.CompletedProcess:
    prefix: list[str] = []
    if no_network:
        prefix, why = unshare_prefix()
        if prefix is None:
            pytest.skip(why)
    return subprocess.run([*prefix, sys.executable, "-c", GUARD, *args], capture_output=True, text=True,
                          timeout=300, env=env, cwd=str(ROOT))


def network_attempts(env: dict[str, str]) -> list[str]:
    log = Path(env["NET_LOG"])
    return log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def check_lab_output(proc: subprocess.CompletedProcess, env: dict[str, str]) -> dict:
    assert proc.returncode == 0, proc.stderr
    assert network_attempts(env) == []
    result = json.loads(proc.stdout)
    assert result["kv_cache"]["identical"] is True
    return result


# ---------------------------------------------------------------------------- the guard itself
def test_the_guard_sees_a_network_attempt(tmp_path):
    """Control: the audit hook does log a connection attempt (else the tests below prove nothing)."""
    env = offline_env(tmp_path)
    code = GUARD.replace(
        "from attention_lab.app import main",
        "import urllib.request\ntry:\n    urllib.request.urlopen('http://192.0.2.1/', timeout=0.01)\n"
        "except Exception:\n    pass\nfrom attention_lab.app import main",
    )
    proc = subprocess.run([sys.executable, "-c", code, "--version"], capture_output=True, text=True,
                          timeout=120, env=env, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    attempts = network_attempts(env)
    assert any(a.startswith("urllib.Request") for a in attempts)
    assert any(a.startswith("socket.connect") or a.startswith("http.client.connect") for a in attempts)


def test_the_namespace_has_no_network():
    """Control: inside ``unshare -n`` a TCP connection to a public address fails at once."""
    prefix, why = unshare_prefix()
    if prefix is None:
        pytest.skip(why)
    probe = ("import socket\ntry:\n    socket.create_connection(('1.1.1.1', 53), timeout=5)\n"
             "except OSError as e:\n    print('unreachable', e.errno)\nelse:\n    print('connected')")
    out = subprocess.run([*prefix, sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert out.stdout.startswith("unreachable"), out.stdout + out.stderr


# ---------------------------------------------------------------------------- lab without network
@pytest.mark.parametrize("no_network", [True, False], ids=["unshare-n", "audit-hook-only"])
def test_lab_on_a_folder_needs_no_network(no_network, tiny_checkpoint, tmp_path, tally):
    env = offline_env(tmp_path)
    proc = run_guarded(["lab", "--json", "--model", str(tiny_checkpoint)], env, no_network)
    tally["fault", "lab run with the network removed, HF_HUB_OFFLINE unset"] += 1
    result = check_lab_output(proc, env)
    assert result["model"]["source"] == "folder"


def test_lab_on_the_real_demo_model_needs_no_network(tmp_path, tally):
    demo = ROOT / "resources" / "demo-model"
    if not (demo / "config.json").is_file():
        pytest.skip("resources/demo-model is not there yet (the demo model is being trained)")
    env = offline_env(tmp_path)
    proc = run_guarded(["lab", "--json", "--model", "demo", "--new-tokens", "5"], env, no_network=True)
    tally["fault", "lab run with the network removed, HF_HUB_OFFLINE unset"] += 1
    result = check_lab_output(proc, env)
    assert result["model"]["source"] == "demo" and result["model"]["is_demo"] is True


def test_default_model_demo_path_needs_no_network(tiny_checkpoint, tmp_path, tally):
    """No --model, GPT-2 not cached: the default is the demo model (a stand-in copy here)."""
    resources = tmp_path / "resources"
    shutil.copytree(tiny_checkpoint, resources / "demo-model")
    env = offline_env(tmp_path, ATTENTION_LAB_RESOURCES=str(resources))
    proc = run_guarded(["lab", "--json", "--new-tokens", "5"], env, no_network=True)
    tally["fault", "lab run with the network removed, HF_HUB_OFFLINE unset"] += 1
    result = check_lab_output(proc, env)
    assert result["model"]["source"] == "demo" and result["model"]["spec"] == "demo"


def test_default_model_from_the_hub_cache_needs_no_network(tiny_checkpoint, tmp_path, tally):
    """No --model, "gpt2" in the local HF cache: huggingface_hub is consulted, the network never."""
    hf_home = tmp_path / "hf-home"
    add_to_hub_cache(hf_home / "hub", "gpt2", tiny_checkpoint)
    env = offline_env(tmp_path, HF_HOME=str(hf_home), ATTENTION_LAB_RESOURCES=str(tmp_path / "no-resources"))
    proc = run_guarded(["lab", "--json", "--new-tokens", "5"], env, no_network=True)
    tally["fault", "lab run with the network removed, HF_HUB_OFFLINE unset"] += 1
    result = check_lab_output(proc, env)
    assert (result["model"]["source"], result["model"]["spec"]) == ("hub-cache", "gpt2")


def test_uncached_hub_id_fails_fast_without_network(tmp_path, tally):
    """A hub id that isn't cached is an error (exit 2, one line), not a download attempt."""
    env = offline_env(tmp_path)
    proc = run_guarded(["lab", "--json", "--model", "openai-community/gpt2-medium"], env, no_network=True)
    tally["fault", "lab run with the network removed, HF_HUB_OFFLINE unset"] += 1
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(proc.stderr.strip().splitlines()) == 1 and "never downloads on its own" in proc.stderr
    assert network_attempts(env) == []


# ---------------------------------------------------------------------------- the window without network
@pytest.mark.parametrize("no_network", [True, False], ids=["unshare-n", "audit-hook-only"])
def test_the_window_needs_no_network(no_network, tmp_path, tally):
    """The app itself (window, default model, one full analysis, every panel) with no network
    and HF_HUB_OFFLINE unset: the smoke test passes and no socket is ever opened."""
    demo = ROOT / "resources" / "demo-model"
    if not (demo / "config.json").is_file():
        pytest.skip("resources/demo-model is not there yet")
    env = offline_env(tmp_path, QT_QPA_PLATFORM="offscreen", HOME=str(tmp_path / "home"))
    proc = run_guarded(["--smoke-test"], env, no_network)
    tally["fault", "app window run with the network removed, HF_HUB_OFFLINE unset"] += 1
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "smoke test: ok" in proc.stdout and "demo" in proc.stdout.lower()
    assert network_attempts(env) == []
