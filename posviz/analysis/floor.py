"""The noise floor of a reference run, measured once per reference (not per reorder).

A change below the floor cannot be told from rounding: it is no larger than two
mathematically equal ways of doing the same computation can differ (a real change may
lie there too, too small for this precision to show). The floor starts at 100 × the
machine epsilon of the precision the model computes in (symmetry.noise_floor; a real
model with half-precision weights computes in float32: models.hf.precision). When the
model's encoding declares that a common shift of every position id leaves it unchanged
in exact arithmetic (PositionalEncoding.shift_invariant: none, RoPE, ALiBi, T5), the
reference's tokens run once more with every position id shifted up by one more than the
largest the run uses (p → p + max p + 1; down to 0 when the model has no room above),
and SAFETY × the largest relative change of the hidden states over the layers raises the
floor when it is larger. With none, ALiBi and T5 that run is bit-identical (the floor
stays 100 × eps); RoPE rounds its angles otherwise at other positions, which raises the
floor of the built-in model in float64 at large positions and of transformers' RoPE
(angles in float32). A model whose positions are its slots (no position ids, such as
Bloom) cannot be shifted and keeps 100 × eps.
"""
from __future__ import annotations

import numpy as np

from ..models import reached
from ..models.backend import Backend, TokenSequence
from ..models.config import Positions
from ..models.encodings import ENCODINGS
from ..models.request import Request, discard
from ..models.trace import Trace
from .symmetry import computed_in, noise_floor

SAFETY = 3.0     # the shifted run rounds at up to twice the run's positions: a margin
FLOOR_RUN = "the original order at shifted positions, for the noise floor"  # its run
BELOW_FLOOR = "a change below it cannot be told from rounding"   # what the floor means


def shift_invariant(backend: Backend) -> bool:
    """Does a common shift of every position id leave the model's output unchanged (in
    exact arithmetic)?"""
    encoding = ENCODINGS.get(backend.facts().scheme)
    return encoding is not None and encoding.shift_invariant


def shift_for(position_ids: np.ndarray, limit: int | None) -> int:
    """The shift of the measuring run: max p + 1 when the model has room, else down to 0,
    else as far up as it goes (0: no room at all)."""
    low, high = int(position_ids.min()), int(position_ids.max())
    if limit is None or 2 * high + 1 < limit:
        return high + 1
    return -low if low > 0 else max(limit - 1 - high, 0)


def floor_shift(backend: Backend, seq: TokenSequence, positions: Positions) -> int:
    """The shift of the floor's measuring run, 0 when none runs (a forward told ahead:
    api.model.Model.report counts it)."""
    ids = positions.ids(np.arange(len(seq)))                                # (n,)
    shift = shift_for(ids, backend.max_positions) if shift_invariant(backend) else 0
    return shift if backend.capabilities.position_ids else 0   # Bloom's ALiBi: slots only


def measured_floor(backend: Backend, seq: TokenSequence, positions: Positions,
                   reference: Trace, should_stop=None) -> float:
    """The floor of ``reference`` (the identity order of ``seq`` at ``positions``): see
    the module's docstring. Costs one more forward of the reference when it measures."""
    floor = noise_floor(computed_in(reference))
    identity = np.arange(len(seq))
    ids = positions.ids(identity)                                        # (n,)
    shift = floor_shift(backend, seq, positions)
    if not shift:
        return floor
    with reached.named(FLOOR_RUN):
        shifted = backend.run(seq, Request(identity, ids + shift, maps=discard),
                              should_stop)
    relative = [_relative_change(shifted.hidden[layer], reference.hidden[layer])
                for layer in range(len(reference.hidden))]                  # L+1 layers
    return max(floor, SAFETY * max(relative))


def _relative_change(shifted: np.ndarray, hidden: np.ndarray) -> float:
    """||shifted - hidden|| / ||hidden|| of one layer's (n, d) states, in float64; a layer
    at a time: all of them in float64 were 0.6 GB for SmolLM2 at 2,350 tokens."""
    H = hidden.astype(np.float64).reshape(1, -1)                             # (1, n·d)
    change = np.linalg.norm(shifted.reshape(1, -1) - H, axis=1)[0]
    return float(change / max(np.linalg.norm(H, axis=1)[0], np.finfo(np.float64).tiny))


def with_floor(reference: Trace, floor: float) -> Trace:
    """The reference with its measured floor (read by symmetry.floor_of)."""
    from dataclasses import replace
    return replace(reference, extras={**reference.extras, "floor": floor})
