"""The one place where an experiment's forwards happen, and the orders it runs.

``run_orders`` evaluates orders of one tokenized text against its reference run, which
the Engine computes once and keeps. A backend that runs batches (capabilities.batched)
measures a chunk of orders in one forward without building their Traces
(analysis.batch_metrics); others run one order at a time.
"""
from __future__ import annotations

import itertools
from typing import Callable, Iterable, Iterator

import numpy as np

from ...errors import Cancelled, PosvizInputError, argument
from ...models.backend import TokenSequence, check_length
from ...models.config import Positions
from ...models.orders import check_permutation
from ..symmetry import Comparison, compare

KINDS = ("random", "swap", "prefix", "reverse", "all")
KIND_TIPS = {
    "random": "COUNT random reorders of the movable tokens",
    "swap": "every swap of two neighbouring movable tokens (and the map of all pairs)",
    "prefix": "COUNT random reorders of every token but the last",
    "reverse": "the movable tokens reversed",
    "all": "every reorder of the movable tokens (at most 7 of them)",
}
from ...models.limits.guard import ALL_AT_MOST, all_refused  # noqa: E402 (7! = 5040 orders)
DRAWN = ("random", "prefix")        # the kinds whose orders are drawn: count and seed


def sweep_settings(kind: str, count: int, seed: int, layer=...) -> dict:
    """What a sweep of ``kind`` read of its settings, as every record of it writes them
    (JSON, CSV, provenance, a figure's file): the count and the seed of drawn orders only
    (a swap, reverse or all sweep runs a fixed set), the layer asked of a swap map only
    (when ``layer`` is given: None asks for the last; each map names its own)."""
    return {"kind": kind, **({"count": count, "seed": seed} if kind in DRAWN else {}),
            **({"layer": layer} if kind == "swap" and layer is not ... else {})}

# Orders run together take at most about BATCH_BYTES (backend.batch_bytes per order) and
# MAX_BATCH orders: past that the built-in model's forward gets slower per order, its
# working tensors leaving the caches (benchmarks/README.md)
BATCH_BYTES = 96 << 20
MAX_BATCH = 64


def batch_size(backend, n: int) -> int:
    """How many orders of n tokens ``backend`` measures in one forward: 1 when it does
    not run batches, else as many as fit BATCH_BYTES, at most MAX_BATCH."""
    if not backend.capabilities.batched:
        return 1
    return int(max(1, min(MAX_BATCH, BATCH_BYTES // max(backend.batch_bytes(n), 1))))


def run_orders(engine, seq: TokenSequence, orders: Iterable[np.ndarray], positions: Positions,
               should_stop: Callable[[], bool] | None = None,
               batch: int | None = None) -> Iterator[Comparison]:
    """Each order's Comparison with the original order, in the order given.

    The reference run is computed once (the Engine keeps it). Orders are measured
    ``batch`` at a time in one forward when the backend runs batches (default:
    batch_size; a ``batch`` of 1 too); those Comparisons hold no ``attention_aligned``
    (None). Otherwise they run one by one through Engine.evaluate. ``should_stop`` is
    asked before each order's comparison (so between chunks too) and inside each
    forward; True raises errors.Cancelled.
    """
    reference = engine.reference(seq, positions, should_stop)
    size = batch_size(engine.backend, len(seq)) if batch is None else int(batch)
    orders = iter(orders)
    if not engine.backend.capabilities.batched or (size <= 1 and batch is None):
        for order in orders:
            _check_stop(should_stop)
            yield engine.evaluate(seq, order, positions, should_stop).comparison
        return
    from ..batch_metrics import compare_batch  # torch: only once there is a model
    n = len(seq)
    positions.validate()
    check_length(engine.backend, n, positions)
    identity = np.arange(n)
    while chunk := list(itertools.islice(orders, size)):
        _check_stop(should_stop)
        chunk = _permutations(chunk, n)                                   # (B, n)
        still = (chunk == identity).all(axis=1)                           # (B,)
        moved = chunk[~still]                                             # (B', n)
        results = iter(compare_batch(engine.backend, seq, moved, positions.ids(moved),
                                     reference, should_stop, engine.aligned(positions))
                       if len(moved) else ())
        for order, same in zip(chunk, still):
            _check_stop(should_stop)
            yield compare(reference, reference, order) if same else next(results)


def _permutations(orders: list, n: int) -> np.ndarray:
    """(B, n) int64 from B orders, each checked to be a permutation of 0..n-1 (at once
    when they are; check_permutation names the first that is not)."""
    try:
        stacked = np.asarray(orders)
    except ValueError:                  # ragged
        stacked = None
    if (stacked is not None and stacked.shape == (len(orders), n)
            and np.issubdtype(stacked.dtype, np.integer)
            and (np.sort(stacked, axis=1) == np.arange(n)).all()):
        return stacked.astype(np.int64)
    return np.stack([check_permutation(order, n) for order in orders])


def _check_stop(should_stop) -> None:
    if should_stop is not None and should_stop():
        raise Cancelled("the experiment was cancelled")


def _placed(n: int, slots: np.ndarray, arrangement) -> np.ndarray:
    order = np.arange(n)
    order[slots] = arrangement
    return order


def check_kind(kind: str, count: int) -> None:
    """Refuse a kind that is not one, or a count that is not an int of at least 1."""
    if kind not in KINDS:
        raise PosvizInputError(f"{argument('kind')} must be one of {', '.join(KINDS)} "
                               f"(got {kind!r})")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        given = "" if isinstance(count, int) else f", a {type(count).__name__}"
        raise PosvizInputError(f"{argument('count')} must be a whole number of at least 1 "
                               f"(got {count!r}{given})")


def check_seed(seed) -> None:
    """Refuse a seed of the orders that is not a whole number from 0 (numpy's seeds)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PosvizInputError(f"{argument('seed')} must be a whole number of at least 0 "
                               f"(got {seed!r})")


def make_orders(kind: str, seq: TokenSequence, count: int,
                rng: np.random.Generator | None) -> list[np.ndarray]:
    """The (n,) orders a sweep of this kind runs for ``seq`` (its pinned tokens stay).
    ``count`` applies to random and prefix; PosvizInputError when the text has too few
    tokens to reorder, or too many for ``all``."""
    check_kind(kind, count)
    n, slots = len(seq), _slots(kind, seq)
    if kind in ("random", "prefix"):
        return [_placed(n, slots, rng.permutation(slots)) for _ in range(count)]
    if kind == "reverse":
        return [_placed(n, slots, slots[::-1])]
    if kind == "swap":
        return [swap_order(n, slots[a], slots[a + 1]) for a in range(slots.size - 1)]
    if slots.size > ALL_AT_MOST:
        raise PosvizInputError(all_refused(slots.size))
    return [_placed(n, slots, np.array(p)) for p in itertools.permutations(slots)][1:]


def _slots(kind: str, seq: TokenSequence) -> np.ndarray:
    """The slots a sweep of ``kind`` reorders, or PosvizInputError when under 2."""
    n = len(seq)
    slots = np.flatnonzero(seq.movable())
    if kind == "prefix":
        slots = slots[slots != n - 1]
    if slots.size < 2:
        what = "tokens before the last one" if kind == "prefix" else "tokens"
        raise PosvizInputError(f"a {kind} sweep needs at least 2 movable {what}, "
                               f"this text has {slots.size}")
    return slots


class DrawnOrders:
    """make_orders' random or prefix orders with ``default_rng(seed)``, drawn as they
    are run, each pass anew: a million orders start at once and are never all kept."""

    def __init__(self, kind: str, seq: TokenSequence, count: int, seed):
        check_kind(kind, count)
        self.n, self.slots, self.count, self.seed = len(seq), _slots(kind, seq), count, seed

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[np.ndarray]:
        rng = np.random.default_rng(self.seed)
        for _ in range(self.count):
            yield _placed(self.n, self.slots, rng.permutation(self.slots))


def swap_order(n: int, i: int, j: int) -> np.ndarray:
    """(n,) the order that swaps slots i and j."""
    order = np.arange(n)
    order[[i, j]] = order[[j, i]]
    return order
