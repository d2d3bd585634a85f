"""Tick labels of a linear axis of tiny values in one notation: decimals of a common
power of ten named in the axis label ("× 10⁻⁴"), where pyqtgraph would mix 0.0002,
0.00015 and 5e-05 on one axis."""
from __future__ import annotations

import math

import pyqtgraph as pg

from .log_ticks import SUPERSCRIPT

SMALL = 1e-2            # a top under this is written in units of its own power of ten


def common_scale(axis: pg.AxisItem, top: float) -> str:
    """Label ``axis`` (linear, from 0 to about ``top``) as decimals of 10^e, e the
    exponent of ``top`` when it is under SMALL, else of 1; the factor for its label
    ("×10⁻⁴", or "" for none)."""
    exponent = math.floor(math.log10(top)) if 0 < top < SMALL else 0
    unit = 10.0 ** exponent

    def strings(values, scale, spacing):
        places = max(0, math.ceil(-math.log10(spacing / unit))) if spacing > 0 else 0
        return [f"{round(v / unit, places) + 0.0:.{places}f}" for v in values]  # no -0
    axis.tickStrings = strings
    axis.picture = None
    axis.update()
    return f"×10{str(exponent).translate(SUPERSCRIPT)}" if exponent else ""


def scaled(label: str, factor: str) -> str:
    """``label`` with the axis's common ``factor``: inside its closing bracket of units
    ("change (ratio, ×10⁻⁴)"), else bracketed after it."""
    if not factor:
        return label
    return f"{label[:-1]}, {factor})" if label.endswith(")") else f"{label} ({factor})"
