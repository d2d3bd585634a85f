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
    expected: float | None = None   # its seconds as expected before it began (expecting)
    later: float = 0.0              # the expected seconds of the steps planned after it

    def seconds_left(self, now: float | None = None) -> float | None:
        """The steps left at the pace of those done, else as expected (None before one
        is, none expected), and the steps planned after them as expected; read at
        ``now`` (the clock's time: it counts down between steps, never below the steps
        after the one running: a comparison's first layer of 9 s stood on "16 s left")."""
        since = max(now - self.at, 0.0) if now is not None else 0.0
        if self.done > 0 and self.at > self.began:
            pace = (self.at - self.began) / self.done
            own = max(pace * (self.total - self.done) - since,
                      pace * (self.total - self.done - 1))
        elif self.expected is not None:
            own = max(self.expected - (self.at - self.began) - since, 0.0)
        else:
            return None
        return own + self.later


_after: After | None = None
_plan = threading.local()       # .expected {what: seconds}, in order; .took {what: seconds}


@contextmanager
def expecting(expected: dict[str, float]):
    """While inside, the steps after the forwards on this thread (after_steps) are
    expected to take ``expected`` {what: seconds}, in that order: each one's time left
    holds those after it (the time left told jumped up as each began). Yields
    {what: seconds} each took, filled as they end."""
    before = getattr(_plan, "expected", None), getattr(_plan, "took", None)
    _plan.expected, _plan.took = dict(expected), {}
    try:
        yield _plan.took
    finally:
        _plan.expected, _plan.took = before


def _planned(what: str) -> tuple[float | None, float]:
    """(its expected seconds, those of the steps planned after it) (expecting)."""
    expected = getattr(_plan, "expected", None) or {}
    names = list(expected)
    later = sum(expected[name] for name in names[names.index(what) + 1:]) \
        if what in expected else 0.0
    return expected.get(what), later


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
    expected, later = _planned(what)

    def step(done: int) -> None:
        global _after
        with _lock:
            _after = After(what, done, total, clock(), began, unit, expected, later)
    step(0)
    try:
        yield step
    finally:
        with _lock:
            _after = None
        took = getattr(_plan, "took", None)
        if took is not None:
            took[what] = took.get(what, 0.0) + clock() - began


def latest_after() -> After | None:
    """The steps after the forwards last told (After), newer than any forward's block
    when ``latest().at`` is older than its ``at``."""
    return _after
