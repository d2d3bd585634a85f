"""Ways to run a RoPE model past the length it was trained at, one function each, as
transformers writes them (``modeling_rope_utils``): each turns RoPE's base, head width,
the training length and a factor s (the new length over the training length) into the
inverse frequencies θ_i and an attention factor that multiplies cos and sin (so q·k is
multiplied by its square).

- ``pi``: position interpolation (Chen et al. 2023): every frequency divided by s, so the
  positions of the new length fall within the trained range.
- ``ntk``: NTK-aware scaling (bloc97 2023): the base multiplied by s^(d/(d-2)), so the
  fastest frequencies stay nearly as trained and the slowest are interpolated.
- ``yarn``: YaRN (Peng et al. 2023): frequencies that turn more than 32 times over the
  training length kept, those that turn less than once interpolated by s, a linear ramp
  between; attention factor 0.1 ln s + 1.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

YARN_FAST, YARN_SLOW = 32.0, 1.0         # YaRN's β: rotations over the training length


def inverse_frequencies(d_head: int, base: float):
    """(d_head/2,) float64 θ_i = base^(-2i/d_head)."""
    import torch

    return base ** (-torch.arange(0, d_head, 2, dtype=torch.float64) / d_head)


def pi(d_head: int, base: float, factor: float, trained: int):
    return inverse_frequencies(d_head, base) / factor, 1.0


def ntk(d_head: int, base: float, factor: float, trained: int):
    return inverse_frequencies(d_head, base * factor ** (d_head / (d_head - 2))), 1.0


def yarn(d_head: int, base: float, factor: float, trained: int):
    import torch

    def dimension(rotations: float) -> float:       # the pair turning this often
        return d_head * math.log(trained / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low = max(math.floor(dimension(YARN_FAST)), 0)
    high = min(math.ceil(dimension(YARN_SLOW)), d_head - 1)
    high = high + 0.001 if low == high else high
    ramp = ((torch.arange(d_head // 2, dtype=torch.float64) - low) / (high - low)).clamp(0, 1)
    kept = inverse_frequencies(d_head, base)                             # (d_head/2,)
    inv_freq = kept / factor * ramp + kept * (1 - ramp)
    attention = 0.1 * math.log(factor) + 1.0 if factor > 1 else 1.0
    return inv_freq, attention


SCALINGS: dict[str, Callable] = {"pi": pi, "ntk": ntk, "yarn": yarn}
TITLES = {"pi": "position interpolation (Chen et al. 2023)",
          "ntk": "NTK-aware scaling (bloc97 2023)",
          "yarn": "YaRN (Peng et al. 2023)"}
TRANSFORMERS_TYPES = {"pi": "linear", "yarn": "yarn"}   # rope_type of the same method


@dataclass(frozen=True)
class RopeScaling:
    """One method at one factor, for a model trained at ``trained`` tokens."""

    method: str                  # a key of SCALINGS
    factor: float                # the new length / the training length (1: as trained)
    trained: int                 # the training length

    def frequencies(self, d_head: int, base: float):
        """((d_head/2,) θ_i, attention factor)."""
        return SCALINGS[self.method](d_head, base, self.factor, self.trained)
