"""The interface every positional encoding implements.

An encoding may act in three places of a transformer, and most act in one:
- ``absolute``: a vector added to each token embedding (sinusoidal, learned);
- ``rotate``: a rotation of queries and keys inside attention (RoPE);
- ``bias``: a term added to the attention scores (ALiBi, T5 relative bias).
Every method takes explicit position ids, so positions can belong to slots or travel
with their tokens, and can start at an offset. ``profile`` says what the encoding does
as a function of the relative distance between a query and a key.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from ..options import TITLES


def cosine_similarity(table: np.ndarray) -> np.ndarray:
    """(n, d) -> (n, n) cosine similarity between the rows (0 for a zero row)."""
    norms = np.linalg.norm(table, axis=1, keepdims=True)                  # (n, 1)
    unit = table / np.where(norms > 0, norms, 1)
    return unit @ unit.T


@dataclass(frozen=True, eq=False)
class RelativeProfile:
    """An encoding's effect against relative distance Δ = key − query position."""

    distances: np.ndarray        # (D,) int, -reach..reach
    values: np.ndarray           # (rows, D), NaN where a key is masked
    rows: tuple[str, ...]        # (rows,) what each row is ("head 0", "all heads", ...)
    quantity: str                # what the values are, for a title
    axis: str                    # a short name of it, for the vertical axis


class PositionalEncoding(nn.Module):
    """No positional information at all (NoPE): every method is the identity."""

    kind = "none"
    title = TITLES["none"]

    def __init__(self, scale: float = 1.0):
        super().__init__()
        self.scale = float(scale)

    def check(self, position_ids: torch.Tensor) -> None:
        """Raise PosvizInputError if these positions cannot be encoded."""

    @property
    def adds_bias(self) -> bool:
        """Whether ``bias`` adds a term to the scores (an encoding that defines it)."""
        return type(self).bias is not PositionalEncoding.bias

    def absolute(self, position_ids: torch.Tensor) -> torch.Tensor | None:
        """(n,) int -> (n, d) additive encoding, or None."""
        return None

    def rotate(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        """q, k: (h, n, d_head) -> rotated q, k of the same shape."""
        return q, k

    def bias(self, position_ids: torch.Tensor, causal: bool) -> torch.Tensor | None:
        """(n,) int -> (h, n, n) additive attention-score bias, or None."""
        return None

    def profile(self, reach: int, causal: bool) -> RelativeProfile | None:
        """The effect against Δ in -reach..reach, seen from a query at position
        ``reach``; None when the encoding has no fixed relation between p and p + Δ.

        Here: the score bias of each head, for an encoding that adds one (future keys
        are NaN under a causal mask: they are masked anyway).
        """
        distances = np.arange(-reach, reach + 1)                          # (D,)
        positions = torch.arange(2 * reach + 1)                           # query at `reach`
        with torch.no_grad():
            bias = self.bias(positions, causal)                           # (h, D, D)
        if bias is None:
            return None
        values = bias[:, reach].numpy().copy()                            # (h, D)
        if causal:
            values[:, distances > 0] = np.nan
        return RelativeProfile(distances, values,
                               tuple(f"head {i}" for i in range(values.shape[0])),
                               "bias added to the score", "bias added to the score")
