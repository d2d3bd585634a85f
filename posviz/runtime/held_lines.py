"""A call from Python tells nothing while it is quick: its progress lines are held
until its wait passes ``HOLD_S`` seconds, then the line held last is told (what it is
doing, how far; unless it is over STALE_S old) and every line after it as it comes, by the command line's rule
(run_lines, api.steps.StepPrinter): the printers write to ``out()``, which is the
held stream while such a call runs on their thread (``holding``), else stderr. A
thread of posviz's own telling lines for a call (``carried``) tells them where the
thread that started it does."""
from __future__ import annotations

import contextvars
import functools
import sys
import threading
import time
from contextlib import contextmanager

HOLD_S = 1.0         # a call quicker than this tells nothing: its first line then comes
                     # by 2 s on a busy machine (at a hold of 2 s: 2.01-2.54 s, load 5-9;
                     # at 1.5 s: 2.02-2.76 s at load 7-10, the timer's thread given no
                     # turn for up to STARVED_S while torch, Qt or an import ran)
STARVED_S = 1.0      # the longest a thread of posviz's waited for its turn (load 7-10)
STALE_S = 1.6        # older: not told (its time left is old); a printer tells anew each
                     # second, and a line told at the start is still fresh at the hold
# this thread's (context's) calls holding their lines, innermost last: one thread's
# hold is not another's: a new thread starts in an empty context, with none; a thread
# of posviz's own telling a call's lines starts in its starter's (carried)
_held: contextvars.ContextVar[tuple] = contextvars.ContextVar("posviz_held", default=())


class HeldLines:
    """A stream keeping its last whole line (on ``stream``, None: stderr) until
    ``seconds`` have passed (a thread of its own then tells it, unless it was written
    more than STALE_S before on ``clock``), every write after that passed on at once."""

    def __init__(self, seconds: float = HOLD_S, stream=None, clock=time.monotonic):
        self.stream, self.shown = stream, seconds <= 0      # 0: told from the start
        self.partial, self.held, self.held_at, self.clock = "", None, 0.0, clock
        self.until = clock() + seconds  # a write past it shows (the timer may be late)
        self.lock = threading.RLock()
        self.timer = threading.Timer(seconds, self.show)
        self.timer.daemon = True
        self.timer.name = "posviz-held-lines"

    def _out(self):
        return self.stream or sys.stderr

    def write(self, text: str) -> int:
        with self.lock:
            self.due()          # the timer's thread kept waiting for the GIL while Qt
            # drew a figure: its first line came 0.4 s past the hold (MiniLM, load 5)
            if self.shown:
                return self._out().write(text)
            lines = (self.partial + text).split("\n")
            self.partial = lines[-1]
            if len(lines) > 1:
                self.held, self.held_at = lines[-2] + "\n", self.clock()
            return len(text)

    def due(self, seconds: float = 0.0) -> None:
        """A step's boundary on the call's own thread: the held line told once the hold
        has passed, or at once when the step beginning, planned to take ``seconds``,
        would carry the wait past it (one long call, Qt's drawing or torch's, in which
        the timer's thread may get no turn: a figure's first line came at 2.1-2.9 s)."""
        with self.lock:
            if not self.shown and self.clock() + max(seconds, 0.0) >= self.until:
                self.show()

    def flush(self) -> None:
        with self.lock:
            if self.shown:
                self._out().flush()

    def isatty(self) -> bool:
        isatty = getattr(self._out(), "isatty", None)
        return bool(isatty and isatty())

    def show(self) -> None:
        """The wait passed: the line held last told (unless it is stale: "about 5 s
        left" written 2 s ago), the lines after it as they come."""
        with self.lock:
            if self.shown:
                return
            self.shown = True
            if self.held is not None and self.clock() - self.held_at <= STALE_S:
                self._out().write(self.held)
                self._out().flush()

    def end(self) -> None:
        """The call ended: a line still held is never told."""
        self.timer.cancel()
        with self.lock:
            self.shown, self.held = True, None
            self.stream = _Nowhere()


class _Nowhere:
    """Where an ended call's late line goes (a thread still telling it)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


@contextmanager
def holding(seconds: float | None = None, stream=None):
    """Progress lines told inside are held until ``seconds`` (None: HOLD_S) have passed
    (HeldLines)."""
    held = HeldLines(HOLD_S if seconds is None else seconds, stream)
    if not held.shown:
        held.timer.start()
    try:
        with lent(held):
            yield held
    finally:
        held.end()


@contextmanager
def lent(held: "HeldLines | None"):
    """Inside, this thread's lines go to ``held`` (None: where they went)."""
    token = _held.set(_held.get() + (held,)) if held is not None else None
    try:
        yield held
    finally:
        if token is not None:
            _held.reset(token)


def holder() -> "HeldLines | None":
    """The held stream of the call running on this thread (``holding``), or None."""
    held = _held.get()
    return held[-1] if held else None


def carried(target):
    """``target`` for a thread of posviz's own that tells lines for the call that
    starts it (a late line told again, an export's file watched): run in this
    thread's context as it is now, its lines go where this thread's go."""
    context = contextvars.copy_context()
    return functools.partial(context.run, target)


def out(stream=None):
    """Where a progress line goes: ``stream`` when given, else the held stream of the call
    running on this thread (holding, carried), else stderr."""
    return stream or holder() or sys.stderr


def due(seconds: float = 0.0) -> None:
    """At a step's boundary on this thread: its call's held line told if the hold has
    passed or the step, planned to take ``seconds``, would carry it past (HeldLines.due)."""
    held = holder()
    if held is not None:
        held.due(seconds)


def held_now() -> bool:
    """Is a call on this thread holding its lines (``holding``)?"""
    return holder() is not None
