"""No positional encoding (NoPE).

Kazemnejad et al. 2023, "The Impact of Positional Encoding on Length Generalization in
Transformers": without positions a bidirectional transformer is permutation-equivariant,
while a causal one still learns position through its mask.
"""
from .base import PositionalEncoding


class NoPositions(PositionalEncoding):
    kind = "none"
