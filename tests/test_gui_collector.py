"""Reference cycles are freed in the GUI thread, never on the compute worker, where
freeing Qt objects can deadlock against the GUI thread."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gc  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QCoreApplication  # noqa: E402

from posviz import workarounds  # noqa: E402
from posviz.gui import collector  # noqa: E402
from posviz.gui.collector import collect_in_gui_thread  # noqa: E402

this_python = pytest.mark.skipif(not collector.written_for(sys.version_info),
                                 reason="the collector is not used on this Python")


class Cycle:
    """Garbage that only the cycle collector can free; records where that happened."""

    freed_in: list = []

    def __init__(self):
        self.me = self

    def __del__(self):
        Cycle.freed_in.append(threading.current_thread().name)


@pytest.fixture
def fresh(qtbot, monkeypatch):
    """A process whose collector is not installed yet, Python's own collector on; both
    put back as they were afterwards."""
    monkeypatch.delenv(workarounds.OFF_VARIABLE, raising=False)
    monkeypatch.setattr(collector, "_timer", None)
    monkeypatch.setattr(collector, "_started", False)
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if collector._timer is not None:             # the one this test installed
        collector._timer.stop()
        collector._timer.deleteLater()
    (gc.enable if was_enabled else gc.disable)()


@this_python
def test_cycles_are_collected_in_the_gui_thread(fresh, qtbot, monkeypatch):
    assert collect_in_gui_thread(interval_ms=50)
    assert not gc.isenabled()
    monkeypatch.setattr(collector, "_started", True)     # start-up is done
    Cycle.freed_in.clear()
    for _ in range(5 * gc.get_threshold()[0]):   # well past the collector's threshold,
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
    with qtbot.waitSignal(timer.timeout, timeout=10_000):
        pass                                     # the GUI thread; one tick collects
    assert Cycle.freed_in                        # (collect_due ran before this returned)
    assert set(Cycle.freed_in) == {threading.main_thread().name}


@this_python
def test_the_oldest_generation_waits_until_the_window_is_quiet(fresh, monkeypatch):
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


def test_the_off_switch_leaves_python_s_collector_alone(fresh, monkeypatch):
    monkeypatch.setenv(workarounds.OFF_VARIABLE, collector.NAME)
    frozen = gc.get_freeze_count()
    assert collect_in_gui_thread() is False
    assert collector._timer is None and gc.isenabled()
    collector.freeze_start_up()                  # nothing to freeze for: left as it was
    assert gc.get_freeze_count() == frozen and not collector._started
    monkeypatch.setenv(workarounds.OFF_VARIABLE, "all")
    assert collect_in_gui_thread() is False and gc.isenabled()


def test_other_pythons_keep_their_own_collector(fresh, monkeypatch):
    low, high = collector.PYTHONS
    assert collector.written_for((3, 11, 7, "final", 0))
    assert collector.written_for(low) and not collector.written_for(high)
    assert not collector.written_for((3, 14, 0)) and not collector.written_for((3, 9, 18))
    monkeypatch.setattr(collector, "PYTHONS", ((2, 6), (2, 8)))   # this one is newer
    assert collect_in_gui_thread() is False
    assert collector._timer is None and gc.isenabled()


@this_python
def test_installed_once(fresh):
    assert collect_in_gui_thread(interval_ms=60_000) is True
    timer = collector._timer
    assert collect_in_gui_thread() is False and collector._timer is timer
    assert timer.interval() == 60_000 and not gc.isenabled()
