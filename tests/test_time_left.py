"""The time left of a run told in stages: each stage's from its steps, the whole run's
from the stages done; the long experiments tell their stages' places, and the window's
Experiments tab says both times as a faked slow run goes on."""
import re
import threading

import pytest

from posviz.analysis.experiments.stage import Stage
from posviz.runtime.time_left import RunClock


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_the_run_s_time_left_is_the_stage_s_and_the_stages_after_at_the_pace_of_those_done():
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("length 1 of 3", 1, 3))
    assert run.run_left() is None and run.stage_left() is None     # nothing done yet
    clock.t += 2
    run.step(1, 4)                      # 2 s a step: 6 s left here, 8 s a stage after
    assert run.stage_left() == pytest.approx(6) and run.run_left() == pytest.approx(22)
    clock.t += 1                        # between steps the time left runs down
    assert run.stage_left() == pytest.approx(5) and run.run_left() == pytest.approx(21)
    clock.t += 5
    run.stage(Stage("length 2 of 3", 2, 3))   # the first took 8 s
    assert run.fraction() == pytest.approx(1 / 3)
    assert run.run_left() == pytest.approx(8 + 8)
    clock.t += 3
    run.step(1, 2)                      # 3 s a step here (6 s a stage): the pace of all
    # done, 11 s for 1.5 stages, weighed toward the latest: between 9 and 11 s left
    assert 9 < run.run_left() < 11
    assert run.fraction() == pytest.approx((1 + 0.5) / 3)
    clock.t += 3
    run.stage(Stage("length 3 of 3", 3, 3))   # the stages took 8 and 6 s: 6-7 s the last,
    clock.t += 2                              # the later weighing more
    assert 4 < run.run_left() < 5


def test_unequal_stages_are_weighed_by_their_work():
    """A run whose stages take 1, 2, 4 and 8 units of work (a length doubled each
    stage), at 3 s a unit: after its first stage the time left is within 1.5 × the
    truth (counted alike, the stages after the first would take 3 s each: 9 s, not 42)."""
    clock, work = FakeClock(), (1, 2, 4, 8)
    run = RunClock(clock)
    for k, units in enumerate(work, 1):
        run.stage(Stage(f"length {k} of 4", k, 4, work=work))
        if k == 2:
            truth = 3 * sum(work[1:])
            assert truth / 1.5 <= run.run_left() <= truth * 1.5, run.run_left()
        clock.t += 3 * units
    truth = 3 * 8
    clock.t -= truth                               # back to the last stage's start
    assert truth / 1.5 <= run.run_left() <= truth * 1.5


def test_the_steps_of_a_stage_are_weighed_by_their_work():
    """A stage of lengths 1, 2, 4, 8 (its steps' work 1, 4, 16, 64: the n² of
    attention), 1 s a unit: after two steps its time left is the last two's 80 s."""
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("method 1 of 2", 1, 2, steps=(1, 4, 16, 64)))
    clock.t += 1
    run.step(1, 4)
    clock.t += 4
    run.step(2, 4)
    assert run.stage_left() == pytest.approx(80)
    assert run.run_left() == pytest.approx(80 + 85)     # the next method alike


def test_work_left_is_never_told_as_no_time_left():
    """The last step overruns the pace of those before it: the time left does not sit
    at "about 0 s" (the lab said so for 70 s) but says the step is slower; a step that
    overruns before others says at least the time of those after it."""
    from posviz.runtime.time_left import LATE, left_words
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("stage 1 of 2", 1, 2))
    for done in (1, 2, 3):
        clock.t += 1
        run.step(done, 4)
    clock.t += 30                                  # its last step takes far longer
    assert run.stage_left() == LATE
    assert left_words(run.stage_left()) == ", this step is taking longer than the others"
    assert run.run_left() == pytest.approx(4)      # the next stage, at 4 s a stage
    run.stage(Stage("stage 2 of 2", 2, 2))
    clock.t += 1
    run.step(1, 4)
    clock.t += 200
    assert run.run_left() == LATE or run.run_left() >= 1
    for seconds in (run.stage_left(), run.run_left()):
        assert "about 0 s" not in left_words(seconds)


def test_a_run_of_one_stage_has_only_the_stage_s_time_left():
    clock = FakeClock()
    run = RunClock(clock)
    run.stage("fitting the probe, one layer at a time")
    clock.t += 4
    run.step(2, 10)
    assert run.stage_left() == pytest.approx(16) and run.run_left() is None
    assert run.fraction() == pytest.approx(0.2)


def test_order_use_tells_each_checkpoint_as_a_stage_of_the_run(monkeypatch):
    from posviz.analysis.experiments import order_use
    from posviz.models.training.order_use import OrderUse
    def measured(checkpoint, windows, progress=None):
        for done in (1, 2, 3):
            progress(done, 3)
        return OrderUse(windows, 128, True, 40.0,
                        {"all_but_last": 60.0, "all_but_last_two": 50.0})
    monkeypatch.setattr(order_use, "of_checkpoint", measured)
    said, counted = [], []
    result = order_use.zoo_order_use(windows=3, say=said.append,
                                     progress=lambda *done: counted.append(done))
    count = len(result.uses)
    assert count > 1 and [(s.number, s.stages) for s in said] == [
        (k, count) for k in range(1, count + 1)]
    assert said[1].startswith(f"checkpoint 2 of {count}, ")
    assert counted == [(1, 3), (2, 3), (3, 3)] * count


def test_order_use_counts_its_passes_as_the_steps_of_a_checkpoint_s_stage():
    """The original order, then all but the last shuffled, then all but the last two:
    told as steps, the bar moves within a checkpoint and its time left runs down; told
    nothing, Order use's bar stood still for each checkpoint (a user's run: 24.8 s in all,
    "about 2 s left in all" at 10 s), the first checkpoint's time unknown."""
    import numpy as np
    import torch
    from posviz.models.training.order_use import order_use
    counted = []
    order_use(lambda x: torch.zeros(len(x), 50), np.arange(2000) % 50, 16, 0, 40,
              progress=lambda *done: counted.append(done))
    assert counted == [(1, 3), (2, 3), (3, 3)]


def test_press2022_tells_each_checkpoint_as_a_stage_of_the_run(monkeypatch):
    from posviz.analysis.experiments import trained
    from posviz.models.training import train
    monkeypatch.setattr(train, "perplexity", lambda *args, **kw: 50.0)
    said = []
    trained.press2022(say=said.append)
    assert said[0] == "reading the held-out text and loading the 6 checkpoints"
    said = said[1:]                                   # then the checkpoints' Stages
    assert [(s.number, s.stages) for s in said] == [(k, 6) for k in range(1, 7)]
    assert said[1] == "held-out perplexity of the sinusoidal checkpoint at 128, 256 and " \
                      "512 tokens (checkpoint 2 of 6)"
    assert said[2] == "held-out perplexity of the learned checkpoint at 128 tokens " \
                      "(checkpoint 3 of 6)"


def test_press2022_and_the_lab_declare_their_stages_work(monkeypatch):
    """press2022's checkpoints weigh the tokens they run, each forward by its length (a
    checkpoint refused at a length runs none), the lab's lengths within each method
    more as they grow."""
    from posviz.analysis.experiments import trained
    from posviz.models.training import train
    from posviz.runtime.experiments import _extend
    monkeypatch.setattr(train, "perplexity", lambda *args, **kw: 50.0)
    said, counted = [], []
    trained.press2022(say=said.append, progress=lambda *c: counted.append(c))
    work = said[1].work
    # a step is a forward of 8 windows: 32,768 tokens at 128 make 32, at 256 16, at
    # 512 8; learned is refused past 128
    assert [total for done, total in counted if done == total] == [56, 56, 32, 56, 56, 56]
    assert len(work) == 6 and work[2] < work[0] == work[1] == work[3], work
    steps = said[2].steps                # tokens x (length + 4 x width): longer costs more
    assert len(steps) == 56 and steps[0] < steps[32] < steps[48] and \
        sum(steps) == work[1]
    from posviz.analysis.experiments import extension
    told = []

    def extend(folder, factors, should_stop, progress, say):
        say(Stage("RoPE as trained: 4 lengths", 1, 8, steps=(1, 3, 9, 27)))
    monkeypatch.setattr(extension, "extend", extend)
    _extend((1, 2, 4, 8), None, None, told.append)
    assert told == ["method 1 of 8, RoPE as trained: 4 lengths"]
    assert (told[0].number, told[0].stages, told[0].steps) == (1, 8, (1, 3, 9, 27))


@pytest.mark.parametrize("steps", [0, 4], ids=["stages alone", "stages of steps"])
def test_the_experiments_tab_says_the_time_left_of_the_stage_and_of_the_whole_run(
        qtbot, monkeypatch, steps):
    """A faked slow run, as Order use (its checkpoints, stages without steps) and as
    press2022 (its lengths, each of steps): the status and the bar as it goes."""
    pytest.importorskip("PySide6")
    from posviz.analysis.experiments import order_use
    from posviz.gui.experiments import tab as experiments
    clock = FakeClock()
    monkeypatch.setattr(experiments, "RunClock", lambda **_: RunClock(clock))
    release = threading.Event()

    def slow(should_stop, say, progress=None):   # runs until the test has told its stages
        release.wait(30)                      # (cancelled by then: nothing is drawn)
    monkeypatch.setattr(order_use, "zoo_order_use", slow)
    tab = experiments.ExperimentsTab()
    qtbot.addWidget(tab)
    tab.show()
    told = []
    try:
        tab.what.setCurrentIndex(tab.what.findData("order"))
        tab.run()
        relay = tab._relay

        def stage(k: int) -> None:
            relay.said.emit(Stage(f"checkpoint {k} of 3, rope: 400 windows", k, 3))
            told.append((tab.status.text(), tab.progress.text()))
            for done in range(1, steps + 1):
                clock.t += 2.5
                relay.progressed.emit(done, steps)
                told.append((tab.status.text(), tab.progress.text()))
            clock.t += 10 - 2.5 * steps          # each stage takes 10 s
        stage(1)
        stage(2)
        relay.said.emit(Stage("checkpoint 3 of 3, rope: 400 windows", 3, 3))
        clock.t += 1                                # a second into the last stage
        tab._tell_progress()                         # as the ticking does
        told.append((tab.status.text(), tab.progress.text()))
        if steps:                                    # the last stage's own time is all
            relay.progressed.emit(1, steps)
            told.append((tab.status.text(), tab.progress.text()))
    finally:
        tab.cancel()
        release.set()
        tab.shutdown()
    first, then = told[0], told[steps + 1]
    # nothing measured yet: no number, but said so
    assert first == ("checkpoint 1 of 3, rope: 400 windows…; estimating the time left "
                     "in all", "0 %")
    assert then == ("checkpoint 2 of 3, rope: 400 windows…; about 20 s left in all",
                    "33 %")
    # the bar says what the words say: 21 s spent, about 9 s left in all (by work: 67 %)
    assert told[2 * steps + 2] == ("checkpoint 3 of 3, rope: 400 windows…; about 9 s "
                                   "left in all", "70 %")
    if steps:
        # the first stage not yet timed whole, nothing learned here: no number yet
        assert told[1] == ("checkpoint 1 of 3, rope: 400 windows: 1 of 4 done; estimating "
                           "the time left in all", "8 %")
        assert told[steps + 3] == ("checkpoint 2 of 3, rope: 400 windows: 2 of 4 done; "
                                   "about 15 s left in all", "50 %")
        assert told[-1] == ("checkpoint 3 of 3, rope: 400 windows: 1 of 4 done, about 7 s "
                            "left", "76 %")      # 21 s spent, 6.6 s left


def test_the_run_s_time_left_converges_when_steps_take_other_than_their_declared_work():
    """The lab's lengths declared the tokens they run (1 : 1.3 : 2 : 3.4) and took
    16, 41, 57 and 114 s (measured): after its first method the time left of the run,
    read each second as the tab does, is within 1.2 × the truth and never "longer than
    its pace so far" while 3 s or more are left (it swung 174 → 242 → 355 s on a run
    of 367 s, and said it was late for over a minute)."""
    from posviz.runtime.time_left import LATE
    clock = FakeClock()
    run = RunClock(clock)
    seconds, declared = (16, 41, 57, 114), (49664, 66560, 100352, 167936)
    left, seen = 8 * sum(seconds), []
    for k in range(1, 9):
        run.stage(Stage(f"method {k} of 8", k, 8, steps=declared))
        for done, took in enumerate(seconds, 1):
            for _ in range(took):
                clock.t, left = clock.t + 1, left - 1
                if k > 1 and left >= 3:
                    seen.append((run.run_left(), left))
            run.step(done, len(seconds))
    assert all(told != LATE and truth / 1.2 <= told <= 1.2 * truth
               for told, truth in seen if truth >= 10), seen
    assert LATE not in [told for told, _ in seen]


def test_no_time_left_is_told_without_a_measure_to_go_by():
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("method 1 of 3", 1, 3, steps=(1, 2)))
    for _ in range(3):
        clock.t += 50
        assert run.run_left() is None and run.stage_left() is None
    run.step(0, 2)                                   # counted, none done
    assert run.run_left() is None


def test_each_kind_of_stage_is_timed_at_its_own_measured_pace():
    """A probe's forwards, then its fits (kinds), twice: the second forwards and fits
    at the pace each kind took the first time, whatever the declared units; before a
    kind to come was measured, no number."""
    clock = FakeClock()
    run = RunClock(clock)
    work, kinds = (10, 1, 10, 1), ("forwards", "fits") * 2
    took = (20, 30, 20, 30)                       # the fits: 30 s a unit, not 2
    for k in range(1, 5):
        run.stage(Stage(f"stage {k} of 4", k, 4, work=work, kinds=kinds))
        if k == 1:
            clock.t += 10
            run.step(1, 2)                        # the forwards' pace, not the fits'
            assert run.stage_left() == pytest.approx(10) and run.run_left() is None
            clock.t -= 10
        if k == 3:
            assert run.run_left() == pytest.approx(50)
        clock.t += took[k - 1]


def test_steps_declaring_other_work_are_not_weighed_by_other_steps_seconds():
    """press2022's first length runs every checkpoint, the longer ones refuse the
    learned table's (its step declares no work): the longer lengths' steps are weighed
    by what they declare, not by the seconds the first length's steps took (replayed
    on a measured run, that left it 'longer than its pace so far' 31 s, now 11 s)."""
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("length 1 of 3", 1, 3, steps=(1, 1, 1)))
    for done in (1, 2, 3):
        clock.t += 10
        run.step(done, 3)
    run.stage(Stage("length 2 of 3", 2, 3, steps=(1, 0, 1)))
    clock.t += 10
    run.step(1, 3)
    run.step(2, 3)                                  # refused: no time
    assert run.stage_left() == pytest.approx(10, rel=0.3)   # 20-30 s a unit: 10-15 s


def test_a_superseded_run_tells_the_experiments_tab_nothing_more(qtbot, monkeypatch):
    """Run pressed again while Order use ran: the first run's steps ("1 of 3", "2 of 3")
    went on to the new run's bar and status until it reached its next checkpoint."""
    pytest.importorskip("PySide6")
    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.runtime import experiments
    stopped = [False]

    def run(job, should_stop, progress, say):
        say(Stage("checkpoint 3 of 6, learned: 400 windows", 3, 6))
        progress(1, 3)
        stopped[0] = True                        # Run again: this run is superseded
        say(Stage("checkpoint 4 of 6, rope: 400 windows", 4, 6))
        progress(2, 3)
        return None
    monkeypatch.setattr(experiments, "run_experiment", run)
    tab = ExperimentsTab()
    qtbot.addWidget(tab)
    said, counted = [], []
    tab._relay.said.connect(said.append)
    tab._relay.progressed.connect(lambda *done: counted.append(done))
    tab._run(None, lambda: stopped[0])
    assert [s.number for s in said] == [3] and counted == [(1, 3)]
    tab.shutdown()


LONG_STAGES = [  # each experiment's longest stage words, as a user saw them cut at 1024
    ("method 2 of 8, position interpolation (Chen et al. 2023): 4 lengths", 2, 8,
     ": 4 lengths"),
    ("method 5 of 8, DroPE: RoPE dropped after training, recalibrated without positions "
     "(Gelberg & Cetin 2026): 4 lengths", 5, 8, ": 4 lengths"),
    ("held-out perplexity of the 6 checkpoints at 256 tokens (length 2 of 3)", 2, 3,
     " (length 2 of 3)"),
    ("shifting every position id of the trained rope checkpoint, 9 texts (model 3 of 5)",
     3, 5, ", 9 texts (model 3 of 5)"),
    ("probing learned (control) (4 of 6, linear): running 120 texts through the model",
     7, 12, ""),
]


@pytest.mark.parametrize("words, number, stages, tail", LONG_STAGES)
def test_at_1024_pixels_the_stage_s_counts_stay_whole_and_the_bar_says_its_share(
        qtbot, window, words, number, stages, tail):
    """At 1024 × 700 the stage's words were cut at their end, losing their counts
    ("... (Chen et al. 2023): 4 lengt…", "... at 256 tokens (lengt…", "... rope
    checkpoint, 9 te…"), and the bar said "stage 4 of 5" 5-10 % full (it weighs work,
    its words counted stages): the words begin with the stage's place and flow over
    the two lines, whole, its counts too, before how far; the bar says the share of the
    work done, as full as it is."""
    from PySide6 import QtWidgets
    window.resize(1024, 700)                         # the real window, its model dock too
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    QtWidgets.QApplication.processEvents()
    clock = FakeClock()
    tab._clock = RunClock(clock)
    tab.cancel_button.setEnabled(True)
    tab.progress.show()
    work = [1.0] * (stages - 1) + [20.0]            # the last stage, most of the work
    for k in range(1, number + 1):
        tab._stage_started(Stage(words, k, stages, work))
        clock.t += 3
        tab._progressed(1, 4)
    QtWidgets.QApplication.processEvents()
    tab._stage_started(Stage(words, number, stages, work))   # told as it starts
    starting = " ".join(tab.status.shown_lines())
    # its counts whole, then the time left (on the second line if the stage, in fewer
    # words, holds the first)
    assert re.search(f"{re.escape(tail)}…;? about ", starting) or "…; about" in starting, \
        starting
    clock.t += 3
    tab._progressed(1, 4)
    first, second = tab.status.shown_lines()
    place = f"{number} of {stages}"
    assert first.startswith("method " + place if words.startswith("method") else
                            ("stage " + place if place not in words else words[:20]))
    # the words flow over both lines, cut (if at all) only before how far, whose counts
    # stay whole: at 1024 they were cut in the middle ("... at 128 t… (length 1 of 3)")
    assert "…" not in first, first
    shown = f"{first} {second}"
    assert "1 of 4 done; about " in second and second.endswith(" left in all"), second
    assert tail in shown or "…" in second, (shown, words)   # wider than two lines: cut
    tab.status.repaint()
    # the bar the share of the whole run as the words' time left "in all" tells it: a
    # quarter of a stage's unit of work each 3 s, 12 s a unit; 3 s a stage done and the
    # last step's (number + 1), a quarter of this stage told, 3/4 of it and the stages
    # after (1 unit each, the last 20) left
    spent = 3.0 * (number + 1)
    share = spent / (spent + 12.0 * (0.75 + (stages - number - 1) + 20.0))
    assert tab.progress.text() == f"{round(100 * share)} %" and \
        tab.progress.value() == round(1000 * share)
    tab.cancel_button.setEnabled(False)


def test_a_stage_s_counts_stay_whole_at_every_width_near_its_own(qtbot):
    """In the real window at 1024 the lab's line was as wide as the room, and Qt cut it
    ("... (Chen et al. 2023): 4 lengt…"): at every width near the line's, its counts
    end it whole."""
    from posviz.gui.experiments.progress_line import ProgressLine, elided
    line = ProgressLine()
    qtbot.addWidget(line)
    words = "method 2 of 8, position interpolation (Chen et al. 2023): 4 lengths"
    metrics = line.fontMetrics()
    width = metrics.horizontalAdvance(words)
    for room in range(width - 8, width + 9):
        assert elided(metrics, words, room).endswith(": 4 lengths"), room


def test_a_count_costs_the_same_at_the_millionth_step_as_at_the_first():
    """A window's sweep of 9 texts × 100,000 orders counts 900,000 steps, each told to
    the clock with the time left: a list of every step summed at each count froze the
    window (the GUI thread at 100 %, Cancel unanswered). 200,000 counts of a
    1,000,000-step run, with the share and the time left at each, in a subprocess
    bounded by a hang limit (a second or two here; the old clock took hours)."""
    import subprocess
    import sys
    probe = ("from posviz.runtime.time_left import RunClock\n"
             "t = [0.0]\n"
             "clock = RunClock(lambda: t[0])\n"
             "clock.stage('sweep')\n"
             "for done in range(1, 200_001):\n"
             "    t[0] += 0.001\n"
             "    clock.step(done, 1_000_000)\n"
             "    clock.fraction(); clock.stage_left()\n"
             "print(round(clock.stage_left()), round(clock._share(0, clock.done), 3))\n")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["800", "0.2"]   # 800,000 steps left at 1 ms each


def test_a_window_s_run_tells_its_counts_every_so_often_and_always_its_first_and_last():
    """The window's relay of a run's counts (a queued signal each): a sweep of 900,000
    runs sent one a run, and the GUI thread, busy with them, left Cancel unanswered."""
    from posviz.runtime.experiments import PROGRESS_S, every_so_often
    now = [0.0]
    sent = []
    told = every_so_often(lambda *count: sent.append(count), clock=lambda: now[0])
    for done in range(0, 10_001):
        told(done, 10_000)
        now[0] += PROGRESS_S / 100                 # 100 counts a tick
    assert sent[:2] == [(0, 10_000), (1, 10_000)] and sent[-1] == (10_000, 10_000)
    assert 95 <= len(sent) <= 110, len(sent)
    told(0, 0)                                     # a new stage: told at once
    assert sent[-1] == (0, 0)


def test_a_short_run_s_share_done_is_not_held_down_by_the_one_second_floor():
    """`compare --pe none,sinusoidal,rope --weights trained --progress` said "model 1
    of 3, 1 % done", then "model 2 of 3, 2 % done, about 1 s left" (by its work a third
    and more): the share came from a time left floored at 1 s. Three models alike, two
    steps of 0.05 s each: a third done after the first, half after the next step."""
    clock = FakeClock()
    run = RunClock(clock)
    run.stage(Stage("model 1 of 3", 1, 3))
    for done in (1, 2):
        clock.t += 0.05
        run.step(done, 2)
    assert run.share_done() == pytest.approx(1 / 3)
    assert run.run_left() == 1.0                        # the words keep their floor
    run.stage(Stage("model 2 of 3", 2, 3))
    clock.t += 0.05
    run.step(1, 2)
    assert run.share_done() == pytest.approx(1 / 2)
    assert run.run_left() == pytest.approx(1.0 + 0.1)   # 1 s of this, 0.1 s after


@pytest.mark.parametrize("text, kept", [
    ("held-out perplexity of the 6 checkpoints at 128 tokens (length 1 of 3): 44 of 192 "
     "done; about 38 s to 2 min left in all (an estimate)",
     "44 of 192 done; about 38 s to 2 min left in all (an estimate)"),
    ("stage 2 of 8: probe 1 of 4 (quadratic, causal): fitting the probe per layer, "
     "5 folds: 14 of 25 done; about 8 s left in all", "14 of 25 done; about 8 s left in all")])
def test_progress_lines_break_at_words_never_before_a_colon(qtbot, text, kept):
    """At 1024 pixels a line began ": 44 of 192 done" and another cut a word ("... per
    layer, 5 f…: 14 of 25 done"): at every width, no line starts with a joiner, and
    where words are cut the "…" follows a whole word."""
    from posviz.gui.experiments.progress_line import ProgressLine
    line = ProgressLine()
    qtbot.addWidget(line)
    line.say(text, kept)
    words = set(re.split(r"[\s,;:()]+", text))
    for width in range(200, 760, 3):
        line.resize(width, line.sizeHint().height())
        for shown in line.shown_lines():
            assert not shown.startswith((":", ";", ",")), (width, shown)
            for cut in re.findall(r"([^\s…]*)…", shown):      # "" : words left out
                assert not cut or cut.strip(",;:()") in words, (width, shown)
