"""A caller's ``progress(done, total)`` told one count over a run's stages
(api.steps.counted, LayerCount)."""
from __future__ import annotations

from typing import Callable


class WholeRun:
    """A caller's ``progress(done, total)`` told the whole run's count where the run
    counts each stage anew (a paper check's lengths or models, the lab's methods, a
    probe's runs then fits): the steps of the stages done add up, and the stages still
    to come count as many steps as the one running, or, where a Stage tells its place,
    as the stages so far on average, and the share told, ``done / total``, only grows
    (Haviv 2022's 120 forwards, then 5 fits, … went 0 → 78 → 15 → 91 → 34 %: a
    user's run)."""

    def __init__(self, progress: Callable[[int, int], None]):
        self.progress = progress
        self.before = 0                 # the steps of the stages done
        self.last = (0, 0)              # (done, total) last told of the stage running
        self.number = self.after = 0    # the stage running, of how many more
        self.anew = False               # a stage was told since the last count
        self.share = 0.0                # the share last told

    def stage(self, text: str) -> None:
        from ..analysis.experiments.stage import Stage
        if isinstance(text, Stage):
            self.number, self.after = text.number, text.stages - text.number
        self.anew = True

    def __call__(self, done: int, total: int) -> None:
        if done < self.last[0] or self.anew and done <= self.last[0]:
            self.before += self.last[1]         # a stage counted anew
        self.anew, self.last = False, (done, total)
        if not done:                            # a stage's count begins: nothing new done
            return
        # the stages to come, in steps: as many as the running one's, or where Stages
        # tell their place, as the stages so far took on average
        coming = (round(self.after * (self.before + total) / self.number) if self.number
                  else total * self.after)
        whole = self.before + done
        told = self.before + total + coming
        if self.number and self.share and whole / told < self.share:   # told: never
            told = max(whole, int(whole / self.share))                  # a smaller share
        self.share = whole / told if told else 0.0
        self.progress(whole, told)
