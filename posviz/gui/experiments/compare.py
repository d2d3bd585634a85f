"""How the Experiments figure draws encodings compared on one reorder: one curve per
encoding, each with its own marker, every later one smaller so that equal values show
as nested markers, and a short note naming the curves that are equal to a relative
tolerance it states. Equality is a property of the numbers: the same at every size of
the figure, on screen and in every export."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore  # before pyqtgraph, so it binds PySide6

from ..plots import style
from ..plots.coincide import coinciding, coinciding_words, shares_a_line
from ..plots.hover import Series
from ..plots.layer_axis import LAYER_AXIS, set_layer_ticks
from ..plots.log_ticks import ZERO_MARGIN, on_zero_row
from posviz.models.orders import is_original
from posviz.views.shown import ORIGINAL_SAID, zero_level

SYMBOLS = ("o", "s", "t", "d", "t1", "x")    # one marker shape per compared encoding
SAME = 1e-3              # relative: curves this close at a layer are named equal there


def short_name(title: str) -> str:
    """An encoding's name without its paper: "RoPE (Su 2021)" -> "RoPE"."""
    return title.split(" (")[0]


def draw_compare(figure, result, metric: str) -> None:
    """One curve per encoding of ``result`` (analysis.experiments.encodings.
    EncodingComparison): ``metric`` per layer, for the same text and reorder."""
    floor = result.floor
    figure._reset("relative change (log)", LAYER_AXIS, log=True)
    figure.data, figure.dims, figure.labels = {}, ("layer",), {}
    layers = np.arange(len(result.models[0].rows))
    curves = [model.curve(metric) for model in result.models]          # (L + 1,) each
    # an exact 0 inside the floor's band, above the axis, as the symmetry plot does
    level = zero_level(curves, floor)
    row = figure._floor_band(floor, level)
    names = [short_name(model.title) for model in result.models]
    top = max([1.0] + [float(np.nanmax(np.r_[c[~np.isnan(c)], 0.0])) for c in curves])
    groups = coinciding(dict(zip(names, curves)), SAME)
    # a curve on one drawn before it between two layers: dashed, on the earlier one
    # drawn wider, so that both show
    shared = [(j, k) for k in range(len(curves)) for j in range(k)
              if shares_a_line(curves[j], curves[k], SAME)]
    later, under = {k for _, k in shared}, {j for j, _ in shared}
    for k, (model, values) in enumerate(zip(result.models, curves)):
        defined = ~np.isnan(values)
        colour = style.CURVE_COLOURS[k % len(style.CURVE_COLOURS)]
        # its own marker, each smaller than the one before: equal values stay visible
        symbol, size = SYMBOLS[k % len(SYMBOLS)], max(13 - 2 * k, 5)
        pen = style.cosmetic_pen(colour, 4.5 if k in under else 2.0,
                                 QtCore.Qt.PenStyle.DashLine if k in later
                                 else QtCore.Qt.PenStyle.SolidLine)
        drawn = on_zero_row(values[defined], level, row)
        x = layers[defined].astype(float)
        figure.plot.addItem(pg.PlotCurveItem(x, drawn, pen=pen))
        figure.plot.addItem(pg.ScatterPlotItem(x, drawn, size=size, symbol=symbol,
                                               pen=pg.mkPen("w", width=1), brush=colour))
        figure.legend.addItem(style.legend_sample(pen=pen, symbol=symbol, symbolSize=9,
                                                  symbolBrush=colour, symbolPen="w"),
                              model.title)
        figure.data[model.kind] = values
        figure._series.append(Series(model.title, layers[defined], drawn, values[defined]))
    figure._floor_line(floor)
    figure._frame((row - ZERO_MARGIN, np.ceil(np.log10(top) + 0.1)), layers.size)
    set_layer_ticks(figure.plot.getAxis("bottom"), layers.size)
    figure.fit_legend()
    figure.coords = {"layer": layers.tolist()}
    moved = " ".join(result.tokens[i] for i in result.order)
    if getattr(result, "carried", False):
        moved = f"{moved} (the window's order, carried word by word to these tokens)"
    # the original order: every curve at 0, said first (a short window shows one line)
    original = len(result.order) and is_original(result.order)
    figure.set_title(f"{metric.replace('_', ' ')}: {len(result.models)} encodings, "
                     f"{result.weights} weights, "
                     f"{'the original order' if original else 'one reorder'}")
    said = f"{ORIGINAL_SAID}\n" if original else ""
    figure.set_note(f"{said}Reorder: {moved}\nEach curve is the built-in model with one encoding "
                    f"({result.weights} weights), on the same tokens and the same reorder. "
                    f"A change below the dashed noise floor cannot be told from "
                    f"floating-point rounding; a change of exactly 0 is drawn on the row marked 0, inside the grey "
                    f"band.{equal_words(groups, bool(later))}")


def equal_words(groups, dashed: bool) -> str:
    """The note's line on curves equal to SAME (one line drawn, markers nested), or ""."""
    if not groups:
        return ""
    how = "; dashed on a wider line where one runs on another" if dashed else ""
    return (f"\nEqual to {SAME:.1%} (relative), so drawn as one line with nested markers"
            f"{how}: {coinciding_words(groups)}.")
