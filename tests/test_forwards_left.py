"""The time left of a plan's forwards when they differ: SmolLM2's three (the original
keeping its maps, the noise floor's, the chosen order pooling the mosaic's tiles as it
runs) took 12, 5.3 and 8.2 s at 829 tokens, and the time left read at the second's pace
was under by 35-60 %. A fake clock: no timing is measured."""
from __future__ import annotations

import pytest

from posviz.models import reached

LAYERS = 30


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def run_plan(monkeypatch, clock, seconds: list[float],
             tokens: int = 0) -> list[tuple[int, int, float, float]]:
    """Run forwards of ``seconds`` each (their blocks alike) in one plan of ``tokens``:
    (forward, block, told time left, true time left) at each block entered."""
    told = []
    with reached.planning(len(seq := seconds), size=tokens):
        for forward, whole in enumerate(seq):
            for layer in range(LAYERS):
                reached.reach(layer, LAYERS)
                told.append((forward, layer, reached.latest().whole_left(), clock.now))
                clock.now += whole / LAYERS
    end = clock.now
    return [(f, layer, left, end - at) for f, layer, left, at in told]


@pytest.mark.parametrize("now", [[18.0, 8.0, 12.3],     # a busier machine now
                                 [18.0, 4.0, 12.3]])    # and a forward's pace swung
def test_a_plan_alike_the_last_tells_each_forward_at_its_own_cost(monkeypatch, now):
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    monkeypatch.setattr(reached, "_costs", {})
    run_plan(monkeypatch, clock, [12.0, 5.3, 8.2])          # this machine's last run
    rows = run_plan(monkeypatch, clock, now)
    after_a_few = [(f, layer, left, true) for f, layer, left, true in rows
                   if f > 0 or layer >= 3]
    for forward, layer, left, true in after_a_few:
        assert left is not None and true / 1.3 <= left <= true * 1.3, (forward, layer,
                                                                        left, true)
    told = [left for _, _, left, _ in after_a_few]
    rise = 0.0 if now[1] == 8.0 else 0.15       # a swing: a forward's first blocks' pace
    assert all(b <= a * (1 + rise) + 1e-9 for a, b in zip(told, told[1:])), told   # falls


def test_a_cancelled_plan_is_not_remembered(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    monkeypatch.setattr(reached, "_costs", {})
    try:
        with reached.planning(3):
            reached.reach(0, LAYERS)
            clock.now += 1.0
            raise KeyError("cancelled")
    except KeyError:
        pass
    assert reached._costs == {}
    run_plan(monkeypatch, clock, [3.0, 3.0, 3.0])
    assert list(reached._costs) == [(3, LAYERS)]
    assert reached._costs[(3, LAYERS)][1] == pytest.approx((3.0, 3.0, 3.0))


def test_a_plan_of_another_size_does_not_tell_this_one_s_forwards(monkeypatch):
    """SmolLM2 after a 15-token text (forwards of 2.4 s, the first cold, and 1.4 s) on
    828 tokens (15 s each): read at the short plan's costs its first forward said
    "about 22 s left in all" with 34 s to go. A plan alike runs about as many tokens."""
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    monkeypatch.setattr(reached, "_costs", {})
    run_plan(monkeypatch, clock, [2.4, 1.4], tokens=15)
    rows = run_plan(monkeypatch, clock, [15.0, 15.0], tokens=828)
    for forward, layer, left, true in rows[3:]:
        assert left is not None and true / 1.1 <= left <= true * 1.1, (forward, layer,
                                                                        left, true)
    alike = run_plan(monkeypatch, clock, [15.0, 15.0], tokens=900)      # 828's, alike
    assert all(left == pytest.approx(true) for _, _, left, true in alike[3:]), alike


def test_the_forwards_run_after_a_plan_are_in_its_time_left_not_its_count():
    """A sweep's original order (2 forwards) said "about 5 s left" with 136 s to go
    (SmolLM2, 3,000 words): its runs after it were left out. Forward 1 of 2 has spent
    8 s on half its layers: 8 s more, then 16 s for the floor's and each of 3 runs."""
    now = reached.Reached(layer=16, layers=30, forward=7, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=2, beyond=3)
    assert now.whole_left() == pytest.approx(8.0 + 16.0 * 4)
    last = reached.Reached(layer=16, layers=30, forward=8, at=108.0, began=100.0,
                           done=0.5, nth=2, planned=2, beyond=3, took=16.0)
    assert last.whole_left() == pytest.approx(8.0 + 16.0 * 3)
    # the floor's forward (no maps kept) twice as fast as the first: the runs after,
    # which keep maps, at the first's pace (a SmolLM2 sweep said 88 s with 273 s to go)
    floor = reached.Reached(layer=16, layers=30, forward=8, at=104.0, began=100.0,
                            done=0.5, nth=2, planned=2, beyond=3, took=16.0, before=16.0)
    assert floor.whole_left() == pytest.approx(4.0 + 16.0 * 3)


def test_a_sweep_s_original_order_counts_its_runs_in_its_time_not_its_forwards():
    """The original order's forwards told as 1 and 2 of 2, the 3 runs after in their
    time left (the runs, batched, enter no block told)."""
    import posviz
    model = posviz.load(layers=2, pe="rope")
    told = []
    with reached.listening(lambda now: told.append((now.nth, now.planned, now.beyond))):
        model.sweep("the cat sat on the mat", count=3, progress=True)
    assert set(told) == {(1, 2, 3), (2, 2, 3)}, told     # the original and its floor
