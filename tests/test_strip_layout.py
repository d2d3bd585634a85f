"""The token strip's layout: laid out again from the first changed chip, it equals a
layout made afresh; a region's slots are exactly the chips that reach into it."""
import numpy as np
import pytest
from PySide6.QtCore import QSize

from posviz.gui.tokens.strip_layout import slots_between, wrap


def sizes(n, seed=0):
    rng = np.random.default_rng(seed)
    return [QSize(int(w), 30) for w in rng.integers(20, 90, n)]


def same(a, b):
    return (a.rects == b.rects and a.rows == b.rows and a.row_starts == b.row_starts)


@pytest.mark.parametrize("seed", range(4))
def test_a_layout_made_again_from_the_changed_chips_equals_one_made_afresh(seed):
    rng = np.random.default_rng(seed)
    n = 500
    chips = sizes(n, seed)
    order = list(range(n))
    layout = wrap(chips, order, 640.0)
    steps = 0
    for _ in range(40):
        src, dst = sorted(rng.integers(0, n, 2))
        if rng.random() < 0.5:
            dst = min(n - 1, src + 1)                       # a drag's step
        order = list(order)
        order.insert(dst, order.pop(src))
        again = wrap(chips, order, 640.0, layout)
        assert same(again, wrap(chips, order, 640.0))
        row_of = np.searchsorted(layout.row_starts, [src, dst], side="right")
        inside = row_of[0] == row_of[1] and src not in layout.row_starts
        if dst - src == 1 and inside:     # a step inside a row: a few rows laid out again
            assert len(again.changed) < n // 4
            steps += 1
        layout = again
    assert steps > 5
    assert same(wrap(chips, order, 900.0, layout), wrap(chips, order, 900.0))


def test_a_regions_slots_are_the_chips_that_reach_into_it():
    chips = sizes(300)
    layout = wrap(chips, list(range(300)), 500.0)
    for top, bottom in ((0, 10), (100, 140), (333, 334), (1e4, 2e4), (-50, -1)):
        expected = [s for s, r in enumerate(layout.rects)
                    if r.top() <= bottom and r.bottom() >= top]
        assert list(slots_between(layout, top, bottom)) == expected
