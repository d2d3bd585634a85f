"""The engine: runs a backend on one order of the tokens and compares it with the original.

An Engine turns (tokens, order, positions) into an Evaluation and caches the reference
run of the original order, so a reorder runs only the permuted sequence: in the original
tokens' frame when the backend can (Backend.run_aligned: the maps come out aligned with
the reference), and under a causal mask only from the first moved slot on (core.prefix).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable

import numpy as np

from .backend import Backend, TokenSequence, offers
from .config import Positions
from .errors import PosvizInputError
from .prefix import first_moved, stitch
from .symmetry import Comparison, check_permutation, compare
from .trace import Trace, in_slot_order


def position_ids(order: np.ndarray, positions: Positions) -> np.ndarray:
    """(n,) position ids for the permuted sequence: by slot, or carried by each token."""
    base = np.arange(order.shape[0]) if positions.mode == "slot" else order
    return positions.offset + base


def check_length(backend: Backend, n: int, positions: Positions) -> None:
    """Raise PosvizInputError if n tokens at this offset exceed the model's positions."""
    limit = backend.max_positions
    if limit is not None and positions.offset + n > limit:
        raise PosvizInputError(
            f"{n} tokens from position {positions.offset} need {positions.offset + n} "
            f"positions, but {backend.name} has {limit}"
        )


def truncate_sequence(seq: TokenSequence, room: int | None) -> TokenSequence:
    """Cut seq to at most ``room`` tokens, keeping a final pinned token (e.g. [SEP])."""
    if room is None or len(seq) <= room:
        return seq
    keep = list(range(room))
    if seq.pinned[-1] and room >= 2:
        keep[-1] = len(seq) - 1
    return TokenSequence(tuple(seq.tokens[i] for i in keep), tuple(seq.ids[i] for i in keep),
                         tuple(seq.pinned[i] for i in keep))


@dataclass(frozen=True)
class Evaluation:
    """Everything the plots show for one order."""

    seq: TokenSequence
    order: np.ndarray            # (n,)
    positions: Positions
    reference: Trace             # the original order
    run: Trace                   # the order being shown: in slot order, or when
                                 #   ``aligned``, rows (and map columns) by original token
    comparison: Comparison
    aligned: bool = False

    @cached_property
    def permuted(self) -> Trace:
        """The order's run in slot order (row j: slot j). From an aligned run it is
        gathered on first use, every map included: what is read per reorder (means,
        shapes, a few rows) reads ``run`` instead."""
        return in_slot_order(self.run, self.order) if self.aligned else self.run

    def slot_hidden(self, layer: int) -> np.ndarray:
        """(n, d) the order's hidden states of ``layer``, row j slot j's."""
        hidden = self.run.hidden[layer]
        return hidden[self.order] if self.aligned else hidden


def is_causal(backend) -> bool:
    """Whether the backend's model masks attention causally."""
    config = getattr(backend, "config", None)
    return getattr(backend, "mask", None) == "causal" or bool(getattr(config, "causal", False))


class Engine:
    """Runs a backend; caches the reference run of the original order (and, for a causal
    model whose backend offers ``run_cached`` / ``run_suffix``, what a suffix needs of it).
    ``reuse_prefix=False`` always runs the whole order."""

    def __init__(self, backend: Backend, reuse_prefix: bool = True):
        self.backend = backend
        self.reuse_prefix = (reuse_prefix and is_causal(backend)
                             and hasattr(backend, "run_cached")
                             and hasattr(backend, "run_suffix"))
        # a run in the original tokens' frame, whose maps need no gather to compare
        self.aligns = offers(backend, "run_aligned") and getattr(backend, "aligns", True)
        self._reference_key = None
        self._reference: Trace | None = None
        self._cache = None                 # the reference run's keys and values, if kept

    def reference(self, seq: TokenSequence, positions: Positions,
                  should_stop: Callable[[], bool] | None = None) -> Trace:
        key = (seq.ids, positions)
        if key != self._reference_key:
            identity = np.arange(len(seq))
            pos = position_ids(identity, positions)
            self._reference_key = self._reference = self._cache = None
            if self.reuse_prefix:
                self._reference, self._cache = self.backend.run_cached(seq, identity, pos,
                                                                       should_stop)
            else:
                self._reference = self.backend.run(seq, identity, pos, should_stop)
            self._reference_key = key
        return self._reference

    def _run(self, seq, order, positions, reference: Trace,
             should_stop) -> tuple[Trace, int, bool]:
        """The order's Trace, the slots before ``start`` it took from the reference (only
        its slots from the first moved one on are computed, when it can), and whether
        it was run in the original tokens' frame (Backend.run_aligned)."""
        pos = position_ids(order, positions)
        start = first_moved(order, pos, reference.position_ids) if self._cache is not None else 0
        if start:
            suffix = self.backend.run_suffix(seq, order, pos, start, self._cache, should_stop)
            return stitch(reference, suffix, start), start, False
        if self.aligns:
            return self.backend.run_aligned(seq, order, pos, should_stop), 0, True
        return self.backend.run(seq, order, pos, should_stop), 0, False

    def evaluate(self, seq: TokenSequence, order, positions: Positions,
                 should_stop: Callable[[], bool] | None = None,
                 pool_difference: bool = False) -> Evaluation:
        """Run the order (the reference only when not cached) and compare the two.

        ``should_stop`` is asked between layers; when it returns True the work stops
        with errors.Cancelled, so a superseded request does not hold up a newer one.
        ``pool_difference`` as in symmetry.compare: the caller shows the difference's
        mosaic.
        """
        order = check_permutation(order, len(seq))
        positions.validate()
        check_length(self.backend, len(seq), positions)
        reference = self.reference(seq, positions, should_stop)
        if np.array_equal(order, np.arange(len(seq))):
            run, start, aligned = reference, 0, False
        else:
            run, start, aligned = self._run(seq, order, positions, reference, should_stop)
        return Evaluation(seq, order, positions, reference, run,
                          compare(reference, run, order, start, aligned,
                                  pool_difference), aligned)
