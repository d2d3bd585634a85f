"""The times the window tells: the whole evaluation's time left on the status line, a
check's before it starts and while it runs, each against a made-up clock."""
from __future__ import annotations

import numpy as np
import pytest

from posviz.models import reached


def test_the_window_s_evaluation_plans_all_its_forwards():
    """A new text's evaluation runs the original order, its noise floor (RoPE) and the
    new order: each forward is told as the nth of that many planned, so the time left
    is theirs in all."""
    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    from posviz.views.evaluated import evaluated
    backend = BuiltinBackend(ModelConfig(pe="rope", layers=2, heads=2, d_model=16))
    session = Session(backend, "the cat sat on the mat")
    session.reverse()
    engine = Engine(backend)
    planned = engine.forwards(session.seq, session.order, session.positions)
    told = []
    with reached.listening(lambda now: told.append((now.nth, now.planned))):
        evaluated(engine, session.seq, session.order, session.positions)
    assert planned == 3
    assert sorted(set(told)) == [(1, 3), (2, 3), (3, 3)], told


def _status(qtbot):
    from PySide6.QtWidgets import QLabel

    from posviz.gui.status import StatusLine
    label = QLabel()
    qtbot.addWidget(label)
    line = StatusLine(label)
    line._since = 0.0
    return line


def test_the_status_line_tells_the_time_left_of_all_the_forwards_planned(qtbot,
                                                                           monkeypatch):
    """SmolLM2's three forwards of a new text said "about 2 s left in it" in each: the
    line tells the time left of the whole evaluation. Forward 1 of 3 has spent 8 s
    on half its layers: 8 s more of it, then 16 s for each of the two after."""
    line = _status(qtbot)
    now = reached.Reached(layer=16, layers=30, forward=7, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=3)
    monkeypatch.setattr(reached, "latest", lambda: now)
    said = line._layer()
    assert said == ": layer 16 of 30 (forward 1 of 3), about 40 s left", said
    assert "in it" not in said


def test_a_lone_forward_tells_its_own_time_left(qtbot, monkeypatch):
    """One forward planned (a reorder: the original order is kept): its time left."""
    line = _status(qtbot)
    now = reached.Reached(layer=3, layers=4, forward=2, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=1)
    monkeypatch.setattr(reached, "latest", lambda: now)
    assert line._layer() == ": layer 3 of 4, about 8 s left"


@pytest.fixture
def settings(tmp_path):
    from PySide6 import QtCore
    return QtCore.QSettings(str(tmp_path / "posviz.ini"), QtCore.QSettings.Format.IniFormat)


class Bundled:
    """A stand-in for a bundled model's backend the window loaded (float32, CPU)."""
    dtype, device = "float32", "cpu"

    def twin(self):
        return self


def test_sinha2022_s_time_before_a_run_hangs_on_the_model_it_is_lent(settings,
                                                                     monkeypatch):
    """sinha2022 with trained weights runs the window's MiniLM or SmolLM2 on its
    weights, not loaded again: its time before Run is this machine's last run with the
    same model lent (it said one time for the built-in model and MiniLM)."""
    from types import SimpleNamespace

    from posviz.gui.experiments.controls import remember_took, takes_words, took_key
    monkeypatch.setattr("os.getloadavg", lambda: (2.0, 0, 0))
    alone = took_key("paper", "sinha2022", "trained")
    minilm = took_key("paper", "sinha2022", "trained", {"minilm": Bundled()})
    smollm2 = took_key("paper", "sinha2022", "trained", {"smollm2": Bundled()})
    assert len({alone, minilm, smollm2}) == 3
    # a model the check runs no twin of, or a check that lends none: the same key
    assert took_key("paper", "sinha2022", "trained", {"/my/bert": Bundled()}) == alone
    assert took_key("paper", "haviv2022", "trained", {"minilm": Bundled()}) == \
        took_key("paper", "haviv2022", "trained")
    for seconds, loaded in ((80.0, None), (70.0, {"minilm": Bundled()})):
        job = SimpleNamespace(what="paper", paper="sinha2022", weights="trained",
                              spec=SimpleNamespace(source=next(iter(loaded or {""}))),
                              backend=None if loaded is None else Bundled())
        remember_took(SimpleNamespace(settings=settings, _submitted=job), seconds)
    assert takes_words(settings, alone).startswith("takes about 80 s here")
    assert takes_words(settings, minilm).startswith("takes about 70 s here")


def test_before_any_run_with_a_model_lent_the_check_s_estimate_is_said(settings):
    """No run here yet with MiniLM lent: the estimate of the check's runs elsewhere, as
    SmolLM2 still loads. With SmolLM2 lent nothing is loaded (converted) again: it took
    4.7 s, and "about 1 min 0 s to 1 min 30 s" was said before it."""
    from posviz.gui.experiments.controls import takes_words, took_key
    minilm = took_key("paper", "sinha2022", "trained", {"minilm": Bundled()})
    smollm2 = took_key("paper", "sinha2022", "trained", {"smollm2": Bundled()})
    assert takes_words(settings, minilm) == takes_words(
        settings, took_key("paper", "sinha2022", "trained")) != ""
    assert takes_words(settings, smollm2) == ""


def test_start_up_s_last_step_tells_the_forward_it_waits_for_each_second(qtbot,
                                                                         monkeypatch):
    """Under load start-up stood on "step 4 of 4" for 12 s with nothing moving: each
    second it tells how far the first view's forwards are, and its seconds so far."""
    from posviz.gui import status
    from posviz.gui.controller import Controller
    from posviz.runtime.jobs import START_STEPS
    told, clock = [], [100.0]
    monkeypatch.setattr(status, "clock", lambda: clock[0])
    monkeypatch.setattr(reached, "latest", lambda: None)
    c = Controller()
    c.startStep.connect(told.append)
    c.start_steps.step(START_STEPS[-1])
    assert c.start_steps.timer.isActive()
    clock[0] = 103.0                                  # no forward yet: said so
    c.start_steps.tick()
    assert told[-1] == ("Starting: computing the first view: waiting for the model's "
                        "first forward, 3 s so far (step 4 of 4)…"), told[-1]
    now = reached.Reached(layer=3, layers=4, forward=9, at=106.0, began=102.0,
                          done=0.5, nth=1, planned=2)
    monkeypatch.setattr(reached, "latest", lambda: now)
    clock[0] = 106.0
    c.start_steps.tick()
    assert told[-1] == ("Starting: computing the first view: layer 3 of 4 (forward 1 "
                        "of 2), about 12 s left, 6 s so far (step 4 of 4)…"), told[-1]
    c.start_steps.finished()                          # started: the ticks end
    c.start_steps.tick()
    assert not c.start_steps.timer.isActive() and len(told) == 3


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def assert_measured_told(tab, how_far: str) -> None:
    """The words end with how far and the run's time left as the clock measures it."""
    left = tab._clock.run_left()
    assert left is not None and tab.status.text().endswith(
        f"{how_far} done; about {left:.0f} s left in all"), tab.status.text()


def _tab(qtbot, settings, job):
    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.runtime.stage_times import NoTimes
    from posviz.runtime.time_left import RunClock
    tab = ExperimentsTab(settings=settings)
    qtbot.addWidget(tab)
    clock = FakeClock()
    tab._clock, tab._submitted = RunClock(clock, NoTimes()), job
    tab.cancel_button.setEnabled(True)                # as while it runs
    return tab, clock


@pytest.mark.parametrize("paper, words", [
    ("haviv2022", "; about 14-17 min left in all (an estimate)"),
    (None, "; estimating the time left in all")])
def test_before_its_stages_to_come_are_timed_a_run_says_a_range_or_estimating(
        qtbot, settings, paper, words):
    """Haviv 2022 with trained weights (forwards, fits and MLP fits: the last timed only
    in its 4th stage) told no time left at all for 105 s: until every kind of work to
    come has a pace, the run's range from its runs elsewhere less the time spent, or
    that it is estimating; then the time left measured."""
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="paper" if paper else "sweep", paper=paper,
                          weights="trained", spec=None, backend=None)
    tab, clock = _tab(qtbot, settings, job)
    kinds = ["forwards", "mlp fits", "forwards", "mlp fits"]
    try:
        tab._stage_started(Stage("probing the first checkpoint", 1, 4, [1.0] * 4,
                                 kinds=kinds))
        clock.t += 60
        for done in (1, 2):
            tab._progressed(done, 10)
            clock.t += 1
        tab._tell_progress()
        assert tab._clock.run_left() is None
        assert tab.status.text().endswith("2 of 10 done" + words), tab.status.text()
        for number in (2, 3):                   # the MLP fits timed, then forwards again
            tab._stage_started(Stage(f"stage {number}", number, 4, [1.0] * 4,
                                     kinds=kinds))
            for done in (1, 2, 3):
                clock.t += 1
                tab._progressed(done, 3)
        left = tab._clock.run_left()
        assert left is not None and tab.status.text().endswith(
            f"3 of 3 done; about {left:.0f} s left in all"), tab.status.text()
    finally:
        tab.shutdown()


def test_without_this_machine_s_shares_no_number_until_a_stage_is_timed_whole(
        qtbot, settings, press_range):
    """press2022's first run: its first checkpoint's steps are quick, the others' slow;
    told at its first steps, the time left was a third of the truth, then rose. Until
    its first stage is timed whole: the range of its runs elsewhere less the time
    spent; then the time left measured."""
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="paper", paper="press2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    try:
        tab._stage_started(Stage("perplexity at 128 tokens", 1, 3, [1.0, 1.3, 2.0]))
        for done in range(1, 5):                      # the first checkpoint: quick
            clock.t += 0.5
            tab._progressed(done, 12)
        assert tab._clock.run_left() is not None     # the clock has a number ...
        assert tab.status.text().endswith(            # ... not yet told: 2 s spent
            "4 of 12 done; about 68 s to 7 min left in all (an estimate)"), \
            tab.status.text()
        for done in range(5, 13):                     # the others: 4 times as slow
            clock.t += 2.0
            tab._progressed(done, 12)
        tab._stage_started(Stage("perplexity at 256 tokens", 2, 3, [1.0, 1.3, 2.0]))
        clock.t += 3.0
        tab._progressed(1, 6)
        assert_measured_told(tab, "1 of 6")
    finally:
        tab.shutdown()


def test_the_copy_s_saving_is_told_as_a_range_that_holds_a_loaded_machine_s(
        monkeypatch, tmp_path):
    """SmolLM2's copy (538 MB) was told "about 5 s" and took 19 s under load (11.7 s
    here at load 5-9): before any save here, 5-19 s; after one, its pace -20 % to
    2.5 ×."""
    from posviz.models.hf import converted
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    assert converted.save_time(538_000_000) == "about 5-19 s"
    (tmp_path / "gguf").mkdir()
    converted.keep_pace(save_seconds_per_mb=11.7 / 538)
    assert converted.save_time(538_000_000) == "about 9-29 s"


def test_a_kind_of_work_is_timed_past_its_warm_up_before_its_number_is_told(
        qtbot, settings):
    """Haviv 2022's first MLP fit, its warm-up, told 28 min left in all, the next 19:
    the time left waits for a kind's second step (or a stage of it ended)."""
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="sweep", paper=None, weights=None, spec=None, backend=None)
    tab, clock = _tab(qtbot, settings, job)
    kinds = ["forwards", "mlp fits", "forwards", "mlp fits"]
    try:
        tab._stage_started(Stage("texts run", 1, 4, [1.0] * 4, kinds=kinds))
        for done in (1, 2, 3):
            clock.t += 1
            tab._progressed(done, 3)
        tab._stage_started(Stage("fits", 2, 4, [1.0] * 4, kinds=kinds))
        clock.t += 30                                 # the first fit: a warm-up
        tab._progressed(1, 5)
        assert tab._clock.run_left() is not None
        assert tab.status.text().endswith("1 of 5 done; estimating the time left in all")
        clock.t += 10
        tab._progressed(2, 5)
        assert_measured_told(tab, "2 of 5")
    finally:
        tab.shutdown()


def test_a_gguf_file_s_first_load_says_the_whole_conversion_s_time_in_the_window(
        qtbot, monkeypatch, tmp_path):
    """The command line said a first load's conversion takes "about 24-83 s on 2
    cores"; the window said only each step's seconds so far, 60-90 s in all: its note
    says the whole conversion's time, under every step and tick."""
    from posviz.gui.model_panel.load_progress import LoadProgress
    from posviz.models.hf import converted
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    takes = converted.conversion_time(98_000_000)
    bar = LoadProgress()
    qtbot.addWidget(bar)
    bar.started("SmolLM2")
    bar.step(f"{converted.CONVERTING}x.gguf once: de-quantizing it to float32 and saving "
             f"the copy in {tmp_path}, {takes} (later loads read the copy in seconds)")
    bar.step("reading the GGUF file's header, vocabulary and tensor names (4 s)")
    assert bar.status.text() == (
        "Loading SmolLM2: reading the GGUF file's header, vocabulary and tensor names, 4 s "
        f"so far… (its first load, {takes} in all: de-quantized once and written into "
        "posviz's cache, read from there by later loads)"), bar.status.text()


def test_a_failed_start_s_error_stays_shown_as_the_seconds_pass(qtbot, monkeypatch):
    """A start that fails on its last step: its red error stayed a moment, then each
    second "Starting: computing the first view: waiting…" replaced it, for ever."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    from posviz.runtime import jobs
    real = jobs.EvaluationRunner.__call__

    def failing(self, job, should_stop):
        if isinstance(job, jobs.StartJob):
            job.told and job.told(jobs.START_STEPS[-1])
            raise RuntimeError("no room")
        return real(self, job, should_stop)
    monkeypatch.setattr(jobs.EvaluationRunner, "__call__", failing)
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.evaluationFailed, timeout=30_000):
        w.start(last=False)
    said = w.status.label.text()
    assert said.startswith("could not start the model: ") and "no room" in said, said
    assert w.placeholder.text() == said               # not "Starting: … (step 4 of 4)…"
    steps = w.controller.start_steps
    assert not steps.timer.isActive()
    steps.timer.timeout.emit()                        # two seconds' ticks, by hand
    steps.timer.timeout.emit()
    assert w.status.label.text() == said and w.status.is_error()
    assert w.placeholder.text() == said


@pytest.mark.parametrize("spent, words", [
    (20.0, "; about 50 s to 7 min left in all (an estimate)"),
    (100.0, "; up to 5 min left in all (an estimate)"),      # past its low end, 70 s
    (419.5, "; estimating the time left in all")])
def test_past_the_low_end_of_its_range_a_run_says_up_to_its_high_end(
        qtbot, settings, spent, words, press_range):
    """press2022's runs take 70-420 s (quiet to load 9): once the time spent passes the
    low end, "up to" the high end less the time spent (not "about 1 s to 5 min")."""
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="paper", paper="press2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    try:
        tab._stage_started(Stage("perplexity at 128 tokens", 1, 3, [1.0, 1.3, 2.0]))
        clock.t += spent
        tab._tell_progress()
        assert tab.status.text().endswith(words), tab.status.text()
    finally:
        tab.shutdown()


@pytest.fixture
def press_range(monkeypatch):
    """press2022's runs elsewhere as 70-420 s, the range these tests read (the data's
    range may change as runs are measured)."""
    from posviz.gui.experiments import controls
    monkeypatch.setitem(controls.ESTIMATES, ("paper", "press2022", "trained"), (70, 420))


class LearnedTimes:
    """Stage times as this machine's last whole run of the check left them."""

    def __init__(self, stages: list[float]):
        self.stages = stages

    def read(self, key: str, stages: int) -> dict | None:
        return {"stages": self.stages, "steps": [None] * stages}

    def write(self, key, seconds, steps) -> None:
        pass


def test_the_readme_s_time_left_in_all_is_what_the_tab_says(qtbot, settings):
    """The README said the range of a check's runs elsewhere less the time spent, until
    its first stage was timed whole: the tab says this machine's last run of it first,
    and the number measured at once where its stages' shares were learned here."""
    import re
    from pathlib import Path
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    from posviz.gui.experiments.controls import remember_took
    from posviz.runtime.time_left import RunClock
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    said = re.search(r"While such a run goes on, the window's Experiments tab says "
                     r"(.*?)`estimating the time left in all`", readme)
    assert said and "at once where its stages' shares were learned here" in said[1] \
        and "this machine's last run of it took, else the range its runs elsewhere " \
            "took, less the time spent" in said[1], said and said[1]
    job = SimpleNamespace(what="paper", paper="press2022", weights="trained", spec=None,
                          backend=None)
    remember_took(SimpleNamespace(settings=settings, _submitted=job), 100.0)
    tab, clock = _tab(qtbot, settings, job)          # its last run here: 100 s
    stage = Stage("perplexity at 128 tokens", 1, 3, [1.0, 1.3, 2.0])
    try:
        tab._stage_started(stage)
        clock.t += 30
        tab._tell_progress()                          # not 70-420 s elsewhere, less 30
        assert tab.status.text().endswith("; about 70 s left in all (an estimate)"), \
            tab.status.text()
        tab._clock = RunClock(clock, LearnedTimes([20.0, 30.0, 50.0]))
        tab._stage_started(stage)
        tab._progressed(1, 12)
        assert_measured_told(tab, "1 of 12")          # the first step: measured at once
    finally:
        tab.shutdown()


def test_a_stage_telling_its_own_time_left_is_not_told_the_run_s(qtbot, settings):
    """sinha2022 with trained weights, its last model's first load a conversion: "about
    50 s left of the conversion (model 5 of 5)…; about 1 s left in all" (and "this step
    is taking longer than the others") beside a bar at 100 %: the run's pace knows
    nothing of the conversion, so a stage whose words tell their own time left is not
    told the run's, and its bar is busy."""
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="paper", paper="sinha2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    work = [1.0] * 5
    try:
        for number in range(1, 5):               # four models shifted, 10 s each
            tab._stage_started(Stage(f"shifting model {number} (model {number} of 5)",
                                     number, 5, work))
            for done in range(1, 10):
                clock.t += 1.0
                tab._progressed(done, 9)
        load = Stage("loading smollm2 (model 5 of 5)", 5, 5, work)
        tab._stage_started(load)
        clock.t += 30.0
        tab._tell_progress()
        assert "left in all" in tab.status.text() or "longer" in tab.status.text()
        own = "loading smollm2: de-quantizing weights, about 50 s left of the conversion " \
              "(model 5 of 5)"
        tab._stage_started(load.retold(own, own_left=True))
        tab._tell_progress()
        assert tab.status.text() == f"{own}…", tab.status.text()
        assert tab.progress.maximum() == 0               # busy, not a share of the run
        # the flag decides, not the words: reworded, it is still not told the run's
        reworded = "loading smollm2: de-quantizing weights, 50 s to go converting it " \
                   "(model 5 of 5)"
        tab._stage_started(load.retold(reworded, own_left=True))
        tab._tell_progress()
        assert tab.status.text() == f"{reworded}…", tab.status.text()
        assert tab.progress.maximum() == 0
    finally:
        tab.shutdown()


def test_a_stage_before_its_first_step_tells_the_layer_its_own_forward_has_entered(
        qtbot, settings, monkeypatch):
    """A SmolLM2 sweep said only "running the sweep…" for 14 s while its original order
    and noise floor ran (3 forwards of 30 layers): the layer its forward has entered is
    told; not a forward of before the run, nor of another thread while it runs (the
    latest forward of the process, read against the run's clock, told "layer 4 of 4")."""
    import threading
    from types import SimpleNamespace

    from posviz.analysis.experiments.stage import Stage
    job = SimpleNamespace(what="sweep", paper=None, weights="random", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    seen = []

    def run_experiment(job, should_stop, progressed, said):
        other = threading.Thread(target=reached.reach, args=(0, 4))
        other.start()
        other.join()                        # another thread's forward, while it runs
        tab._tell_progress()
        seen.append(tab.status.text())
        with reached.planning(3):
            reached.reach(0, 30)
            reached.reach(11, 30)
        tab._tell_progress()
        seen.append(tab.status.text())
        return "done"
    monkeypatch.setattr("posviz.runtime.experiments.run_experiment", run_experiment)
    try:
        tab._stage_started(Stage("running the sweep", 1, 1, [1.0]))
        reached.reach(0, 4)
        reached.reach(3, 4)                 # a forward of before the run
        tab._tell_progress()
        assert "layer" not in tab.status.text(), tab.status.text()
        assert tab._run(job, lambda: False) == (job, "done")
        assert "layer" not in seen[0], seen
        assert "running the sweep: layer 12 of 30 (forward 1 of 3)" in seen[1], seen
        tab._stage_started(Stage("drawing", 1, 1, [1.0]))
        tab._tell_progress()                # the next stage: not the last one's forward
        assert "layer" not in tab.status.text(), tab.status.text()
    finally:
        tab.shutdown()
