"""Python's cycle collector, run in the GUI thread only.

The collector runs in whichever thread happens to allocate. When it frees Qt objects
(a closed window's widgets held in a reference cycle) on a worker thread, their
destructors run there and Qt can deadlock against the GUI thread: seen here while the
worker built a model. So automatic collection is turned off and a timer in the GUI
thread collects instead, generation by generation as the automatic one would. This is
what pyqtgraph's GarbageCollector does; it is written out here because importing
pyqtgraph before the first paint would delay the window by about 0.4 s.
"""
from __future__ import annotations

import gc

from PySide6.QtCore import QCoreApplication, QTimer

_timer: QTimer | None = None


def collect_in_gui_thread(interval_ms: int = 1000) -> None:
    """Install the timer once per process; call it from the GUI thread."""
    global _timer
    if _timer is not None:
        return
    threshold = gc.get_threshold()
    gc.disable()

    def collect() -> None:
        young, middle, old = gc.get_count()
        if young > threshold[0]:
            gc.collect(0)
            if middle > threshold[1]:
                gc.collect(1)
                if old > threshold[2]:
                    gc.collect(2)

    _timer = QTimer(QCoreApplication.instance())
    _timer.timeout.connect(collect)
    _timer.start(interval_ms)
