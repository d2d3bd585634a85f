"""Per-layer measures of equivariance and invariance of a reordered run.

An order (n,) means the permuted sequence is tokens[order[0]], tokens[order[1]], ...
(models.orders). With H (n, d) the reference hidden states of a layer and H' the
permuted run's, the model is equivariant at that layer when H' = H[order], and its
attention is equivariant when A' = A[order][:, order] for every head.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..models import maps as layer_maps
from ..models.after import after_steps
from ..models.maps import MapsByLayer
from ..models.orders import check_permutation, inverse
from ..models.trace import PerTrace, Trace

METRICS = ("hidden_equivariance", "attention_equivariance", "last_token_change",
           "pooled_change")


def noise_floor(dtype) -> float:
    """100 × the machine epsilon of ``dtype`` (a numpy dtype or "bfloat16", which numpy
    lacks): the floor of values computed in it, before analysis.floor measures more."""
    eps = 2.0 ** -7 if str(dtype) == "bfloat16" else float(np.finfo(np.dtype(dtype)).eps)
    return 100.0 * eps


def floor_of(reference: Trace) -> float:
    """The reference's noise floor: measured (analysis.floor, when the engine ran it),
    else noise_floor of the precision it was computed in."""
    measured = reference.extras.get("floor")
    if measured is not None:
        return float(measured)
    return noise_floor(computed_in(reference))


def computed_in(reference: Trace):
    """The precision a run computed in: a half-precision model's is float32
    (models.hf.precision), recorded as ``computes_in``."""
    extras = reference.extras
    return extras.get("computes_in", extras.get("dtype", reference.hidden.dtype))


@dataclass(frozen=True)
class Comparison:
    """The reference run against the permuted run, per layer (0 = block input, 1..L)."""

    order: np.ndarray                    # (n,) the permutation
    hidden_equivariance: np.ndarray      # (L+1,) ||H' - H[order]||_F / ||H||_F
    attention_equivariance: np.ndarray   # (L+1,) max_h max |A' - A[order][:, order]|; NaN at 0
    last_token_change: np.ndarray        # (L+1,) ||H'[n-1] - H[n-1]|| / ||H[n-1]||
    pooled_change: np.ndarray            # (L+1,) ||mean H' - mean H|| / ||mean H||
    token_change: np.ndarray             # (L+1, n) per original token i:
                                         #   ||H'[inv[i]] - H[i]|| / ||H[i]||
    attention_aligned: MapsByLayer | None  # (L, h, n, n) A' with rows/cols back in
                                         #   original order, a layer per array; None past
                                         #   AttentionGaps' KEEP_ALL and from
                                         #   analysis.batch_metrics (sweeps)
    floor: float                         # noise floor of the reference (floor_of)

    def metric(self, name: str) -> np.ndarray:
        return getattr(self, name)

    def rows(self) -> list[dict]:
        """One dict per layer with the four metrics; NaN becomes None (JSON null)."""
        rows = []
        for layer in range(self.hidden_equivariance.shape[0]):
            row = {"layer": layer}
            for name in METRICS:
                value = float(self.metric(name)[layer])
                row[name] = None if np.isnan(value) else value
            rows.append(row)
        return rows


@dataclass(frozen=True, eq=False)
class ReferenceNorms:
    """What compare needs of the reference run alone, computed once per reference
    (reference_norms). A relative change divides by a ``by_`` norm: the norm, or the
    dtype's smallest normal number where it is smaller (analysis.batch_metrics divides
    by the same)."""

    token: np.ndarray         # (L+1, n) ||H[i]||
    mean: np.ndarray          # (L+1, d) mean H
    by_total: np.ndarray      # (L+1,) ||H||_F
    by_token: np.ndarray      # (L+1, n) ||H[i]||
    by_mean: np.ndarray       # (L+1,) ||mean H||


def _norms(reference: Trace) -> ReferenceNorms:
    H = reference.hidden                                           # (L+1, n, d)
    mean = H.mean(axis=1)                                          # (L+1, d)
    total, token = _differences(H)
    tiny = np.finfo(H.dtype).tiny
    return ReferenceNorms(token, mean, np.maximum(total, tiny), np.maximum(token, tiny),
                          np.maximum(_norm(mean, axis=1), tiny))


def layer_slices(x) -> list[slice]:
    """Slices of x's first axis (layers) of at most LAYERS_BYTES each, one layer at least:
    how a long input's stack of layers is worked through."""
    step = max(1, LAYERS_BYTES // max(1, x[0].nbytes)) if len(x) else 1
    return [slice(first, first + step) for first in range(0, len(x), step)]


def _differences(H: np.ndarray, Hp: np.ndarray | None = None, order=None):
    """||Hp - H'|| per layer (L+1,) and per row (L+1, n), where H' is H, or H's rows in
    ``order``; without Hp, H's own norms. At most LAYERS_BYTES of layers at a time: the
    whole difference and its squares were 0.3 GB each for SmolLM2 at 2,350 tokens."""
    dtype = H.dtype if Hp is None else np.result_type(H, Hp)
    total = np.empty(len(H), dtype)                                # (L+1,)
    rows = np.empty(H.shape[:2], dtype)                            # (L+1, n)
    for layers in layer_slices(H):
        h = H[layers] if order is None else H[layers][:, order]    # (k, n, d)
        d = h if Hp is None else Hp[layers] - h
        squares = d * d                            # (k, n, d): once for both norms
        total[layers] = np.sqrt(np.add.reduce(squares.reshape(len(d), -1), axis=1))
        rows[layers] = np.sqrt(np.add.reduce(squares, axis=2))
    return total, rows


def _norm(x: np.ndarray, axis: int) -> np.ndarray:
    """np.linalg.norm(x, axis=axis) of a real x: its arithmetic (the same numbers, bit
    for bit) without its checks, as _differences takes its two norms."""
    return np.sqrt(np.add.reduce(x * x, axis=axis))


def _causal_layers(reference: Trace) -> np.ndarray:
    """(L,) bool: is each layer's every map finite and exactly 0 above its diagonal (a
    causal run)? Read a layer at a time (a long input's maps may be on disk)."""
    A = reference.attention                                        # (L, h, n, n)
    n = A.shape[-1]
    above = np.triu(np.ones((n, n), dtype=bool), 1)                # (n, n)
    return np.array([bool(np.isfinite(maps).all() and not maps[..., above].any())
                     for maps in (A[l] for l in range(len(A)))])


reference_norms = PerTrace(_norms)
_causal_of = PerTrace(_causal_layers)


# Heads taken together by AttentionGaps: a layer at a time for short inputs (fewer calls),
# one head of a long one (no layer copied whole; larger batches were slower:
# benchmarks/README.md)
HEADS_BYTES = 1 << 20
COMPARING = "comparing the two orders' maps"    # AttentionGaps.finish, told
LAYERS_BYTES = 32 << 20    # hidden states compared at a time (a long input's in slices)


def largest_gap(difference: np.ndarray) -> float:
    """max |difference| of a non-empty array, NaN if any cell is: numpy's maximum and
    minimum, a pass each (together half the CPU of torch's one aminmax pass at MiniLM
    n = 512, a third at n = 64: benchmarks/README.md)."""
    high = float(np.maximum.reduce(difference, axis=None))    # both NaN if any cell is
    return max(high, -float(np.minimum.reduce(difference, axis=None)))


class MapsSink(Protocol):
    """What takes the maps as AttentionGaps passes them, a few heads at a time
    (views.pooling's MosaicTiles); the arrays are valid only during the call."""

    def heads(self, layer: int, heads: slice, original: np.ndarray, aligned: np.ndarray,
              difference: np.ndarray) -> float | None:
        """Heads ``heads`` of ``layer``: the reference's maps, the reordered run's put
        back, and aligned - original, (k, n, n) each. Returns max |difference| (NaN if
        any cell is) when it has it for less than a pass over the maps, else None."""

    def layer_done(self, layer: int) -> None:
        """Every head of ``layer`` has passed."""


class AttentionGaps:
    """The attention side of compare, a layer at a time: handed each layer's maps of
    the reordered run as the forward computes them (Backend.run's ``maps``), it puts
    them back in the original order a few heads at a time (at most HEADS_BYTES), takes
    the largest gap to the reference's and hands the heads to each of ``sinks``
    (MapsSink): at once for a long input, whose layer then goes (it is never
    copied whole), else once the forward is done (``finish``).

    The maps arrive in slot order, or with ``aligned`` already by original token (a run
    in the original tokens' frame: nothing is gathered). With ``start`` > 0 they hold
    slots start..n-1 only (causal prefix reuse, analysis.prefix): the slots before are
    the reference's, and on a causal reference their rows differ by exactly 0 (they are
    the reference's own rows here).

    ``aligned_maps`` keeps every layer's aligned maps (L, h, n, n) when they take at
    most models.maps.KEEP_ALL bytes (an aligned run's as the model made them); their
    gaps are taken and handed to the sinks by ``finish``, after the forward. Past
    KEEP_ALL only head ``keep`` = (layer 0..L-1, head) is kept, in ``kept_head``."""

    def __init__(self, reference: Trace, order: np.ndarray, start: int = 0,
                 aligned: bool = False, sinks=(), keep: tuple[int, int] | None = None):
        self.reference = reference.attention                      # (L, h, n, n)
        L, h, n, _ = self.reference.shape
        self.order = order                          # (n,) int, checked by the caller
        self.inv = inverse(order)
        self.start, self.aligned = start, aligned
        self.causal = _causal_of(reference) if start else np.zeros(L, bool)   # (L,)
        self.sinks, self.keep = tuple(sinks), keep
        self.gaps = np.zeros(L, self.reference.dtype)                          # (L,)
        whole = L * h * n * n * self.reference.dtype.itemsize <= layer_maps.KEEP_ALL
        self.layers: list[np.ndarray] | None = [] if whole else None        # L × (h, n, n)
        self.kept_head: np.ndarray | None = None                               # (n, n)
        self.step = max(1, HEADS_BYTES // max(1, n * n * self.reference.dtype.itemsize))
        self._cells: np.ndarray | None = None                                  # (m*n,)
        self._gap: np.ndarray | None = None                                    # (step, n, n)
        self._compared = 0                                  # layers whose gaps are taken

    def __call__(self, layer: int, maps) -> None:
        """Layer ``layer``'s maps of the reordered run, (h, m, n), a tensor, an array or
        a file-backed layer read a head at a time (models.maps.HeadsOf)."""
        import torch  # loaded already: the maps came from a model

        Ap = (maps.numpy() if isinstance(maps, torch.Tensor) else
              maps if isinstance(maps, layer_maps.HeadsOf) else np.asarray(maps))
        h, causal = Ap.shape[0], self.causal[layer]
        if self.layers is not None:
            # kept whole: put back now (the run's maps go), compared by ``finish``; an
            # aligned run's are kept as the model made them (a copy of every map was a
            # sixth of MiniLM's evaluation at n = 512)
            held = Ap
            if not (self.aligned and isinstance(Ap, np.ndarray)):
                held = np.empty((h, *self.reference.shape[2:]), self.reference.dtype)
                for heads in self._chunks(h):
                    out = held[heads]                                      # (k, n, n)
                    put = self._put_back(Ap[heads], self.reference[layer, heads], causal,
                                         out)
                    if put is not out:
                        out[...] = put
            self.layers.append(held)
            return
        gaps = []
        for heads in self._chunks(h):
            A = self.reference[layer, heads]                               # (k, n, n)
            aligned = self._put_back(Ap[heads], A, causal)                 # (k, n, n)
            if self.keep is not None and self.keep[0] == layer and (
                    heads.start <= self.keep[1] < heads.stop):
                self.kept_head = aligned[self.keep[1] - heads.start].copy()
            gaps.append(self._gap_of(layer, heads, aligned, A))
        self._layer_done(layer, gaps)

    def finish(self, should_stop=None) -> None:
        """Compare the layers kept whole that are not compared yet: after the forward,
        not between its layers, where each comparison started cold (6% of the built-in's
        evaluation at n = 16 and 64). ``should_stop`` is asked before each layer; True
        raises errors.Cancelled (a superseded request: MiniLM's six at n = 512 take
        about 10 ms, with the mosaic's pooling)."""
        first, kept = self._compared, len(self.layers or ())
        with after_steps(COMPARING, kept - first) as step:
            for layer in range(first, kept):
                step(layer - first)
                if should_stop is not None and should_stop():
                    from ..errors import Cancelled
                    raise Cancelled("superseded by a newer request")
                held = self.layers[layer]                                  # (h, n, n)
                self._layer_done(layer, [
                    self._gap_of(layer, heads, held[heads], self.reference[layer, heads])
                    for heads in self._chunks(len(held))])

    def _chunks(self, h: int) -> list[slice]:
        """h heads, ``step`` at a time."""
        return [slice(first, min(first + self.step, h)) for first in range(0, h, self.step)]

    def _layer_done(self, layer: int, gaps: list) -> None:
        self.gaps[layer] = gaps[0] if len(gaps) == 1 else np.max(gaps)    # NaN if any is
        self._compared = layer + 1
        for sink in self.sinks:
            sink.layer_done(layer)

    @property
    def aligned_maps(self) -> MapsByLayer | None:
        """(L, h, n, n) every layer's maps put back, when kept whole."""
        return None if self.layers is None else MapsByLayer(self.layers)

    def _gap_of(self, layer: int, heads: slice, aligned: np.ndarray, A: np.ndarray):
        """max |aligned - A| of some heads' (k, n, n) maps, NaN if any cell is; the
        difference is handed to the sinks on the way (one buffer, reused)."""
        k = len(A)
        if self._gap is None or self._gap.shape[1:] != A.shape[1:] or (
                len(self._gap) < k or self._gap.dtype != A.dtype):
            self._gap = np.empty((max(k, self.step), *A.shape[1:]), A.dtype)
        import torch

        # torch's subtraction, on torch's threads (numpy's is slower:
        # benchmarks/README.md); numpy's extremes (largest_gap)
        difference = self._gap[:k]                                         # (k, n, n)
        torch.sub(torch.from_numpy(aligned), torch.from_numpy(A),
                  out=torch.from_numpy(difference))
        told = None             # a sink's: the mosaic's pooled difference holds the gap
        for sink in self.sinks:
            got = sink.heads(layer, heads, A, aligned, difference)
            told = told if got is None else got
        if not difference.size:
            return 0.0
        return largest_gap(difference) if told is None else told

    def _put_back(self, Ap: np.ndarray, A: np.ndarray, causal: bool,
                  out: np.ndarray | None = None) -> np.ndarray:
        """Some heads' maps Ap (k, m, n) with rows and columns back in the original
        order; rows 0..start-1 (a suffix run's) are the reference's A (k, n, n), whose
        columns past the first start are 0 when it is ``causal`` (else they are put back
        in order too). A full run's are gathered into ``out`` (k, n, n) when given.

        One gather over each flattened map: entry (j, k) of an aligned map is entry
        (inv[j], inv[k]) of the permuted one; mode "wrap" skips the bounds check of
        every cell (all are in range). The cells are the same for every head."""
        if self.aligned:
            return Ap
        k, m, n = Ap.shape
        start, inv = self.start, self.inv
        if self._cells is None:     # rows start..n-1: row inv[i] - start of Ap
            index = np.int32 if m * n < 2**31 else np.int64
            self._cells = ((inv[start:, None] - start) * n + inv[None, :]).astype(
                index).ravel()                                             # (m*n,)
        if not start and out is not None:
            np.take(Ap.reshape(k, m * n), self._cells, axis=1, mode="wrap",
                    out=out.reshape(k, m * n))
            return out
        rows = np.take(Ap.reshape(k, m * n), self._cells, axis=1,
                       mode="wrap").reshape(k, m, n)
        if not start:
            return rows
        out = np.empty((k, n, n), Ap.dtype)                                  # (k, n, n)
        out[:, :start] = A[:, :start] if causal else A[:, :start][:, :, inv]
        out[:, start:] = rows
        return out


def compare(reference: Trace, permuted: Trace, order, start: int = 0,
            aligned: bool = False, attention: AttentionGaps | None = None) -> Comparison:
    """Measure how far the permuted run is from the permuted reference, layer by layer.

    ``start`` > 0 says that the order leaves slots 0..start-1 in place and that the
    permuted run's rows there are the reference's (causal prefix reuse,
    analysis.prefix). ``aligned`` says that ``permuted`` was recorded in the original
    tokens' order (Backend.run(aligned=True): row i token i). ``attention`` is the
    AttentionGaps of the same order the permuted run's maps went to as they were
    computed; without it,
    the permuted Trace's maps go through one here.
    """
    n = reference.n_tokens
    if attention is None:
        order = check_permutation(order, n)
        inv = inverse(order)
    else:                                         # checked and inverted already
        order, inv = attention.order, attention.inv
    if aligned and (start or permuted.tokens != reference.tokens):
        raise ValueError("an aligned run holds the reference's tokens, and all of them")
    H, Hp = reference.hidden, permuted.hidden                     # (L+1, n, d)
    norms = reference_norms(reference)

    change, by_row = _differences(H, Hp, None if aligned else order)   # (L+1,), (L+1, n)
    last_slot = Hp[:, order[-1]] if aligned else Hp[:, -1]        # (L+1, d)
    hidden_eq = change / norms.by_total
    token_change = (by_row if aligned else by_row[:, inv]) / norms.by_token

    last = _norm(last_slot - H[:, -1], axis=1) / norms.by_token[:, -1]
    mean_p = np.add.reduce(Hp, axis=1) / Hp.shape[1]              # (L+1, d): Hp.mean(1)
    pooled = _norm(mean_p - norms.mean, axis=1) / norms.by_mean

    if attention is None:
        attention = AttentionGaps(reference, order, start, aligned)
        for layer in range(len(permuted.attention)):
            maps = permuted.attention[layer]                      # (h, n or n - start, n)
            attention(layer, maps[:, start:] if maps.shape[-2] == n else maps)
    attention.finish()
    return Comparison(
        order=order,
        hidden_equivariance=hidden_eq,
        attention_equivariance=np.concatenate([[np.nan], attention.gaps]),
        last_token_change=last,
        pooled_change=pooled,
        token_change=token_change,
        attention_aligned=attention.aligned_maps,
        floor=floor_of(reference),
    )
