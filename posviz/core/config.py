"""Configuration of the built-in transformer, and its validation."""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from .encodings import KINDS
from .errors import PosvizInputError

MASKS = ("bidirectional", "causal")
NORMS = ("pre", "post", "none")
DTYPES = ("float32", "float64")
POSITION_MODES = ("slot", "token")


@dataclass(frozen=True)
class ModelConfig:
    """Everything that defines the built-in model; two equal configs give equal weights."""

    layers: int = 4
    heads: int = 4
    d_model: int = 64
    d_ff: int = 0               # 0 means 4 * d_model
    pe: str = "sinusoidal"
    pe_scale: float = 1.0
    mask: str = "bidirectional"
    residual: bool = True
    norm: str = "pre"
    seed: int = 0
    dtype: str = "float32"
    max_len: int = 1024         # positions of the learned table

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def ff_width(self) -> int:
        return self.d_ff or 4 * self.d_model

    @property
    def causal(self) -> bool:
        return self.mask == "causal"

    def replace(self, **changes) -> "ModelConfig":
        return replace(self, **changes)

    def to_dict(self) -> dict:
        return asdict(self)

    def problems(self) -> dict[str, str]:
        """Field name -> one-line message, for every invalid field (empty when valid)."""
        found: dict[str, str] = {}
        for name, low, high in (("layers", 1, 64), ("heads", 1, 128), ("d_model", 1, 4096),
                                ("d_ff", 0, 16384), ("max_len", 1, 1_000_000)):
            value = getattr(self, name)
            if not isinstance(value, int) or not low <= value <= high:
                found[name] = f"{name} must be a whole number from {low} to {high} (got {value})"
        if "heads" not in found and "d_model" not in found:
            if self.d_model % self.heads:
                found["heads"] = (f"{self.heads} heads do not divide the model width "
                                  f"{self.d_model}")
            elif self.pe == "rope" and self.d_head % 2:
                found["pe"] = (f"RoPE needs an even head width, but {self.d_model} / "
                               f"{self.heads} heads = {self.d_head}")
        if self.pe not in KINDS:
            found["pe"] = f"unknown positional encoding {self.pe!r} (one of {', '.join(KINDS)})"
        if not (self.pe_scale == self.pe_scale) or abs(self.pe_scale) > 1e6:
            found["pe_scale"] = f"the encoding scale must be a finite number (got {self.pe_scale})"
        for name, allowed in (("mask", MASKS), ("norm", NORMS), ("dtype", DTYPES)):
            if getattr(self, name) not in allowed:
                found[name] = f"{name} must be one of {', '.join(allowed)}"
        if not isinstance(self.seed, int) or self.seed < 0:
            found["seed"] = f"the seed must be a whole number >= 0 (got {self.seed})"
        return found

    def validate(self) -> "ModelConfig":
        """Return self, or raise PosvizInputError naming the first problem."""
        problems = self.problems()
        if problems:
            raise PosvizInputError(next(iter(problems.values())))
        return self


@dataclass(frozen=True)
class Positions:
    """How position ids are assigned to a reordered sequence.

    mode "slot": slot j gets position offset + j, whatever token sits there (the usual
    model input). mode "token": each token keeps offset + its original index, so the
    positions travel with the tokens and absolute encodings become equivariant again.
    """

    mode: str = "slot"
    offset: int = 0

    def problems(self) -> dict[str, str]:
        found = {}
        if self.mode not in POSITION_MODES:
            found["mode"] = f"positions must be one of {', '.join(POSITION_MODES)}"
        if not isinstance(self.offset, int) or self.offset < 0:
            found["offset"] = f"the position offset must be a whole number >= 0 (got {self.offset})"
        return found

    def validate(self) -> "Positions":
        problems = self.problems()
        if problems:
            raise PosvizInputError(next(iter(problems.values())))
        return self
