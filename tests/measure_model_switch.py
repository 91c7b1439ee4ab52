"""Measure a model switch in the real window (demo <-> a tiny random GPT-2, every panel built): from
load_model until every panel in sight shows the new model's analysis, the GUI thread's CPU, the three
longest gaps between 5 ms timer ticks (with when they started and ended, and when model_changed,
state_ready and the redraw's round_done came), and the CPU of gc_pause.freeze_long_lived (the thaw,
full collection and malloc_trim at the end of the new model's first redraw round).  Not a test.

    cd <repo> && QT_QPA_PLATFORM=offscreen PYTHONPATH=$PWD/desktop python tests/measure_model_switch.py

Wall-clock figures grow with the machine's load; quote it (uptime) with them."""
import sys
import tempfile
import time
from pathlib import Path
sys.path.insert(0, "tests")
from PySide6.QtCore import QTimer, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from checkpoints import make_checkpoint
OUT = Path(tempfile.mkdtemp(prefix="model-switch-"))
tiny = make_checkpoint(OUT / "tiny", seed=0)
from attention_lab.ui.main_window import MainWindow
w = MainWindow(settings=QSettings(str(OUT / "settings.ini"), QSettings.Format.IniFormat), model_spec="demo")
w.resize(1366, 768); w.show()
def wait(pred, limit=30):
    end = time.monotonic() + limit
    while not pred() and time.monotonic() < end:
        app.processEvents(); time.sleep(0.002)
def settled(): return w.last_state is not None and not w.worker.busy and w.redraw.showing in (None, w.last_state) and not any(not w._out_of_sight(p) for p in w.panels_waiting)
wait(lambda: w.last_state is not None); wait(settled)
for pid in list(w.docks): w.panel(pid)
wait(settled)
ticks = []; t = QTimer(); t.setInterval(5); t.timeout.connect(lambda: ticks.append(time.monotonic())); t.start()
from attention_lab.ui import gc_pause
gc_ms = []
_orig = gc_pause.freeze_long_lived
def timed(key):
    c = time.thread_time(); r = _orig(key); gc_ms.append((time.thread_time() - c) * 1000); return r
gc_pause.freeze_long_lived = timed
marks = []
w.session.model_changed.connect(lambda m: marks.append(("model_changed", time.monotonic())))
w.session.state_ready.connect(lambda s: marks.append(("state_ready", time.monotonic())))
w.redraw.round_done.connect(lambda s: marks.append(("round_done", time.monotonic())))
for spec in [str(tiny), "demo", str(tiny)]:
    ticks.clear(); t0 = time.monotonic(); c0 = time.thread_time()
    gc_ms.clear(); marks.clear()
    w.session.load_model(spec, analyse_along=True)
    wait(lambda: w.session.model is not None and w.session.model.spec == spec); wait(settled)
    for _ in range(50): app.processEvents(); time.sleep(0.002)
    spans = sorted(((b - a, a - t0, b - t0) for a, b in zip([t0] + ticks, ticks)), reverse=True)[:3]
    gaps = [g for g, _, _ in spans]
    print('  gaps (ms, from..to after load_model):', [(round(g*1000), round(a*1000), round(b*1000)) for g, a, b in spans], ' marks:', [(n, round((m - t0)*1000)) for n, m in marks])
    print(f"{Path(spec).name}: {(time.monotonic()-t0)*1000:.0f} ms wall, GUI CPU {(time.thread_time()-c0)*1000:.0f} ms, longest gaps {[round(g*1000) for g in gaps]}, of it freeze_long_lived (thaw+collect+trim) {[round(x) for x in gc_ms]} ms CPU")
w.close()
