"""Sinusoidal absolute positions (Vaswani et al. 2017, "Attention Is All You Need", §3.5).

PE(p, 2i) = sin(p / 10000^(2i/d)),  PE(p, 2i+1) = cos(p / 10000^(2i/d)).
For an odd width d the last column is a sine without its cosine partner; code that
fills ``pe[:, 1::2]`` with ``cos(p * freq)`` for all ceil(d/2) frequencies crashes there.
"""
from __future__ import annotations

from .base import PositionalEncoding, RelativeProfile, cosine_similarity

BASE = 10000.0


def sinusoidal_table(positions, d: int, base: float = BASE):
    """positions: (n,) tensor -> (n, d) table, correct for odd d."""
    import torch

    dtype = positions.dtype if positions.is_floating_point() else torch.float64
    positions = positions.to(dtype)
    even = torch.arange(0, d, 2, dtype=dtype)                 # (ceil(d/2),) = 2i
    freq = base ** (-even / d)                                # (ceil(d/2),)
    angle = positions[:, None] * freq[None, :]                # (n, ceil(d/2))
    pe = torch.empty(positions.shape[0], d, dtype=dtype)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])               # d//2 cosines
    return pe


class SinusoidalEncoding(PositionalEncoding):
    kind = "sinusoidal"
    title = "sinusoidal (Vaswani 2017)"
    acts = "absolute"
    summary = "a fixed vector of sines and cosines of the position, added to each token"
    where = "adds a fixed sinusoid to each token embedding"
    short = "sinusoidal"
    shift_invariant = False  # a vector of the position itself, added to the token

    # The rows of the last range of positions asked for are kept when it is at most this
    # long: a reorder asks for the same range again (their cost: benchmarks/README.md)
    KEPT_ROWS = 1 << 14

    def __init__(self, d_model: int, scale: float = 1.0):
        super().__init__(scale)
        self.d_model = d_model
        self._kept = None                  # (first position, (rows, d) tensor)

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(d_model, scale)

    @classmethod
    def parameters(cls, d_model, n_heads):
        return {"base": BASE}

    def absolute(self, position_ids):
        """(n,) int -> (n, d) float64."""
        import torch

        def table(positions):
            return self.scale * sinusoidal_table(positions.to(torch.float64), self.d_model)

        if position_ids.numel() == 0 or position_ids.is_floating_point():
            return table(position_ids)
        low, high = int(position_ids.min()), int(position_ids.max()) + 1
        kept = self._kept
        if kept is None or low < kept[0] or high > kept[0] + kept[1].shape[0]:
            if high - low > self.KEPT_ROWS:
                return table(position_ids)
            kept = self._kept = (low, table(torch.arange(low, high)))  # (high - low, d)
        return kept[1][position_ids - kept[0]]

    def profile(self, reach, causal):
        """The cosine of PE(p) and PE(p + Δ): the same for every p (a Toeplitz matrix)."""
        import numpy as np
        import torch

        positions = torch.arange(2 * reach + 1)                           # query at `reach`
        with torch.no_grad():
            table = self.absolute(positions).numpy()                      # (D, d)
        values = cosine_similarity(table, row=reach)                      # (D,)
        return RelativeProfile(np.arange(-reach, reach + 1), values[None], ("all positions",),
                               "cosine of PE(p) and PE(p+Δ)", "cosine")
