"""The one place where an experiment's forwards happen, and the orders it runs.

``run_orders`` evaluates orders of one tokenized text against its reference run, which
the Engine computes once and keeps. It runs them one after the other today; running
several orders in one forward (a batch) belongs here and nowhere else.
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterable, Iterator

import numpy as np

from ..backend import TokenSequence
from ..config import Positions
from ..errors import Cancelled, PosvizInputError
from ..symmetry import Comparison

KINDS = ("random", "swap", "prefix", "reverse", "all")
KIND_TIPS = {
    "random": "COUNT random reorders of the movable tokens",
    "swap": "every swap of two neighbouring movable tokens (and the map of all pairs)",
    "prefix": "COUNT random reorders of every token but the last",
    "reverse": "the movable tokens reversed",
    "all": "every reorder of the movable tokens (at most 7 of them)",
}
ALL_AT_MOST = 7                     # 7! = 5040 orders


def run_orders(engine, seq: TokenSequence, orders: Iterable[np.ndarray], positions: Positions,
               should_stop: Callable[[], bool] | None = None) -> Iterator[Comparison]:
    """Each order's Comparison with the original order, in the order given.

    The reference run is computed once (the Engine keeps it); each order costs one
    forward. ``should_stop`` is asked between orders and inside each forward; True
    raises errors.Cancelled.
    """
    engine.reference(seq, positions, should_stop)
    for order in orders:
        if should_stop is not None and should_stop():
            raise Cancelled("the experiment was cancelled")
        yield engine.evaluate(seq, order, positions, should_stop).comparison


def movable(pinned) -> np.ndarray:
    """The slots a reorder may change: the session's pinned-token rule."""
    from ..session import movable_slots
    return np.flatnonzero(movable_slots(pinned))


def _placed(n: int, slots: np.ndarray, arrangement) -> np.ndarray:
    order = np.arange(n)
    order[slots] = arrangement
    return order


def check_kind(kind: str, count: int) -> None:
    if kind not in KINDS:
        raise PosvizInputError(f"the kind must be one of {', '.join(KINDS)} (got {kind!r})")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise PosvizInputError(f"the count must be a whole number of at least 1 (got {count})")


def make_orders(kind: str, pinned, count: int, rng: np.random.Generator) -> list[np.ndarray]:
    """The (n,) orders a sweep of this kind runs for a text whose pinned tokens are
    ``pinned``. ``count`` applies to random and prefix; PosvizInputError when the text
    has too few tokens to reorder, or too many for ``all``."""
    check_kind(kind, count)
    n = len(pinned)
    slots = movable(pinned)
    if kind == "prefix":
        slots = slots[slots != n - 1]
    if slots.size < 2:
        what = "tokens before the last one" if kind == "prefix" else "tokens"
        raise PosvizInputError(f"a {kind} sweep needs at least 2 movable {what}, "
                               f"this text has {slots.size}")
    if kind in ("random", "prefix"):
        return [_placed(n, slots, rng.permutation(slots)) for _ in range(count)]
    if kind == "reverse":
        return [_placed(n, slots, slots[::-1])]
    if kind == "swap":
        return [swap_order(n, slots[a], slots[a + 1]) for a in range(slots.size - 1)]
    if slots.size > ALL_AT_MOST:
        raise PosvizInputError(f"'all' runs every reorder of at most {ALL_AT_MOST} movable "
                               f"tokens, this text has {slots.size}; use random instead")
    return [_placed(n, slots, np.array(p)) for p in itertools.permutations(slots)][1:]


def swap_order(n: int, i: int, j: int) -> np.ndarray:
    """(n,) the order that swaps slots i and j."""
    order = np.arange(n)
    order[[i, j]] = order[[j, i]]
    return order
