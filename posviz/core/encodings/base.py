"""The interface every positional encoding implements.

An encoding may act in three places of a transformer, and most act in one:
- ``absolute``: a vector added to each token embedding (sinusoidal, learned);
- ``rotate``: a rotation of queries and keys inside attention (RoPE);
- ``bias``: a term added to the attention scores (ALiBi, T5 relative bias).
Every method takes explicit position ids, so positions can belong to slots or travel
with their tokens, and can start at an offset.
"""
from __future__ import annotations

import torch
from torch import nn


class PositionalEncoding(nn.Module):
    """No positional information at all (NoPE): every method is the identity."""

    kind = "none"
    title = "none (NoPE)"

    def __init__(self, scale: float = 1.0):
        super().__init__()
        self.scale = float(scale)

    def check(self, position_ids: torch.Tensor) -> None:
        """Raise PosvizInputError if these positions cannot be encoded."""

    def absolute(self, position_ids: torch.Tensor) -> torch.Tensor | None:
        """(n,) int -> (n, d) additive encoding, or None."""
        return None

    def rotate(self, q: torch.Tensor, k: torch.Tensor, position_ids: torch.Tensor):
        """q, k: (h, n, d_head) -> rotated q, k of the same shape."""
        return q, k

    def bias(self, position_ids: torch.Tensor, causal: bool) -> torch.Tensor | None:
        """(n,) int -> (h, n, n) additive attention-score bias, or None."""
        return None
