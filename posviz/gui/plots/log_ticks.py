"""Tick labels of a log axis in one notation: pyqtgraph's own mix 10¹, 1, 0.1, 10⁻⁵."""
from __future__ import annotations

import math

import pyqtgraph as pg

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
PLAIN = (-3, 3)         # decades written as decimals (0.001 to 1000) when all ticks lie here


def log_tick_strings(values, scale: float = 1.0, spacing=None) -> list[str]:
    """Labels for ticks at log10 ``values`` (× ``scale``): decimals when every tick lies
    within PLAIN's decades, else every one as a power of ten (2·10⁻⁵, 10⁻⁴, 10⁰)."""
    numbers = [float(f"{10.0 ** v * scale:.1g}") for v in values]    # one digit, as pg
    exponents = [math.floor(math.log10(abs(x))) if x else 0 for x in numbers]
    if all(PLAIN[0] <= e <= PLAIN[1] for e in exponents):
        return [f"{x:.{max(0, -e)}f}" for x, e in zip(numbers, exponents)]
    labels = []
    for x, e in zip(numbers, exponents):
        mantissa = round(x / 10.0 ** e)
        power = f"10{str(e).translate(SUPERSCRIPT)}"
        labels.append(power if mantissa == 1 else f"{mantissa}·{power}")
    return labels


def one_notation(axis: pg.AxisItem) -> None:
    """Label ``axis``, in log mode, in one notation (log_tick_strings)."""
    axis.logTickStrings = log_tick_strings
