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
    weights: str = "random"        # "random" (seeded, untrained) or "trained"
    ran_on: str = ""               # which weights exactly: the model, seed or checkpoints
    tests: str = ""                # the claim ``holds`` answers, in the setting run

    def to_dict(self) -> dict:
        return dict(vars(self))

    @property
    def verdict(self) -> str:
        """The one line a check ends with: the answer and what it answers."""
        return f"{'yes' if self.holds else 'NO'} (on {self.weights} weights)"
