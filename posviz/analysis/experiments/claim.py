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
    models: tuple = ()             # what it ran: each model's description (a backend's
                                   #   describe(): "model", "pe", "mask", "seed"…)

    def to_dict(self) -> dict:
        """The check as ``paper --json`` prints it (its models are in its provenance)."""
        return {k: v for k, v in vars(self).items() if k != "models"}

    @property
    def verdict(self) -> str:
        """The one line a check ends with: the answer and what it answers."""
        return f"{'yes' if self.holds else 'NO'} (on {self.weights} weights)"
