"""The Experiments tab's bar and its time left "in all" while a run with a range of its
runs elsewhere goes on: one share, and a time left that falls as the count rises."""
import re
from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")

from posviz.analysis.experiments.stage import Stage  # noqa: E402
from test_time_told import _tab, settings  # noqa: E402,F401 (a fixture)

# Haviv 2022 with trained weights: 7 models, each probed linearly then with an MLP,
# each probe its texts' forwards then its fits (the stages' work and kinds as declared)
WORK = (23040.0, 28800.0) * 14
KINDS = ("forwards", "fits", "forwards", "mlp fits") * 7


def left_in_all(text: str) -> float:
    """The seconds the words' time left in all says at most ("about 14-17 min": 1,020)."""
    match = re.search(r"(?:about|up to) (?:\d+ (?:s|min) to )?(?:\d+-)?(\d+) (s|min) "
                      r"left in all", text)
    assert match, text
    return float(match.group(1)) * (60 if match.group(2) == "min" else 1)


def test_haviv2022_s_bar_follows_its_count_and_its_time_left_falls(qtbot, settings):
    """Its bar stood at 10 % (the declared work of its first four stages) for a minute
    while its first MLP fits counted 2 to 17 of 25, and its time left rose from 7 to
    13 min: the fits of its first layer took 2 s each, the later layers' 5-6 s. Until
    each kind of work to come ended a stage of it, the range of its runs elsewhere less
    the time spent, the bar its share; then the time left measured."""
    job = SimpleNamespace(what="paper", paper="haviv2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)

    def stage(number):
        tab._stage_started(Stage(f"stage {number}", number, len(WORK), WORK, kinds=KINDS))

    try:
        for number, seconds in ((1, 1.0), (2, 0.3), (3, 1.0)):   # forwards, fits: quick
            stage(number)
            for done in range(1, 11):
                clock.t += seconds / 10
                tab._progressed(done, 10)
        stage(4)                                                  # the first MLP fits
        tab._progressed(0, 25)
        assert tab.progress.value() < 20, tab.progress.format()   # not 10 % of 15 min
        bars, lefts = [tab.progress.value()], [left_in_all(tab.status.text())]
        for done in range(1, 26):
            for _ in range(2 if done <= 5 else 5):                # 2 s, then 5 s a fit
                clock.t += 1
                tab._tell_progress()                              # as each second ticks
                bars.append(tab.progress.value())
                lefts.append(left_in_all(tab.status.text()))
            tab._progressed(done, 25)
            bars.append(tab.progress.value())
            lefts.append(left_in_all(tab.status.text()))
        assert all(a <= b for a, b in zip(bars, bars[1:])) and bars[-1] > bars[0] + 50, bars
        assert all(a >= b for a, b in zip(lefts, lefts[1:])), lefts
        stage(5)                                # every kind timed over a stage of it
        clock.t += 0.1
        tab._progressed(1, 10)
        left = tab._clock.run_left()
        assert tab.status.text().endswith(f"1 of 10 done; about "
                                          f"{round(left / 60)} min left in all")
        spent = clock.t - tab._clock.began
        assert tab.progress.value() == pytest.approx(1000 * spent / (spent + left), abs=1)
    finally:
        tab.shutdown()


def test_sinha2022_s_conversion_tells_the_time_left_in_all_and_its_bar_its_share(
        qtbot, settings):
    """sinha2022 with trained weights, SmolLM2 converted on its first load: a busy bar
    and no time left in all for 20 s of its conversion, then "about 35-65 s left in
    all" (its runs elsewhere) with 5 s to go. While the conversion tells its seconds
    left: those, then the stage's work at the checkpoints' pace, the bar their share;
    once converted, the rest of the stage is of the checkpoints' kind, timed at once."""
    job = SimpleNamespace(what="paper", paper="sinha2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    work, kinds = [1.0] * 4 + [4.0], [""] * 4 + ["converting"]
    try:
        for number in range(1, 5):               # four checkpoints shifted, 2 s each
            tab._stage_started(Stage(f"shifting checkpoint {number} (model {number} of 5)",
                                     number, 5, work, kinds=kinds))
            for done in range(1, 11):
                clock.t += 0.2
                tab._progressed(done, 10)
        load = Stage("loading smollm2 (model 5 of 5)", 5, 5, work, kinds=kinds)
        tab._stage_started(load)
        clock.t += 2.0
        own = "loading smollm2: de-quantizing weights, about 30 s left of the conversion " \
              "(model 5 of 5)"
        tab._stage_started(load.retold(own, own_left=30.0))
        assert tab.status.text() == f"{own}…; about 38 s left in all", tab.status.text()
        spent = clock.t - tab._clock.began
        assert tab.progress.maximum() == 1000 and tab.progress.value() == pytest.approx(
            1000 * spent / (spent + 38), abs=1)             # not busy: the run's share
        clock.t += 3.0                                      # counted down between lines
        tab._tell_progress()
        assert tab.status.text().endswith("; about 35 s left in all"), tab.status.text()
        clock.t += 27.0                                     # converted: the copy is read
        tab._stage_started(Stage("loading smollm2: reading the converted copy (model 5 "
                                 "of 5)", 5, 5, work, kinds=[""] * 5))
        clock.t += 1.0
        tab._tell_progress()
        assert tab.status.text().endswith("…; about 7 s left in all"), tab.status.text()
    finally:
        tab.shutdown()


def test_run_after_cancel_says_it_waits_for_the_cancelled_run_to_stop(
        qtbot, settings, monkeypatch):
    """Run again after Cancel said "running the paper check…" for 3.6 s while the
    cancelled check ended its step (an MLP fit: 2-6 s): it says it waits for that."""
    import threading
    job = SimpleNamespace(what="paper", paper="haviv2022", weights="trained", spec=None,
                          backend=None)
    tab, clock = _tab(qtbot, settings, job)
    step_ends, started, ended = threading.Event(), threading.Event(), threading.Event()

    def run_experiment(job, should_stop, progress, say):
        if job.paper == "haviv2022":         # the cancelled one, inside a step
            started.set()
            step_ends.wait(10)
        else:
            ended.wait(10)                   # the new one runs on past the test
        return "done"
    monkeypatch.setattr("posviz.runtime.experiments.run_experiment", run_experiment)
    try:
        tab.scheduler.submit(job)
        assert started.wait(10)
        tab.scheduler.cancel()
        tab.scheduler.submit(SimpleNamespace(**{**vars(job), "paper": "sinha2022"}))
        tab._stage = "running the paper check"
        tab._tell_progress()
        assert tab.status.text() == ("running the paper check: waiting for the cancelled "
                                     "run to stop at the end of its step…"), tab.status.text()
        step_ends.set()
        qtbot.waitUntil(lambda: not tab.scheduler.stopping(), timeout=10_000)
        tab._tell_progress()
        assert tab.status.text() == "running the paper check…", tab.status.text()
    finally:
        step_ends.set()
        tab.shutdown()
        ended.set()
