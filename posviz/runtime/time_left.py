"""The time left of a run, told in stages and steps (analysis.experiments.stage.Stage).

Each stage declares its work (and its kind: forwards, fits), each of its steps their
share of it (weighed by the time the same steps took in a stage done before it: the
lab's longer lengths took 2-7 × the shortest, not what their tokens declare). The pace,
seconds a unit of work, is measured on every step done, the recent ones weighing more
(a step's weight halves every HALF_LIFE_S, or half the run so far when that is longer:
replayed on the lab's recorded run at load 8-12, whose methods' paces swung 89-194 s,
a shorter half-life chased each swing, 87 % of its readings within 1.5 × the truth with
a quarter, 90 % with a half, 91 % with none): a load that rises or falls mid-run moves the
estimate within a stage (a user's run at load 4-10: the lab told 354 s at its start and
took 631 s). Each stage to come is timed at the pace of its kind (none measured: no
number)."""
from __future__ import annotations

import math
import time
from typing import Callable

from ..analysis.experiments.stage import Stage
from .stage_times import run_key

LATE = math.inf                 # work is left, but the pace so far says it is done
MEASURED = object()             # share_done: the time left the clock measures
HALF_LIFE_S = 20.0              # a step's weight in the pace halves over this many seconds
PRIOR_S = 0.5                   # the last run's pace counts as this many seconds measured


class Pace:
    """Seconds a unit of work of one kind, over the steps measured, each weighed down by
    its age (halving over HALF_LIFE_S, or half the run so far when that is longer). A
    run's first step waits on a warm-up (the lab's first forward: 2 × the pace after
    it): it is left out once others are in. Two decayed sums, so that a count costs the
    same at the millionth step as at the first (a list of every step, summed at each
    count, froze the window in a 900,000-run sweep)."""

    def __init__(self, began: float, prior: float = 0.0):
        self.began = began
        self.first: tuple[float, float] | None = None   # the warm-up's seconds, work
        self.seconds = self.work = 0.0                  # the others', decayed
        self.when = began                               # the last one's time
        if prior:           # work in this machine's last run's seconds: a pace of 1,
            self.first = (0.0, 0.0)     # its warm-up in its shares, yielding as it decays
            self.seconds = self.work = prior

    def add(self, when: float, seconds: float, work: float) -> None:
        if work <= 0:
            return
        if self.first is None:
            self.first = (seconds, work)
        else:
            half = max(HALF_LIFE_S, (when - self.began) / 2)
            decay = 0.5 ** (max(when - self.when, 0.0) / half)
            self.seconds = self.seconds * decay + seconds
            self.work = self.work * decay + work
        self.when = when

    def value(self) -> float | None:
        seconds, work = (self.seconds, self.work) if self.work > 0 else (self.first or (0, 0))
        return seconds / work if work > 0 and seconds > 0 else None


class RunClock:
    """Started with a run; told each stage as it starts (``stage``) and each step
    counted (``step``); read at any time (``stage_left``, ``run_left``: seconds, None
    with nothing measured to go by, LATE past the pace so far). ``now`` is the clock."""

    def __init__(self, now: Callable[[], float] = time.monotonic, times=None):
        self.now = now
        self.times = times                  # a StageTimes: the shares learned here
        self.learned: dict | None = None    # this machine's last run of the same check
        self.key = ""                       # the run's, in ``times``
        self.stage_seconds: list = []       # each stage's seconds, and steps', as done
        self.stage_steps: list = []
        self.shown = 0.0                    # the share told last (share_done)
        self.began = self.stage_started = self.stepped = self.told_at = now()
        self.index = self.count = 0         # stage index (from 1) of count; 0: not told
        self.done = self.total = 0          # the stage's steps counted, of total
        self.work: tuple[float, ...] = ()   # each stage's work
        self.kinds: tuple[str, ...] = ()    # each stage's kind
        self.steps: tuple[float, ...] | None = None   # each of the stage's steps' work
        self.step_times: list[float] = []   # seconds each step of this stage took
        self.measured: dict[tuple, list[float]] = {}  # (kind, count, work): seconds
        self.paces: dict[str, Pace] = {}    # of each kind of work, measured on its steps
        self.counted = 0.0                  # this stage's share so far

    def stage(self, stage: str) -> None:
        """A stage starts (a Stage tells its place; other words: a run of one; a Stage
        told again in other words, as a load then its runs, goes on)."""
        now = self.told_at = self.now()
        told = isinstance(stage, Stage)
        number = stage.number if told else 0
        if told and self.index and number == self.index:   # the same stage in other words,
            kinds = stage.kinds             # its kind told anew: a load's conversion ended,
            if self.learned is None and kinds and len(kinds) == self.count and \
                    kinds[number - 1] != self._kind(number):   # its own work starts now
                self.kinds, self.stepped = tuple(kinds), now
            return
        if not told or number == 1:
            self.measured.clear()                      # a run anew
            self.paces.clear()
            self.began, self.shown = now, 0.0
            self._learn(stage if told else None)
        elif self.index:
            self._measure(now)
        self.stage_started = self.stepped = now
        self.index, self.count = (number, stage.stages) if told else (0, 0)
        if self.learned is None:
            self.work = (stage.work if told and stage.work and len(stage.work) == self.count
                         else (1.0,) * self.count)
            kinds = stage.kinds if told else None
            self.kinds = kinds if kinds and len(kinds) == self.count else ("",) * self.count
        self.steps = stage.steps if told else None
        self.done = self.total = 0
        self.step_times, self.counted = [], 0.0

    def _learn(self, stage) -> None:
        """A run starts: each stage's work is its seconds in this machine's last run of
        the same check where one was kept (runtime.stage_times), every stage one kind."""
        count = stage.stages if stage is not None else 0
        self.stage_seconds, self.stage_steps = [None] * count, [None] * count
        self.key = run_key(stage) if stage is not None and count > 1 else ""
        self.learned = (self.times.read(self.key, count)
                        if self.key and self.times is not None else None)
        if self.learned is not None:
            self.work = tuple(max(s, 1e-3) for s in self.learned["stages"])
            self.kinds = ("",) * count

    def _ended(self, now: float) -> None:
        """The stage running ends: its seconds and its steps' kept; the run's last
        whole, the run's kept for the next (StageTimes)."""
        k = self.index - 1
        if not 0 <= k < len(self.stage_seconds):
            return
        self.stage_seconds[k] = now - self.stage_started
        whole = self.total and self.done == self.total and len(self.step_times) == self.total
        self.stage_steps[k] = list(self.step_times) if whole else None
        if self.index == self.count and self.times is not None and self.key and \
                None not in self.stage_seconds:
            self.times.write(self.key, self.stage_seconds, self.stage_steps)
            self.key = ""                              # written once

    def _stage_work(self) -> float:
        return self.work[self.index - 1] if 0 < self.index <= len(self.work) else 1.0

    def _measure(self, now: float) -> None:
        """The stage running ends: the rest of its work after its last step counted (all
        of it when none was) is a sample of the pace; its steps' seconds, when all were
        counted, weigh the same steps of the stages after."""
        self._ended(now)
        rest = 1.0 - self.counted
        if rest > 1e-9 and now > self.stepped:
            self._sample(now, rest * self._stage_work())
        if self.total and self.done == self.total and len(self.step_times) == self.total:
            key = (self._kind(self.index), self.total, self.steps)
            sums = self.measured.get(key, [0.0] * self.total)
            self.measured[key] = [a + b for a, b in zip(sums, self.step_times)]

    def step(self, done: int, total: int) -> None:
        """``done`` steps of the stage's ``total`` are done."""
        now = self.now()
        if total != self.total or done < self.done:      # counted anew
            self.step_times, self.done, self.counted = [], 0, 0.0
        self.done, self.total = done, total
        if done == len(self.step_times) + 1:
            self.step_times.append(now - self.stepped)
        share = self._share(0, done)
        if share > self.counted and now > self.stepped:
            self._sample(now, (share - self.counted) * self._stage_work())
        self.counted, self.stepped = max(share, self.counted), now
        if done and done == total and self.index and self.index == self.count:
            self._ended(now)                           # the run's last step

    def _kind(self, number: int) -> str:
        return self.kinds[number - 1] if 0 < number <= len(self.kinds) else ""

    def _weights(self) -> list[float] | None:
        """Each step's weight: the seconds the same steps (of the same kind, declaring
        the same work) took in the stages done, else the work they declare; None: alike."""
        measured = self.measured.get((self._kind(self.index), self.total, self.steps))
        if measured and self.steps and sum(measured) > 0:    # steps alike: not weighed by
            return measured     # others' (sinha2022's first steps, a warm-up and loads,
        # weighed SmolLM2's first as 61 % of its stage: "about 1 s left" with 15 to go)
        learned = self.learned["steps"][self.index - 1] if self.learned and self.index else None
        if learned and len(learned) == self.total and sum(learned) > 0:
            return learned
        if self.steps and len(self.steps) == self.total and sum(self.steps) > 0:
            return list(self.steps)
        return None

    def _share(self, first: int, last: int) -> float:
        """The share of the stage's work in its steps first..last - 1 (0 of 0 steps).
        Steps alike are counted, not listed: a list of 900,000 ones at each count froze
        the window in a sweep of that many runs."""
        if not self.total:
            return 0.0
        weights = self._weights()
        if weights is None:
            first, last = min(first, self.total), min(last, self.total)
            return max(last - first, 0) / self.total
        return sum(weights[first:last]) / sum(weights)

    def fraction(self) -> float:
        """How much of the whole run is done (0 to 1), each stage and step by its work."""
        share = self._share(0, self.done)
        if not self.count:
            return share
        before = sum(self.work[:self.index - 1])
        return (before + self.work[self.index - 1] * share) / sum(self.work)

    def share_done(self, told=MEASURED) -> float:
        """The share of the whole run done as its time left tells it (the time so far
        over that and the time left; by work while no time left is told), never less
        than told before: the bar and the words "in all" say one thing (sinha2022's bar
        read 10 % with "about 6 s left in all" of a 24 s run). ``told``: the seconds
        left the words say where not the clock's (a range's middle; None: none), else
        the clock's measure (Haviv 2022's bar stood at its work's 10 % for a minute
        while the words said a range, then a time left rising)."""
        if self.count > 1 and self.index == self.count and self.total and \
                self.done >= self.total:
            share = 1.0
        else:
            # the time left unfloored: a short run's 1 s floor read "1 % done" of a third
            left = told if told is not MEASURED else \
                self.run_left(0.0) if self.count > 1 else self.stage_left(0.0)
            spent = self.now() - self.began
            share = (spent / (spent + left) if left is not None and left != LATE and
                     spent + left > 0 else self.fraction())
        self.shown = max(self.shown, min(share, 1.0))
        return self.shown

    def _sample(self, now: float, work: float) -> None:
        """The step (or the rest of a stage) that ended ``now``, of ``work``, since the
        last one."""
        kind = self._kind(self.index)
        pace = self.paces.setdefault(kind, self._new_pace())
        pace.add(now, now - self.stepped, work)

    def _new_pace(self) -> Pace:
        """A kind's pace; where the shares are this machine's last run's, a pace of 1
        as if PRIOR_S of it were measured (it yields as the run's own steps come)."""
        return Pace(self.began, PRIOR_S if self.learned is not None else 0.0)

    def _pace(self, kind: str) -> float | None:
        """Seconds a unit of work of ``kind`` (Pace); None with none measured. (The mean
        of all, at load 4-10, told 885 s where 1,037 s were left, and once the load fell
        523 s with 359 left.)"""
        pace = self.paces.get(kind)
        if pace is None and self.learned is not None:
            pace = self.paces.setdefault(kind, self._new_pace())
        return pace.value() if pace is not None else None

    def after_left(self) -> float | None:
        """Seconds of the stages after the running one, each at its kind's pace."""
        after = 0.0
        for number in range(self.index + 1, self.count + 1):
            pace = self._pace(self._kind(number))
            if pace is None:
                return None
            after += pace * self.work[number - 1]
        return after

    def timed_past_warm_up(self) -> bool:
        """Has every kind of work from the running stage on been timed past its warm-up:
        a stage of it ended, or a step after its first? (The window's time left waits
        for it: Haviv 2022's first MLP fit alone told 28 min left, the next 19.)"""
        ended = {self._kind(k + 1) for k, s in enumerate(self.stage_seconds) if s is not None}
        return all(kind in ended or kind in self.paces and self.paces[kind].work > 0
                   for kind in {self._kind(n) for n in range(self.index, self.count + 1)})

    def own_run_left(self, seconds: float) -> float | None:
        """Seconds left of the run while the running stage's words tell ``seconds`` left
        of a part of it the run's pace knows nothing of (a load's conversion), counted
        down since told, the stage's work at the pace of its kind (else the stage
        before's), and the stages after; None with no pace to go by."""
        pace = self._pace(self._kind(self.index)) or self._pace(self._kind(self.index - 1))
        after = self.after_left()
        if pace is None or after is None:
            return None
        own = max(seconds - (self.now() - self.told_at), 0.0)
        return own + pace * self._stage_work() + after

    def timed_whole(self) -> bool:
        """Has every kind of work from the running stage on ended a stage of it? (Haviv
        2022's MLP fits, timed on their first layer's, told 7 min left in all, then as
        the later layers' fits took 2-3 × as long 13 min: a run with a range to say
        says it until then.)"""
        ended = {self._kind(k + 1) for k, s in enumerate(self.stage_seconds) if s is not None}
        return all(self._kind(n) in ended for n in range(self.index, self.count + 1))

    def stage_left(self, floor: float = 1.0) -> float | None:
        """Seconds left of this stage at the pace measured, at least ``floor`` (the
        words' "about 1 s left" while work is left); None before a step."""
        if not self.done or self.done >= self.total:
            return None
        return self._left(0.0, floor)

    def run_left(self, floor: float = 1.0) -> float | None:
        """Seconds left of the whole run: this stage's and the stages after it, at the
        pace measured, at least ``floor`` while work is left. None for a run of one
        stage, or with nothing measured to go by."""
        if self.count <= 1 or not self.index:
            return None
        after = self.after_left()
        if after is None:
            return None
        if self.done and self.done >= self.total:            # its steps are all done
            return max(after, floor)
        left = self._left(after, floor)
        if left is None:
            return None
        return left if left == LATE else left + after

    def _left(self, after: float, floor: float = 1.0) -> float | None:
        """Seconds left of the running stage: its work after the last step at the pace,
        counted down since that step, never below the work after the step running,
        LATE once that step overran and nothing is left after it (``after``: the
        seconds of the stages after, added by the caller)."""
        pace = self._pace(self._kind(self.index))
        if pace is None:
            return None
        work = self._stage_work()
        done = self._share(0, self.done) if self.done else 0.0
        running = self._share(self.done, self.done + 1) if self.total else 1.0 - done
        counted_down = pace * work * (1 - done) - (self.now() - self.stepped)
        step_after = pace * work * max(1 - done - running, 0.0)
        if counted_down <= 0 and step_after < 1 and after < 1:
            return LATE
        return max(counted_down, step_after, floor if after < 1 else 0.0)


LATE_WORDS = "this step is taking longer than the others"


def left_words(seconds: float | None, where: str = "") -> str:
    """", about N s left{where}", ", this step is taking longer than the others" when
    LATE (the pace so far said it would be done: "longer than its pace so far" and "over
    the time estimated" read as nonsense to a teacher), or ""."""
    if seconds is None:
        return ""
    if seconds == LATE:
        return f", {LATE_WORDS}"
    return f", about {duration_text(seconds)} left{where}"


def duration_text(seconds: float) -> str:
    """A time left as a person reads it: "40 s", "12 min", "2.1 h" (a run of a quarter
    of an hour read as "about 885 s")."""
    if seconds < 100:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 6000 else f"{seconds / 3600:.1f} h"
