"""The work after a forward's last block (the maps compared, a new text's original maps
pooled): counted steps the window's status line tells (gui.status), next to the blocks
models.reached tells."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass

from . import reached

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
    first_at: float | None = None   # when its first step ended (the second began)
    ceiling: float | None = None    # the time left told just before ``at``: never above

    def seconds_left(self, now: float | None = None) -> float | None:
        """The steps left at the pace of those done after the first, else (one done) at
        the pace expected, else the first's; before one is done, as expected (None with
        none expected); and the steps planned after them as expected; read at ``now``
        (the clock's time: it counts down between steps, never below the steps after the
        one running: a comparison's first layer of 9 s stood on "16 s left"). Never above
        the time left told before ``at`` (``ceiling``): a comparison's first layer took
        3.7 s, the others 2.4 s, and "7 s left" in the first became "15 s" at the second."""
        since = max(now - self.at, 0.0) if now is not None else 0.0
        pace = self._pace()
        if pace is not None:
            own = max(pace * (self.total - self.done) - since,
                      pace * (self.total - self.done - 1))
        elif self.expected is not None:
            own = max(self.expected - (self.at - self.began) - since, 0.0)
        else:
            return None
        left = own + self.later
        measured = self.done >= 2 and self.first_at is not None and self.at > self.first_at
        # once steps after the first are timed their pace holds: capped, a comparison
        # 3x slower than expected stood on "about 1 s left" for 9 s
        return left if self.ceiling is None or measured else min(left, self.ceiling)

    def _pace(self) -> float | None:
        """Seconds a step: of those done after the first (the first runs cold), else as
        expected once the first is done, else the first's; None before it is."""
        if self.done >= 2 and self.first_at is not None and self.at > self.first_at:
            return (self.at - self.first_at) / (self.done - 1)
        if self.done <= 0 or self.at <= self.began:
            return None
        if self.expected is not None and self.done == 1:
            return self.expected / self.total
        return (self.at - self.began) / self.done


_after: After | None = None
_ended: list = [None]           # the forward's block last told when steps after it ended
_plan = threading.local()       # .expected {what: seconds}, in order; .took {what: seconds};
                                # .told: the last After told in it


@contextmanager
def expecting(expected: dict[str, float]):
    """While inside, the steps after the forwards on this thread (after_steps) are
    expected to take ``expected`` {what: seconds}, in that order: each one's time left
    holds those after it (the time left told jumped up as each began). Yields
    {what: seconds} each took, filled as they end."""
    before = (getattr(_plan, "expected", None), getattr(_plan, "took", None),
              getattr(_plan, "told", None))
    _plan.expected, _plan.took, _plan.told = dict(expected), {}, None
    try:
        yield _plan.took
    finally:
        _plan.expected, _plan.took, _plan.told = before


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

    first_at = None

    def step(done: int) -> None:
        global _after
        nonlocal first_at
        now = clock()
        first_at = now if done == 1 else first_at
        planned = getattr(_plan, "expected", None) is not None     # inside expecting
        told = getattr(_plan, "told", None) if planned else None   # its last After
        with _lock:
            _after = After(what, done, total, now, began, unit, expected, later, first_at,
                           None if told is None else told.seconds_left(now))
            if planned:
                _plan.told = _after
    step(0)
    try:
        yield step
    finally:
        with _lock:
            _after = None
            _ended[0] = reached.latest()
        took = getattr(_plan, "took", None)
        if took is not None:
            took[what] = took.get(what, 0.0) + clock() - began


def latest_after() -> After | None:
    """The steps after the forwards last told (After), newer than any forward's block
    when ``latest().at`` is older than its ``at``."""
    return _after


def ended_after():
    """The forward's block (models.reached.Reached) last told when the last steps after
    the forwards (after_steps) ended: it is no longer how far a wait is (between the
    comparison and the views its "about 4 s left in all" came back, 0.7 s before the end)."""
    return _ended[0]
