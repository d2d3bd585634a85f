"""The time left of a run told in stages: each stage's from its steps, the whole run's
from the stages done; the long experiments tell their stages' places, and the window's
Experiments tab says both times as a faked slow run goes on."""
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
    assert run.durations == [8] and run.fraction() == pytest.approx(1 / 3)
    assert run.run_left() == pytest.approx(8 + 8)
    clock.t += 3
    run.step(1, 2)                      # 3 s a step here: 3 s left, then 8 s for the last
    assert run.run_left() == pytest.approx(3 + 8)
    assert run.fraction() == pytest.approx((1 + 0.5) / 3)
    clock.t += 3
    run.stage(Stage("length 3 of 3", 3, 3))   # the stages took 8 and 6 s: 7 s the last
    clock.t += 2
    assert run.run_left() == pytest.approx(5)


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
    monkeypatch.setattr(order_use, "of_checkpoint", lambda checkpoint, windows: OrderUse(
        windows, 128, True, 40.0, {"all_but_last": 60.0, "all_but_last_two": 50.0}))
    said = []
    result = order_use.zoo_order_use(windows=3, say=said.append)
    count = len(result.uses)
    assert count > 1 and [(s.number, s.stages) for s in said] == [
        (k, count) for k in range(1, count + 1)]
    assert said[1].startswith(f"checkpoint 2 of {count}, ")


def test_press2022_tells_each_length_as_a_stage_of_the_run(monkeypatch):
    from posviz.analysis.experiments import trained
    from posviz.models.training import train
    monkeypatch.setattr(train, "perplexity", lambda *args, **kw: 50.0)
    said = []
    trained.press2022(say=said.append)
    assert [(s.number, s.stages) for s in said] == [(1, 3), (2, 3), (3, 3)]
    assert said[2].endswith("(length 3 of 3)")


@pytest.mark.parametrize("steps", [0, 4], ids=["stages alone", "stages of steps"])
def test_the_experiments_tab_says_the_time_left_of_the_stage_and_of_the_whole_run(
        qtbot, monkeypatch, steps):
    """A faked slow run, as Order use (its checkpoints, stages without steps) and as
    press2022 (its lengths, each of steps): the status and the bar as it goes."""
    pytest.importorskip("PySide6")
    from posviz.analysis.experiments import order_use
    from posviz.gui.experiments import tab as experiments
    clock = FakeClock()
    monkeypatch.setattr(experiments, "RunClock", lambda: RunClock(clock))
    release = threading.Event()

    def slow(should_stop, say):               # runs until the test has told its stages
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
            told.append((tab.status.text(), tab.progress.format()))
            for done in range(1, steps + 1):
                clock.t += 2.5
                relay.progressed.emit(done, steps)
                told.append((tab.status.text(), tab.progress.format()))
            clock.t += 10 - 2.5 * steps          # each stage takes 10 s
        stage(1)
        stage(2)
        relay.said.emit(Stage("checkpoint 3 of 3, rope: 400 windows", 3, 3))
        clock.t += 1                                # a second into the last stage
        tab._tell_progress()                         # as the ticking does
        told.append((tab.status.text(), tab.progress.format()))
        if steps:                                    # the last stage's own time is all
            relay.progressed.emit(1, steps)
            told.append((tab.status.text(), tab.progress.format()))
    finally:
        tab.cancel()
        release.set()
        tab.shutdown()
    first, then = told[0], told[steps + 1]
    assert first == ("checkpoint 1 of 3, rope: 400 windows…", "stage 1 of 3")
    assert then == ("checkpoint 2 of 3, rope: 400 windows…; about 20 s left in all",
                    "stage 2 of 3")
    assert told[2 * steps + 2] == ("checkpoint 3 of 3, rope: 400 windows…; about 9 s "
                                   "left in all", "stage 3 of 3")
    if steps:
        assert told[1] == ("checkpoint 1 of 3, rope: 400 windows: 1 of 4 done, about 8 s "
                           "left; about 28 s left in all", "stage 1 of 3")
        assert told[steps + 3] == ("checkpoint 2 of 3, rope: 400 windows: 2 of 4 done, "
                                   "about 5 s left; about 15 s left in all", "stage 2 of 3")
        assert told[-1] == ("checkpoint 3 of 3, rope: 400 windows: 1 of 4 done, about 3 s "
                            "left", "stage 3 of 3")
