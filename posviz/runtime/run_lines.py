"""The lines of a run's counts on a stream: the one rule of them, for the command line
and for ``progress=True`` in Python alike."""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable

from .held_lines import carried, out
from .stage_times import StageTimes
from .time_left import LATE, RunClock, duration_text, left_words

TICK_S = 2.0         # a line at most this often, and never, where counts allow it,
                     # this long without one
FIRST_S = 0.0        # the first line this long after the first count
SPARE_S = 0.25       # seconds a count may come later than the last
FORWARD_UNITS = ("run", "pair")   # counts of one forward each (forwards_left): not
                                  # compare's layers, a probe's steps or fits
_LAST_LINE = [0.0]   # when any progress line was told (time.monotonic), by any printer
RETELL_S = 1.0       # a count late past TICK_S: its line told again this often on a
                     # terminal; on a pipe (a log) each PIPE_RETELL of TICK_S
PIPE_RETELL = 0.5    # at 3/4 (1.5 s) a pipe's lines came 2.0-2.8 s apart at load 7-10:
                     # the thread telling them got no turn for up to a second


def later(seconds: float) -> float:
    """When the next count or part, due in ``seconds`` at the last pace, may come on a
    busy machine (a sweep's lines came 2.04-2.10 s apart, a report's 2.06-2.2 s)."""
    return max(1.5 * seconds, seconds + SPARE_S) if seconds else 0.0


class Gaps:
    """The seconds between a count's calls, lately: ``next(now)`` is when the next may
    come, at the larger of the last two gaps and room for a later one (0 before two
    calls)."""

    def __init__(self):
        self.last, self.gaps = None, (0.0, 0.0)

    def next(self, now: float) -> float:
        if self.last is not None:
            self.gaps = (self.gaps[1], now - self.last)
        self.last = now
        return later(max(self.gaps))    # with room for a later one


class RunLines:
    """The one teller of a run's counts on a stream, for the command line and for
    ``progress=True`` in Python alike: its Stages told (``stage``), each count
    (``(done, total)``). A line at the first count (its time left once a second count
    has timed more than the warm-up: sinha2022's first step said "about 9 min left" of
    16 s), then at a count
    ``tick`` seconds after the last line, or sooner where the next count, as far off as
    the last ones, would leave ``tick`` seconds without one; and at the last. A run of
    one stage says "run 40 of 1,000, about 2 min left" (a count lower than the one
    before starts it anew); a run told in Stages "step 40 of 96 (stage 3 of 3), 62 %
    done, about 20 s left", the share and the time left the whole run's. The stages'
    shares are this machine's last run's where one was kept (``times``)."""

    def __init__(self, stream=None, unit: str = "step", tick: float = TICK_S,
                 clock: Callable[[], float] = time.monotonic, first: float = FIRST_S,
                 times: StageTimes | None = None, retell: float | None = None):
        self.stream, self.unit, self.tick, self.first = stream, unit, tick, first
        self.clock = RunClock(clock, StageTimes() if times is None else times)
        self.told: float | None = None      # the last line's time (before any: due)
        self.gaps, self.counts = Gaps(), 0
        self.forwards = last_forward()      # the forwards before the last count
        # a count late past ``tick``: its line told again each ``retell`` seconds (by
        # default each second on a terminal, each ``tick`` on a pipe: a log had 4-10 s
        # gaps), by a thread of its own (Retelling); a test's own clock: where it asks
        self.retell = retell if retell is not None else retell_every(stream, tick, clock)
        self.lock, self.retelling = threading.RLock(), None

    def stage(self, text: str) -> None:
        with self.lock:
            self.clock.stage(text)

    def __call__(self, done: int, total: int) -> None:
        with self.lock:
            self._count(done, total)
        if self.retell:
            self._retelling(done, total)

    def _retelling(self, done: int, total: int) -> None:
        """Starts the thread that tells a late count's line again, or ends it at the
        run's last count."""
        run = self.clock
        if done >= total and run.index == run.count:
            self.end()
        elif self.retelling is None:
            self.retelling = Retelling(self)

    def end(self) -> None:
        """No line told again after this (the thread joined): at the run's last count,
        and where the run ends otherwise (an error, Ctrl+C), by the ``with`` around it
        (api.steps.lines_ended)."""
        retelling, self.retelling = self.retelling, None
        if retelling is not None:
            retelling.end()

    def retold(self) -> bool:
        """Tells the line again when the step running is late: no line for ``retell``
        seconds and no count for ``tick`` less half of it (Retelling's thread asks
        each quarter of it: a line at most ``tick`` apart, not 2.2 s)."""
        with self.lock:
            run = self.clock
            now = run.now()
            late = now - run.stepped >= self.tick - self.retell / 2
            silent = silent_for(run.now)            # since any printer's line
            quiet = silent is not None and silent >= self.retell
            if (not run.total or run.done >= run.total or not (late or quiet)
                    or self.told is None
                    or (silent if silent is not None else now - self.told) < self.retell):
                return False
            self.told = now
            # due for the silence alone, its count a moment ago: the count's own line
            # ("run 5 of 30 done, run 6 running for 0 s" read as a stalled run)
            line = (self.late_line(now - run.stepped) if late or not run.done
                    else self.line())
            print(f"posviz: {line}", file=out(self.stream), flush=True)
            line_told()
            return True

    def late_line(self, seconds: float) -> str:
        """A late count's line told again: "run 1 of 3 done, run 2 running for 2 s,
        about 3 s left" ("run 1 of 3 (2 s since run 2 began)" read as run 1 running)."""
        run = self.clock
        place = f" (stage {run.index} of {run.count})" if run.count > 1 else ""
        running = f"running for {duration_text(seconds)}{self.how_far()}"
        if not run.done:                # "run 1 of 3 running for 2 s"
            return f"{self.unit} 1 of {run.total:,}{place} {running}"
        return (f"{self.unit} {run.done:,} of {run.total:,}{place} done, {self.unit} "
                f"{run.done + 1:,} {running}")

    def _count(self, done: int, total: int) -> None:
        run = self.clock
        if not run.index and (done < run.done or run.total and total != run.total):
            run.stage("")                               # a run of one stage, anew
            self.told, self.gaps = None, Gaps()
        run.step(done, total)
        self.counts += done > 0
        self.forwards = last_forward()          # those after it are the runs to come
        now = run.now()
        if self.told is None:                           # the first line: ``first`` on
            self.told = now - self.tick + self.first
        coming = self.gaps.next(now)
        waited = now - self.told
        if not done or (done != total and waited < self.tick
                        and waited + coming <= self.tick):
            return
        self.told = now
        print(f"posviz: {self.line()}", file=out(self.stream), flush=True)
        line_told()

    def line(self) -> str:
        run = self.clock
        place = f" (stage {run.index} of {run.count})" if run.count > 1 else ""
        return f"{self.unit} {run.done:,} of {run.total:,}{place}{self.how_far()}"

    def how_far(self) -> str:
        """", 62 % done, about 20 s left": the whole run's (a run of one stage: the
        time left alone; the stages after not timed: the running stage's, ", about 8 s
        left of stage 1"), nothing left told at the run's last count."""
        run, where = self.clock, ""
        if run.count > 1:
            share, left = f", {100 * run.share_done():.0f} % done", run.run_left()
            if left is None:        # the stages after not timed yet (a probe's fits
                # before its first run's: "22 % done" for 12 s): the running stage's
                left, where = run.stage_left(), f" of stage {run.index}"
        else:
            share, left = "", run.stage_left()
        if run.done >= run.total and run.index == run.count:
            left = None
        elif self.counts < 2:           # the runs not timed yet: their forwards' pace
            left = self.forwards_left()
        return share + left_words(left if left is None or left == LATE else max(left, 1.0),
                                  where)

    def forwards_left(self) -> float | None:
        """A run of one stage counting forwards (FORWARD_UNITS) before two counts time
        it: the forward on its way since the last count (models.reached) at its blocks'
        pace, each run after it at that forward's whole time (a sweep's "run 1 of 4"
        told no time left for 7 s); else None."""
        from ..models import reached
        now, run = reached.latest(), self.clock
        if run.count > 1 or self.unit not in FORWARD_UNITS or now is None or \
                now.forward <= self.forwards:
            return None
        now = reached.moved_on(now, reached.clock())      # counted down since its block
        left = now.seconds_left()
        return None if left is None else left + (now.at - now.began) / now.done * max(
            run.total - run.done - 1, 0)


def last_forward() -> int:
    """The number of the process's last forward (models.reached), 0 before any."""
    from ..models import reached
    now = reached.latest()
    return now.forward if now is not None else 0


def line_told() -> None:
    """A progress line was told now (on stderr, by any printer): a printer that starts
    later counts the silence from it (a sweep's first run after its reference forward:
    2.2 s untold, its lines counted from its first count)."""
    _LAST_LINE[0] = time.monotonic()


def silent_for(clock) -> float | None:
    """Seconds since any progress line on ``clock`` (time.monotonic; a test's own: None)."""
    return clock() - _LAST_LINE[0] if clock is time.monotonic and _LAST_LINE[0] else None


def retell_every(stream, tick: float, clock) -> float:
    """How often a late line is told again by default: each second on a terminal, each
    PIPE_RETELL of ``tick`` on another stream (--progress's pipe, a notebook's stderr)
    but one read on a test's own clock (a thread reading it would tell lines at
    random)."""
    if terminal(stream):
        return RETELL_S
    return tick * PIPE_RETELL if clock is time.monotonic else 0.0


def terminal(stream) -> bool:
    """Is ``stream`` (None: stderr) a terminal?"""
    isatty = getattr(stream or sys.stderr, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:                  # a closed stream
        return False


class Retelling(threading.Thread):
    """Asks ``lines.retold()`` (a RunLines, or api.late_layers.LateLayers) each quarter
    of its ``retell`` seconds (at most a quarter second) until ``end`` (joined). A 3,000-token layer was 5-12 s
    between counts untold."""

    def __init__(self, lines):
        # its lines told where the thread starting it tells its own (held_lines.carried)
        super().__init__(target=carried(self.asking), daemon=True, name="posviz-lines")
        self.lines, self.done = lines, threading.Event()
        self.start()

    def asking(self) -> None:
        while not self.done.wait(min(self.lines.retell, RETELL_S) / 4):
            self.lines.retold()

    def end(self) -> None:
        self.done.set()
        if threading.current_thread() is not self:
            self.join()
