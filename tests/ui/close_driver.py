"""Close the real window while something runs, in a process of its own; exit code = the app's.

    python tests/ui/close_driver.py {edit,benchmark,download} MODEL_FOLDER SETTINGS_FILE

Used by ``test_faults.py``: a learner closes the window during an edit update, during the
KV-cache benchmark, or during a download.  The process must end by itself with code 0,
print nothing about threads, and (download) leave no partial files.  The window is closed
the way the window manager does it (``close()`` → ``closeEvent``), from inside the event
loop, once the worker is really inside the job.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1] / "desktop"), str(HERE.parent)]

from PySide6.QtCore import QSettings, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

import attention_lab.ui.session as session_module  # noqa: E402
from attention_lab.ui import runtime  # noqa: E402
from attention_lab.ui.launch import teardown  # noqa: E402
from attention_lab.ui.main_window import MainWindow  # noqa: E402


def main(mode: str, model: str, settings_file: str) -> int:
    app = QApplication([sys.argv[0]])
    runtime.install_all()  # as the app does before its window (ui/launch.py)
    window = MainWindow(settings=QSettings(settings_file, QSettings.Format.IniFormat), model_spec=model)
    window.show()
    inside = threading.Event()  # set by the worker thread once the job is under way
    servers: list = []  # the download's loopback hub, stopped at the end
    phase = {"armed": False}

    def arm(_state=None) -> None:
        if phase["armed"]:
            return
        phase["armed"] = True
        if mode == "edit":
            real = session_module.compute_analysis

            def slow(model, request, cancel=None, progress=None):  # the real analysis, entered a little late
                inside.set()
                cancel.wait(0.3) if cancel is not None else None
                return real(model, request, cancel)

            session_module.compute_analysis = slow
            window.panel("panel.token_editor").editor.setPlainText("The edit that is running when the window closes")
            window.session.analyse_now()
        elif mode == "benchmark":
            window.docks["panel.kvbench"].raise_()  # its tab opened first, as a learner does
            app.processEvents()
            panel = window.panel("panel.kvbench")
            panel.repetitions.setValue(panel.repetitions.maximum())
            panel.new_tokens.setValue(panel.new_tokens.maximum())
            if not panel.run_benchmark():
                print("driver: the benchmark did not start", file=sys.stderr)
                app.exit(3)
                return
            poll_kind("kvbench")
            return
        elif mode == "download":
            import os

            from hub_server import HubServer, Repo, gpt2_repo_files

            # a loopback hub whose weights stop half-way: still transferring when the window closes
            hub = HubServer({"someone/tiny-gpt2": Repo(gpt2_repo_files(Path(model)))},
                            faults={"model.safetensors": "stall"}).start()
            servers.append(hub)
            os.environ["HF_ENDPOINT"] = hub.url  # this process is the test's own: nothing leaks
            os.environ.pop("HF_HUB_OFFLINE", None)
            os.environ.pop("TRANSFORMERS_OFFLINE", None)  # huggingface_hub reads it as HF_HUB_OFFLINE
            window.session.download_progress.connect(
                lambda done, total, name: inside.set() if name == "model.safetensors" and done > 0 else None)
            window.download_model("someone/tiny-gpt2")
        poll_inside()

    def poll_inside() -> None:
        if inside.is_set():
            window.close()
        else:
            QTimer.singleShot(10, poll_inside)

    def poll_kind(kind: str) -> None:
        if window.worker.running_kind == kind:
            window.close()
        else:
            QTimer.singleShot(10, lambda: poll_kind(kind))

    window.state_shown.connect(arm)  # every panel has the state (they are drawn one per event)
    window.closed.connect(app.quit)
    QTimer.singleShot(120_000, lambda: app.exit(4))  # a hang is a failure, not a stuck test
    code = app.exec()
    stopped = teardown(app, window)
    for hub in servers:
        hub.stop()
    if not stopped:
        print("driver: the workers did not stop", file=sys.stderr)
        return 5
    alive = [t.name for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
    if alive:
        print(f"driver: threads still running: {alive}", file=sys.stderr)
        return 6
    print(f"driver: closed during {mode}", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
