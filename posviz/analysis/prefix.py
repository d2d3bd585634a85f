"""Causal prefix reuse: a reorder leaves every slot before the first moved one as it was.

Under a causal mask slot i sees only slots 0..i, so when the first ``start`` slots hold
the same tokens at the same position ids as in the reference run, their hidden states,
attention rows, branches, keys and values are the reference's. A backend that declares
``capabilities.prefix`` keeps a run's keys and values (``Trace.past``) and computes only
slots start..n-1 from them (``run(start=, past=)``); ``stitch`` puts the reference's
prefix rows back, so the result is the Trace a full run gives (to rounding).
"""
from __future__ import annotations

import numpy as np

from ..models.trace import Trace


def first_moved(order: np.ndarray, position_ids: np.ndarray,
                reference_ids: np.ndarray) -> int:
    """The first slot whose token or position id differs from the reference run's
    (the identity order at ``reference_ids``); n when none does."""
    n = order.shape[0]
    same = (order == np.arange(n)) & (np.asarray(position_ids) == np.asarray(reference_ids))
    moved = np.flatnonzero(~same)
    return int(moved[0]) if moved.size else n


def _rows(prefix: np.ndarray | None, suffix: np.ndarray | None, start: int,
          axis: int) -> np.ndarray | None:
    """The first ``start`` entries of ``prefix`` along ``axis``, then all of ``suffix``."""
    if prefix is None or suffix is None:
        return None
    head = prefix[(slice(None),) * axis + (slice(0, start),)]
    shape = list(suffix.shape)
    shape[axis] += start
    out = np.empty(shape, dtype=suffix.dtype)          # numpy: huge pages, see hooks._stack
    out[(slice(None),) * axis + (slice(0, start),)] = head
    out[(slice(None),) * axis + (slice(start, None),)] = suffix
    return out


def stitch(reference: Trace, suffix: Trace, start: int) -> Trace:
    """The full Trace of a run whose slots 0..start-1 equal ``reference``'s and whose
    slots start..n-1 are ``suffix`` (its arrays hold those rows only: attention and
    scores (L, h, n - start, n), the others (…, n - start, d))."""
    return Trace(
        tokens=reference.tokens[:start] + suffix.tokens,
        position_ids=np.concatenate([reference.position_ids[:start], suffix.position_ids]),
        embeddings=_rows(reference.embeddings, suffix.embeddings, start, 0),
        encodings=_rows(reference.encodings, suffix.encodings, start, 0),
        hidden=_rows(reference.hidden, suffix.hidden, start, 1),
        attention=_rows(reference.attention, suffix.attention, start, 2),
        scores=_rows(reference.scores, suffix.scores, start, 2),
        attn_out=_rows(reference.attn_out, suffix.attn_out, start, 1),
        mlp_out=_rows(reference.mlp_out, suffix.mlp_out, start, 1),
        attn_norm=_rows(reference.attn_norm, suffix.attn_norm, start, 1),
        mlp_norm=_rows(reference.mlp_norm, suffix.mlp_norm, start, 1),
        extras=suffix.extras,
    )
