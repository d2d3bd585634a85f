"""The time left of a GGUF file's first load, its conversion (models.hf.converted), told
with each line of its steps: its steps are the Stages of one run (runtime.time_left's
RunClock), each of the seconds it took in a conversion measured here until this
machine's last conversion is kept (runtime.stage_times), so the time left follows the
pace of the steps done (models.hf.converted.STEPS, whose pace its first line's estimate
is too). SmolLM2's said "about 25-84 s" once, then 120 s of steps with their seconds so
far ("de-quantizing weights (39 s)") and no time left."""
from __future__ import annotations

import re

from ..analysis.experiments.stage import Stage
from ..models.hf.converted import STEPS
from ..models.hf.hub import SAVING
from .stage_times import StageTimes
from .time_left import LATE, RunClock, left_words

OWN_PACE_S = 1.0      # a counted step's own pace, once counted this long: its first
# counts came 0.01-0.04 s apart and told 6, 12, 7, 10 s left in turn
RETOLD = re.compile(r".* \(\d+ s\)$")   # a step told again each second (reached.Ticks)


class ConversionLeft:
    """Told each step of a conversion (``told``, from its first, CONVERTING's); ``words``
    the conversion's time left (", about 40 s left of the conversion"), "" before a
    step is timed and once its copy is saved."""

    def __init__(self, clock, times: StageTimes | None = None):
        self.run = RunClock(clock, StageTimes() if times is None else times)
        self.number, self.ended = 0, False
        self.counting: tuple[int, float, int] = (0, 0.0, 0)   # (step, time, count) at
        # its first count: the copy is written in one call (1-3 s) before it is counted

    def told(self, step: str, done: int | None = None, total: int | None = None) -> None:
        if self.number == len(STEPS) and not step.startswith(SAVING):
            self.ended = True                   # a step after the copy's saving: done
        if self.ended:
            return
        counted = done is not None and bool(total)
        if not RETOLD.match(step):          # a step told again stays the step it was
            for number, (words, counts, _) in enumerate(STEPS[self.number:], self.number + 1):
                if step.startswith(words) and counts in (None, counted):
                    self.number = number
                    self.run.stage(Stage(STEPS[number - 1][0], number, len(STEPS),
                                         [seconds for *_, seconds in STEPS]))
                    break
        if counted and self.number and step.startswith(STEPS[self.number - 1][0]):
            if self.counting[0] != self.number or done < self.counting[2]:
                self.counting = (self.number, self.run.now(), done)
            self.run.step(done, total)
            self.ended = self.number == len(STEPS) and done >= total

    def share_done(self) -> float:
        """The conversion's share done, 0-1, as its time left tells it (its steps' seconds,
        STEPS or this machine's last); never less than told before; 1 once it has ended."""
        if self.ended:
            return 1.0
        return self.run.share_done() if self.number else 0.0

    def seconds(self) -> float | None:
        """The conversion's time left its words tell (``words``), None when they tell none."""
        if self.ended or not self.number:
            return None
        run = self.run
        paces = run.paces.values()
        if run.learned is None and any(pace.first for pace in paces) and \
                not any(pace.work > 0 for pace in paces):
            # its first step alone timed (its words, 0.1 s of 1.3): the steps left as
            # STEPS declares them, not at that pace (SmolLM2's said "about 4 s left of the
            # conversion" with 53 s to go)
            return max(sum(run.work[run.index - 1:]) - (run.now() - run.stage_started), 1.0)
        left, own = run.run_left(), self.step_left()
        if own is not None and left is not None and left != LATE:
            left = max(left, own)
        return None if left is None or left == LATE else left

    def words(self) -> str:
        """The one time left a conversion's line tells, never less than its counted
        step's own at that step's pace ("saving the converted copy: 67 of 538 MB, about
        10 s left, about 5 s left of the conversion": the disk-bound save at the
        conversion's pace)."""
        left = self.seconds()
        return "" if left is None else left_words(left, " of the conversion")

    def step_left(self) -> float | None:
        """Seconds left of the conversion at the counted step's own pace (its counts so
        far since its first) and the steps after at theirs; None before a second count."""
        run = self.run
        if not run.done or run.done >= run.total:
            return None
        number, since, first = self.counting
        if number != self.number or run.done <= first or run.now() - since < OWN_PACE_S:
            return None
        after = run.after_left()
        own = (run.now() - since) / (run.done - first) * (run.total - run.done)
        return None if after is None else own + after
