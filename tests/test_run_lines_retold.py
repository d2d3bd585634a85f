"""A count that takes long is told again: between two counts over 2 s apart (an MLP
probe's layer, a long text's layer) the line said nothing until the next count."""
from __future__ import annotations

import io
import threading

import pytest

from posviz.runtime.run_lines import RETELL_S, RunLines
from posviz.runtime.stage_times import NoTimes


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def retelling_threads() -> list:
    return [t for t in threading.enumerate() if t.name == "posviz-lines" and t.is_alive()]


def lines_at(clock, retell=RETELL_S):
    stream = io.StringIO()
    return stream, RunLines(stream, clock=clock, times=NoTimes(), retell=retell)


def told(stream) -> list[str]:
    return stream.getvalue().splitlines()


def test_a_late_count_s_line_is_told_again_each_second_until_the_run_ends():
    clock = Clock()
    stream, lines = lines_at(clock)
    for done in range(3):
        clock.t = float(done)
        lines(done, 5)
    before = told(stream)
    clock.t = 3.4                       # 1.4 s since the last count: not yet
    lines.retold()
    assert told(stream) == before
    clock.t = 4.5                       # 2.5 s: told again, how long it has run, and
    lines.retold()                      # the 2 steps after it at 1 s each still left
    again = told(stream)[len(before):]
    assert again == ["posviz: step 2 of 5, about 2 s left (step 3: 2 s so far)"], again
    clock.t = 5.0                       # half a second after that line: not again
    lines.retold()
    assert len(told(stream)) == len(before) + 1
    clock.t = 5.6
    lines.retold()
    assert told(stream)[-1] == "posviz: step 2 of 5, about 2 s left (step 3: 4 s so far)"
    clock.t = 6.0
    lines(5, 5)
    assert told(stream)[-1] == "posviz: step 5 of 5"
    assert retelling_threads() == []    # ended with the run, joined
    clock.t = 30.0
    assert not lines.retold() and told(stream)[-1] == "posviz: step 5 of 5"


def test_a_run_that_raises_leaves_no_thread_telling_it():
    clock = Clock()
    stream, lines = lines_at(clock, retell=0.01)

    def run():
        lines(0, 5)
        lines(1, 5)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run()
    for thread in retelling_threads():
        thread.join(timeout=30)         # (a liveness wait, not a timing)
    assert retelling_threads() == []
    clock.t = 60.0
    count = len(told(stream))
    assert lines.retelling is not None and not lines.retelling.is_alive()
    assert len(told(stream)) == count


def test_lines_are_told_again_on_a_terminal_only_by_default():
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert RunLines(Terminal()).retell == RETELL_S
    assert RunLines(io.StringIO()).retell == 0
