"""What a paper check returns: the claim, what posviz measured, and whether it holds."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperCheck:
    name: str
    citation: str
    reports: str                   # the paper's claim, in words
    measures: str                  # what posviz measured, in words
    values: dict                   # the measurements (JSON-ready)
    holds: bool                    # does the qualitative claim hold here
    weights: str = "random"        # the built-in model's: "random" (seeded) or "trained"

    def to_dict(self) -> dict:
        return dict(vars(self))
