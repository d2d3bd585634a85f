"""How the Python API and the command line tell the steps of a load or a run.

``progress(step, done=None, total=None)`` is told each step; a counted step says how far
it is: the bytes of a download, the tensors of a load, or the layers of a run (a real
model's forward, ``layer_ticks``). ``StepPrinter`` writes them one line each on a stream.
An experiment counts its runs, ``progress(done, total)``: runtime.run_lines.RunLines
tells them with the time left, on the command line and with ``progress=True`` alike.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager, nullcontext
from typing import Callable

from ..runtime.run_lines import FIRST_S, TICK_S, Gaps, RunLines, later  # noqa: F401 (the
from ..runtime.time_left import duration_text  # noqa: F401   one rule of a run's lines)
from ..runtime.held_lines import due, holder
from .late_layers import LateLayers
from .whole_run import WholeRun

Progress = Callable[..., None]           # progress(step, done=None, total=None)
RUN_STEP = "running"                     # the steps whose counts are layers
QUIET_S = 1.5                            # a load's count told once this long untold


class StepPrinter:
    """Tells the steps of a load or a run on a stream, one line each ("posviz: STEP").

    With ``steps`` False only a download and a first load's conversion (a minute or
    more, once: each of its steps) are told. Of a counted step a download's bytes
    are told at each file and each tenth of the whole, a load's tensors and a run's
    layers every ``tick`` seconds with the time left; a late block's line is told
    again on a terminal (``late``, api.late_layers.LateLayers). ``lock``: a step and
    a line told again come from two threads, one at a time."""

    def __init__(self, stream=None, steps: bool = True, tick: float | None = None):
        self.stream = stream
        self.steps = steps
        self.tick = TICK_S if tick is None else tick
        self._counted = (None, -1)          # (step, tenth) told last
        self._count = (None, 0.0, 0, 0.0)   # a load's tensors: (step, began, done, told)
        self._tensor_gaps = Gaps()          # the seconds between its counts, lately
        self._converting = self._saved = False   # in a conversion; its copy saved
        self._run = (None, 0.0, (0, 0), {})  # (step, told last, (layer, part), each
        self._at = None                     # part's seconds); the last boundary's time
        self._piece, self._tail = None, 0.0  # a layer's maps on their way to disk: the
        # last piece's time; the seconds from a layer's last piece to its next boundary
        self._said, self._lines = None, 0   # the line told last; lines told
        self._conversion = None             # a conversion's time left (ConversionLeft)
        self.lock = threading.RLock()
        self.late = LateLayers(self)

    def __call__(self, step: str, done: int | None = None, total: int | None = None) -> bool:
        """Tells ``step``; False when no line was written (a count kept for a later
        one: reached.Ticks tells the step again once it has been silent a second)."""
        with self.lock:
            lines = self._lines
            self._step(step, done, total)
            due()       # a call's held line told from its own thread once the hold has
            return self._lines != lines     # passed, at each count (held_lines.due)

    def retold(self) -> bool:
        """The block running told again when it is late (LateLayers)."""
        return self.late.retold()

    def _step(self, step: str, done: int | None, total: int | None) -> None:
        from ..models.hf.converted import CONVERTING, SAVING, WAITING_FOR_ANOTHER
        from ..models.hf.hub import DOWNLOAD_STEP, count_text
        download = step.startswith(("downloading", CONVERTING, WAITING_FOR_ANOTHER))
        if step.startswith(CONVERTING) and not self._converting:   # a first load's
            self._converting = True     # conversion: each of its steps told, from Python
            from ..runtime.conversion_left import ConversionLeft   # by default too, with
            self._conversion = ConversionLeft(reached_clock)       # its time left
        if self._conversion is not None:
            self._conversion.told(step, done, total)
        told = self.steps or self._converting
        if download and (held := holder()) is not None:
            held.show()     # a download or a conversion is told at once, quick or not
        if done is None or not total:
            if step == "ready":
                self._converting = self._saved = False
            if step.startswith(SAVING):
                self._saved = True
            if told or download:                # the copy just saved is read then
                self.late.plain_step(step, reached_clock())     # (its wait told)
                self.tell(f"{step} (from the saved copy)" if self._saved
                            and step in ("loading tokenizer", "loading weights") else step)
            return
        if step.startswith(RUN_STEP):
            return self._layers(step, done, total) if self.steps else None
        if not step.startswith(DOWNLOAD_STEP):
            return self._tensors(step, done, total) if told else None
        tenth = 10 * done // total
        if (step, tenth) != self._counted and (step != self._counted[0]
                                               or tenth > self._counted[1]):
            self._counted = (step, tenth)
            self.tell(count_text(step, done, total))

    def _tensors(self, step: str, done: int, total: int) -> None:
        """A load's tensors counted (a GGUF file's de-quantizing: 10.5 s told nothing):
        told every ``tick`` seconds, with the time left at the pace so far."""
        from ..models import reached
        now = reached.clock()
        if self._count[0] != step or done < self._count[2]:
            # (step, began, done, told): its next line a tick after the last told (a
            # GGUF file's matching began 1 s after a line, told 2.8 s after it)
            told = min(now, self.late.said_at) if self.late.said_at else now
            self._count = (step, now, done, told)
            self._tensor_gaps = Gaps()
            self._tensor_gaps.next(now)
            return
        _, began, _, told = self._count
        self._count = (step, began, done, told)
        coming = self._tensor_gaps.next(now)        # told before a tick passes, and
        # by the count itself once QUIET_S passed without any line: the thread telling
        # a silent step again (reached.Ticks) woke 0.5-0.8 s late while a GGUF file's
        # modules were matched (2 cores, load 4), 2.2 s untold
        quiet = now - self.late.said_at if self.late.said_at else 0.0
        if now - told + coming <= self.tick and done != total and quiet < QUIET_S:
            return
        self._count = (step, began, done, now)
        left = (now - began) / done * (total - done) if done else None
        if self._converting and self._conversion is not None and self._conversion.words():
            left = None             # one time a line: the conversion's (ConversionLeft)
        left = "" if left is None or done == total else \
            f", about {duration_text(max(left, 1.0))} left"
        from ..models.hf.converted import SAVING
        if step.startswith(SAVING):             # a converted copy's bytes
            self.tell(f"{step}: {done:,} of {total:,} MB{left}")
            return
        unit = "module" if step.startswith("matching") else "tensor"
        self.tell(f"{step}: {unit} {done:,} of {total:,}{left}")

    def _layers(self, step: str, layer: int, total: int) -> None:
        """Layer ``layer`` of ``total`` entered, or its feed-forward (models.reached):
        told when waiting for the next such boundary would leave ``tick`` seconds or
        more without a line (the same part of the block before, else the part just
        done, says how long that is), with the time left of all the forwards planned
        ("forward 1 of 3, layer 29 of 30, about 52 s left")."""
        from ..models import reached
        now = reached.clock()
        forward = reached.latest()
        if forward is None or (forward.layer, forward.layers) != (layer, total):
            forward = None
        part = forward.part if forward is not None else 0
        run_step, told, last, parts = self._run
        if forward is not None and forward.within:     # a layer's maps on their way to
            piece, self._piece = now - (self._piece or self._at or now), now   # the disk
            # told when the next piece, or the rest of the part, would leave a tick untold
            if run_step == step and now - told + later(max(piece, self._tail)) > self.tick:
                self._run = (step, now, last, parts)
                words = reached.PART_WORDS.get(part, "attention")   # its scores, by head
                self.tell(self._line(step, forward, layer, total, " ({}: head {} of {})"
                                       .format(words, *forward.within)))
            return
        if self._piece is not None:
            self._tail, self._piece = now - self._piece, None
        if run_step != step or (layer, part) < last:           # a step, or a forward, anew
            # (its blocks' parts timed as the last forward's) since the last line told:
            # "now" left a forward's first blocks untold 2.6 s after "(2 s)"
            told = min(now, self.late.said_at) if self.late.said_at else now
        took = now - self._at if run_step == step and self._at is not None else None
        if took is not None:
            parts[last[1]] = took                               # the part just done
        self._at = now
        # a part not timed yet (the first block's) is told once a quarter of the tick
        # has passed (a tiny model's forward, in milliseconds, keeps a pipe silent)
        coming = parts.get(part)
        self._run = (step, told, (layer, part), parts)
        waited = now - told
        if waited < self.tick and (waited + later(coming) <= self.tick if coming is not None
                                   else waited < self.tick / 8):
            return
        self._run = (step, now, (layer, part), parts)
        inside = f" ({reached.PART_WORDS[part]})" if part else ""
        self.tell(self._line(step, forward, layer, total, inside))

    @staticmethod
    def _line(step: str, forward, layer: int, total: int, inside: str) -> str:
        """"STEP: forward 1 of 3, layer 29 of 30 (INSIDE), about 52 s left"."""
        seconds = forward.whole_left() if forward is not None else None
        left = "" if seconds is None else f", about {duration_text(max(seconds, 1.0))} left"
        which = (f"forward {forward.nth} of {forward.planned}, "
                 if forward is not None and forward.planned > 1 else "")
        return f"{step}: {which}layer {layer} of {total}{inside}{left}"

    def block(self) -> tuple | None:
        """The block told last (``_layers``): (step, when its part began, layer, part)."""
        step, _, (layer, part), _ = self._run
        return None if step is None or self._at is None else (step, self._at, layer, part)

    def block_line(self, forward) -> str:
        """The line of the block told last at ``forward`` (its time, its time left); the
        next comes a tick after it."""
        step, _, (layer, part), parts = self._run
        self._run = (step, forward.at, (layer, part), parts)
        return self._line(step, forward, layer, forward.layers, "")

    def tell(self, line: str) -> None:
        """One line, in a conversion with its time left; not the line just told again (a
        GGUF file's header, read for the tokenizer and then for the config from one
        parse, was told twice in a row)."""
        if self._conversion is not None and self._converting:
            line += self._conversion.words()
        if line != self._said:                  # one write: a whole line (two threads)
            self._said, self._lines = line, self._lines + 1
            self.late.said(reached_clock())
            from ..runtime.run_lines import line_told
            line_told()
            from ..runtime.held_lines import out
            stream = out(self.stream)
            stream.write(f"posviz: {line}\n")
            stream.flush()


def reached_clock() -> float:
    """models.reached's clock (a test's own, where it set one)."""
    from ..models import reached
    return reached.clock()


def check_progress(progress) -> None:
    """PosvizInputError unless ``progress`` is True, False, None or a callable."""
    if progress is None or isinstance(progress, bool) or callable(progress):
        return
    from ..errors import PosvizInputError
    raise PosvizInputError(f"progress must be True, False, None or a callable told "
                           f"(done, total) (got {progress!r})")


def as_progress(progress: Progress | bool | None) -> Progress:
    """A progress argument as a callable: None tells downloads on stderr, False
    nothing, True every step."""
    check_progress(progress)
    if progress is None or progress is True:
        return StepPrinter(steps=progress is True)
    if progress is False:
        return quiet
    return progress


def run_progress(progress) -> Progress:
    """A comparison's progress argument as its steps' callable: True, None, False and a
    StepPrinter as for a load (True tells its runs on stderr); any other callable is
    told ``(done, total)`` as an experiment's is (LayerCount)."""
    check_progress(progress)
    if progress is None or isinstance(progress, (bool, StepPrinter)):
        return as_progress(progress or False)
    return LayerCount(progress)


class LayerCount:
    """A caller's ``progress(done, total)`` told the layers a comparison's forwards have
    entered, over the whole comparison (WholeRun: each forward, the original order's,
    its noise floor's and the chosen order's, adds its layers to the total as it
    starts), the built-in model's too."""

    def __init__(self, progress: Callable[[int, int], None]):
        self.whole = WholeRun(progress)
        self.last = None

    def __call__(self, step: str, done: int | None = None, total: int | None = None):
        if (done is not None and total and step.startswith(RUN_STEP)
                and (step, done, total) != self.last):     # a block's feed-forward: once
            self.last = (step, done, total)
            self.whole(done, total)


def quiet(step: str, done: int | None = None, total: int | None = None) -> None:
    """Told nothing."""


@contextmanager
def layer_ticks(backend, say: Progress, step: str):
    """While a forward of ``backend`` runs inside, ``say(step, layer, layers)`` as it
    enters each of its blocks (models.reached, as the window's status line reads it;
    counted anew at each forward); a forward its caller named (models.reached.named:
    the noise floor's, after the original order's) is told as its own step, by its
    name. The built-in model's forwards are told the same way (its Recorder reaches
    each block as a real model's does): a 6,000-word text took 13 s untold."""
    from ..models import reached
    if say is quiet:
        yield
        return

    def told(now: reached.Reached) -> None:
        named = f"running {now.run}" if now.run else step     # the noise floor's run
        if now.run and now.layer == 1 and not now.part:
            say(named)
        say(named, now.layer, now.layers)
    during = say.late.during() if isinstance(say, StepPrinter) else nullcontext()
    with reached.listening(told), during:       # a late block told again (LateLayers)
        yield


def telling(progress) -> bool:
    """Does ``progress`` tell lines on stderr (True, or the command line's RunLines)?"""
    return progress is True or isinstance(progress, RunLines)


def counted(progress, unit: str = "run"):
    """An experiment's progress argument as a callable or None: a caller's callable told
    the whole run's count (WholeRun), True the command line's lines on stderr (RunLines,
    a RunLines given as it is), None or False nothing."""
    check_progress(progress)
    if progress is None or progress is False:
        return None
    if telling(progress):
        return progress if isinstance(progress, RunLines) else RunLines(unit=unit)
    return WholeRun(progress)


@contextmanager
def lines_ended(count):
    """The run ``count`` (counted's) tells: its late line (RunLines) is told again no
    more once the run ends, also by an error or Ctrl+C (no line after a traceback)."""
    try:
        yield count
    finally:
        if isinstance(count, RunLines):
            count.end()


class ModelLines(RunLines):
    """compare's lines, each model's forwards told by their layers, as report tells
    them ("model 2 of 5, forward 1 of 3, layer 3 of 4, 30 % done, about 20 s left"):
    a 3,000-word text's models were 4-12 s apart untold."""

    def __init__(self, stream=None, **options):
        super().__init__(stream, unit="model", **options)

    layers: int | None = None       # each forward's blocks: its Stage's ``part``

    def stage(self, text: str) -> None:
        with self.lock:                         # (retold reads it on its thread)
            super().stage(text)
            self.layers = getattr(text, "part", None)

    def line(self) -> str:
        run, layers = self.clock, self.layers
        if run.count < 1 or not run.total or not layers or run.total % layers:
            return super().line()
        where = ("" if run.done >= run.total else
                 f", forward {run.done // layers + 1} of {run.total // layers}, "
                 f"layer {run.done % layers + 1} of {layers}")
        return f"{self.unit} {run.index} of {run.count}{where}{self.how_far()}"

    def late_line(self, seconds: float) -> str:
        """"model 1 of 2, forward 1 of 3, layer 3 of 4, … (2 s since layer 3 began)":
        its line names the block running."""
        run, layers = self.clock, self.layers
        if run.count < 1 or not run.total or not layers or run.total % layers:
            return super().late_line(seconds)
        return f"{self.line()} ({duration_text(seconds)} since {self.running()})"

    def running(self) -> str:
        """"layer 3 began, its attention maps kept to head 2 of 4": the block running,
        and its maps while they are kept (models.reached.running; its feed-forward is
        not told: the time is the block's)."""
        from ..models import reached
        layer, now = self.clock.done % self.layers + 1, reached.latest()
        if reached.running(now, layer, self.layers) != reached.MAPS or not now.within:
            return f"layer {layer} began"
        return "layer {} began, its attention maps kept to head {} of {}".format(
            layer, *now.within)


def stages(say, progress, count=None) -> Callable[[str], None] | None:
    """An experiment's ``say``: itself when given; with ``progress`` True (or the
    command line's RunLines) its stages are told on stderr too; a WholeRun or RunLines
    ``count`` is told them as well."""
    said = say if say is not None or not telling(progress) else StepPrinter()
    if not isinstance(count, (WholeRun, RunLines)):
        return said

    def told(text: str) -> None:
        count.stage(text)
        if said is not None:
            said(text)
    return told


def training_line(p) -> str:
    """One step of a training run (models.training's progress record) in a line."""
    return (f"step {p.step} of {p.steps}, loss {p.loss:.3f}, "
            f"{p.tokens_per_second / 1000:.1f}k tokens/s, "
            f"about {duration_text(p.seconds_left)} left")
