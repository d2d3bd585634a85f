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


def test_the_oldest_generation_waits_until_the_window_is_quiet(monkeypatch):
    """A full collection freezes the GUI for 0.16-0.35 s: never during a drag."""
    collect_in_gui_thread(interval_ms=60_000)    # installed (and gc off); ticks by hand
    young, middle, old = gc.get_threshold()

    def make_all_generations_due():
        for _ in range(old + 1):
            gc.collect(1)                        # gen-1 collections count toward gen 2
        for _ in range(middle + 1):
            gc.collect(0)                        # gen-0 collections count toward gen 1
        return [[i] for i in range(young + 100)]   # new containers count toward gen 0

    full = gc.get_stats()[2]["collections"]
    clock = [1000.0]
    monkeypatch.setattr(collector.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(collector, "_started", False)
    keep_early = make_all_generations_due()
    assert collector.collect_due() is None       # start-up: nothing until the window is ready
    monkeypatch.setattr(collector, "_started", True)
    collector.note_activity()                    # a reorder, just now
    keep = make_all_generations_due()
    assert collector.collect_due() == 1
    assert gc.get_stats()[2]["collections"] == full
    clock[0] += collector.IDLE_S + 0.1           # the user stopped
    keep_too = make_all_generations_due()        # (freeing ``keep`` would lower the count)
    assert collector.collect_due() == 2
    assert gc.get_stats()[2]["collections"] == full + 1
    del keep, keep_too, keep_early
