"""Tick labels of a log axis in one notation (pyqtgraph's own mix 10¹, 1, 0.1, 10⁻⁵),
and only as many as fit (its minor labels 0.09, 0.08, 0.07 ... are drawn over each other
on a short axis)."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from PySide6 import QtGui

SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
PLAIN = (-3, 3)         # decades written as decimals (0.001 to 1000) when all ticks lie here
RANK = {1: 0, 2: 1, 5: 1}   # labels kept first: decades, then 2 and 5, then the rest
GAP = 2.0               # pixels between two labels' text at least


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


def fitting(values, labels: list[str], axis: pg.AxisItem) -> list[str]:
    """``labels`` of ticks at log10 ``values`` with those that would touch a label kept
    before them blanked: decades kept first, then 2 and 5, then the others."""
    low, high = axis.range
    vertical = axis.orientation in ("left", "right")
    length = axis.height() if vertical else axis.width()
    if high <= low or length <= 0:
        return labels
    metrics = QtGui.QFontMetricsF(axis.style.get("tickFont") or axis.font())
    extent = [metrics.height() * 0.8 if vertical else metrics.horizontalAdvance(label)
              for label in labels]                  # 0.8: as pyqtgraph measures them
    where = [(v - low) / (high - low) * length for v in values]

    def rank(k: int) -> int:
        mantissa = round(10.0 ** (values[k] - math.floor(values[k] + 1e-9)))
        return RANK.get(mantissa, 2)

    kept: list[int] = []                            # the zero row's "0" before any other
    for k in sorted(range(len(labels)),
                    key=lambda k: (labels[k] != "0", rank(k), values[k])):
        if all(abs(where[k] - where[j]) >= (extent[k] + extent[j]) / 2 + GAP for j in kept):
            kept.append(k)
    return [label if k in kept else "" for k, label in enumerate(labels)]


DECADE_STEPS = (1, 2, 3, 5, 10, 20, 50)   # decades between two labels of a long log axis
EVEN_FROM = 3.0         # decades an axis spans from which its labels are even decades


def even_decades(axis: pg.AxisItem, low: float, high: float, size: float):
    """Tick levels of a log ``axis`` spanning ``low`` .. ``high`` (log10) over ``size``
    pixels: labelled decades every k-th (k of DECADE_STEPS, the fewest that keep
    labels apart), the other decades unlabelled ticks; None for a short span (its 2 and
    5 ticks are pyqtgraph's). pyqtgraph's labelled level of every 5th decade and its
    labels thinned one level at a time gave 10⁰, 10⁻², 10⁻⁴, 10⁻⁵, 10⁻⁷ at 1024 px."""
    if high - low < EVEN_FROM or size <= 0:
        return None
    metrics = QtGui.QFontMetricsF(axis.style.get("tickFont") or axis.font())
    vertical = axis.orientation in ("left", "right")
    extent = metrics.height() * 0.8 if vertical else metrics.horizontalAdvance("10⁻¹⁰")
    per_decade = size / (high - low)
    step = next((k for k in DECADE_STEPS if k * per_decade >= extent + 2 * GAP),
                DECADE_STEPS[-1])
    decades = range(math.ceil(low - 1e-9), math.floor(high + 1e-9) + 1)
    labelled = [float(v) for v in decades if v % step == 0]
    others = [float(v) for v in decades if v % step]
    return [(float(step), labelled)] + ([(1.0, others)] if others else [])


def one_notation(axis: pg.AxisItem) -> None:
    """Label ``axis``, in log mode, in one notation (log_tick_strings), a long axis at
    even decades (even_decades), leaving out the labels that would touch another
    (fitting); "0" on its zero row (zero_row)."""
    plain = axis.tickValues

    def values(low, high, size):
        even = even_decades(axis, *sorted((low, high)), size) if axis.logMode else None
        axis.decade_step = even[0][0] if even else 0.0
        return plain(low, high, size) if even is None else even

    def strings(values, scale=1.0, spacing=None):
        if spacing is not None and spacing < getattr(axis, "decade_step", 0.0) - 1e-9:
            return [""] * len(values)           # the unlabelled decades between
        row = getattr(axis, "zero_row", None)
        labels = log_tick_strings(values, scale, spacing)
        return fitting(values, ["0" if row is not None and abs(v - row) < 1e-6 else label
                                for v, label in zip(values, labels)], axis)
    axis.tickValues = values
    axis.logTickStrings = strings


ZERO_MARGIN = 0.3       # decades under the zero row, so its markers show whole


def zero_decade(floor: float, level: float, drawn: float | None = None) -> np.float64:
    """log10 of the row where exact zeros are drawn: a whole decade under ``level`` (a
    tenth of every nonzero value, views.shown.zero_level) and under a thirtieth of the
    noise ``floor``; a float64, so that curves drawn with it are float64 too. The row
    ``drawn`` now is kept while it lies as low and at most a decade lower: a drag then
    does not move the axis a decade up and down as the smallest change wavers."""
    row = min(np.log10(np.float64(floor) / 30), np.floor(np.log10(np.float64(level) / 3)))
    return np.float64(drawn) if drawn is not None and row - 1 <= drawn <= row else row


def on_zero_row(values: np.ndarray, level: float, row: float) -> np.ndarray:
    """log10 of ``values`` for the log axis; an exact 0 (at most ``level``,
    zero_level) on the zero ``row``; NaN kept (a gap)."""
    with np.errstate(invalid="ignore"):
        return np.where(values <= level, row, np.log10(np.maximum(values, level)))


def zero_row(axis: pg.AxisItem, row: float | None) -> None:
    """Make the whole decade ``row`` (log10, None: none) of a one_notation ``axis`` the
    row where exact zeros are drawn: its tick labelled "0" and always kept (fitting drops
    a neighbour that would touch it instead), none under it or between it and the decade
    above (a log axis has no place for 0, so it is given a row of its own)."""
    if not hasattr(axis, "zero_row"):
        plain = axis.tickValues

        def values(low, high, size):
            levels, row = plain(low, high, size), axis.zero_row
            if row is None or not axis.logMode or not low <= row <= high:
                return levels
            # none under the zero row or between it and the decade above; the row in
            # the first level, which pyqtgraph always labels (it may skip the others)
            levels = [(spacing, [v for v in ticks if not v < row + 1 - 1e-9])
                      for spacing, ticks in levels]
            if levels:
                levels[0] = (levels[0][0], [row, *levels[0][1]])
            return levels
        axis.tickValues = values
    axis.zero_row = row
    axis.picture = None
    axis.update()
