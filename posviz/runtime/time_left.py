"""The time left of a run, told in stages and steps (analysis.experiments.stage.Stage):
the stage's from its steps done, the whole run's from the stages done."""
from __future__ import annotations

import time
from typing import Callable

from ..analysis.experiments.stage import Stage


class RunClock:
    """Started with a run; told each stage as it starts (``stage``) and each step
    counted (``step``); read at any time (``stage_left``, ``run_left``). ``now`` is the
    clock (seconds)."""

    def __init__(self, now: Callable[[], float] = time.monotonic):
        self.now = now
        self.stage_started = self.stepped = now()
        self.index = self.count = 0         # stage index (from 1) of count; 0: not told
        self.done = self.total = 0          # the stage's steps counted, of total
        self.durations: list[float] = []    # seconds each stage done took

    def stage(self, stage: str) -> None:
        """A stage starts (a Stage tells its place; other words: a run of one)."""
        now = self.now()
        if self.index:
            self.durations.append(now - self.stage_started)
        self.stage_started = self.stepped = now
        told = isinstance(stage, Stage)
        self.index, self.count = (stage.number, stage.stages) if told else (0, 0)
        self.done = self.total = 0

    def step(self, done: int, total: int) -> None:
        """``done`` steps of the stage's ``total`` are done."""
        self.done, self.total, self.stepped = done, total, self.now()

    def fraction(self) -> float:
        """How much of the whole run is done (0 to 1), its stages counted equal."""
        within = self.done / self.total if self.total else 0.0
        return (self.index - 1 + within) / self.count if self.count else within

    def stage_left(self) -> float | None:
        """Seconds left of this stage at the pace of its steps done; None before one."""
        if not self.done:
            return None
        pace = (self.stepped - self.stage_started) / self.done
        return max(pace * self.total - (self.now() - self.stage_started), 0.0)

    def run_left(self) -> float | None:
        """Seconds left of the whole run: this stage's, and the stages after it at the
        mean time of the stages done (before one is done, at this stage's pace). None
        for a run of one stage, or with nothing done to go by."""
        if self.count <= 1 or not self.index:
            return None
        here = self.stage_left()
        if self.durations:
            per = sum(self.durations) / len(self.durations)
        elif here is not None:
            per = (self.stepped - self.stage_started) / self.done * self.total
        else:
            return None
        if here is None:
            here = max(per - (self.now() - self.stage_started), 0.0)
        return here + (self.count - self.index) * per
