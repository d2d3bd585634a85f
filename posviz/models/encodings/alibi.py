"""ALiBi, attention with linear biases (Press et al. 2022, "Train Short, Test Long", §3).

Head h adds -m_h * distance to every score. The slopes are the paper's geometric
sequence starting at 2^(-8/h); for a head count that is not a power of two, the slopes
of the nearest lower power of two are followed by every other slope of the next one
(the authors' reference code). The paper's form is causal, m * (j - i) for j <= i; posviz
uses -m * |i - j|, which equals it under a causal mask and extends it symmetrically to a
bidirectional one.
"""
from __future__ import annotations

import math

from .base import PositionalEncoding


def alibi_slopes(n_heads: int) -> list[float]:
    """The paper's slopes m_1..m_h."""
    def power_of_two(n: int) -> list[float]:
        start = 2.0 ** (-(2.0 ** -(math.log2(n) - 3)))       # 2^(-8/n)
        return [start ** (i + 1) for i in range(n)]

    if math.log2(n_heads).is_integer():
        return power_of_two(n_heads)
    closest = 2 ** math.floor(math.log2(n_heads))
    return power_of_two(closest) + power_of_two(2 * closest)[0::2][: n_heads - closest]


class AlibiEncoding(PositionalEncoding):
    kind = "alibi"
    title = "ALiBi (Press 2022)"
    acts = "bias"
    summary = "a bias on the attention scores, minus a slope per head times the distance"
    where = "adds a distance penalty to the attention scores"
    short = "ALiBi"
    shift_invariant = True  # a bias of the distance p_i - p_j alone

    def __init__(self, n_heads: int, scale: float = 1.0):
        import torch

        super().__init__(scale)
        self.slopes = torch.tensor(alibi_slopes(n_heads), dtype=torch.float64)  # (h,)

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(n_heads, scale)

    @classmethod
    def describe(cls, offset=0, **parameters):
        return "ALiBi"

    def bias(self, position_ids, causal):
        import torch

        pos = position_ids.to(torch.float64)
        distance = (pos[:, None] - pos[None, :]).abs()          # (n, n)
        return -self.scale * self.slopes[:, None, None] * distance[None]  # (h, n, n)
