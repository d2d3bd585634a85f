"""The time left of a run, told in stages and steps (analysis.experiments.stage.Stage).

Each stage declares its work (and its kind: forwards, fits); each stage to come is
timed at the pace measured on the stages of its kind done (none done: no number); the
stage running at the pace of its own steps, each weighed by the time the
same steps took in the stages done before it (the lab's longer lengths took 2-7 × the
shortest, not the 1-3.4 × their tokens declare), else by the work they declare."""
from __future__ import annotations

import math
import time
from typing import Callable

from ..analysis.experiments.stage import Stage

LATE = math.inf                 # work is left, but the pace so far says it is done


class RunClock:
    """Started with a run; told each stage as it starts (``stage``) and each step
    counted (``step``); read at any time (``stage_left``, ``run_left``: seconds, None
    with nothing measured to go by, LATE past the pace so far). ``now`` is the clock."""

    def __init__(self, now: Callable[[], float] = time.monotonic):
        self.now = now
        self.stage_started = self.stepped = now()
        self.index = self.count = 0         # stage index (from 1) of count; 0: not told
        self.done = self.total = 0          # the stage's steps counted, of total
        self.work: tuple[float, ...] = ()   # each stage's work
        self.kinds: tuple[str, ...] = ()    # each stage's kind
        self.steps: tuple[float, ...] | None = None   # each of the stage's steps' work
        self.took: dict[int, float] = {}    # seconds each stage done took, by number
        self.step_times: list[float] = []   # seconds each step of this stage took
        self.measured: dict[tuple, list[float]] = {}  # (kind, count, work): seconds

    def stage(self, stage: str) -> None:
        """A stage starts (a Stage tells its place; other words: a run of one; a Stage
        told again in other words, as a load then its runs, goes on)."""
        now = self.now()
        told = isinstance(stage, Stage)
        number = stage.number if told else 0
        if told and self.index and number == self.index:
            return                                     # the same stage in other words
        if not told or number == 1:
            self.took.clear()                          # a run anew
            self.measured.clear()
        elif self.index:
            self._measure(now)
        self.stage_started = self.stepped = now
        self.index, self.count = (number, stage.stages) if told else (0, 0)
        self.work = (stage.work if told and stage.work and len(stage.work) == self.count
                     else (1.0,) * self.count)
        kinds = stage.kinds if told else None
        self.kinds = kinds if kinds and len(kinds) == self.count else ("",) * self.count
        self.steps = stage.steps if told else None
        self.done = self.total = 0
        self.step_times = []

    def _measure(self, now: float) -> None:
        """The stage running ends: its seconds, and its steps' when all were counted."""
        self.took[self.index] = now - self.stage_started
        if self.total and self.done == self.total and len(self.step_times) == self.total:
            key = (self._kind(self.index), self.total, self.steps)
            sums = self.measured.get(key, [0.0] * self.total)
            self.measured[key] = [a + b for a, b in zip(sums, self.step_times)]

    def step(self, done: int, total: int) -> None:
        """``done`` steps of the stage's ``total`` are done."""
        now = self.now()
        if total != self.total or done < self.done:      # counted anew
            self.step_times, self.done = [], 0
        if done == self.done + 1 == len(self.step_times) + 1:
            self.step_times.append(now - self.stepped)
        self.done, self.total, self.stepped = done, total, now

    def _kind(self, number: int) -> str:
        return self.kinds[number - 1] if 0 < number <= len(self.kinds) else ""

    def _weights(self) -> list[float]:
        """Each step's weight: the seconds the same steps (of the same kind, declaring
        the same work) took in the stages done, else the work they declare, else alike."""
        measured = self.measured.get((self._kind(self.index), self.total, self.steps))
        if measured and sum(measured) > 0:
            return measured
        if self.steps and len(self.steps) == self.total and sum(self.steps) > 0:
            return list(self.steps)
        return [1.0] * self.total

    def _share(self, first: int, last: int) -> float:
        """The share of the stage's work in its steps first..last - 1 (0 of 0 steps)."""
        if not self.total:
            return 0.0
        weights = self._weights()
        return sum(weights[first:last]) / sum(weights)

    def fraction(self) -> float:
        """How much of the whole run is done (0 to 1), each stage and step by its work."""
        share = self._share(0, self.done)
        if not self.count:
            return share
        before = sum(self.work[:self.index - 1])
        return (before + self.work[self.index - 1] * share) / sum(self.work)

    def stage_left(self) -> float | None:
        """Seconds left of this stage at the pace of its steps done; None before one."""
        if not self.done or self.done >= self.total:
            return None
        return self._left(self._share(0, self.done), self._share(self.done, self.done + 1),
                          self.stepped - self.stage_started)

    def _pace(self, kind: str) -> float | None:
        """Seconds per unit of declared work of ``kind``: over all of that kind measured
        so far, the stages done and (of the kind running) this stage's steps done; None
        with none measured. (Timed at the running stage's pace alone, a stage to come
        took its pace from one stage's few steps: Press 2022 told 24 s with 61 s left.)"""
        done = [k for k in self.took if k <= len(self.work) and self._kind(k) == kind]
        work = sum(self.work[k - 1] for k in done)
        seconds = sum(self.took[k] for k in done)
        share = self._share(0, self.done)
        if kind == self._kind(self.index) and share > 0 and \
                self.stepped > self.stage_started and self.index not in self.took:
            work += share * self.work[self.index - 1]
            seconds += self.stepped - self.stage_started
        return seconds / work if work > 0 and seconds > 0 else None

    def run_left(self) -> float | None:
        """Seconds left of the whole run: this stage's (at the pace of its own steps,
        else of the stages done), and the stages after it at the pace measured on the
        stages done. None for a run of one stage, or with nothing measured to go by."""
        if self.count <= 1 or not self.index:
            return None
        after = 0.0
        for number in range(self.index + 1, self.count + 1):
            pace = self._pace(self._kind(number))
            if pace is None:
                return None
            after += pace * self.work[number - 1]
        share = self._share(0, self.done)
        if 0 < share < 1:                                    # its own steps' pace
            left = self._left(share, self._share(self.done, self.done + 1),
                              self.stepped - self.stage_started, after)
            return left if left == LATE else left + after
        if share >= 1:                                       # its steps are all done
            return max(after, 1.0)
        pace = self._pace(self._kind(self.index))
        if pace is None:
            return None
        left = pace * self.work[self.index - 1] - (self.now() - self.stage_started)
        if left <= 0 and after < 1:
            return LATE
        return max(left, 0.0) + after

    def _left(self, done: float, running: float, took: float,
              after: float = 0.0) -> float | None:
        """Seconds left of work of which ``done`` (a share) took ``took`` seconds up to
        the last step, ``running`` the share of the step running since: counted down,
        never below the work after that step, LATE once that step overran its pace and
        nothing is left after it (``after``: the seconds of the stages after, added by
        the caller)."""
        if done <= 0 or took <= 0:
            return None
        pace = took / done                                   # seconds for the whole
        counted_down = pace * (1 - done) - (self.now() - self.stepped)
        step_after = pace * (1 - done - running)
        if counted_down <= 0 and step_after < 1 and after < 1:
            return LATE
        return max(counted_down, step_after, 1.0 if after < 1 else 0.0)


def left_words(seconds: float | None, where: str = "") -> str:
    """", about N s left{where}", ", over the time estimated{where}" when LATE (the
    pace so far said it would be done: "longer than its pace so far" read unclearly to a
    trial), or ""."""
    if seconds is None:
        return ""
    if seconds == LATE:
        return f", over the time estimated{where}"
    return f", about {seconds:.0f} s left{where}"
