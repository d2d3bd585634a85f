"""A GGUF file's first load tells its conversion's time left with each of its steps'
lines: SmolLM2's said "about 25-84 s" once, then 120 s of steps with their seconds so
far ("de-quantizing weights (39 s)") and no time left."""
from __future__ import annotations

import io
import re

from posviz.api.steps import StepPrinter
from posviz.models import reached
from posviz.runtime.conversion_left import STEPS
from posviz.models.hf.converted import CONVERTING, SAVING


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def left_of_the_conversion(line: str) -> float | None:
    found = re.search(r"about (\d+) s left of the conversion$", line)
    return float(found.group(1)) if found else None


def test_each_step_s_line_tells_the_conversion_s_time_left_at_the_pace_so_far(
        monkeypatch):
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream, steps=False)
    pace = 0.5                       # this machine: each step half the seconds measured
    seconds = [s for *_, s in STEPS]
    for number, (words, counted, _) in enumerate(STEPS[:-1]):
        say(f"{CONVERTING}x.gguf once: …" if number == 0 else words,
            *((0, 10) if counted else ()))
        clock.now += pace * seconds[number] / 2
        if counted:
            say(words, 5, 10)
        else:                        # told again (reached.Ticks): the same step
            said = f"{CONVERTING}x.gguf once" if number == 0 else words
            say(f"{said} ({pace * seconds[number] / 2:.0f} s)")
        if number == 1:              # only its first step timed (0.1 s of 1.3 in a
            # window whose torch was imported: "about 4 s left" with 53 s to go): the
            # steps left as declared
            line = stream.getvalue().splitlines()[-1]
            told = left_of_the_conversion(line)
            assert told == round(sum(seconds[1:]) - pace * seconds[1] / 2), line
        if number >= 2:              # a step timed past the first: the rest at its pace
            # (its line told again, "converting x.gguf once (1 s)", started the
            # conversion anew)
            line = stream.getvalue().splitlines()[-1]
            truth = pace * (seconds[number] / 2 + sum(seconds[number + 1:]))
            told = left_of_the_conversion(line)
            assert told is not None and abs(told - truth) <= 0.15 * truth, (line, truth)
        clock.now += pace * seconds[number] / 2
        if counted:
            say(words, 10, 10)
    say(f"{SAVING} (538 MB, about 5 s) into the cache")
    say(SAVING, 0, 538)
    clock.now += 8.0
    say(SAVING, 538, 538)
    say("loading tokenizer")
    last = stream.getvalue().splitlines()
    assert last[-2] == f"posviz: {SAVING}: 538 of 538 MB"        # saved: nothing left
    assert last[-1] == "posviz: loading tokenizer (from the saved copy)"


def to_the_saving(told, clock) -> None:
    """A conversion's steps before its saving told to ``told``, each a quarter of its
    plan on ``clock``."""
    for number, (words, counted, seconds) in enumerate(STEPS[:-1]):
        told(f"{CONVERTING}x.gguf once: …" if number == 0 else words,
             *((0, 10) if counted else ()))
        clock.now += 0.25 * seconds                 # each step a quarter of its plan
        if counted:
            told(words, 10, 10)


def test_a_counted_step_s_line_tells_one_time_left_never_less_than_its_own_pace(
        monkeypatch):
    """A conversion told "saving the converted copy: 67 of 538 MB, about 10 s left,
    about 5 s left of the conversion" (a user's run): one time a line, the
    conversion's, at least the rest of the step at its own pace (the disk-bound save
    was timed at the pace of the de-quantizing before it)."""
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream, steps=False)
    to_the_saving(say, clock)
    say(f"{SAVING} (538 MB, about 5 s) into the cache")
    say(SAVING, 0, 538)
    clock.now += 2.0
    say(SAVING, 67, 538)                         # 67 MB in 2 s: 14 s left at its pace
    line = stream.getvalue().splitlines()[-1]
    assert line.startswith(f"posviz: {SAVING}: 67 of 538 MB"), line
    assert len(re.findall(r" left", line)) == 1, line
    told = left_of_the_conversion(line)
    assert told is not None and told >= 2.0 * (538 - 67) / 67 - 0.5, line


def test_a_counted_step_s_own_pace_is_timed_from_its_count_s_start(monkeypatch):
    """The copy is written in one call (1-3 s) before its bytes are counted from 0: the
    window said "50 of 538 MB, about 14 s left of the conversion" 5 s before its end,
    the call's seconds taken as the first 50 MB's."""
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    say = StepPrinter(stream, steps=False)
    to_the_saving(say, clock)
    say(f"{SAVING} (538 MB, about 5 s) into the cache")
    clock.now += 3.0                             # save_pretrained, one call
    say(SAVING, 0, 538)                          # its count's clock starts
    clock.now += 1.0
    say(SAVING, 100, 538)                        # 100 MB in 1 s: 4.4 s left at its pace
    told = left_of_the_conversion(stream.getvalue().splitlines()[-1])
    assert told is not None and 3.5 <= told <= 6.0, stream.getvalue().splitlines()[-1]


def test_a_counted_step_s_own_pace_waits_for_a_second_of_counts():
    """Matching's first modules came 0.01-0.04 s apart: its own pace told 6, 12, 7 and
    10 s left in turn. The conversion's pace is told until the count has run 1 s."""
    from posviz.runtime.conversion_left import ConversionLeft
    from posviz.runtime.stage_times import NoTimes
    clock = Clock()
    left = ConversionLeft(clock, NoTimes())
    to_the_saving(left.told, clock)
    left.told(f"{SAVING} (538 MB, about 5 s) into the cache")
    left.told(SAVING, 0, 538)
    told = []
    for done, wait in ((1, 0.01), (2, 0.04), (3, 0.01)):
        clock.now += wait
        left.told(SAVING, done, 538)
        told.append(left.words())
    assert len(set(told)) == 1 and told[0], told
