"""Positional encodings, one module per kind, each citing its paper."""
from __future__ import annotations

from ..options import KINDS, TITLES
from .alibi import AlibiEncoding, alibi_slopes
from .base import PositionalEncoding, RelativeProfile, cosine_similarity
from .learned import LearnedEncoding
from .none import NoPositions
from .rope import RotaryEncoding, apply_rope, rope_angles
from .sinusoidal import SinusoidalEncoding, sinusoidal_table
from .t5 import T5RelativeBias, relative_position_bucket


def make_encoding(kind: str, *, d_model: int, n_heads: int, scale: float = 1.0,
                  seed: int = 0, max_len: int = 1024) -> PositionalEncoding:
    """Build the encoding ``kind`` for a model of width d_model with n_heads heads."""
    if kind == "none":
        return NoPositions(scale)
    if kind == "sinusoidal":
        return SinusoidalEncoding(d_model, scale)
    if kind == "learned":
        return LearnedEncoding(d_model, max_len=max_len, seed=seed, scale=scale)
    if kind == "rope":
        return RotaryEncoding(d_model // n_heads, scale)
    if kind == "alibi":
        return AlibiEncoding(n_heads, scale)
    if kind == "t5":
        return T5RelativeBias(n_heads, seed=seed, scale=scale)
    raise ValueError(f"unknown positional encoding {kind!r}; choose one of {', '.join(KINDS)}")


__all__ = [
    "KINDS", "TITLES", "make_encoding", "PositionalEncoding", "NoPositions",
    "SinusoidalEncoding", "LearnedEncoding", "RotaryEncoding", "AlibiEncoding",
    "T5RelativeBias", "sinusoidal_table", "rope_angles", "apply_rope", "alibi_slopes",
    "relative_position_bucket", "RelativeProfile", "cosine_similarity",
]
