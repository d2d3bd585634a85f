"""A sweep's p10 to p90 band on its log axis: filled between its edges in log space (a
value of 0 or less on the zero row, an edge missing where the median is not: the
median), the edges drawn opaque so a band a few pixels thick still shows beside the
median, and its legend entry saying how wide it is when it is thinner than the line
(a spread of ±10 % spans 0.09 of the axis's eight decades: three pixels at 1024 × 700,
hidden under the median)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from ..plots import style

BAND = (0, 114, 178)            # the median's blue
FILL_ALPHA = 70
THIN = 0.02                     # of the axis's decades: a band this thin is called thin


def edges(p10, median, p90, drawn) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper) of the band in the axis's log space (``drawn``: values to log10,
    an exact 0 to the zero row); a quantile missing where the median is not: the
    median's, so the fill has no gap that breaks its path."""
    p10, median, p90 = (np.asarray(q, float) for q in (p10, median, p90))
    p10 = np.where(np.isnan(p10), median, np.clip(p10, 0.0, None))   # clipped to >= 0
    p90 = np.where(np.isnan(p90), median, np.clip(p90, 0.0, None))
    return drawn(p10), drawn(p90)


def draw_band(figure, x, p10, median, p90, drawn, span: float):
    """The band of ``figure`` (an ExperimentFigure) over layers ``x``: the fill item,
    and its legend entry where the runs spread (``span``: the axis's decades)."""
    lower, upper = edges(p10, median, p90, drawn)
    pen = style.cosmetic_pen((*BAND, 200), 1.0)
    low = pg.PlotCurveItem(np.asarray(x, float), lower, pen=pen)
    high = pg.PlotCurveItem(np.asarray(x, float), upper, pen=pen)
    fill = pg.FillBetweenItem(low, high, brush=pg.mkBrush(*BAND, FILL_ALPHA))
    for item in (fill, low, high):
        figure.plot.addItem(item)
    spread = np.asarray(p90, float) > np.asarray(p10, float)
    if spread.any():                             # a band only where the runs spread
        label = "p10 to p90 of the runs"
        widest = float(np.nanmax(upper - lower))
        if widest < THIN * span:
            ratio = np.nanmax(np.asarray(p90, float)[spread] / np.maximum(
                np.asarray(p10, float)[spread], 1e-300))
            label += f" (at most ×{ratio:.2g}: about as thin as the line)"
        figure.legend.addItem(style.legend_sample(
            pen=None, symbol="s", symbolSize=12, symbolPen=pg.mkPen(*BAND, 200),
            symbolBrush=(*BAND, FILL_ALPHA)), label)
    return fill
