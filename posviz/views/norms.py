"""The branch norms (the Tokens tab's "how large" figure): the mean token norm of the
residual stream and of each branch's output per layer, for the reordered run and the
original one.

A window mostly shows another tab, and at MiniLM n = 512 these norms took 5-9 ms of
the worker's 16 ms of views a reorder: ``branch_norms`` hands a mapping that computes
them when first read (the figure drawn, exported or asked for its arrays), holding the
run's states until then when they are small (at most NORMS_HELD bytes; larger ones are
computed at once, so no long text's states outlive its views: Evaluation.for_screen).
"""
from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.symmetry import layer_slices
from ..models.trace import PerTrace, Trace

if TYPE_CHECKING:
    from ..analysis.engine import Evaluation

BRANCHES = ("attention_branch", "mlp_branch")
STATES = ("hidden", "attn_out", "mlp_out", "attn_norm", "mlp_norm")  # what the norms read
NORMS_HELD = 32 << 20    # bytes of a run's states held until the norms are read


def mean_token_norm(x: np.ndarray) -> np.ndarray:
    """(L, n, d) -> (L,) mean over tokens of the per-token L2 norm, at most LAYERS_BYTES
    of layers at a time: the squares of SmolLM2's (L+1, n, d) at 2,350 tokens took
    0.3 GB at once."""
    return np.concatenate([np.linalg.norm(x[layers], axis=-1).mean(axis=-1)
                           for layers in layer_slices(x)] or [np.empty(0, x.dtype)])


def _trace_norms(trace) -> dict[str, np.ndarray]:
    """{name: (L+1,)} one run's mean token norms (branch_norms), in any frame; ``trace``
    a Trace or anything with its STATES."""
    norms = {"residual": mean_token_norm(trace.hidden)}                       # (L+1,)
    for key, array, token_norms in zip(BRANCHES, (trace.attn_out, trace.mlp_out),
                                       (trace.attn_norm, trace.mlp_norm)):
        if token_norms is not None:                                          # (L, n)
            norms[key] = np.concatenate([[np.nan], token_norms.mean(axis=-1)])
        elif array is not None:                                              # (L, n, d)
            norms[key] = np.concatenate([[np.nan], mean_token_norm(array)])
    return norms


_norms_of = PerTrace(_trace_norms)      # the original's, once per reference run


def missing_branches(run) -> tuple[str, ...]:
    """The branches a run (a Trace, or its States) does not record."""
    return tuple(key for key, array, token_norms in zip(
        BRANCHES, (run.attn_out, run.mlp_out), (run.attn_norm, run.mlp_norm))
        if array is None and token_norms is None)


class States:
    """The STATES of a run, without the rest of its Trace (its maps, keys and values)."""

    def __init__(self, run: Trace):
        for name in STATES:
            setattr(self, name, getattr(run, name))

    @property
    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in STATES
                   if getattr(self, name) is not None)


def norms_now(run, reference: Trace) -> dict[str, np.ndarray]:
    """{name: (L+1,)}: the run's norms, then the original's suffixed "_original"."""
    original = _norms_of(reference)
    return {**_trace_norms(run), **{name + "_original": values
                                     for name, values in original.items()}}


class LazyNorms(Mapping):
    """norms_now(run, reference), computed when first read; the run's states are let go
    then."""

    def __init__(self, run: States, reference: Trace):
        self._sources: tuple | None = (run, reference)
        self._norms: dict[str, np.ndarray] | None = None
        self._lock = threading.Lock()

    @property
    def computed(self) -> bool:
        return self._norms is not None

    def _values(self) -> dict[str, np.ndarray]:
        with self._lock:
            if self._norms is None:
                self._norms = norms_now(*self._sources)
                self._sources = None
            return self._norms

    def __getitem__(self, key):
        return self._values()[key]

    def __iter__(self):
        return iter(self._values())

    def __len__(self):
        return len(self._values())


def branch_norms(ev: Evaluation) -> tuple[Mapping[str, np.ndarray], tuple[str, ...]]:
    """{name: (L+1,)} mean token norms of the residual stream and of each branch's
    output (NaN at the input, where no block has run yet), for the reordered run and,
    suffixed "_original", the original one; and the branches the model does not record.
    The norms are computed when first read while the run's states are at most
    NORMS_HELD bytes and its maps are kept whole (comparison.attention_aligned, far
    larger), at once otherwise: a long input's window holds no run of its own."""
    states = States(ev.run)
    missing = missing_branches(states)
    if states.nbytes > NORMS_HELD or ev.comparison.attention_aligned is None:
        return norms_now(states, ev.reference), missing
    return LazyNorms(states, ev.reference), missing
