"""A load's steps without a count told again from the thread running them, not only
from the ticks' thread (models.reached.ticking): that thread waits for Python's lock
behind an import, and 'importing the model's code' was 2.06 s untold during SmolLM2's
first conversion (load 3.7). Each module the load imports is a beat: its step told
again there once a tick has passed without a line."""
from __future__ import annotations

import sys
import threading
from contextlib import contextmanager

_beating = threading.local()    # .ticks: this thread's loads' Ticks, innermost last
_lock = threading.Lock()


def beat() -> None:
    """A boundary inside a step on the thread running it: its step told again if a
    tick passed untold (reached.Ticks.tick); nothing outside ``beating``."""
    ticks = getattr(_beating, "ticks", None)
    if ticks:
        ticks[-1].tick()


class ImportBeats:
    """A finder that finds nothing: each module imported is a ``beat`` of its thread
    (in sys.meta_path while a load is ``beating``: ``users`` of them)."""

    users = 0

    @staticmethod
    def find_spec(name, path=None, target=None):
        beat()
        return None


@contextmanager
def beating(ticks):
    """Inside, ``ticks`` (reached.Ticks, or None: nothing) is told again from this
    thread at each module it imports."""
    if ticks is None:
        yield
        return
    stack = _beating.__dict__.setdefault("ticks", [])
    stack.append(ticks)
    with _lock:
        ImportBeats.users += 1
        if ImportBeats not in sys.meta_path:
            sys.meta_path.insert(0, ImportBeats)
    try:
        yield
    finally:
        with _lock:
            ImportBeats.users -= 1
            if not ImportBeats.users and ImportBeats in sys.meta_path:
                sys.meta_path.remove(ImportBeats)
        stack.remove(ticks)
