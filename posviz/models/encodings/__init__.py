"""Positional encodings, one module per kind, each citing its paper; this registry lists
them, and everything else (options, facts, memory, figures) reads their records here."""
from __future__ import annotations

from .alibi import AlibiEncoding, alibi_slopes
from .base import PositionalEncoding, RelativeProfile, cosine_similarity
from .learned import LearnedEncoding
from .none import NoPositions
from .rope import RotaryEncoding, apply_rope, rope_angles
from .sinusoidal import SinusoidalEncoding, sinusoidal_table
from .t5 import T5RelativeBias, relative_position_bucket

ENCODINGS: dict[str, type[PositionalEncoding]] = {cls.kind: cls for cls in (
    NoPositions, SinusoidalEncoding, LearnedEncoding, RotaryEncoding, AlibiEncoding,
    T5RelativeBias)}
KINDS = tuple(ENCODINGS)


def make_encoding(kind: str, *, d_model: int, n_heads: int, scale: float = 1.0,
                  seed: int = 0, max_len: int = 1024) -> PositionalEncoding:
    """Build the encoding ``kind`` for a model of width d_model with n_heads heads."""
    if kind not in ENCODINGS:
        raise ValueError(f"unknown positional encoding {kind!r}; choose one of "
                         f"{', '.join(KINDS)}")
    return ENCODINGS[kind].build(d_model=d_model, n_heads=n_heads, scale=scale, seed=seed,
                                 max_len=max_len)


__all__ = [
    "ENCODINGS", "KINDS", "make_encoding", "PositionalEncoding", "NoPositions",
    "SinusoidalEncoding", "LearnedEncoding", "RotaryEncoding", "AlibiEncoding",
    "T5RelativeBias", "sinusoidal_table", "rope_angles", "apply_rope", "alibi_slopes",
    "relative_position_bucket", "RelativeProfile", "cosine_similarity",
]
