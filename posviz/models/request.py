"""One way into a model: a Request says what to run and what to keep of it.

After TransformerLens' ``run_with_cache``, where the caller hands the input and names
what to keep: a Request holds an order of the text's tokens (or a batch of orders) at
position ids, in one of three modes, and the sinks of what it keeps:

- plain: tokens[order] in slot order, the ordinary forward of the reordered input;
- aligned (``aligned=True``, capabilities.aligned): the same run computed in the
  original tokens' frame, row i token i, at the position id and under the mask of its
  slot: the plain run with its rows (and map columns) put back, to rounding;
- suffix (``start`` > 0 with ``past``, capabilities.prefix): a causal run of slots
  start..n-1 only, the earlier slots' keys and values taken from the run whose
  ``Trace.past`` this is (analysis.prefix puts the earlier rows back).

Backend.run(seq, request) turns a Request of one order into a Trace; Backend.record
(seq, request, recorder) runs one order or a batch with a Recorder tapping every hook
point (a sweep's metrics are taken as the layers pass).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ..errors import PosvizInputError
from .orders import per_token

# Each block's attention weights (h, m, n), handed on as the block computes them (a
# torch tensor, valid during the call): analysis.symmetry.AttentionGaps is one
MapSink = Callable[[int, object], None]


def discard(layer: int, maps) -> None:
    """A MapSink that keeps nothing: a run whose maps nobody reads."""


@dataclass(frozen=True, eq=False)
class Request:
    """What to run, and what to keep of it."""

    order: np.ndarray             # (n,) slot j holds token order[j]; (B, n) a batch
    position_ids: np.ndarray      # by slot, shaped as ``order``
    aligned: bool = False         # computed in the original tokens' frame
    start: int = 0                # > 0: a causal suffix, slots start..n-1 only ...
    past: object = None           # ... from these keys and values (a Trace.past)
    keep_past: bool = False       # the Trace keeps its keys and values (causal)
    maps: MapSink | None = None   # the maps go here as computed, not into the Trace
    scores: bool = False          # the Trace keeps the pre-softmax scores too

    def __post_init__(self):
        order, pos = np.asarray(self.order), np.asarray(self.position_ids)
        object.__setattr__(self, "order", order)
        object.__setattr__(self, "position_ids", pos)
        if order.ndim not in (1, 2) or pos.shape != order.shape:
            raise PosvizInputError(f"{pos.shape} position ids for orders of shape "
                                   f"{order.shape}")
        if self.start and (self.aligned or self.past is None or order.ndim != 1
                           or not 0 < self.start < order.shape[0]):
            raise ValueError("a suffix is one order's slots from 1 to n - 1 on, computed "
                             "in slot order from an earlier run's keys and values")
        if self.keep_past and (self.aligned or order.ndim != 1):
            raise ValueError("only one order run in slot order keeps its keys and values")
        if order.ndim == 2 and (self.maps is not None or self.scores):
            raise ValueError("a batch's values go to the recorder it is run with")

    @classmethod
    def original(cls, position_ids, **keep) -> "Request":
        """The tokens in their original order at (n,) ``position_ids`` (a reference)."""
        pos = np.asarray(position_ids)
        return cls(np.arange(pos.shape[-1]), pos, **keep)

    @property
    def mode(self) -> str:
        """"plain", "aligned" or "suffix"."""
        return "aligned" if self.aligned else "suffix" if self.start else "plain"

    @property
    def batched(self) -> bool:
        return self.order.ndim == 2

    @property
    def n(self) -> int:
        """Tokens in the text (slots of each order)."""
        return self.order.shape[-1]

    def rows(self) -> np.ndarray:
        """(..., m) the original token each recorded row holds: every token, in its own
        order, when aligned; else the order's slots from ``start`` on."""
        if self.aligned:
            return np.broadcast_to(np.arange(self.n), self.order.shape)
        return self.order[..., self.start:]

    def row_positions(self) -> np.ndarray:
        """(..., m) the position id each recorded row is given."""
        if self.aligned:
            return per_token(self.order, self.position_ids)
        return self.position_ids[..., self.start:]
