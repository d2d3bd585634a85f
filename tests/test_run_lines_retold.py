"""A count that takes long is told again: between two counts over 2 s apart (an MLP
probe's layer, a long text's layer) the line said nothing until the next count."""
from __future__ import annotations

import io
import threading

import pytest

from posviz.runtime.run_lines import PIPE_RETELL, RETELL_S, TICK_S, RunLines
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
    assert again == ["posviz: step 2 of 5 done, step 3 running for 2 s, about 2 s left"], again
    clock.t = 5.0                       # half a second after that line: not again
    lines.retold()
    assert len(told(stream)) == len(before) + 1
    clock.t = 5.6
    lines.retold()
    assert told(stream)[-1] == "posviz: step 2 of 5 done, step 3 running for 4 s, about 2 s left"
    clock.t = 6.0
    lines(5, 5)
    assert told(stream)[-1] == "posviz: step 5 of 5"
    assert retelling_threads() == []    # ended with the run, joined
    clock.t = 30.0
    assert not lines.retold() and told(stream)[-1] == "posviz: step 5 of 5"


def test_a_run_that_raises_leaves_no_thread_telling_it():
    """The API's runs end their lines in a ``with`` (api.steps.lines_ended): a run
    stopped by Ctrl+C tells no line after its traceback."""
    from posviz.api.steps import lines_ended
    clock = Clock()
    stream, lines = lines_at(clock, retell=0.01)
    with pytest.raises(KeyboardInterrupt), lines_ended(lines):
        lines(0, 5)
        lines(1, 5)
        assert retelling_threads() != []
        raise KeyboardInterrupt
    assert retelling_threads() == []    # joined as the run ended
    assert lines.retelling is None


def test_lines_are_told_again_each_second_on_a_terminal_and_each_tick_on_a_pipe():
    """--progress on a pipe (a log) and progress=True in a notebook had 4-10 s gaps:
    told again there too, at the 2 s rule; never on a test's own clock."""
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    assert RunLines(Terminal()).retell == RETELL_S
    # half the tick: at three quarters, its thread given no turn for up to a second
    # (load 7-10), a pipe's lines came 2.0-2.8 s apart
    assert RunLines(io.StringIO()).retell == TICK_S * PIPE_RETELL <= 1.0
    assert RunLines(io.StringIO(), tick=3.0).retell == 1.5
    assert RunLines(io.StringIO(), clock=Clock()).retell == 0


def test_a_pipe_s_late_line_comes_a_tick_after_the_last_line():
    clock = Clock()
    stream, lines = lines_at(clock, retell=TICK_S)
    for done in range(3):
        clock.t = float(done)
        lines(done, 5)
    before = told(stream)
    clock.t = 3.9                       # 1.9 s since the last line: not yet on a pipe
    assert not lines.retold() and told(stream) == before
    clock.t = 4.0
    assert lines.retold()
    assert told(stream)[-1] == "posviz: step 2 of 5 done, step 3 running for 2 s, about 2 s left"
    clock.t = 5.5                       # 1.5 s after it: not again
    assert not lines.retold()
    lines.end()
    from pathlib import Path            # the README says it as the code does
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert (f"told again, each second on a terminal and every {TICK_S * PIPE_RETELL:g} s on a "
            f"log, a pipe or from Python" in readme and RETELL_S == 1)
    assert '"run 1 of 3 done, run 2 running for 4 s"' in readme


def test_a_run_s_first_step_is_told_running_before_its_first_count():
    """A sweep tells its count (0, total) before its first run: "run 1 of 3 running
    for 2 s", not "run 0 of 3 (2 s since run 1 began)"."""
    clock = Clock()
    stream = io.StringIO()
    lines = RunLines(stream, unit="run", clock=clock, times=NoTimes(), retell=TICK_S)
    lines(0, 3)
    assert told(stream) == []
    clock.t = 2.0
    assert lines.retold()
    assert told(stream) == ["posviz: run 1 of 3 running for 2 s"]
    lines.end()


def test_a_late_block_is_told_again_on_a_pipe_a_tick_after_the_last_line(monkeypatch):
    """A report's or export's late block on --progress's pipe: told again once ``tick``
    seconds pass without a line (a terminal's: 1.5 s), not each second."""
    import time

    from posviz.api.steps import StepPrinter, layer_ticks
    from posviz.models import reached
    from posviz.runtime.run_lines import retell_every

    assert retell_every(io.StringIO(), TICK_S, time.monotonic) == TICK_S * PIPE_RETELL
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream)
    with layer_ticks(None, say, "running the original order"):
        say.late.retell = TICK_S * PIPE_RETELL    # as during() sets it on a pipe
        reached.reach(0, 4)
        before = told(stream)
        clock.t = 1.4                       # not yet
        assert not say.retold() and told(stream) == before
        clock.t = 1.6                       # before the tick: a line at the tick was
        # asked a quarter second late on a busy machine (2.0-2.8 s untold)
        assert say.retold()
        assert told(stream)[-1] == ("posviz: running the original order: layer 1 of 4 "
                                    "(2 s since layer 1 began)")


def test_a_comparison_declares_its_blocks_so_the_models_done_weigh_them():
    """Each model's first forward keeps its maps (3,000 words: 21 s of a model's 34):
    its blocks weighed alike, the t5 model's time left was told 39 s of 95."""
    from posviz.analysis.experiments.encodings import compare_encodings
    from posviz.analysis.experiments.stage import Stage
    from posviz.models.config import ModelConfig

    stages = []
    compare_encodings(ModelConfig(layers=2, heads=2, d_model=16), ["none", "rope"],
                      "random", "the cat sat on the mat", progress=lambda *a: None,
                      say=stages.append)
    assert [type(s) for s in stages] == [Stage, Stage]
    assert [s.steps for s in stages] == [(1.0,) * 6] * 2     # 3 forwards of 2 blocks


def test_a_model_s_time_left_follows_the_blocks_of_the_model_before():
    """A slow first forward (its maps kept) in every model: told the blocks alike, the
    second model's time left after its first block follows the first model's blocks."""
    from posviz.analysis.experiments.stage import Stage
    from posviz.runtime.time_left import RunClock

    clock = Clock()
    run = RunClock(clock, NoTimes())
    took = [5.0, 5.0, 1.0, 1.0, 1.0, 1.0]            # each block's seconds, both models
    for number in (1, 2):
        run.stage(Stage(f"model {number}", number, 2, (1.0, 1.0), steps=(1.0,) * 6,
                        part=2))
        run.step(0, 6)
        for done, seconds in enumerate(took[:6 if number == 1 else 1], 1):
            clock.t += seconds
            run.step(done, 6)
    truth = sum(took[1:])
    assert abs(run.run_left() - truth) <= 0.2 * truth, (run.run_left(), truth)


def test_a_late_block_s_line_says_how_far_its_maps_are_kept(monkeypatch):
    from posviz.analysis.experiments.stage import Stage
    from posviz.api.steps import ModelLines
    from posviz.models import reached

    clock, stream = Clock(), io.StringIO()
    lines = ModelLines(stream, clock=clock, times=NoTimes(), retell=RETELL_S)
    lines.stage(Stage("model 1 of 2 (none)", 1, 2, (1.0, 1.0), part=4))
    for done in range(3):
        clock.t = float(done)
        lines(done, 12)
    keeping = reached.Reached(3, 4, 1, at=2.0, began=0.0, part=reached.MAPS, within=(2, 4))
    monkeypatch.setattr(reached, "_latest", keeping)
    clock.t = 4.0
    lines.retold()
    assert told(stream)[-1].startswith("posviz: model 1 of 2, forward 1 of 3, layer 3 of 4")
    assert told(stream)[-1].endswith(
        "(2 s since layer 3 began, its attention maps kept to head 2 of 4)")
    after = reached.Reached(3, 4, 1, at=2.0, began=0.0, part=reached.FEED_FORWARD)
    monkeypatch.setattr(reached, "_latest", after)  # (the last block's lasts past its end)
    clock.t = 5.5
    lines.retold()
    assert told(stream)[-1].endswith(" (4 s since layer 3 began)")
    lines.end()                         # (model 2's stage never comes: ended as the API's
    assert retelling_threads() == []    # lines_ended ends a run)


def test_a_comparison_tells_torch_s_import_before_its_models():
    """compare said "running 2 models", then imported torch untold (3,000 words: 6.4 s
    before the first count)."""
    import re
    import subprocess
    import sys

    told = subprocess.run([sys.executable, "-m", "posviz", "compare", "--pe", "none,rope",
                           "--text", "a b c d", "--layers", "1", "--progress", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert told.returncode == 0, told.stderr
    assert re.match(r"posviz: running 2 models\nposviz: importing torch\n", told.stderr), \
        told.stderr


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_report_s_late_block_is_told_again_until_its_forward_ends(monkeypatch):
    """A report's forward on 3,000 words with the T5 bias was 7.7 s in its first block
    without a line."""
    from posviz.api.steps import StepPrinter, layer_ticks
    from posviz.models import reached

    clock, stream = Clock(), Terminal()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream)
    step = "running the original order"
    with layer_ticks(None, say, step):
        reached.reach(0, 4)
        before = told(stream)
        clock.t = 1.4                   # not late yet
        say.retold()
        assert told(stream) == before
        clock.t = 2.0
        say.retold()
        assert told(stream)[-1] == f"posviz: {step}: layer 1 of 4 (2 s since layer 1 began)"
        clock.t = 2.5
        reached.reach(0, 4, part=reached.MAPS)
        clock.t = 5.0
        say.retold()
        assert told(stream)[-1].endswith(" (2 s since layer 1's attention maps began)")
        assert retelling_threads() != []
        clock.t = 10.0                  # the next forward said, its first block not yet
        say("running the chosen order")
        clock.t = 11.6
        say.retold()
        assert told(stream)[-1] == "posviz: running the chosen order (2 s)"
    assert retelling_threads() == []    # the forward's end: no thread left


def test_the_work_after_the_last_block_s_feed_forward_is_told_without_a_time_left(
        monkeypatch):
    """After a forward's last feed-forward (0.05-0.1 s) came 1.5 s of work before the
    next forward, told as "layer 4 of 4, about 4 s left (1 s since layer 4's
    feed-forward began)", then "about 7 s left (2 s …)": no mark ends that part, so no
    block's time left is told of it; then nothing was (the next forward's T5 bias, 3,000
    words: 2.2 s untold): it is told as the work after the forward, with its seconds.
    A block's feed-forward before the last is told as late."""
    from posviz.api.steps import StepPrinter, layer_ticks
    from posviz.models import reached

    clock, stream = Clock(), Terminal()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream)
    with layer_ticks(None, say, "running the original order"):
        for layer in range(4):
            clock.t = float(layer)
            reached.reach(layer, 4)
            clock.t += 0.5
            reached.reach(layer, 4, part=reached.FEED_FORWARD)
            if layer == 2:              # a feed-forward before the last: told when late
                clock.t += 2.5
                assert say.retold()
                assert told(stream)[-1].endswith(" since layer 3's feed-forward began)")
        for late in (3.0, 5.0, 8.0):    # the work after the forward
            clock.t = 3.5 + late
            assert say.retold()
            assert told(stream)[-1] == (f"posviz: running the original order, after its "
                                        f"forward's last layer ({late:.0f} s since its "
                                        f"feed-forward began)")


class Lines(io.StringIO):
    """A stream that keeps each write, and asks ``held`` at each one."""

    def __init__(self, held=None):
        super().__init__()
        self.writes, self.held = [], held

    def write(self, text: str) -> int:
        self.writes.append(text)
        if self.held is not None:
            self.held()
        return super().write(text)


def held_elsewhere(lock) -> bool:
    """Is ``lock`` held, as another thread (the retelling one) finds it?"""
    free = []

    def take() -> None:
        free.append(lock.acquire(blocking=False))
        if free[0]:
            lock.release()
    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return not free[0]


def test_a_step_s_line_is_told_whole_and_under_the_lock_the_retelling_takes():
    """A step told on the forward's thread and a line told again by the retelling
    thread share the printer's state, and print wrote a line and its newline apart."""
    from posviz.api.steps import StepPrinter

    found = []
    stream = Lines()
    say = StepPrinter(stream)
    stream.held = lambda: found.append(held_elsewhere(say.lock))
    say("loading weights")
    say("ready")
    assert stream.writes == ["posviz: loading weights\n", "posviz: ready\n"]
    assert found == [True, True]


def test_a_model_s_blocks_are_set_under_the_lock_its_lines_are_told_again_under():
    from posviz.api.steps import ModelLines

    lines = ModelLines(io.StringIO(), clock=Clock(), times=NoTimes(), retell=0)

    class Stage(str):
        @property
        def part(self) -> int:
            found.append(held_elsewhere(lines.lock))
            return 4
    found = []
    lines.stage(Stage("model 1 of 2 (none)"))
    assert found == [True] and lines.layers == 4


def test_a_run_whose_later_stages_are_untimed_tells_its_running_stage_s_time_left():
    """A probe's forwards, its fits untimed (no run kept on this machine): "22 % done"
    for 12 s with no time left; the running stage's is told, as the window tells it."""
    from posviz.analysis.experiments.stage import Stage

    clock = Clock()
    stream, lines = lines_at(clock, retell=0)
    kinds = ("forwards", "fits")
    lines.stage(Stage("running the texts", 1, 2, (1.0, 1.0), kinds=kinds))
    for done in range(4):
        clock.t = 2.0 * done
        lines(done, 5)
    assert told(stream)[-1] == ("posviz: step 3 of 5 (stage 1 of 2), 30 % done, "
                                "about 4 s left of stage 1"), told(stream)


def test_a_printer_that_starts_late_counts_the_silence_from_any_line(monkeypatch):
    """A sweep's lines start at its first count, 1-2 s after its reference forward's
    last line: its first late line came 2.2 s after that one. The silence is counted
    from the last line any printer told (run_lines.line_told). A fake clock, set as
    the printers' own (time.monotonic in run_lines)."""
    from types import SimpleNamespace

    from posviz.runtime import run_lines
    clock = Clock()
    monkeypatch.setattr(run_lines, "time", SimpleNamespace(monotonic=clock))
    monkeypatch.setattr(run_lines, "_LAST_LINE", [0.0])
    stream = io.StringIO()
    lines = RunLines(stream, clock=clock, times=NoTimes(), retell=1.5)
    clock.t = 10.0
    run_lines.line_told()                       # another printer's line
    clock.t = 11.6
    lines(0, 3)                                 # its first count: just now
    lines.end()                                 # (no thread: retold asked here)
    assert lines.retold(), told(stream)         # 1.6 s since any line, 0 s since its count
    assert told(stream) == ["posviz: step 1 of 3 running for 0 s"]


def test_a_count_just_told_by_the_silence_alone_is_its_own_line(monkeypatch):
    """On a pipe a line is due 1.5 s after any printer's; a count 0.4 s before it then
    said "run 5 of 30 done, run 6 running for 0 s", read as a run stalled: it is the
    count's own line, with its time left."""
    from types import SimpleNamespace

    from posviz.runtime import run_lines
    clock = Clock()
    monkeypatch.setattr(run_lines, "time", SimpleNamespace(monotonic=clock))
    monkeypatch.setattr(run_lines, "_LAST_LINE", [0.0])
    stream = io.StringIO()
    lines = RunLines(stream, unit="run", clock=clock, times=NoTimes(), retell=1.5)
    for done in range(1, 6):                    # a run each 0.3 s
        clock.t = 10.0 + 0.3 * done
        lines(done, 30)
    lines.end()
    before = told(stream)
    assert before == ["posviz: run 1 of 30"]    # told at the first count, at 10.3 s
    clock.t = 11.9                              # 1.6 s since that line, 0.4 s since run 5
    assert lines.retold()
    left = 25 * 0.3 - 0.4                       # 25 runs at the pace, less run 6's 0.4 s
    assert told(stream)[len(before):] == [f"posviz: run 5 of 30, about {left:.0f} s left"]


def test_a_late_block_s_time_left_counts_down_while_its_block_runs_at_the_pace(
        monkeypatch):
    """A late block told again read the forward as stopped where the block began, so its
    time left grew with each second it ran (the built-in model's last forward on 5,000
    words: "about 2 s left", then "about 7 s left (1 s since layer 2 began)"). A fake
    clock: 2 s a block of 4."""
    import re

    from posviz.api.steps import StepPrinter, layer_ticks
    from posviz.models import reached

    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream)
    with layer_ticks(None, say, "running the chosen order"):
        say.late.retell = TICK_S * PIPE_RETELL
        for layer in range(4):
            reached.reach(layer, 4)
            for _ in range(3):              # within the block, as it runs at the pace
                clock.t += 2.0 / 3
                if layer:
                    say.retold()
    lines = told(stream)
    lefts = [int(found.group(1)) for found in map(re.compile(r"about (\d+) s left").search,
                                                   lines) if found]
    assert any("since layer" in line for line in lines), lines
    assert len(lefts) > 3 and all(b <= a for a, b in zip(lefts, lefts[1:])), lines


def test_a_run_s_first_runs_are_timed_by_their_forward_s_pace(monkeypatch):
    """A sweep's "run 1 of 4 running for 1 s … 7 s" told no time left until a second
    run was counted: before that, the forward on its way since the last count, at its
    blocks' pace, and each run after it at that forward's time; a forward of before
    the count tells nothing."""
    from posviz.models import reached
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = io.StringIO()
    lines = RunLines(stream, unit="run", clock=clock, times=NoTimes(), retell=TICK_S)
    reached.reach(0, 4)
    clock.t = 1.0
    reached.reach(2, 4)                     # a forward of before the run
    lines(0, 4)
    clock.t = 2.0
    assert lines.retold()
    assert told(stream) == ["posviz: run 1 of 4 running for 1 s"]
    reached.reach(0, 4)                     # run 1's forward: 2 s a block
    clock.t = 4.0
    reached.reach(1, 4)
    clock.t = 6.0
    assert lines.retold()                   # 4 s of it left, and 3 runs of 8 s
    assert told(stream)[-1] == "posviz: run 1 of 4 running for 5 s, about 28 s left"
    lines.end()


def test_a_count_of_layers_is_not_timed_as_runs_of_a_forward_each(monkeypatch):
    """compare counts its forwards' layers (a probe its steps): its first layer is not
    timed as if each layer to come were a forward of its own."""
    from posviz.api.steps import ModelLines
    from posviz.models import reached
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    lines = ModelLines(io.StringIO(), clock=clock, times=NoTimes(), retell=TICK_S)
    lines(0, 12)
    reached.reach(0, 4)
    clock.t = 2.0
    reached.reach(1, 4)
    assert lines.forwards_left() is None
    assert "left" not in lines.how_far()
    lines.end()
