"""The time left of a run, told in stages and steps (analysis.experiments.stage.Stage):
the pace of the work done so far applied to the work left, each stage and step weighed
by the work it declares (alike when it declares none)."""
from __future__ import annotations

import math
import time
from typing import Callable

from ..analysis.experiments.stage import Stage

LATE = math.inf                 # work is left, but the pace so far says it is done


class RunClock:
    """Started with a run; told each stage as it starts (``stage``) and each step
    counted (``step``); read at any time (``stage_left``, ``run_left``: seconds, None
    with nothing done to go by, LATE past the pace so far). ``now`` is the clock."""

    def __init__(self, now: Callable[[], float] = time.monotonic):
        self.now = now
        self.started = self.stage_started = self.stepped = now()
        self.index = self.count = 0         # stage index (from 1) of count; 0: not told
        self.done = self.total = 0          # the stage's steps counted, of total
        self.work: tuple[float, ...] = ()   # each stage's work
        self.steps: tuple[float, ...] | None = None   # each of the stage's steps' work

    def stage(self, stage: str) -> None:
        """A stage starts (a Stage tells its place; other words: a run of one)."""
        now = self.now()
        told = isinstance(stage, Stage)
        if not told or stage.number == 1:
            self.started = now                         # the run's pace counts from here
        self.stage_started = self.stepped = now
        self.index, self.count = (stage.number, stage.stages) if told else (0, 0)
        self.work = (stage.work if told and stage.work and len(stage.work) == self.count
                     else (1.0,) * self.count)
        self.steps = stage.steps if told else None
        self.done = self.total = 0

    def step(self, done: int, total: int) -> None:
        """``done`` steps of the stage's ``total`` are done."""
        self.done, self.total, self.stepped = done, total, self.now()

    def _share(self, first: int, last: int) -> float:
        """The share of the stage's work in its steps first..last - 1 (0 of 0 steps)."""
        if not self.total:
            return 0.0
        steps = self.steps if self.steps and len(self.steps) == self.total \
            and sum(self.steps) > 0 else (1.0,) * self.total
        return sum(steps[first:last]) / sum(steps)

    def _run_share(self, stage_share: float) -> float:
        """The share of the whole run done with ``stage_share`` of this stage done."""
        if not self.count:
            return stage_share
        before = sum(self.work[:self.index - 1])
        return (before + self.work[self.index - 1] * stage_share) / sum(self.work)

    def fraction(self) -> float:
        """How much of the whole run is done (0 to 1), each stage and step by its work."""
        return self._run_share(self._share(0, self.done))

    def stage_left(self) -> float | None:
        """Seconds left of this stage at the pace of its steps done; None before one."""
        if not self.done or self.done >= self.total:
            return None
        return self._left(self._share(0, self.done), self._share(self.done, self.done + 1),
                          self.stepped - self.stage_started)

    def run_left(self) -> float | None:
        """Seconds left of the whole run at the pace of the work done since its first
        stage. None for a run of one stage, or with nothing done to go by."""
        if self.count <= 1 or not self.index:
            return None
        done = self.fraction()
        if done >= 1:
            return None
        running = (self._share(self.done, self.done + 1) if self.done < self.total
                   else 1.0 - self._share(0, self.done))        # the step now running
        upto = self._run_share(self._share(0, self.done) + running) - done
        return self._left(done, upto, self.stepped - self.started)

    def _left(self, done: float, running: float, took: float) -> float | None:
        """Seconds left of work of which ``done`` (a share) took ``took`` seconds up to
        the last step, ``running`` the share of the step running since: counted down,
        never below the work after that step, LATE once that step overran its pace and
        it is the last."""
        if done <= 0:
            return None
        pace = took / done                                   # seconds for the whole
        counted_down = pace * (1 - done) - (self.now() - self.stepped)
        after = pace * (1 - done - running)
        if counted_down <= 0 and after < 1:
            return LATE
        return max(counted_down, after, 1.0)


def left_words(seconds: float | None, where: str = "") -> str:
    """", about N s left{where}", ", longer than its pace so far{where}" when LATE, or ""."""
    if seconds is None:
        return ""
    if seconds == LATE:
        return f", longer than its pace so far{where}"
    return f", about {seconds:.0f} s left{where}"
