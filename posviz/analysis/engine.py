"""The engine: runs a backend on one order of the tokens and compares it with the original.

An Engine turns (tokens, order, positions) into an Evaluation and caches the reference
run of the original order, so a reorder runs only the permuted sequence; its maps are
compared after the forward, or a long input's a layer at a time as they are computed
and then let go (symmetry.AttentionGaps). How it runs follows from what the backend
declares (models.backend.Capabilities): under a causal mask only the slots from the
first moved one on (analysis.prefix), else in the original tokens' frame when the
backend can (the maps then come out aligned with the reference and nothing is
gathered), else in slot order. ``Positions.literal`` turns both fast frames off: the
reorder then runs as given, so rounding shows where the fast frames give exact zeros
by construction.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable

import numpy as np

from ..models.after import after_steps
from ..models.backend import Backend, TokenSequence, check_length
from ..models.config import Positions
from ..models.maps import LayerMaps
from ..models.orders import check_permutation
from ..models.request import Request
from ..models.trace import Trace, in_slot_order
from .floor import floor_shift, measured_floor, with_floor
from .prefix import first_moved, stitch
from .symmetry import COMPARING, AttentionGaps, Comparison, compare


@dataclass(frozen=True)
class Evaluation:
    """Everything the plots show for one order."""

    seq: TokenSequence
    order: np.ndarray            # (n,)
    positions: Positions
    reference: Trace             # the original order
    run: Trace | None            # the order being shown: in slot order, or when
                                 #   ``aligned``, rows (and map columns) by original token;
                                 #   None in one kept for the screen (``for_screen``)
    comparison: Comparison
    aligned: bool = False
    backend: Backend | None = None   # what ran it (its facts, its encoding's profile)
    kept: tuple | None = None        # (layer 0..L-1, head, (n, n) aligned map): the head
                                     #   kept when comparison.attention_aligned is not
    start: int = 0                   # the first slot the run computed (analysis.prefix)

    @cached_property
    def permuted(self) -> Trace:
        """The order's run in slot order (row j: slot j), gathered on first use: what is
        read per reorder (means, shapes, a few rows) reads ``run`` instead. Its maps are
        the compared ones put back in slot order, when they were kept whole."""
        run = in_slot_order(self.run, self.order) if self.aligned else self.run
        kept = self.comparison.attention_aligned                     # (L, h, n, n)
        if run.attention is None and kept is not None:
            order = self.order                      # slot j, k <- token order[j], order[k]
            run = replace(run, attention=kept[:, :, order][:, :, :, order])
        return run

    def for_screen(self) -> "Evaluation":
        """This evaluation without the order's run, as a window keeps it once its views
        are made: no figure reads the run's (L+1, n, d) hidden states again (SmolLM2's
        at 2,350 tokens: 160 MB), and they would stay alive while the next order
        computes. The reference, the comparison and the kept head stay."""
        return self if self.run is None else replace(self, run=None)

    def slot_hidden(self, layer: int) -> np.ndarray:
        """(n, d) the order's hidden states of ``layer``, row j slot j's."""
        hidden = self.run.hidden[layer]
        return hidden[self.order] if self.aligned else hidden


class Engine:
    """Runs a backend; caches the reference run of the original order (with its keys
    and values, when the backend reuses a causal prefix). ``reuse_prefix=False`` always
    runs the whole order."""

    def __init__(self, backend: Backend, reuse_prefix: bool = True):
        self.backend = backend
        self.reuse_prefix = reuse_prefix and backend.capabilities.prefix
        self._reference_key = None
        self._reference: Trace | None = None

    def aligned(self, positions: Positions) -> bool:
        """Does a reorder run in the original tokens' frame (the backend can, and
        ``positions.literal`` does not ask for the input as given)?"""
        return self.backend.capabilities.aligned and not positions.literal

    def forwards(self, seq: TokenSequence, order, positions: Positions) -> int:
        """How many forwards ``evaluate`` runs: the original order's and its noise
        floor's unless cached, and the order's unless it is the original one."""
        first = 0 if (seq.ids, positions) == self._reference_key else (
            1 + bool(floor_shift(self.backend, seq, positions)))
        return first + (not np.array_equal(order, np.arange(len(seq))))

    def reference(self, seq: TokenSequence, positions: Positions,
                  should_stop: Callable[[], bool] | None = None) -> Trace:
        key = (seq.ids, positions)
        if key != self._reference_key:      # checked once per text and positions
            positions.validate()
            check_length(self.backend, len(seq), positions)
            identity = np.arange(len(seq))
            self._reference_key = self._reference = None
            reference = self.backend.run(seq, Request(
                identity, positions.ids(identity), keep_past=self._reuses(positions)),
                should_stop)
            # the floor, measured once per reference: a drag reads it (analysis.floor)
            self._reference = with_floor(reference, measured_floor(
                self.backend, seq, positions, reference, should_stop))
            self._reference_key = key
        return self._reference

    def evaluate(self, seq: TokenSequence, order, positions: Positions,
                 should_stop: Callable[[], bool] | None = None, *, sinks=(),
                 keep: tuple[int, int] | None = None) -> Evaluation:
        """Run the order (the reference only when not cached) and compare the two.

        The reordered run's maps are compared after the forward, or a long input's a
        layer at a time as the forward computes them (symmetry.AttentionGaps): each
        head's difference and each layer, back in the original order, also go to each
        of ``sinks`` (symmetry.MapsSink); ``keep`` = (layer 0..L-1, head) is
        the head kept when the aligned maps are too large to keep whole.
        ``should_stop`` is asked between layers; when it returns True the work stops
        with errors.Cancelled, so a superseded request does not hold up a newer one.
        """
        order = check_permutation(order, len(seq))
        reference = self.reference(seq, positions, should_stop)
        pos = positions.ids(order)
        if np.array_equal(order, np.arange(len(seq))):            # the reference itself
            run, start, aligned = reference, 0, False
            gaps = AttentionGaps(reference, order, sinks=sinks, keep=keep)
            maps = reference.attention                                    # (L, h, n, n)
            # a long input's are compared here, layer by layer, after its one forward
            # (4,000 tokens: 5-7 s on "layer 4 of 4", untold); kept whole: by finish
            told = reference.n_layers if gaps.layers is None else 0
            with after_steps(COMPARING, told) as step:
                for layer in range(reference.n_layers):
                    step(layer)
                    gaps(layer, maps.heads(layer) if isinstance(maps, LayerMaps)
                         else maps[layer])
        else:
            start = (first_moved(order, pos, reference.position_ids)
                     if self._reuses(positions) and reference.past is not None else 0)
            aligned = self.aligned(positions) and not start
            gaps = AttentionGaps(reference, order, start, aligned, sinks, keep)
            request = Request(order, pos, aligned=aligned, start=start,
                              past=reference.past if start else None, maps=gaps)
            run = self.backend.run(seq, request, should_stop)
            if start:
                run = stitch(reference, run, start)
        gaps.finish(should_stop)        # the maps' gaps, a layer at a time (compare's)
        kept = None if gaps.kept_head is None else (*keep, gaps.kept_head)
        return Evaluation(seq, order, positions, reference, run,
                          compare(reference, run, order, start, aligned, gaps), aligned,
                          self.backend, kept, start)

    def _reuses(self, positions: Positions) -> bool:
        return self.reuse_prefix and not positions.literal
