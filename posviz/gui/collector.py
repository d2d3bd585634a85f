"""Python's cycle collector, run in the GUI thread only, and never during a drag
(workaround "gui-thread-collector").

The collector runs in whichever thread happens to allocate. When it frees Qt objects
(a closed window's widgets held in a reference cycle) on a worker thread, their
destructors run there and Qt can deadlock against the GUI thread: seen here while the
worker built a model. So automatic collection is turned off and a timer in the GUI
thread collects instead, generation by generation as the automatic one would. This is
what pyqtgraph's GarbageCollector does; it is written out here because importing
pyqtgraph before the first paint would delay the window by about 0.4 s.

A full collection (the oldest generation) walks every tracked object: 0.16 s once
torch, pyqtgraph and the window exist, 0.35 s with MiniLM loaded, all of it a frozen
GUI. So what exists when start-up is done is frozen out of collections for good
(``freeze_start_up``: modules, widgets, the built-in model, which is freed by reference
counting anyway), and full collections wait until the user has left the window
alone for a moment (``note_activity`` is called on every reorder and edit).

``POSVIZ_WORKAROUNDS_OFF=gui-thread-collector`` (see posviz.workarounds) leaves Python's
own collector as it is, to compare; so does a Python outside ``PYTHONS``.
"""
from __future__ import annotations

import gc
import sys
import time

from PySide6.QtCore import QCoreApplication, QTimer

from .. import workarounds

NAME = "gui-thread-collector"

# The Pythons whose generational collector ``collect_due`` copies: three generations,
# each collected when the count of the one below passes its threshold. 3.14's collector
# is incremental (two generations, ``gc.collect(1)`` one increment of the old one, the
# third threshold always 0): there this schedule would run a full collection each tick.
PYTHONS = ((3, 10), (3, 14))                 # low <= (major, minor) < high

IDLE_S = 2.0                         # quiet time before a full collection may run

_timer: QTimer | None = None
_threshold = gc.get_threshold()      # the automatic collector's (disabling keeps them)
_last_activity = 0.0
_started = False                     # start-up done (freeze_start_up): collect from then on


def written_for(version) -> bool:
    """Is a Python ``version`` tuple (sys.version_info) one this collector copies?"""
    low, high = PYTHONS
    return low <= tuple(version[:2]) < high


def collect_in_gui_thread(interval_ms: int = 100) -> bool:
    """Install the timer once per process; call it from the GUI thread. True if done
    now; False if already done, switched off, or on a Python it was not written for
    (then nothing changes: Python collects as it always does).

    A young generation collection costs in proportion to what was allocated since the
    last one: at n = 512 a second of reorders left enough to take ~30 ms, a stall of
    the drag; every 100 ms each takes a tenth of that."""
    global _timer
    if (_timer is not None or not workarounds.enabled(NAME)
            or not written_for(sys.version_info)):
        return False
    gc.disable()
    _timer = QTimer(QCoreApplication.instance())
    _timer.timeout.connect(collect_due)
    _timer.start(interval_ms)
    return True


def collect_due() -> int | None:
    """Collect the generations the automatic collector would now, the oldest only
    when the window has been quiet for IDLE_S; the oldest generation collected, or None."""
    young, middle, old = gc.get_count()
    if young <= _threshold[0] or not _started:
        return None
    gc.collect(0)
    if middle <= _threshold[1]:
        return 0
    gc.collect(1)
    if old <= _threshold[2] or time.monotonic() - _last_activity <= IDLE_S:
        return 1
    gc.collect(2)
    return 2


def note_activity() -> None:
    """The user is working the window: no full collection for the next IDLE_S."""
    global _last_activity
    _last_activity = time.monotonic()


def freeze_start_up() -> None:
    """Leave everything that exists now out of all later collections (gc.freeze), and
    start collecting. Until then nothing is collected: the worker's imports allocate a
    few hundred thousand objects that live as long as the process, and collections of
    them in the GUI thread would only slow the start (as ``gc.disable`` does for
    scripts that import much). Nothing happens unless ``collect_in_gui_thread`` installed
    the timer."""
    global _started
    if _timer is None:
        return
    gc.freeze()
    _started = True
