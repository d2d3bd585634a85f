"""A run's progress, whole and one: a callable's ``done / total`` never falls and ends
at 1 for every experiment (a probe's bar filled to 54 of 54, then fell to 55 of 59);
``progress=True`` in Python tells the command line's lines (the paper check said
nothing its first 2.5 s, the comparison only "model 3 of 3"); a comparison tells each
model's layers (a 3,000-word text's models were 4-12 s apart untold); a long run's
stages weigh as this machine's last run of the same check took them."""
from __future__ import annotations

import re

import pytest

import posviz
from posviz.analysis.experiments.stage import Stage
from posviz.runtime.stage_times import NoTimes, StageTimes
from posviz.runtime.time_left import RunClock


class FakeClock:
    def __init__(self, step: float = 0.0):
        self.t, self.step = 0.0, step

    def __call__(self) -> float:
        self.t += self.step           # each reading a step on: a slow forward each
        return self.t


def whole(call) -> list[tuple[int, int]]:
    told = []
    call(lambda done, total: told.append((done, total)))
    return told


def assert_whole(told):
    assert told, "told nothing"
    shares = [done / total for done, total in told]
    assert all(a <= b + 1e-12 for a, b in zip(shares, shares[1:])), told
    assert told[-1][0] == told[-1][1], told


@pytest.mark.parametrize("name", ["chi2023", "rope-decay", "alibi-slopes", "sinha2022",
                                  "haviv2022"])
def test_every_paper_check_s_callable_only_grows_and_ends_whole(name):
    assert_whole(whole(lambda cb: posviz.paper(name, weights="random", progress=cb)))


@pytest.mark.parametrize("call", [
    lambda cb: posviz.probe(pe="none", mask="causal", features="quadratic", progress=cb),
    lambda cb: posviz.probe(["a b c d", "e f g h", "i j k l"], layers=1, folds=2,
                            progress=cb),
    lambda cb: posviz.sweep("the cat sat on the mat", count=5, layers=1, progress=cb),
    lambda cb: posviz.compare_encodings("the cat sat on the mat", encodings="none,rope,t5",
                                        layers=2, progress=cb),
], ids=["probe-quadratic", "probe", "sweep", "compare"])
def test_every_experiment_s_callable_only_grows_and_ends_whole(call):
    """The probe's stages (its texts run, then its fits) are counted from the first
    count: (1, 108) … (54, 108), then (55, 59) … (59, 59), never 54 of 54 then 55 of 59."""
    told = whole(call)
    assert_whole(told)
    assert all(done < total for done, total in told[:-1]), told   # never full before the end


def test_a_comparison_counts_its_models_layers_from_the_start():
    told = whole(lambda cb: posviz.compare_encodings(
        "the cat sat on the mat", encodings="none,rope,t5", layers=2, progress=cb))
    assert {total for _, total in told} == {3 * 3 * 2}      # 3 models, 3 forwards, 2 layers
    assert len(told) >= 3 * 3 * 2 - 3


def test_a_model_without_a_noise_floor_tells_its_two_forwards():
    """Sinusoidal and learned encodings run 2 forwards (no floor's: Engine.forwards),
    but each model was counted as 3: "forward 2 of 3" then a jump to the end."""
    from posviz.api.steps import ModelLines
    lines = ModelLines(clock=FakeClock(step=0.2), times=NoTimes(), tick=0.0)
    printed = []
    lines.stream = type("S", (), {"write": lambda self, t: t.strip() and printed.append(
        t.strip()), "flush": lambda self: None})()
    posviz.compare_encodings("the cat sat on the mat", encodings="sinusoidal,rope",
                             layers=2, progress=lines)
    told = [re.search(r"model (\d) of 2, forward (\d) of (\d), layer (\d) of 2", line)
            for line in printed]
    seen = {match.groups() for match in told if match}
    assert {(m, f, of) for m, f, of, _ in seen} == {
        ("1", "1", "2"), ("1", "2", "2"), ("2", "1", "3"), ("2", "2", "3"),
        ("2", "3", "3")}, printed


def lines_of(capsys, call) -> list[str]:
    call()
    return [line for line in capsys.readouterr().err.splitlines()
            if line.startswith("posviz: ")]


def test_python_s_progress_true_says_what_the_command_line_says(capsys):
    from posviz.cli import main
    python = lines_of(capsys, lambda: posviz.paper("alibi-slopes", progress=True))
    assert python[0] == "posviz: checking alibi-slopes on random weights", python
    command = lines_of(capsys, lambda: main(["paper", "alibi-slopes", "--progress",
                                             "--json"]))
    assert python[:2] == command[:2] and python[-1] == command[-1], (python, command)
    text = "the cat sat on the mat"
    python = lines_of(capsys, lambda: posviz.compare_encodings(
        text, encodings="none,rope,alibi", layers=1, progress=True))
    command = lines_of(capsys, lambda: main(["compare", "--pe", "none,rope,alibi",
                                             "--layers", "1", "--text", text,
                                             "--progress", "--json"]))
    assert python[0] == command[0] == "posviz: running 3 models"
    assert python[1].split(",")[:3] == command[1].split(",")[:3] and python[1].startswith(
        "posviz: model 1 of 3, forward 2 of 3, layer 1 of 1"), (python, command)
    assert python[-1] == command[-1] == "posviz: model 3 of 3, 100 % done"


def test_a_long_comparison_tells_each_model_s_layers_before_two_seconds_pass(capsys):
    """Each block 0.4 s on the clock (a 3,000-word text's): a line per layer or so,
    never 2 s apart, each saying its model, forward and layer."""
    from posviz.api.steps import ModelLines
    clock = FakeClock(step=0.2)
    lines = ModelLines(clock=clock, times=NoTimes())
    printed = []
    lines.stream = type("S", (), {"write": lambda self, t: t.strip() and printed.append(
        (clock.t, t.strip())), "flush": lambda self: None})()
    posviz.compare_encodings(" ".join(["word"] * 40), encodings="none,rope,alibi,t5",
                             layers=4, progress=lines)
    times = [t for t, _ in printed]
    assert len(printed) >= 4 * 3, printed                     # several lines a model
    assert max(b - a for a, b in zip(times, times[1:])) <= 2.0 + 0.2 * 2, printed
    assert re.search(r"model 2 of 4, forward \d of 3, layer \d of 4, \d+ % done, about "
                     r"\d+ s left$", "\n".join(t for _, t in printed), re.M), printed


def run_stages(clock, times, seconds_each, steps=4):
    """A run of len(seconds_each) stages declared alike, each of ``steps`` steps taking
    its seconds; the run's time left read after the first stage's second step."""
    run = RunClock(clock, times)
    read = None
    for number, seconds in enumerate(seconds_each, start=1):
        run.stage(Stage(f"length {number} of {len(seconds_each)}", number,
                        len(seconds_each), [1.0] * len(seconds_each)))
        for done in range(1, steps + 1):
            clock.t += seconds / steps
            run.step(done, steps)
            if number == 1 and done == 2:
                read = run.run_left()
    return read


def test_a_run_s_stages_weigh_as_this_machine_s_last_run_took_them(tmp_path):
    """Declared alike, its stages took 2, 4 and 14 s here (press2022's lengths: 1 : 1.6
    : 4.2 where 1 : 1.3 : 2.0 was declared): the first run tells the declared shares
    (about 5 s left of 19 after 1 s), the next one the last run's (about 19 s)."""
    clock, times = FakeClock(), StageTimes(tmp_path / "stage-times.json")
    first = run_stages(clock, times, [2.0, 4.0, 14.0])
    assert first == pytest.approx(5.0, abs=0.1)                 # 1 s a stage's half
    second = run_stages(clock, times, [2.0, 4.0, 14.0])
    assert second == pytest.approx(19.0, abs=1.0)
    slower = run_stages(clock, times, [4.0, 8.0, 28.0])      # twice as slow: it yields
    assert slower == pytest.approx(38.0, rel=0.25)


def test_stage_times_unreadable_or_of_another_run_are_not_used(tmp_path):
    path = tmp_path / "stage-times.json"
    path.write_text("not json")
    clock = FakeClock()
    assert run_stages(clock, StageTimes(path), [2.0, 4.0, 14.0]) == pytest.approx(5.0,
                                                                                   abs=0.1)
    other = StageTimes(path)           # now kept; a run of 4 stages is another run
    assert run_stages(clock, other, [2.0, 4.0, 14.0, 1.0]) == pytest.approx(7.0, abs=0.1)


def test_no_times_keeps_nothing_and_a_failed_write_leaves_no_temporary(tmp_path,
                                                                        monkeypatch):
    """Tests wrote their runs to /nonexistent/stage-times (made, as root) and read back
    earlier runs; a write that failed at its rename left "stage-times.json.PID.tmp"."""
    clock = FakeClock()
    assert run_stages(clock, NoTimes(), [2.0, 4.0, 14.0]) == pytest.approx(5.0, abs=0.1)
    assert run_stages(clock, NoTimes(), [2.0, 4.0, 14.0]) == pytest.approx(5.0, abs=0.1)
    path = tmp_path / "times" / "stage-times.json"
    import os

    def refused(*args):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", refused)
    run_stages(clock, StageTimes(path), [2.0, 4.0, 14.0])
    assert list(path.parent.iterdir()) == []


def test_steps_alike_are_not_weighed_by_other_stages_first_steps():
    """sinha2022's models: each stage's first step carried a warm-up or a load, and
    their seconds weighed SmolLM2's first text as 61 % of its stage ("about 1 s left"
    with 15 s to go, at 98 %). Steps declared alike stay alike."""
    clock = FakeClock()
    run = RunClock(clock)
    for number in range(1, 6):
        run.stage(Stage(f"model {number} of 5", number, 5, [1.0] * 5))
        for done, seconds in enumerate([3.0] + [0.1] * 8 if number < 5 else [1.0] * 9, 1):
            clock.t += seconds
            run.step(done, 9)
            if number == 5 and done == 1:
                # 8 s are left (the earlier stages' pace, 3.8 s a stage, pulls it down)
                assert run.run_left() >= 8 / 3, run.run_left()
                assert run.fraction() == pytest.approx(4 / 5 + 1 / 45)
