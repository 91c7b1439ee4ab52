"""Measure File › Export › CSV of a context-long head grid in the real window (demo model, 256 tokens,
12 heads: 786,432 rows): how long export_current holds the GUI thread, when the worker has written the
file, and the longest gap between 10 ms timer ticks meanwhile (the GIL is shared with the worker).

    cd <repo> && QT_QPA_PLATFORM=offscreen PYTHONPATH=$PWD/desktop python tests/measure_csv_export.py [CHUNK_ROWS]

CHUNK_ROWS: core.csv_table.CSV_CHUNK_ROWS for the run (default: the module's).  Wall-clock figures:
on a loaded machine they grow with the load; quote it (uptime) with them."""
import sys
import tempfile
import time
from pathlib import Path

from PySide6.QtCore import QTimer, QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
OUT = Path(tempfile.mkdtemp(prefix="csv-export-"))
from attention_lab.ui import runtime
from attention_lab.ui.main_window import MainWindow
runtime.install_all()  # as the app does before its window (ui/launch.py)
w = MainWindow(settings=QSettings(str(OUT / "settings.ini"), QSettings.Format.IniFormat), model_spec="demo")
w.resize(1366, 768); w.show()
def wait(pred, limit=120):
    end = time.monotonic() + limit
    while not pred() and time.monotonic() < end:
        app.processEvents(); time.sleep(0.005)
wait(lambda: w.last_state is not None)
w.session.set_text("the cat sat on the mat and " * 200)
wait(lambda: w.last_state is not None and w.last_state.n_tokens == 256 and not w.worker.busy)
for _ in range(150): app.processEvents(); time.sleep(0.002)
ticks = []; t = QTimer(); t.setInterval(10); t.timeout.connect(lambda: ticks.append(time.monotonic())); t.start()
done = []
ticks.clear(); base = time.monotonic()
while time.monotonic() - base < 2.0: app.processEvents(); time.sleep(0.001)
gaps = [b - a for a, b in zip(ticks, ticks[1:])]
print(f"idle: longest gap {max(gaps)*1000:.0f} ms over {len(ticks)} ticks")
import attention_lab.core.csv_table as ct
if len(sys.argv) > 1: ct.CSV_CHUNK_ROWS = int(sys.argv[1])
print("chunk", ct.CSV_CHUNK_ROWS)
w.session.file_exported.connect(lambda p: done.append(time.monotonic()))
for attempt in range(3):
    ticks.clear(); done.clear()
    start = time.monotonic()
    w.export_current("csv", OUT / f"grid{attempt}.csv", panel_id="panel.head_grid")
    returned = time.monotonic()
    wait(lambda: bool(done))
    gaps = [b - a for a, b in zip([returned] + ticks, ticks)]
    print(f"export_current returned in {(returned-start)*1000:.0f} ms; file written after {(done[0]-start)*1000:.0f} ms; "
          f"longest event-loop gap meanwhile {max(gaps)*1000:.0f} ms over {len(ticks)} ticks")
w.close()
