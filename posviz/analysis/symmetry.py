"""Per-layer measures of equivariance and invariance of a reordered run.

An order (n,) means the permuted sequence is tokens[order[0]], tokens[order[1]], ...
(models.orders). With H (n, d) the reference hidden states of a layer and H' the
permuted run's, the model is equivariant at that layer when H' = H[order], and its
attention is equivariant when A' = A[order][:, order] for every head.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.orders import check_permutation, inverse
from ..models.trace import PerTrace, Trace

METRICS = ("hidden_equivariance", "attention_equivariance", "last_token_change",
           "pooled_change")


def noise_floor(dtype) -> float:
    """Differences below this are floating-point rounding, not a broken symmetry."""
    return 100.0 * float(np.finfo(np.dtype(dtype)).eps)


def _relative(diff_norm: np.ndarray, ref_norm: np.ndarray) -> np.ndarray:
    tiny = np.finfo(ref_norm.dtype).tiny
    return diff_norm / np.maximum(ref_norm, tiny)


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
    attention_aligned: np.ndarray | None  # (L, h, n, n) A' with rows/cols back in original
                                         #   order; None from core.batch_metrics (sweeps)
    floor: float                         # noise floor for the traces' dtype

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
    (reference_norms; core.batch_metrics divides by the same)."""

    total: np.ndarray         # (L+1,) ||H||_F
    token: np.ndarray         # (L+1, n) ||H[i]||
    mean_norm: np.ndarray     # (L+1,) ||mean H||
    mean: np.ndarray          # (L+1, d)


def _norms(reference: Trace) -> ReferenceNorms:
    H = reference.hidden                                           # (L+1, n, d)
    mean = H.mean(axis=1)                                          # (L+1, d)
    return ReferenceNorms(np.linalg.norm(H.reshape(H.shape[0], -1), axis=1),
                           np.linalg.norm(H, axis=2), np.linalg.norm(mean, axis=1), mean)


def _causal_zeros(reference: Trace) -> bool:
    """Whether every map is finite and exactly 0 above its diagonal (a causal run)."""
    A = reference.attention                                        # (L, h, n, n)
    n = A.shape[-1]
    above = np.triu(np.ones((n, n), dtype=bool), 1)                # (n, n)
    return bool(np.isfinite(A).all() and not A[..., above].any())


reference_norms = PerTrace(_norms)
_causal_of = PerTrace(_causal_zeros)

def _largest_gaps(aligned: np.ndarray, original: np.ndarray) -> np.ndarray:
    """(L, h, m, n) twice -> (L,) max |aligned - original| per layer (0 when m = 0),
    a layer at a time in one reused buffer on torch's threads."""
    import torch  # loaded already: the runs came from a model

    L = aligned.shape[0]
    out = np.zeros(L, aligned.dtype)                                   # (L,)
    if aligned.size == 0:
        return out
    a, o = torch.from_numpy(aligned), torch.from_numpy(original)
    gap = torch.empty(a.shape[1:], dtype=a.dtype)                       # (h, m, n)
    for layer in range(L):
        out[layer] = torch.sub(a[layer], o[layer], out=gap).abs_().amax()
    return out


def _put_back(Ap: np.ndarray, A: np.ndarray, inv: np.ndarray, start: int) -> np.ndarray:
    """The permuted run's maps Ap (L, h, n, n) with rows and columns back in the original
    order; with ``start`` > 0 (see compare) rows 0..start-1 are the reference's A.

    One gather over flattened maps: entry (j, k) of an aligned map is entry
    (inv[j], inv[k]) of the permuted one. ~1.3-1.7x faster than two np.take passes,
    ~3x faster than chained fancy indexing (75 MB per trace at n = 512); mode "wrap"
    skips the bounds check of every cell (all are in range): ~1.7-2x faster again."""
    L, h, _, n = Ap.shape
    if not start:
        cells = (inv[:, None] * n + inv[None, :]).ravel()                    # (n*n,)
        return np.take(Ap.reshape(L * h, n * n), cells, axis=1,
                       mode="wrap").reshape(L, h, n, n)
    aligned = np.empty_like(Ap)                                   # (L, h, n, n)
    aligned[:, :, :start] = A[:, :, :start]
    # rows start..n-1 of the aligned maps: inv maps start..n-1 onto themselves
    cells = (inv[start:, None] * n + inv[None, :]).ravel()                   # (m*n,)
    aligned[:, :, start:] = np.take(Ap.reshape(L * h, n * n), cells, axis=1,
                                    mode="wrap").reshape(L, h, n - start, n)
    return aligned


def compare(reference: Trace, permuted: Trace, order, start: int = 0,
            aligned: bool = False) -> Comparison:
    """Measure how far the permuted run is from the permuted reference, layer by layer.

    ``start`` > 0 says that the order leaves slots 0..start-1 in place and that the
    permuted run's rows there are the reference's (causal prefix reuse, core.prefix).
    When the reference's maps are causal (exactly 0 above the diagonal), the aligned
    maps' first ``start`` rows are then the reference's and differ from them by exactly
    0, so only the later rows are gathered and compared: the same numbers.

    ``aligned`` says that ``permuted`` was recorded in the original tokens' order
    (Backend.run_aligned: row i token i): its maps are the aligned ones as they stand,
    and nothing is gathered.
    """
    n = reference.n_tokens
    order = check_permutation(order, n)
    if aligned and (start or permuted.tokens != reference.tokens):
        raise ValueError("an aligned run holds the reference's tokens, and all of them")
    inv = inverse(order)
    H, Hp = reference.hidden, permuted.hidden                     # (L+1, n, d)
    norms = reference_norms(reference)

    if aligned:                                                   # row i: token i
        diff = Hp - H                                             # (L+1, n, d)
        by_token = diff
        last_slot = Hp[:, order[-1]]                              # (L+1, d)
    else:
        diff = Hp - H[:, order]
        by_token = diff[:, inv]
        last_slot = Hp[:, -1]
    hidden_eq = _relative(np.linalg.norm(diff.reshape(H.shape[0], -1), axis=1), norms.total)
    token_change = _relative(np.linalg.norm(by_token, axis=2), norms.token)

    last = _relative(np.linalg.norm(last_slot - H[:, -1], axis=1), norms.token[:, -1])
    mean_p = Hp.mean(axis=1)                                      # (L+1, d)
    pooled = _relative(np.linalg.norm(mean_p - norms.mean, axis=1), norms.mean_norm)

    A, Ap = reference.attention, permuted.attention               # (L, h, n, n)
    if aligned:
        aligned_maps = Ap
    else:
        if not (0 < start < n and np.array_equal(order[:start], np.arange(start))
                and _causal_of(reference)):
            start = 0
        aligned_maps = _put_back(Ap, A, inv, start)
    attn_gap = _largest_gaps(aligned_maps[:, :, start:], A[:, :, start:])  # (L,)
    attention_eq = np.concatenate([[np.nan], attn_gap])

    return Comparison(
        order=order,
        hidden_equivariance=hidden_eq,
        attention_equivariance=attention_eq,
        last_token_change=last,
        pooled_change=pooled,
        token_change=token_change,
        attention_aligned=aligned_maps,
        floor=noise_floor(H.dtype),
    )
