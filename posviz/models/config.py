"""Configuration of the built-in transformer and of the position ids, and their validation.

Defaults and allowed ranges come from ``options.OPTIONS``, the one place that defines them.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from ..errors import PosvizInputError
from .encodings import ENCODINGS
from .options import (DTYPES, MASKS, MODEL_OPTIONS, NORMS, OPTIONS, POSITION_MODES,
                      POSITION_OPTIONS, problems_of)

if TYPE_CHECKING:
    import numpy as np

__all__ = ["DTYPES", "MASKS", "NORMS", "POSITION_MODES", "ModelConfig", "Positions"]


def _default(name: str):
    return OPTIONS[name].default


def _first(problems: dict[str, str]) -> None:
    if problems:
        raise PosvizInputError(next(iter(problems.values())))


@dataclass(frozen=True)
class ModelConfig:
    """Everything that defines the built-in model; two equal configs give equal weights."""

    layers: int = _default("layers")
    heads: int = _default("heads")
    d_model: int = _default("d_model")
    d_ff: int = _default("d_ff")                # 0 means 4 * d_model
    pe: str = _default("pe")
    pe_scale: float = _default("pe_scale")
    mask: str = _default("mask")
    residual: bool = _default("residual")
    norm: str = _default("norm")
    seed: int = _default("seed")
    dtype: str = _default("dtype")
    max_len: int = _default("max_len")          # positions of the learned table

    @property
    def d_head(self) -> int:
        return self.d_model // self.heads

    @property
    def table_length(self) -> int | None:
        """The most positions its encoding takes (a learned table's rows), or None."""
        return ENCODINGS[self.pe].table_length(self.max_len)

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
        found = problems_of(self.to_dict(), MODEL_OPTIONS)
        if "heads" not in found and "d_model" not in found:
            if self.d_model % self.heads:
                found["heads"] = (f"{self.heads} heads do not divide the model width "
                                  f"{self.d_model}")
            elif "pe" not in found and ENCODINGS[self.pe].pairs_dimensions and self.d_head % 2:
                found["pe"] = (f"{ENCODINGS[self.pe].short} needs an even head width, but "
                               f"{self.d_model} / {self.heads} heads = {self.d_head}")
        return found

    def validate(self) -> "ModelConfig":
        """Return self, or raise PosvizInputError naming the first problem."""
        _first(self.problems())
        return self


@dataclass(frozen=True)
class Positions:
    """How position ids are assigned to a reordered sequence.

    mode "slot": slot j gets position offset + j, whatever token sits there (the usual
    model input). mode "token": each token keeps offset + its original index, so the
    positions travel with the tokens, and with a bidirectional mask every encoding is
    equivariant again (a causal mask still tells slots apart). ``literal``: a reorder
    runs as given through the ordinary forward (analysis.engine), not in a faster frame
    where a symmetric case is exactly 0 by construction.
    """

    mode: str = _default("mode")
    offset: int = _default("offset")
    literal: bool = _default("literal")   # run a reorder as given, not in the
                                          #   original tokens' frame (Engine.aligned)

    def problems(self) -> dict[str, str]:
        return problems_of(asdict(self), POSITION_OPTIONS)

    def ids(self, order) -> "np.ndarray":
        """(..., n) the position id of each slot of the order(s) (..., n): by slot, or
        carried by each token from its original place."""
        import numpy as np  # not at import: the window reads the options before numpy
        order = np.asarray(order)
        if self.mode == "token":
            return self.offset + order
        return self.offset + np.broadcast_to(np.arange(order.shape[-1]), order.shape)

    def validate(self) -> "Positions":
        _first(self.problems())
        return self
