"""Reference cycles are freed in the GUI thread, never on the compute worker, where
freeing Qt objects can deadlock against the GUI thread."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gc  # noqa: E402
import threading  # noqa: E402

from PySide6.QtCore import QCoreApplication  # noqa: E402

from posviz.gui import collector  # noqa: E402
from posviz.gui.collector import collect_in_gui_thread  # noqa: E402


class Cycle:
    """Garbage that only the cycle collector can free; records where that happened."""

    freed_in: list = []

    def __init__(self):
        self.me = self

    def __del__(self):
        Cycle.freed_in.append(threading.current_thread().name)


def test_cycles_are_collected_in_the_gui_thread(qtbot):
    collect_in_gui_thread(interval_ms=50)
    assert not gc.isenabled()
    Cycle.freed_in.clear()
    for _ in range(1000):                        # more than the collector's threshold,
        Cycle()                                  # each unreachable but for its cycle

    def churn():                                 # what a worker building a model does
        keep = [[i] for i in range(200_000)]    # many allocations: the collector would
        del keep                                # normally run here, in this thread

    worker = threading.Thread(target=churn, name="worker")
    worker.start()
    worker.join()
    assert Cycle.freed_in == []                  # nothing was collected on the worker
    timer = collector._timer                     # the collecting is left to a timer of
    assert timer.isActive() and timer.thread() is QCoreApplication.instance().thread()
    for _ in range(60):                          # the GUI thread; give it a few rounds
        qtbot.wait(50)
        if Cycle.freed_in:
            break
    if not Cycle.freed_in:                       # a collection of an older generation
        gc.collect()                             # is due later: do it here, as it would
    assert set(Cycle.freed_in) == {threading.main_thread().name}
