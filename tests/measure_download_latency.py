"""Measure two figures of the download path (not a test; prints medians of 5):

- Cancel pressed a quarter into model.safetensors (loopback hub, weights throttled to ~4 s)
  until download_model has raised DownloadCancelled (the process killed, the cache restored);
- with the network removed (``unshare -rn``), download_model("gpt2") until its one-line error.

    cd <checkout> && PYTHONPATH=desktop python tests/measure_download_latency.py
"""
import os, sys, time, tempfile, threading, statistics, shutil, subprocess, json
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
os.chdir(ROOT)
sys.path.insert(0, "tests"); sys.path.insert(0, "desktop")
from hub_server import HubServer, Repo, gpt2_repo_files
from attention_lab.core.hub_download import download_model
from attention_lab.core.models import DownloadCancelled
from checkpoints import make_checkpoint
ck = make_checkpoint(Path(tempfile.mkdtemp()) / "gpt2")
files = gpt2_repo_files(ck)
for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"): os.environ.pop(v, None)
size = len(files["model.safetensors"])
cancels, offline = [], []
code = ("import time,json\nfrom attention_lab.core.hub_download import download_model\nout=[]\n"
        "for i in range(1):\n t=time.monotonic()\n try: download_model('gpt2')\n except Exception as e: out.append(time.monotonic()-t)\nprint(json.dumps(out))\n")
for rep in range(5):
    home = tempfile.mkdtemp(); os.environ["HF_HOME"] = home
    with HubServer({"gpt2": Repo(files)}, rate=size / 4) as hub:
        os.environ["HF_ENDPOINT"] = hub.url
        ev = threading.Event(); pressed = []
        def prog(d, t, f):
            if f == "model.safetensors" and d >= t - size * 0.75 and not ev.is_set():
                pressed.append(time.monotonic()); ev.set()
        try: download_model("gpt2", progress=prog, cancel=ev)
        except DownloadCancelled: cancels.append(time.monotonic() - pressed[0])
    env = {k: v for k, v in os.environ.items() if k != "HF_ENDPOINT"}; env["PYTHONPATH"] = "desktop"
    out = subprocess.run(["unshare", "-rn", sys.executable, "-c", code], capture_output=True, text=True, env=env)
    offline += json.loads(out.stdout.strip().splitlines()[-1])
    shutil.rmtree(home, ignore_errors=True)
f = lambda xs: f"median {statistics.median(xs)*1000:.0f} ms, range {min(xs)*1000:.0f}-{max(xs)*1000:.0f} ms, n={len(xs)}"
print("cancel -> stopped:", f(cancels)); print("offline -> message:", f(offline))
