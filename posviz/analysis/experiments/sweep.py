"""Sweeps: many orders of one or many texts, summarized per layer by quantiles.

For each text the sweep runs the orders of its kind (``runs.make_orders``), compares each
with the original order (the metrics of ``analysis.symmetry.compare``, a chunk of orders
at a time: ``analysis.batch_metrics``), and reports per layer the median,
10th and 90th percentile of every metric over all runs of all texts.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from ...errors import PosvizInputError, argument, check_whole_number
from ...models.config import Positions
from ..symmetry import METRICS
from .runs import (DrawnOrders, check_kind, make_orders, run_orders, swap_order,
                   sweep_settings)

QUANTILES = {"median": 50, "p10": 10, "p90": 90}
Progress = Callable[[int, int], None]          # (done, total) runs
# A sweep's forward takes at most about BATCH_FLOPS (order_flops), about a second here,
# so its count moves that often: SmolLM2's batches of 8 orders of 200 tokens (8 x 45
# GFLOP) left a researcher's bar at 0 % for 10-22 s; one order took 0.7-1.5 s at load 8
BATCH_FLOPS = 40e9


@dataclass(frozen=True)
class Band:
    """One metric across runs, per layer: arrays of shape (L+1,), NaN where undefined."""

    median: np.ndarray
    p10: np.ndarray
    p90: np.ndarray


def bands(values: np.ndarray) -> Band:
    """values (runs, L+1) -> the per-layer median, p10 and p90 (NaNs left out)."""
    with warnings.catch_warnings():                # an all-NaN layer stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        q = {k: np.nanpercentile(values, p, axis=0) for k, p in QUANTILES.items()}
    return Band(**q)


def identical_pairs(tokens) -> np.ndarray:
    """(n, n) bool: slots i ≠ j holding the same token (their swap leaves the input as
    it was)."""
    tokens = np.asarray(list(tokens), dtype=object)
    same = tokens[:, None] == tokens[None, :]
    np.fill_diagonal(same, False)
    return same


@dataclass(frozen=True)
class SwapMap:
    """How much a layer's output changes when tokens i and j swap, for one text."""

    text: str
    tokens: tuple[str, ...]
    layer: int
    change: np.ndarray           # (n, n) hidden_equivariance at the layer; symmetric,
                                 #   0 on the diagonal and where not ``ran``
    movable: np.ndarray          # (n,) bool
    # (L+1, n, n): the map at every layer (input, then each block), as ``change`` is at
    # ``layer``; None when only one layer was kept (the window's layer chooser reads it)
    layers: np.ndarray | None = field(default=None, compare=False, repr=False)

    def at(self, layer: int) -> "SwapMap":
        """The map at ``layer`` (0: the input), of the runs already made."""
        if self.layers is None or not 0 <= layer < len(self.layers):
            raise PosvizInputError(f"this swap map has no layer {layer}")
        return replace(self, layer=layer, change=self.layers[layer])

    @property
    def ran(self) -> np.ndarray:
        """(n, n) bool: the cells whose swap was run, both tokens movable; a token that
        cannot move (a special token the tokenizer adds) has no run in its row or column."""
        return self.movable[:, None] & self.movable[None, :]

    @property
    def swaps(self) -> int:
        """How many swaps were run to fill the map: every pair of movable tokens."""
        movable = int(self.movable.sum())
        return movable * (movable - 1) // 2

    @property
    def sensitivity(self) -> np.ndarray:
        """(n,) per token: the mean change over its movable partners that hold another
        token (swapping two identical tokens leaves the input as it was); 0 when pinned
        or without such partners."""
        n = len(self.tokens)
        other = ~(identical_pairs(self.tokens) | np.eye(n, dtype=bool))       # (n, n)
        partners = self.movable[None, :] & other
        count = partners.sum(axis=1)
        total = (self.change * partners).sum(axis=1)
        return np.where(self.movable & (count > 0), total / np.maximum(count, 1), 0.0)

    def to_dict(self) -> dict:
        """The map with None where no swap ran (not 0: no change was measured there)."""
        matrix = np.where(self.ran, self.change, None)                   # (n, n) object
        sensitivity = np.where(self.movable, self.sensitivity, None)     # (n,) object
        return {"text": self.text, "tokens": list(self.tokens), "layer": self.layer,
                "matrix": matrix.tolist(), "sensitivity": sensitivity.tolist()}


@dataclass(frozen=True)
class SweepResult:
    kind: str
    count: int
    seed: int
    texts: tuple[str, ...]
    runs: int                                   # comparisons summarized
    bands: dict[str, Band]                      # metric name -> per-layer band
    floor: float                                # noise floor of the traces' dtype
    pairs: tuple[SwapMap, ...] = field(default=())

    @property
    def n_layers(self) -> int:
        return next(iter(self.bands.values())).median.shape[0]

    def rows(self) -> list[dict]:
        """One dict per layer: {"layer", metric: {"median", "p10", "p90"}}; NaN -> None."""
        rows = []
        for layer in range(self.n_layers):
            row: dict = {"layer": layer}
            for name, band in self.bands.items():
                row[name] = {k: _number(getattr(band, k)[layer]) for k in QUANTILES}
            rows.append(row)
        return rows

    def to_dict(self) -> dict:
        used = sweep_settings(self.kind, self.count, self.seed)     # what the run read
        out = {**used, "texts": list(self.texts), "runs": self.runs,
               "noise_floor": self.floor, "layers": self.rows()}
        if self.kind == "swap":         # runs: its neighbouring swaps; every pair ran
            out["pairs_run"] = sum(p.swaps for p in self.pairs)      # (progress: "pair")
            out["pairs"] = [p.to_dict() for p in self.pairs]
        return out


def _number(value) -> float | None:
    value = float(value)
    return None if np.isnan(value) else value


def sweep(engine, texts, kind: str, count: int = 32, seed: int = 0,
          positions: Positions = Positions(), layer: int | None = None,
          progress: Progress | None = None,
          should_stop: Callable[[], bool] | None = None,
          every_layer: bool = False) -> SweepResult:
    """Run a sweep of ``kind`` over ``texts`` with ``engine``'s backend.

    Every order is drawn from a generator seeded by (seed, text index), so the same
    seed gives the same result. ``kind="swap"`` also measures every pair of movable
    tokens at ``layer`` (default: the last) into ``pairs``, and with ``every_layer`` its
    map at every layer too (SwapMap.layers: (L+1)·n² float64 a text, for the window's
    layer chooser; guard.check_sweep counts it). ``progress(done, total)`` is told once the
    first text's original order is run (0 done: the runs are compared with it) and
    after each run; ``should_stop`` cancels (errors.Cancelled).
    """
    check_kind(kind, count)
    texts = tuple(texts)
    if not texts:
        raise PosvizInputError("there are no texts to sweep")
    seqs = [engine.backend.tokenize(text) for text in texts]
    plans = sweep_plans(texts, seqs, kind, count, seed)
    total, done = sum(len(p) for p in plans), 0
    values = {name: [] for name in METRICS}
    pairs, floor = [], 0.0
    for text, seq, plan in zip(texts, seqs, plans):
        adjacent = {tuple(o) for o in make_orders("swap", seq, 1, None)} \
            if kind == "swap" else None
        change = np.zeros((len(seq), len(seq))) if kind == "swap" else None
        every = None                    # (L+1, n, n): each layer's map, if kept
        if progress is not None and not done:
            # the original order's run and the noise floor's first, then 0 told: a run's
            # pace is of runs alone (SmolLM2's 3 forwards in run 1 told 7 min left of 1
            # min 50 s)
            engine.reference(seq, positions, should_stop)
            progress(done, total)
        for order, comparison in zip(plan, run_orders(engine, seq, plan, positions,
                                                      should_stop,
                                                      sweep_batch(engine.backend, len(seq)))):
            floor = comparison.floor
            if adjacent is None or tuple(order) in adjacent:
                for name in METRICS:
                    values[name].append(comparison.metric(name))
            if kind == "swap":
                at = check_layer(layer, comparison.hidden_equivariance.shape[0] - 1)
                swap_cell(change, order, float(comparison.hidden_equivariance[at]))
                if every_layer:                        # (the window's layer chooser)
                    if every is None:
                        every = np.zeros((len(comparison.hidden_equivariance),)
                                         + change.shape)
                    i, j = np.flatnonzero(order != np.arange(len(order)))
                    every[:, i, j] = every[:, j, i] = comparison.hidden_equivariance
            done += 1
            if progress is not None:
                progress(done, total)
        if kind == "swap":
            pairs.append(SwapMap(text, seq.tokens, at, change, seq.movable(), every))
    result_bands = {name: bands(np.stack(v)) for name, v in values.items()}
    return SweepResult(kind, count, seed, texts, len(values[METRICS[0]]), result_bands,
                       floor, tuple(pairs))


def sweep_plans(texts, seqs, kind: str, count: int, seed: int) -> list:
    """Each text's orders (made as they are run): how many runs a sweep makes."""
    plans = []
    for index, seq in enumerate(seqs):
        try:
            if kind == "swap":              # every pair; the adjacent ones make the band
                plans.append(pair_orders(seq))
            elif kind in ("random", "prefix"):
                plans.append(DrawnOrders(kind, seq, count, [seed, index]))
            else:
                plans.append(make_orders(kind, seq, count, None))
        except PosvizInputError as error:
            if len(seqs) == 1:
                raise
            raise PosvizInputError(f"text {index + 1} ({texts[index][:40]!r}): {error}") \
                from None
    return plans


def order_flops(backend, n: int) -> float:
    """About how many floating-point operations one order of n tokens costs in a
    forward of ``backend.model``: its weight matrices (not its embeddings) twice per
    token, and each layer's scores and mixing (4 n^2 d)."""
    import torch
    model = getattr(backend, "model", None)
    if model is None:
        return 0.0
    tables = {id(m.weight) for m in model.modules() if isinstance(m, torch.nn.Embedding)}
    weights = sum(p.numel() for p in model.parameters()
                  if p.dim() == 2 and id(p) not in tables)
    about = backend.describe()
    return (2.0 * n * weights
            + 4.0 * int(about.get("layers") or 1) * n * n * int(about.get("d_model") or 0))


def sweep_batch(backend, n: int) -> int | None:
    """How many orders of n tokens a sweep runs in one forward: the memory's batch
    (runs.batch_size), fewer when they would cost more than BATCH_FLOPS; None where
    the backend runs no batches (one order at a time)."""
    from .runs import batch_size
    size = batch_size(backend, n)
    if size <= 1:
        return None
    return int(max(1, min(size, BATCH_FLOPS // max(order_flops(backend, n), 1.0))))


def check_layer(layer: int | None, last: int) -> int:
    """The layer asked for (default: the last), or PosvizInputError (guard.check_view's,
    the embeddings' layer 0 included)."""
    from ...models.limits.guard import check_view
    check_view(last, 0, layer, first=0)
    return last if layer is None else layer


class PairOrders:
    """Every swap of two movable slots i < j (at least one pair; see make_orders), made
    as they are run, each pass anew: a text of n tokens has n(n-1)/2 of them, never all
    kept (the guard counts their runs and the map they fill before any is made)."""

    def __init__(self, seq):
        make_orders("swap", seq, 1, None)              # refuses a text with < 2 movable
        self.slots, self.n = np.flatnonzero(seq.movable()), len(seq)

    def __len__(self) -> int:
        return self.slots.size * (self.slots.size - 1) // 2

    def __iter__(self):
        slots = self.slots
        return (swap_order(self.n, i, j) for a, i in enumerate(slots) for j in slots[a + 1:])


def pair_orders(seq) -> PairOrders:
    """Every swap of two movable slots i < j, made as they are run (PairOrders)."""
    return PairOrders(seq)


def swap_cell(change: np.ndarray, order: np.ndarray, value: float) -> None:
    """Write one swap's ``value`` into the (n, n) map at the two slots ``order`` swaps."""
    i, j = np.flatnonzero(order != np.arange(len(order)))
    change[i, j] = change[j, i] = value

