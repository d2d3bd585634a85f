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
    def ran(self) -> dict:
        """Its models' descriptions as one (document.provenance reads it): a setting
        they share as it is, one that differs as the list of its values; the models'
        names joined."""
        merged: dict = {}
        for key in dict.fromkeys(k for model in self.models for k in model):
            values: list = []               # distinct, by ==: a value may be a dict
            for value in (model.get(key) for model in self.models):
                values += [] if value in values else [value]
            merged[key] = values[0] if len(values) == 1 else values
        if isinstance(merged.get("model"), list):
            merged["model"] = " and ".join(map(str, merged["model"]))
        return merged

    @property
    def verdict(self) -> str:
        """The one line a check ends with: the answer and what it answers."""
        return f"{'yes' if self.holds else 'NO'} (on {self.weights} weights)"
