"""The time left told during a text's forwards holds the work after them (the maps
compared, the original's pooled, the views built), as expected from this machine's
last long evaluation or a size-based rate: a 4,000-token text was told "about 4 s
left" in its forwards and took 13 s more, its time left jumping up at each step after."""
from __future__ import annotations

import numpy as np
import pytest

from posviz.models import after, reached
from posviz.runtime import after_left
from posviz.runtime.stage_times import StageTimes


def test_a_step_after_the_forwards_holds_those_planned_after_it(monkeypatch):
    clock = [10.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    with after.expecting({"comparing": 4.0, "pooling": 6.0, "views": 1.0}) as took:
        with after.after_steps("comparing", 4) as step:
            assert after.latest_after().seconds_left() == 4.0 + 6.0 + 1.0
            clock[0] = 12.0
            step(1)                             # the first ran cold: the rest as expected,
            # 3 s, never above the 2 + 7 s told just before
            assert after.latest_after().seconds_left() == 2.0 + 7.0
            clock[0] = 16.0
        with after.after_steps("pooling", 16, "map"):
            assert after.latest_after().seconds_left() == 6.0 + 1.0
            clock[0] = 19.0
    assert took == {"comparing": 6.0, "pooling": 3.0}
    with after.after_steps("pooling", 16, "map"):   # nothing expected: none before a step
        assert after.latest_after().seconds_left() is None


def test_the_forwards_say_their_time_left_in_all_with_the_work_after_them():
    from posviz.gui.status import POOLING_AFTER, forward_words
    now = reached.Reached(layer=3, layers=4, forward=2, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=1, after=9.0)
    assert forward_words(now, then=POOLING_AFTER) == (
        f": layer 3 of 4, about 17 s left in all{POOLING_AFTER}")


def test_the_steps_expected_and_their_rates_learned_from_a_long_evaluation(tmp_path):
    times = StageTimes(tmp_path / "times.json")
    steps = after_left.steps_after(identity=True, whole=False, new_text=True, mosaic=True)
    assert steps == after_left.STEPS
    # a long reorder compared during its forward; an old text's original pooled before
    assert after_left.steps_after(False, False, False, True) == (after_left.BUILDING,)
    cells = 4 * 4 * 4000 ** 2
    before = after_left.expected(steps, cells, times)
    assert before == {what: after_left.RATES[what] * cells * 1e-9 for what in steps}
    after_left.learn({after_left.POOLING: 3.2, after_left.BUILDING: 0.1}, cells, times)
    learned = after_left.expected(steps, cells, times)
    # halfway to the time taken, geometrically; a step too short to time teaches nothing
    assert learned[after_left.POOLING] == pytest.approx((3.2 * before[after_left.POOLING])
                                                         ** 0.5)
    assert learned[after_left.COMPARING] == pytest.approx(before[after_left.COMPARING])
    assert learned[after_left.BUILDING] == pytest.approx(before[after_left.BUILDING])
    after_left.learn({after_left.POOLING: 99.0}, 100, times)     # too few cells to teach
    assert after_left.expected(steps, cells, times) == learned


def test_the_window_s_evaluation_plans_the_work_after_its_forwards():
    """Each block its forwards enter carries the seconds expected after them."""
    from posviz.document.session import Session
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    from posviz.runtime.jobs import EvaluationJob, EvaluationRunner
    backend = BuiltinBackend(ModelConfig(pe="alibi", layers=2, heads=2, d_model=16))
    session = Session(backend, "the cat sat on the mat because it was warm")
    session.reverse()
    seen = []
    with reached.listening(lambda now: seen.append(now.after)):
        EvaluationRunner().evaluate(EvaluationJob(backend, session.seq,
                                                  session.order.copy(), session.positions))
    n = len(session.seq)
    steps = after_left.steps_after(False, True, True, False)
    wanted = sum(after_left.expected(steps, 2 * 2 * n * n, StageTimes()).values())
    assert seen and wanted > 0 and all(a == pytest.approx(wanted) for a in seen), seen
    assert np.isclose(sum(after_left.RATES[w] for w in steps) * 4 * n * n * 1e-9, wanted)


def test_a_step_s_time_left_counts_down_between_its_steps(monkeypatch):
    """A 5,000-token comparison's first layer took 9 s, its "16 s left" standing still."""
    from posviz.gui.status import after_words
    clock = [10.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    with after.expecting({"comparing": 12.0, "pooling": 4.0}):
        with after.after_steps("comparing", 4) as step:
            clock[0] = 15.0                     # no layer done: as expected, less 5 s
            assert after_words(after.latest_after()).endswith("about 11 s left")
            clock[0] = 16.0
            step(1)
            clock[0] = 17.0
            step(2)                             # 1 s a layer after the first: 2 s, and 4
            clock[0] = 17.5
            assert after_words(after.latest_after()).endswith("about 6 s left")
            clock[0] = 40.0                     # late: never below the layers after it
            assert after_words(after.latest_after()).endswith("about 5 s left")


def test_a_slow_first_layer_does_not_make_the_time_left_jump_up(monkeypatch):
    """The built-in model on 4,588 tokens: the comparison's first layer took 3.7 s, the
    others 2.4 s; read at the first's pace, "7 s left" became "15 s" (7.1 s true).
    Told each half second, the time left only falls, and stays within 1.5 x of true."""
    clock = [0.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    layers, pooling = (3.5, 2.5, 2.5, 2.5), 2.0     # (each a whole number of ticks)
    told = []
    with after.expecting({"comparing": 9.6, "pooling": pooling}):
        with after.after_steps("comparing", len(layers)) as step:
            for done, took in enumerate(layers):
                step(done)
                ends = clock[0] + took
                while clock[0] < ends:
                    true = sum(layers) - clock[0] + pooling
                    told.append((after.latest_after().seconds_left(clock[0]), true))
                    clock[0] = round(clock[0] + 0.5, 6)
    seconds = [left for left, _ in told]
    assert all(later <= earlier for earlier, later in zip(seconds, seconds[1:])), told
    assert all(true / 1.5 <= left <= true * 1.5 for left, true in told if true >= 3), told


def test_steps_slower_than_expected_are_told_at_their_pace_once_two_are_timed(
        monkeypatch):
    """Capped by the time told before, a comparison 3x slower than expected stood on
    "about 1 s left" for 9 s: once steps after the first are timed, their pace holds."""
    clock = [0.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    told = []
    with after.expecting({"comparing": 2.0, "pooling": 1.0}):
        with after.after_steps("comparing", 4) as step:
            for done in range(4):
                step(done)
                for _ in range(6):                      # each layer 3 s, told each 0.5 s
                    if done >= 2:
                        true = 12.0 - clock[0] + 1.0
                        told.append((after.latest_after().seconds_left(clock[0]), true))
                    clock[0] += 0.5
    assert all(true / 1.5 <= left <= true * 1.5 for left, true in told if true >= 3), told


def test_start_up_s_first_view_plans_the_work_after_its_forwards():
    """Start-up computes the first view's forwards itself: their time left holds the
    pooling and views the first evaluation shown does after them."""
    from posviz.document.spec import ModelSpec
    from posviz.models.config import Positions
    from posviz.runtime.jobs import EvaluationRunner, StartJob
    seen = []
    with reached.listening(lambda now: seen.append(now.after)):
        started = EvaluationRunner().start(StartJob("the cat sat on the mat",
                                                    ModelSpec.builtin(), Positions()))
    session = started.session
    n, facts = len(session.seq), session.backend.facts()
    steps = after_left.steps_after(False, True, True, session.selection.mosaic is not None)
    cells = facts.layers * facts.heads * n * n
    wanted = sum(after_left.expected(steps, cells, StageTimes()).values())
    assert seen and wanted > 0 and all(a == pytest.approx(wanted) for a in seen), seen


def test_the_forwards_line_does_not_come_back_between_the_steps_after_them(monkeypatch):
    """SmolLM2 on 828 tokens: between the comparison and the views the status line told
    the forward's last block again, "about 5 s left in all", 0.1 s before the end."""
    from posviz.gui.status import how_far
    clock = [100.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    last = reached.Reached(layer=30, layers=30, forward=2, at=130.0, began=116.0,
                           done=29 / 30, nth=2, planned=2, after=4.0)
    monkeypatch.setattr(reached, "_latest", last)
    monkeypatch.setattr(after, "_ended", [None], raising=False)
    assert how_far(100.0).startswith(": layer 30 of 30")        # the forwards running
    clock[0] = 131.0
    with after.after_steps("comparing", 30) as step:
        step(0)
        assert how_far(100.0).startswith(": comparing, layer 1 of 30")
        clock[0] = 134.0
    assert how_far(100.0) == ""                                 # between the steps


def test_the_rates_learned_are_each_model_s_at_each_size(tmp_path):
    """One rate for the machine: a 4,000-token text's comparison on the built-in model,
    read at a rate another model or size had taught, was told "5 s left" with 10-11 s
    to go. Each model's rates at each size class are its own."""
    times = StageTimes(tmp_path / "times.json")
    steps, cells = after_left.STEPS, 4 * 4 * 4000 ** 2
    planned = after_left.expected(steps, cells, times, "built-in")
    after_left.learn({after_left.COMPARING: 12.0}, cells, times, "built-in")
    learned = after_left.expected(steps, cells, times, "built-in")
    assert learned[after_left.COMPARING] == pytest.approx(
        (12.0 * planned[after_left.COMPARING]) ** 0.5, rel=1e-3)   # (kept to 3 places)
    # another model, the same model at another size: as planned, not the built-in's
    assert after_left.expected(steps, cells, times, "SmolLM2-135M") == planned
    small = 4 * 4 * 1000 ** 2
    assert after_left.expected(steps, small, times, "built-in") == {
        what: after_left.RATES[what] * small * 1e-9 for what in steps}
    after_left.learn({after_left.COMPARING: 0.9}, small, times, "built-in")
    assert after_left.expected(steps, cells, times, "built-in") == learned
