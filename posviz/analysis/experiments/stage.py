"""A stage of a long run, told as it starts: its words, its place among the run's
stages and the work of each, so a listener can estimate the time left of the whole run
from the work done (the window's Experiments tab does; a terminal prints the words)."""
from __future__ import annotations


class Stage(str):
    """The words of a stage ("held-out perplexity ... at 128, 256 and 512 tokens
    (checkpoint 4 of 6)"), a str to every listener, with its place: stage ``number``
    (from 1) of ``stages`` (not str's own ``index`` and ``count``). ``work``: each
    stage's work, in any one unit (the tokens it runs: benchmarks/README.md), None
    when the stages are alike;
    ``steps``: each of this stage's counted steps' work, None when alike; ``kinds``:
    each stage's kind ("forwards", "fits"), whose pace a listener measures apart, None
    when all are of one; ``part``: this stage's counted steps come in parts of this
    many (a compared model's forwards, of its layers each), None when not in parts;
    ``own_left``: its words tell a time left of their own (a model load's conversion,
    pretrained.load_told), which the run's pace knows nothing of: its seconds where
    known (a float), else True; False: none."""

    number: int
    stages: int
    work: tuple[float, ...] | None
    steps: tuple[float, ...] | None
    kinds: tuple[str, ...] | None
    part: int | None
    own_left: bool | float

    def __new__(cls, text: str, number: int, stages: int, work=None, steps=None,
                kinds=None, part=None, own_left: bool | float = False) -> "Stage":
        stage = super().__new__(cls, text)
        stage.number, stage.stages = number, stages
        stage.work = None if work is None else tuple(map(float, work))
        stage.steps = None if steps is None else tuple(map(float, steps))
        stage.kinds = None if kinds is None else tuple(kinds)
        stage.part, stage.own_left = part, own_left
        return stage

    def retold(self, text: str, own_left: bool | float | None = None) -> "Stage":
        """The same stage of the same run in other words (``own_left``: as they are
        when None)."""
        return Stage(text, self.number, self.stages, self.work, self.steps, self.kinds,
                     self.part, self.own_left if own_left is None else own_left)



class Staged:
    """``say`` told the words of a run's parts (a probe's forwards, then its fits) as
    the Stages of the whole run, numbered as they come, each of ``work`` and ``kinds``."""

    def __init__(self, say, work, kinds=None):
        self.say, self.work, self.kinds, self.number = say, tuple(work), kinds, 0

    def __call__(self, text: str) -> None:
        self.number += 1
        if self.say is not None:
            self.say(Stage(text, self.number, len(self.work), self.work, kinds=self.kinds))


def forward_work(tokens: int, length: int, width: int) -> float:
    """The work of ``tokens`` run through the built-in model in windows of ``length``:
    a token costs its width's matrices and its attention over the window, ``length +
    4 × width``. Measured on the shipped RoPE checkpoint (width 64), one thread: a
    length's step of the lab took 1.6 / 2.5 / 6.5 / 18.3 s at 128 / 256 / 512 / 1,024
    (1 : 1.6 : 4.1 : 11.6; declared so, 1 : 1.8 : 4.0 : 11.1; by tokens alone,
    1 : 1.3 : 2.0 : 3.4), press2022's perplexity 1 : 1.2 : 2.3 at 128 / 256 / 512
    (declared 1 : 1.3 : 2.0; by tokens 1 : 1 : 1)."""
    return float(tokens) * (length + 4 * width)


def tell(listener, *args) -> None:
    """Tell a run's ``say`` or ``progress`` ``args``, when its caller gave one."""
    if listener is not None:
        listener(*args)


class Tally:
    """A stage's steps counted as they end, ``progress(done, total)`` each (never past
    ``total``); ``to(done)`` sets the count at a part's planned end, so a plan that
    missed a forward comes right at the next part."""

    def __init__(self, progress, total: int):
        self.progress, self.total, self.done = progress, total, 0
        tell(progress, 0, total)

    def tick(self) -> None:
        self.to(self.done + 1)

    def to(self, done: int) -> None:
        done = min(done, self.total)
        if done != self.done:
            self.done = done
            tell(self.progress, done, self.total)


class Forwards:
    """A model whose every forward (a batch of windows, a window's maps) first asks
    ``should_stop`` (Cancel and quit are answered within a forward, not a length: 15-60 s
    apart on a loaded machine) and then ticks ``tally``: a 512-token length's step, one
    checkpoint's perplexity, was 5-9 s without a word; a batch of it is under a second."""

    def __init__(self, model, should_stop=None, tally: Tally | None = None):
        self.model, self.should_stop, self.tally = model, should_stop, tally

    def _asked(self) -> None:
        if self.should_stop is not None and self.should_stop():
            from ...errors import Cancelled
            raise Cancelled()

    def _ran(self, result):
        if self.tally is not None:
            self.tally.tick()
        return result

    def hidden(self, *args, **kwargs):
        self._asked()
        return self._ran(self.model.hidden(*args, **kwargs))

    def run(self, *args, **kwargs):
        self._asked()
        return self._ran(self.model.run(*args, **kwargs))

    def __getattr__(self, name):
        return getattr(self.model, name)


def batches(items: int, batch: int = 8) -> int:
    """The forwards of ``items`` windows run ``batch`` at a time."""
    return -(-items // batch)

