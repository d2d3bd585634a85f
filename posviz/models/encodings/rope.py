"""Rotary position embedding, RoPE (Su et al. 2021, "RoFormer", §3.4).

Each pair of query/key dimensions is rotated by an angle proportional to the position,
so q_p · k_p' depends on the positions only through p - p'. Pairs are (i, i + d_head/2),
the "rotate half" layout of GPT-NeoX and Llama, which is the paper's interleaved layout
up to a fixed permutation of dimensions. ``scale`` multiplies the angles: 0 turns the
rotation off, 1 is the paper.
"""
from __future__ import annotations

from ...errors import PosvizInputError
from .base import PositionalEncoding, RelativeProfile

BASE = 10000.0


def rope_angles(position_ids, d_head: int, base: float = BASE, dtype=None):
    """(n,) -> (n, d_head/2) rotation angles p * base^(-2i/d_head), float64 unless
    ``dtype`` says otherwise."""
    import torch

    dtype = dtype or torch.float64
    inv_freq = base ** (-torch.arange(0, d_head, 2, dtype=dtype) / d_head)  # (d_head/2,)
    return position_ids.to(dtype)[:, None] * inv_freq[None, :]


def apply_rope(x, angles):
    """x: (h, n, d_head), angles: (n, d_head/2) -> x rotated, same shape."""
    import torch

    half = x.shape[-1] // 2
    cos = torch.cos(angles).to(x.dtype)                      # (n, d_head/2)
    sin = torch.sin(angles).to(x.dtype)
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class RotaryEncoding(PositionalEncoding):
    kind = "rope"
    title = "RoPE (Su 2021)"
    acts = "rotate"
    summary = "queries and keys rotated by angles proportional to their positions"
    where = "rotates queries and keys inside attention"
    short = "RoPE"
    shift_invariant = True  # scores depend on p_i - p_j alone
    pairs_dimensions = True

    def __init__(self, d_head: int, scale: float = 1.0, base: float = BASE,
                 scaling=None):
        super().__init__(scale)
        if d_head % 2:
            raise PosvizInputError(
                f"RoPE needs an even head width, but d_model/heads = {d_head}"
            )
        self.d_head = d_head
        self.base = base
        # a way past the training length (rope_scaling.RopeScaling), else as trained
        self.scaling = scaling
        self._frequencies = None if scaling is None else scaling.frequencies(d_head, base)

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(d_model // n_heads, scale)

    @classmethod
    def parameters(cls, d_model, n_heads):
        return {"base": BASE, "rotary_fraction": 1.0}

    @classmethod
    def describe(cls, offset=0, base=None, rotary_fraction=1.0, local_base=None, **rest):
        text = "RoPE"
        if base is not None:
            text += f", θ = {base:g}"
        if local_base is not None:
            text += f" (local layers {local_base:g})"
        if rotary_fraction is not None and rotary_fraction < 1:
            text += f", rotary on {rotary_fraction:.0%} of each head"
        return text

    def angles(self, position_ids):
        """(n,) -> (n, d_head/2)."""
        if self._frequencies is None:
            return self.scale * rope_angles(position_ids, self.d_head, self.base)
        import torch
        inv_freq = self._frequencies[0]                                   # (d_head/2,)
        return self.scale * position_ids.to(torch.float64)[:, None] * inv_freq[None, :]

    def rotate(self, q, k, position_ids):
        angles = self.angles(position_ids)
        q, k = apply_rope(q, angles), apply_rope(k, angles)
        if self._frequencies is not None and self._frequencies[1] != 1.0:
            factor = self._frequencies[1]          # on cos and sin: q·k times its square
            q, k = q * factor, k * factor
        return q, k

    def profile(self, reach, causal):
        """q·k / d_head for q = k = 1 against Δ, the same for every head: one aligned
        pair whose score falls with distance, under the bound RoFormer §3.4.3 proves
        (the score of other pairs need not fall: Barbero et al. 2024)."""
        import numpy as np
        import torch

        positions = torch.arange(2 * reach + 1)                           # query at `reach`
        ones = torch.ones(1, 2 * reach + 1, self.d_head, dtype=torch.float64)  # (1, D, d_head)
        with torch.no_grad():
            rotated = apply_rope(ones, self.angles(positions))[0]         # (D, d_head)
            values = (rotated @ rotated[reach]).numpy() / self.d_head     # (D,)
        return RelativeProfile(np.arange(-reach, reach + 1), values[None], ("all heads",),
                               "q·k / d_head for q = k = 1 "
                               "(one pair; RoFormer §3.4.3 bounds it)",
                               "score q·k / d_head")
