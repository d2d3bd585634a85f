"""Progress from Python and on a terminal: ``progress=True`` tells every experiment's
runs on stderr as the command line does (runtime.run_lines.RunLines, the one rule of
both: the runs done at the first count, then with the time left every 2 s), and a sweep
of a million orders starts counting at once instead of drawing all its orders first."""
from __future__ import annotations

import re

import numpy as np
import pytest

import posviz
from posviz.api.steps import duration_text
from posviz.runtime.run_lines import RunLines


def Counter(unit, clock):
    """A run of one stage told on stderr (RunLines), no stage times kept."""
    from posviz.runtime.stage_times import NoTimes
    return RunLines(unit=unit, clock=clock, times=NoTimes())

TEXT = "the cat sat on the mat"


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_run_s_lines_come_soon_then_every_tick_with_the_time_left(capsys):
    """The first count at once, without a time left from it alone (the warm-up: it said
    "about 9 min left" of a 16 s check), then before 2 s pass and the last."""
    clock = Clock()
    told = Counter(unit="run", clock=clock)
    told(1, 1000)                                  # at once: no pace but the warm-up
    clock.now += 0.5
    told(2, 1000)                                  # within the 2 s tick: nothing
    clock.now += 0.5
    told(3, 1000)
    clock.now += 0.25
    told(4, 1000)
    clock.now += 0.25
    told(5, 1000)
    clock.now += 0.6
    told(6, 1000)                           # the next, 0.6 s on, would pass the tick
    clock.now += 0.1
    told(1000, 1000)                               # the last, always
    lines = capsys.readouterr().err.splitlines()
    # 5 runs in 2.1 s after the first, 994 to go, the later runs weighing more: 7 min
    assert lines == ["posviz: run 1 of 1,000",
                     "posviz: run 6 of 1,000, about 7 min left",
                     "posviz: run 1,000 of 1,000"]
    told(1, 3)                                     # a new stage: timed anew
    assert capsys.readouterr().err == "posviz: run 1 of 3\n"


@pytest.mark.parametrize("seconds, text", [(42.4, "42 s"), (754, "13 min"),
                                           (7200, "2.0 h")])
def test_a_time_left_reads_as_a_person_says_it(seconds, text):
    assert duration_text(seconds) == text


@pytest.mark.parametrize("call, unit", [
    (lambda: posviz.sweep(TEXT, count=3, layers=1, progress=True), "run"),
    (lambda: posviz.load(layers=1).sweep(TEXT, count=3, progress=True), "run"),
    (lambda: posviz.probe(["a b c", "d e f", "g h i", "j k l"], layers=1, folds=2,
                          progress=True), "step"),
    (lambda: posviz.compare_encodings(TEXT, encodings="none,rope", layers=1,
                                      progress=True), "model"),
])
def test_progress_true_tells_every_experiment_on_stderr(call, unit, capsys):
    call()
    err = capsys.readouterr().err
    assert re.search(rf"^posviz: {unit} (\d+) of \1(?!\d|,\d)", err, re.M), err


def test_a_million_orders_are_counted_before_they_are_all_drawn(monkeypatch):
    """The first run is told after a chunk of orders is drawn, not after all of them."""
    from posviz.analysis.experiments import runs

    drawn = [0]
    placed = runs._placed

    def counted(*args):
        drawn[0] += 1
        return placed(*args)
    monkeypatch.setattr(runs, "_placed", counted)

    class Told(Exception):
        pass

    def progress(done, total):
        raise Told(drawn[0])
    with pytest.raises(Told) as told:
        posviz.sweep(" ".join(f"w{i}" for i in range(30)), count=10**6, layers=1,
                     progress=progress)
    assert told.value.args[0] <= 1000


def test_drawn_orders_are_the_orders_make_orders_draws():
    from posviz.analysis.experiments.runs import DrawnOrders, make_orders
    from posviz.models.backend import TokenSequence
    words = tuple("abcdefg")
    seq = TokenSequence(words, words, (True,) + (False,) * 6)
    for kind in ("random", "prefix"):
        drawn = DrawnOrders(kind, seq, 40, [3, 1])
        made = make_orders(kind, seq, 40, np.random.default_rng([3, 1]))
        assert len(drawn) == 40
        assert [o.tolist() for o in drawn] == [o.tolist() for o in made]
        assert [o.tolist() for o in drawn] == [o.tolist() for o in made]  # each pass anew


def test_the_readme_says_the_counts_rule_as_the_code_has_it():
    from pathlib import Path

    from posviz.api.steps import FIRST_S, TICK_S
    from posviz.models.limits.guard import Orders
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    kept = Orders("random", 1, 10).kept(layers=4, n=10)
    assert f"a sweep keeps about {kept} bytes of each run of 10 tokens" in readme
    assert (f"runs done at its first run, then with the time left every {TICK_S:g} s"
            in readme and FIRST_S == 0)        # the first line has no time left
    assert "`--count 100` of 4 movable tokens, which have 24 orders, is refused" in readme
    with pytest.raises(posviz.errors.Refused, match="more orders than exist"):
        posviz.sweep("a b c d", count=100)


def test_a_progress_callable_counts_the_whole_run_not_each_stage_anew(monkeypatch):
    """A paper check counting each of its 3 stages anew (2 steps each) tells a caller's
    callable 1..6 of 6, not 1, 2, 1, 2, 1, 2 of 2."""
    from posviz.analysis.experiments import papers
    from posviz.analysis.experiments.stage import Stage

    class Checked(Exception):
        pass

    def check(name, weights=None, progress=None, say=None, load_left=None):
        for k in (1, 2, 3):
            say(Stage(f"length {k} of 3", k, 3))
            for done in (1, 2):
                progress(done, 2)
        raise Checked()
    monkeypatch.setattr(papers, "check_paper", check)
    told = []
    with pytest.raises(Checked):
        posviz.paper("press2022", progress=lambda done, total: told.append((done, total)))
    assert told == [(k, 6) for k in range(1, 7)]


def test_a_probe_s_runs_then_fits_are_counted_on_from_each_other():
    told = []
    posviz.probe(["a b c", "d e f", "g h i", "j k l"], layers=1, folds=2,
                 progress=lambda done, total: told.append((done, total)))
    dones = [done for done, _ in told]
    assert dones == sorted(dones) and len(set(dones)) == len(dones), told
    assert told[-1][0] == told[-1][1]


def test_a_model_loaded_with_progress_tells_its_runs(capsys):
    """``load(..., progress=True)`` is the default of the model's runs, as the README
    says (compare was silent for 98 s on a long text with SmolLM2); given, a run's own
    progress wins."""
    m = posviz.load(layers=1, progress=True)
    capsys.readouterr()
    m.compare(TEXT)
    assert "posviz: running the original order" in capsys.readouterr().err
    m.sweep(TEXT, count=3)
    assert "posviz: run 3 of 3" in capsys.readouterr().err
    m.compare("a b c d", progress=False)
    assert capsys.readouterr().err == ""
    posviz.load(layers=1).compare(TEXT)
    assert capsys.readouterr().err == ""


def test_a_comparison_tells_a_callable_done_and_total_as_an_experiment_does():
    """One contract for a progress callable: compare called it with one string."""
    told = []
    m = posviz.load(layers=2, pe="rope")
    m.compare(TEXT, progress=lambda done, total: told.append((done, total)))
    # the original order's forward, its noise floor's (RoPE shifts) and the chosen one's
    assert told == [(1, 2), (2, 2), (3, 4), (4, 4), (5, 6), (6, 6)]
    told.clear()
    m.compare(TEXT, [1, 0, 2, 3, 4, 5], progress=lambda done, total: told.append((done, total)))
    assert told == [(1, 2), (2, 2)]                 # the original order's run is kept


def test_a_staged_run_s_share_told_only_grows():
    """Haviv 2022's stages count 120 forwards, then 5 fits, and so on: its (done, total),
    the stages to come counted as the running one, went 0 → 78 → 15 → 91 → 34 % (a
    user's run). Its stages declare their work: the share told only grows."""
    from posviz.analysis.experiments.stage import Stage
    from posviz.api.steps import WholeRun
    told = []
    whole = WholeRun(lambda done, total: told.append((done, total)))
    work, kinds = (120.0, 5.0) * 3, ("forwards", "fits") * 3
    for number, steps in enumerate((120, 5) * 3, start=1):
        whole.stage(Stage(f"stage {number}", number, 6, work, kinds=kinds))
        for done in range(1, steps + 1):
            whole(done, steps)
    shares = [done / total for done, total in told]
    assert all(a <= b + 1e-12 for a, b in zip(shares, shares[1:])), shares
    assert told[-1] == (375, 375) and all(done <= total for done, total in told)


def test_progress_true_tells_a_paper_check_as_the_command_line_does(capsys):
    """From Python a paper check told each stage's own count ("step 5 of 5"), where the
    command line tells the whole run's ("step 500 of 500")."""
    from posviz import cli
    posviz.paper("alibi-slopes", progress=True)
    python = re.findall(r"^posviz: step [\d,]+ of ([\d,]+)", capsys.readouterr().err, re.M)
    assert cli.main(["paper", "alibi-slopes", "--progress", "--json"]) == 0
    command = re.findall(r"^posviz: step [\d,]+ of ([\d,]+)", capsys.readouterr().err, re.M)
    assert python and python[-1] == command[-1]


def test_a_step_told_twice_in_a_row_is_one_line():
    """A GGUF file's header, read for the tokenizer and then for the config, was told
    twice in a row: a repeated step reads as a restart (a user's run)."""
    import io

    from posviz.api.steps import StepPrinter
    stream = io.StringIO()
    say = StepPrinter(stream)
    for step in ("reading the header", "reading the header", "loading", "reading the header"):
        say(step)
    assert stream.getvalue().splitlines() == [
        "posviz: reading the header", "posviz: loading", "posviz: reading the header"]


@pytest.mark.parametrize("every", [0.05, 0.3, 0.7])
def test_a_run_s_lines_come_before_a_tick_passes(capsys, every):
    """A sweep's lines came 2.01-2.06 s apart (the README says every 2 s): a line was
    told at the first count after the tick, its counts some 50 ms apart. Now it is
    told at the last count before the tick would pass."""
    clock = Clock()
    told = Counter(unit="run", clock=clock)
    times = []
    for done in range(1, 400):
        told(done, 10_000)
        if capsys.readouterr().err:
            times.append(clock.now)
        clock.now += every
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) > 5 and max(gaps) <= 2.0 + 1e-9, gaps
    assert min(gaps) >= 2.0 - max(1.5 * every, every + 0.25) - every - 1e-9, gaps


def test_a_load_s_tensor_counts_come_before_a_tick_passes(monkeypatch):
    """GGUF matching's lines came 2.00-2.01 s apart, one 2.85 s: told now at the last
    count before the tick would pass, at the larger of the last two counts' pace."""
    import io

    from posviz.api.steps import StepPrinter
    from posviz.models import reached
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    times = []

    class Stream(io.StringIO):
        def write(self, text):
            if text.strip():
                times.append(clock.now)
            return len(text)
    say = StepPrinter(Stream(), tick=2.0)
    for done in range(1, 398):
        say("matching the GGUF file's tensors to the model's modules", done, 397)
        clock.now += 0.07
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert len(gaps) > 5 and max(gaps) <= 2.0 + 1e-9, gaps


def test_a_sweep_tells_its_original_order_s_run_before_its_first_count():
    """A 5,000-word sweep said nothing for 12.4 s after "building the model": its
    original order's forward (the Engine keeps it for the orders) is told as report
    tells it, then the runs are counted from (0, total): the first told running."""
    import io

    from posviz.runtime.stage_times import NoTimes
    stream = io.StringIO()
    lines = RunLines(stream, unit="run", clock=Clock(), times=NoTimes(), retell=0)
    posviz.load(layers=1).sweep(TEXT, count=3, progress=lines)
    told = stream.getvalue().splitlines()
    assert told[0] == "posviz: running the original order", told
    assert told[-1] == "posviz: run 3 of 3", told
    assert lines.clock.total == 3
