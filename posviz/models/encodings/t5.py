"""T5 relative position bias (Raffel et al. 2020, "Exploring the Limits of Transfer
Learning with a Unified Text-to-Text Transformer", §2.1).

Each head learns one scalar per bucket of relative distance j - i. Buckets are exact
for small distances and logarithmic up to ``max_distance``; the bidirectional form gives
half the buckets to each direction, the causal form only looks back. The bucket table
here is drawn from a seeded normal distribution in place of trained values.
"""
from __future__ import annotations

import math

from .base import PositionalEncoding

BUCKETS, MAX_DISTANCE = 32, 128


def relative_position_bucket(relative_position, bidirectional: bool = True,
                             num_buckets: int = BUCKETS, max_distance: int = MAX_DISTANCE):
    """relative_position = key position - query position, any shape -> bucket ids."""
    import torch

    buckets = torch.zeros_like(relative_position, dtype=torch.long)
    if bidirectional:
        num_buckets //= 2
        buckets += (relative_position > 0).long() * num_buckets
        distance = relative_position.abs()
    else:
        distance = -torch.clamp(relative_position, max=0)
    max_exact = num_buckets // 2
    is_small = distance < max_exact
    large = max_exact + (
        # float32 as in the reference code, so bucket edges fall where T5's do; distance 0
        # is clamped only to keep log finite: is_small masks it out below.
        torch.log(distance.float().clamp(min=1) / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).long()
    large = torch.clamp(large, max=num_buckets - 1)
    return buckets + torch.where(is_small, distance.long(), large)


class T5RelativeBias(PositionalEncoding):
    kind = "t5"
    title = "T5 relative bias (Raffel 2020)"
    acts = "bias"
    summary = "a bias on the attention scores, one learned scalar per head and bucket of distance"
    where = "adds a learned bias per distance bucket to the attention scores"
    short = "T5 relative bias"
    shift_invariant = True  # a bias of the bucket of p_j - p_i alone

    def __init__(self, n_heads: int, seed: int = 0, scale: float = 1.0,
                 num_buckets: int = BUCKETS, max_distance: int = MAX_DISTANCE):
        import torch

        super().__init__(scale)
        self.num_buckets = num_buckets
        self.max_distance = max_distance
        gen = torch.Generator().manual_seed(seed * 7919 + 29)
        self.table = torch.randn(num_buckets, n_heads, generator=gen,
                                 dtype=torch.float64)                   # (buckets, h)

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(n_heads, seed=seed, scale=scale)

    @classmethod
    def weight_count(cls, d_model, n_heads, max_len):
        return BUCKETS * n_heads

    @classmethod
    def parameters(cls, d_model, n_heads):
        return {"buckets": BUCKETS, "max_distance": MAX_DISTANCE}

    @classmethod
    def describe(cls, offset=0, buckets=None, max_distance=None, **rest):
        if not buckets:
            return "T5 relative bias"
        return f"T5 relative bias ({buckets} buckets, max distance {max_distance})"

    def buckets(self, position_ids, causal: bool):
        """(n,) -> (n, n) bucket of key j as seen from query i."""
        relative = position_ids[None, :] - position_ids[:, None]    # (n, n) = j - i
        return relative_position_bucket(relative, not causal, self.num_buckets,
                                        self.max_distance)

    def bias(self, position_ids, causal):
        values = self.table[self.buckets(position_ids.long(), causal)]  # (n, n, h)
        return self.scale * values.permute(2, 0, 1)                     # (h, n, n)
