"""Learned absolute positions (Gehring et al. 2017; Devlin et al. 2019, BERT).

A table of one vector per position up to a maximum length. With random weights the
table is i.i.d. Gaussian, drawn from the seed: every position gets a distinct vector and
nothing relates p to p + 1 (neighbouring rows have cosine near 0). It is not a trained
table: trained ones can be smooth (MiniLM's neighbouring positions: mean cosine 0.85),
though the shipped checkpoint's short training left its table near 0 too.
"""
from __future__ import annotations

from ...errors import PosvizInputError
from .base import PositionalEncoding


class LearnedEncoding(PositionalEncoding):
    kind = "learned"
    title = "learned absolute"
    acts = "absolute"
    summary = "a table of one vector per position, added to each token"
    where = "adds a vector from a table to each token embedding"
    short = "learned absolute"
    shift_invariant = False  # a table row per position: a shift reads other rows

    def __init__(self, d_model: int, max_len: int = 1024, seed: int = 0, scale: float = 1.0):
        import torch

        super().__init__(scale)
        self.max_len = max_len
        gen = torch.Generator().manual_seed(seed * 7919 + 17)
        self.table = torch.randn(max_len, d_model, generator=gen,
                                 dtype=torch.float64)                   # (max_len, d)

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(d_model, max_len=max_len, seed=seed, scale=scale)

    @classmethod
    def weight_count(cls, d_model, n_heads, max_len):
        return max_len * d_model

    @classmethod
    def table_length(cls, max_len):
        return max_len

    @classmethod
    def describe(cls, offset=0, **parameters):
        return cls.title + (f", offset {offset}" if offset else "")

    def check(self, position_ids) -> None:
        if position_ids.numel() == 0:
            return
        low, high = int(position_ids.min()), int(position_ids.max())
        if low < 0:
            raise PosvizInputError(f"position ids must not be negative (got {low})")
        if high >= self.max_len:
            raise PosvizInputError(
                f"position {high} is beyond the learned table of {self.max_len} positions"
                " (shorten the text or lower the offset)"
            )

    def absolute(self, position_ids):
        self.check(position_ids)
        return self.scale * self.table[position_ids.long()]

    def profile(self, reach, causal):
        """None: a learned table relates no position to another."""
        return None
