"""The interface every positional encoding implements, and what each declares of itself.

An encoding may act in three places of a transformer, and most act in one:
- ``absolute``: a vector added to each token embedding (sinusoidal, learned);
- ``rotate``: a rotation of queries and keys inside attention (RoPE);
- ``bias``: a term added to the attention scores (ALiBi, T5 relative bias).
Every method takes explicit position ids, so positions can belong to slots or travel
with their tokens, and can start at an offset. ``profile`` says what the encoding does
as a function of the relative distance between a query and a key.

Each class is also the one record of its kind: its name, title and summary (the options,
menus and figure headings read them), where it acts, its parameters and how they read
(the model facts), its extra weights and table (the memory estimate, the facts). torch
is imported inside the methods that compute, so reading the records (an option's help,
the window before its first paint) never loads it, nor numpy.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np


def cosine_similarity(table: np.ndarray, row: int | None = None) -> np.ndarray:
    """(n, d) -> (n, n) cosine similarity between the rows (0 for a zero row), or only
    ``row``'s (n,) against every row (a profile at n = 4,096 needs one row of 8,191)."""
    import numpy as np

    norms = np.linalg.norm(table, axis=1, keepdims=True)                  # (n, 1)
    unit = table / np.where(norms > 0, norms, 1)
    return unit @ unit.T if row is None else unit @ unit[row]


@dataclass(frozen=True, eq=False)
class RelativeProfile:
    """An encoding's effect against relative distance Δ = key − query position."""

    distances: np.ndarray        # (D,) int, -reach..reach
    values: np.ndarray           # (rows, D), NaN where a key is masked
    rows: tuple[str, ...]        # (rows,) what each row is ("head 0", "all heads", ...)
    quantity: str                # what the values are, for a title
    axis: str                    # a short name of it, for the vertical axis


class PositionalEncoding:
    """No positional information at all (NoPE): every method is the identity."""

    kind = "none"                # the name options, sessions and family records use
    title = "none (NoPE)"        # menus and headings, with the paper
    acts: str | None = None      # "absolute", "rotate" or "bias": where it acts
    summary = "no position at all: self-attention stays permutation-equivariant"
    where = "adds nothing"       # what it does to a transformer, after "which"
    short = "NoPE"               # its name in a sentence
    pairs_dimensions = False     # acts on pairs of a head's dimensions (an even width)
    shift_invariant = True       # a common shift of every position id leaves the output
                                 #   unchanged in exact arithmetic (analysis.floor)

    def __init__(self, scale: float = 1.0):
        self.scale = float(scale)

    @classmethod
    def build(cls, *, d_model: int, n_heads: int, scale: float = 1.0, seed: int = 0,
              max_len: int = 1024) -> "PositionalEncoding":
        """This encoding for the built-in model of width d_model with n_heads heads."""
        return cls(scale)

    @classmethod
    def weight_count(cls, d_model: int, n_heads: int, max_len: int) -> int:
        """The weights it adds to the built-in model."""
        return 0

    @classmethod
    def table_length(cls, max_len: int) -> int | None:
        """The most positions it can encode (a table's rows), or None: unbounded."""
        return None

    @classmethod
    def parameters(cls, d_model: int, n_heads: int) -> dict:
        """Its parameters in the built-in model, as ``describe`` reads them."""
        return {}

    @classmethod
    def describe(cls, offset: int = 0, **parameters) -> str:
        """The scheme in a few words, with its parameters (a model's facts)."""
        return cls.title

    def check(self, position_ids) -> None:
        """Raise PosvizInputError if these positions cannot be encoded."""

    def absolute(self, position_ids):
        """(n,) int -> (n, d) additive encoding, or None."""
        return None

    def rotate(self, q, k, position_ids):
        """q, k: (h, n, d_head) -> rotated q, k of the same shape."""
        return q, k

    def bias(self, position_ids, causal: bool):
        """(n,) int -> (h, n, n) additive attention-score bias, or None."""
        return None

    def profile(self, reach: int, causal: bool) -> RelativeProfile | None:
        """The effect against Δ in -reach..reach, seen from a query at position
        ``reach``; None when the encoding has no fixed relation between p and p + Δ.

        Here: the score bias of each head, for an encoding that adds one (future keys
        are NaN under a causal mask: they are masked anyway).
        """
        import numpy as np
        import torch

        distances = np.arange(-reach, reach + 1)                          # (D,)
        positions = torch.arange(2 * reach + 1)                           # query at `reach`
        with torch.no_grad():
            bias = self.bias(positions, causal)                           # (h, D, D)
        if bias is None:
            return None
        values = bias[:, reach].numpy().copy()                            # (h, D)
        if causal:
            values[:, distances > 0] = np.nan
        return RelativeProfile(distances, values,
                               tuple(f"head {i}" for i in range(values.shape[0])),
                               "bias added to the score", "bias added to the score")
