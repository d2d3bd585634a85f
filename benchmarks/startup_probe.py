"""Start posviz's window as ``python -m posviz`` would, and print when it first painted.

Run by ``benchmarks/run.py`` in a fresh process (offscreen). It prints one JSON line per
moment, on the system-wide monotonic clock (with ``cpu``, the process's CPU time so
far, all threads), then quits:
    {"event": "window", "t": ...}        the main window's first paint
    {"event": "core_ready", "t": ...}    the core imported and the session built
    {"event": "first_evaluation", ...}   the first evaluation reached the window
    {"event": "plots", "t": ...}         the plots, with the first evaluation, painted
    {"event": "minilm_plots", "t": ...}  with --minilm: the bundled MiniLM loaded (asked
                                         for as soon as the window is ready) and painted
Settings go to a throw-away file (--settings), so the user's own are never touched.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from probes import PaintProbe, now, visible_canvases  # noqa: E402
from PySide6.QtCore import QEvent, QObject, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QMainWindow  # noqa: E402

TIMEOUT_S = 120


def say(event: str, **values) -> None:
    print(json.dumps({"event": event, "t": now(), "cpu": time.process_time(), **values}),
          flush=True)


class FirstPaints(QObject):
    """Application-wide filter: the main window's first paint, then its plots'.

    The window's controller is listened to from the moment the window is shown, before
    it starts its worker, so that no signal of the worker can come before the probe
    listens, however fast the worker or slow the first paint."""

    def __init__(self, app: QApplication, minilm: bool):
        super().__init__()
        self.app, self.minilm = app, minilm
        self.window = None
        self.probe = PaintProbe()
        self.stage = "window"          # window -> plots -> (minilm ->) done
        app.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() not in (QEvent.Show, QEvent.Paint) or not obj.isWidgetType():
            return False
        if self.window is None:
            window = obj.window()
            if isinstance(window, QMainWindow) and hasattr(window, "controller"):
                self.window = window
                window.controller.ready.connect(lambda: say("core_ready"))
                window.controller.evaluated.connect(self._evaluated)
                self.probe.allPainted.connect(self._painted)
        if event.type() == QEvent.Paint and self.window is not None \
                and obj.window() is self.window:
            self.app.removeEventFilter(self)
            QTimer.singleShot(0, lambda: say("window"))
        return False

    def _evaluated(self, shown, ms: float) -> None:
        backend = self.window.controller.session.backend
        if self.stage == "plots" or (self.stage == "minilm" and backend.name != "built-in"):
            self.probe.arm(visible_canvases(self.window.plots))
        elif self.stage == "window":           # the window paints before any evaluation
            say("first_evaluation", worker_ms=ms)
            self.stage = "plots"
            self._evaluated(shown, ms)

    def _painted(self) -> None:
        if self.stage == "plots":
            say("plots")
            if self.minilm:
                self.stage = "minilm"
                self.window.controller.modelFailed.connect(self._failed)
                from posviz.document.spec import ModelSpec
                self.window.controller.load(ModelSpec.pretrained("minilm"))
                return
        elif self.stage == "minilm":
            say("minilm_plots")
        else:
            return
        self.stage = "done"
        self.window.close()
        self.app.quit()

    def _failed(self, message: str) -> None:
        say("error", message=message)
        self.app.exit(1)


def main() -> int:
    minilm = "--minilm" in sys.argv
    settings = sys.argv[sys.argv.index("--settings") + 1]
    os.environ["POSVIZ_SETTINGS"] = settings
    app = QApplication(["posviz"])
    watcher = FirstPaints(app, minilm)      # noqa: F841 (kept alive until exit)
    QTimer.singleShot(TIMEOUT_S * 1000, lambda: (say("timeout"), app.exit(1)))
    from posviz.gui.app import main as gui_main
    return gui_main(["--reset-settings"])


if __name__ == "__main__":
    sys.exit(main())
