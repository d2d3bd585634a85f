"""Reference cycles are freed in the GUI thread, never on the compute worker, where
freeing Qt objects can deadlock against the GUI thread."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import gc  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import QCoreApplication  # noqa: E402

from posviz import boot  # noqa: E402

NAME = "gui-thread-collector"


def written_for(version) -> bool:
    """Is ``version`` (sys.version_info) a Python whose collector boot's copies?"""
    low, high = boot.PYTHONS
    return low <= tuple(version[:2]) < high


this_python = pytest.mark.skipif(not written_for(sys.version_info),
                                 reason="the collector is not used on this Python")


def collect_in_gui_thread(interval_ms: int = 100) -> bool:
    return boot._collect_in_gui_thread(QCoreApplication.instance(), interval_ms)


def timer():
    return boot._collector["timer"]


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
    monkeypatch.delenv(boot.OFF_VARIABLE, raising=False)
    monkeypatch.setattr(boot, "_collector", {"timer": None, "started": False, "activity": 0.0})
    was_enabled, frozen = gc.isenabled(), gc.get_freeze_count()
    gc.enable()
    yield
    if timer() is not None:                      # the one this test installed
        timer().stop()
        timer().deleteLater()
    if gc.get_freeze_count() > frozen:           # a test's start-up froze this process
        gc.unfreeze()
    (gc.enable if was_enabled else gc.disable)()


@this_python
def test_cycles_are_collected_in_the_gui_thread(fresh, qtbot, monkeypatch):
    assert collect_in_gui_thread(interval_ms=50)
    assert not gc.isenabled()
    boot._collector["started"] = True            # start-up is done
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
    ticks = timer()                              # the collecting is left to a timer of
    assert ticks.isActive() and ticks.thread() is QCoreApplication.instance().thread()
    with qtbot.waitSignal(ticks.timeout, timeout=10_000):
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
    monkeypatch.setattr(boot.time, "monotonic", lambda: clock[0])
    keep_early = make_all_generations_due()
    assert boot.collect_due() is None            # start-up: nothing until the window is ready
    frozen = gc.get_freeze_count()
    boot.note_activity()                         # the first request: start-up is done
    assert boot._collector["started"] and gc.get_freeze_count() > frozen
    keep = make_all_generations_due()
    assert boot.collect_due() == 1               # a reorder, just now
    assert gc.get_stats()[2]["collections"] == full
    clock[0] += boot.IDLE_S + 0.1                # the user stopped
    keep_too = make_all_generations_due()        # (freeing ``keep`` would lower the count)
    assert boot.collect_due() == 2
    assert gc.get_stats()[2]["collections"] == full + 1
    del keep, keep_too, keep_early


def test_the_off_switch_leaves_python_s_collector_alone(fresh, monkeypatch):
    monkeypatch.setenv(boot.OFF_VARIABLE, NAME)
    frozen = gc.get_freeze_count()
    assert collect_in_gui_thread() is False
    assert timer() is None and gc.isenabled()
    boot.note_activity()                         # nothing to freeze for: left as it was
    assert gc.get_freeze_count() == frozen and not boot._collector["started"]
    monkeypatch.setenv(boot.OFF_VARIABLE, "all")
    assert collect_in_gui_thread() is False and gc.isenabled()


def test_other_pythons_keep_their_own_collector(fresh, monkeypatch):
    low, high = boot.PYTHONS
    assert written_for((3, 11, 7, "final", 0))
    assert written_for(low) and not written_for(high)
    assert not written_for((3, 14, 0)) and not written_for((3, 9, 18))
    monkeypatch.setattr(boot, "PYTHONS", ((2, 6), (2, 8)))   # this one is newer
    assert collect_in_gui_thread() is False
    assert timer() is None and gc.isenabled()


@this_python
def test_installed_once(fresh):
    assert collect_in_gui_thread(interval_ms=60_000) is True
    installed = timer()
    assert collect_in_gui_thread() is False and timer() is installed
    assert installed.interval() == 60_000 and not gc.isenabled()
