"""posviz: see how positional encodings break the permutation symmetry of self-attention."""

__version__ = "0.1.0"
