"""The work after a forward's last block (the maps compared, a new text's original maps
pooled): counted steps the window's status line tells (gui.status), next to the blocks
models.reached tells."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

_lock = threading.Lock()
clock = time.monotonic                  # (a test's own clock)


@dataclass(frozen=True)
class After:
    """``done`` of ``total`` steps of ``what`` ("comparing the two orders' maps") done
    at ``at``, the first begun at ``began``: the work after a forward's last block
    (a 6,123-token text's status stood on "layer 4 of 4 (forward 2 of 2)" for 39 of
    its 75 s, comparing and pooling the maps)."""

    what: str
    done: int
    total: int
    at: float
    began: float
    unit: str = "layer"

    def seconds_left(self) -> float | None:
        """The steps left at the pace of those done (None before one is)."""
        if self.done <= 0 or self.at <= self.began:
            return None
        return (self.at - self.began) / self.done * (self.total - self.done)


_after: After | None = None


@contextmanager
def after_steps(what: str, total: int, unit: str = "layer"):
    """While inside, the window's status line tells ``what`` (latest_after): the block
    gets a ``step(done)``, called as each of the ``total`` steps (``unit``s) begins with
    those done before it; nothing is told once it is left, nor with no step."""
    global _after
    if total <= 0:
        yield lambda done: None
        return
    began = clock()

    def step(done: int) -> None:
        global _after
        with _lock:
            _after = After(what, done, total, clock(), began, unit)
    step(0)
    try:
        yield step
    finally:
        with _lock:
            _after = None


def latest_after() -> After | None:
    """The steps after the forwards last told (After), newer than any forward's block
    when ``latest().at`` is older than its ``at``."""
    return _after
