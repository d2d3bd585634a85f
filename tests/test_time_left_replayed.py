"""The time left of the long runs, replayed on step timings recorded on this machine
(tests/data/timings-*.json, runtime.time_left): told within 1.5 × the truth from the
end of the first stage's first step on, the bar never moving back. A user's run at load 4-10
saw the lab told 354 s at its start (631 s real) and press2022 "about 2 s left" with
6 s to go: the steps were counted alike and the pace was the mean of the whole run."""
import json
from pathlib import Path

import pytest

from posviz.analysis.experiments.stage import Stage
from posviz.runtime.run_lines import RunLines
from posviz.runtime.time_left import LATE, RunClock

DATA = Path(__file__).parent / "data"
SLACK_S = 2.0                 # told in whole seconds, counted down between steps


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def replayed(name: str, each_second: bool = True):
    """(told, truth, fraction) at each step of the recorded run and, between steps,
    each second (as the window's tab reads it), from the first stage's first step on."""
    events = json.loads((DATA / f"timings-{name}.json").read_text())
    end = events[-1][0]
    clock = FakeClock()
    run = RunClock(clock)
    seen, started = [], False
    for event in events[:-1]:
        while each_second and started and clock.t + 1 < event[0]:
            clock.t += 1
            seen.append((run.run_left(), end - clock.t, run.fraction()))
        clock.t = event[0]
        if event[1] == "stage":
            _, _, text, number, stages, work, steps, kinds = event
            run.stage(Stage(text, number, stages, work or None, steps or None,
                            kinds or None))
        else:
            run.step(event[2], event[3])
            started = started or event[2] > 0
        if started:
            seen.append((run.run_left(), end - clock.t, run.fraction()))
    return seen


def test_the_lab_s_recorded_time_left_is_mostly_within_1_5x_and_always_within_2x():
    """The lab recorded at load 8-12 (1,078 s; its methods took 89-194 s as others'
    work came and went): after its first 30 s, 9 in 10 readings within 1.5 × the truth
    and all but 2 % within 2 ×. (Its first seconds extrapolate a few forwards of the
    shortest length over 18 minutes: 0.6-2 ×.)"""
    events = json.loads((DATA / "timings-extension.json").read_text())
    seen = [(told, truth) for told, truth, _ in replayed("extension")
            if truth < events[-1][0] - 30]

    def within(factor):
        return sum(told not in (None, LATE) and truth / factor - SLACK_S <= told <=
                   truth * factor + SLACK_S for told, truth in seen) / len(seen)
    assert within(1.5) >= 0.88 and within(2.0) >= 0.97, (within(1.5), within(2.0))


def test_a_lasting_change_of_load_moves_the_estimate_toward_the_new_pace():
    """60 steps of 1 s, then the machine slows to 3 s a step (or, the other way, from 3
    s to 1 s): 30 steps on, the time left of the 110 to go leans to the new pace more
    than the run's mean does, in both directions."""
    for before, after in ((1.0, 3.0), (3.0, 1.0)):
        clock = FakeClock()
        run = RunClock(clock)
        run.stage(Stage("stage 1 of 2", 1, 2))
        for done in range(1, 91):
            clock.t += before if done <= 60 else after
            run.step(done, 100)
        mean = (60 * before + 30 * after) / 90
        told = run.run_left()
        truth = 10 * after + 100 * after
        assert abs(told - truth) < abs(110 * mean - truth), (before, after, told, truth)


def test_the_time_left_of_a_recorded_run_is_within_1_5x_of_the_truth():
    seen = replayed("press2022")
    assert len(seen) > 50
    wrong = [(round(told, 1) if told not in (None, LATE) else told, round(truth, 1))
             for told, truth, _ in seen
             if told is None or told == LATE
             or not (truth / 1.5 - SLACK_S <= told <= truth * 1.5 + SLACK_S)]
    assert not wrong, wrong[:20]


@pytest.mark.parametrize("name", ["press2022", "extension"])
def test_the_bar_of_a_recorded_run_never_moves_back(name):
    shares = [share for *_, share in replayed(name)]
    assert all(b >= a for a, b in zip(shares, shares[1:]))
    assert shares[-1] == pytest.approx(1.0, abs=0.02)


def test_the_command_line_tells_a_recorded_run_each_1_5_s_with_the_whole_run_s_share():
    """press2022's lines: the run's share by work and its time left, one at most 1.5 s
    after the last where steps come that often."""
    events = json.loads((DATA / "timings-press2022.json").read_text())
    clock, lines = FakeClock(), []
    told = RunLines(unit="step", clock=clock)
    told.stage = lambda text, stage=told.stage: stage(text)

    class Stream:
        def write(self, text):
            if text.strip():
                lines.append((clock.t, text.strip()))

        def flush(self):
            pass
    told.stream = Stream()
    for event in events[:-1]:
        clock.t = event[0]
        if event[1] == "stage":
            _, _, text, number, stages, work, steps, kinds = event
            told.stage(Stage(text, number, stages, work or None, steps or None, kinds or None))
        else:
            told(event[2], event[3])
    steps = [e[0] for e in events if e[1] == "step"]
    gaps = [b - a for a, b in zip(steps, steps[1:])]
    times = [t for t, _ in lines]
    assert max(b - a for a, b in zip(times, times[1:])) <= 1.5 + max(gaps)
    assert "(stage 3 of 3), " in lines[-2][1] and "% done, about" in lines[-2][1]
    assert lines[-1][1].startswith("posviz: step 40 of 40 (stage 3 of 3), 100 % done")


def test_a_step_longer_than_the_time_to_the_tick_is_told_before_it():
    """Steps of 1.2 s (press2022's 512-token forwards at load 11): a line at each, not
    every other one 2.4-2.7 s apart."""
    clock, lines = FakeClock(), []
    told = RunLines(unit="step", clock=clock)
    told.stream = type("S", (), {"write": lambda self, t: t.strip() and lines.append(
        clock.t), "flush": lambda self: None})()
    told.stage(Stage("length 1 of 1", 1, 1))
    for done in range(1, 11):
        clock.t += 1.2
        told(done, 10)
    assert max(b - a for a, b in zip(lines, lines[1:])) <= 2.0, lines


@pytest.mark.parametrize("costs", [(1.0, 1.0, 1.0), (1.0, 1.55, 2.55), (1.0, 1.6, 4.2)],
                         ids=["flat", "recorded here", "steep"])
def test_press2022_s_time_left_holds_whatever_a_longer_window_costs(monkeypatch, costs):
    """A token at 128, 256 and 512 tokens cost 1 : 1 : 1 (benchmarks/README.md, load
    11), 1 : 1.55 : 2.55 (tests/data/timings-press2022.json) or, steeper still,
    1 : 1.6 : 4.2: staged by length, the run's time left in its second half was
    0.69-0.97 × the truth (1.18-1.59 × where flat). Each forward takes its tokens' seconds
    on a made-up clock: from the end of the first stage on, the time left is within
    1.3 × the truth, in the run's second half within 1.1 ×."""
    from posviz.analysis.experiments import trained
    from posviz.analysis.experiments.stage import batches
    from posviz.models.training import train
    from posviz.runtime.stage_times import NoTimes
    clock = FakeClock()
    run = RunClock(clock, NoTimes())
    per_token = dict(zip((128, 256, 512), costs))

    def perplexity(forwards, ids, n, count, start_id=None):
        for _ in range(batches(count // n)):
            clock.t += 1e-3 * per_token[n] * 8 * n
            forwards.tally.tick()
        return 50.0
    monkeypatch.setattr(train, "perplexity", perplexity)
    seen = []

    def counted(done, total):
        run.step(done, total)
        if run.index > 1:
            seen.append((clock.t, run.run_left(0.0)))
    trained.press2022(say=lambda stage: run.stage(stage) if isinstance(stage, Stage)
                      else None, progress=counted)
    end = clock.t
    ratios = [(told / (end - t), t) for t, told in seen if end - t > 1]
    assert len(ratios) > 100
    assert all(1 / 1.3 <= ratio <= 1.3 for ratio, _ in ratios), ratios[::20]
    late = [ratio for ratio, t in ratios if t > end / 2]
    assert 1 / 1.1 <= min(late) and max(late) <= 1.1, (min(late), max(late))
