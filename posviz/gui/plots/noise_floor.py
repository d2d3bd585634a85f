"""The dashed noise-floor line of a log plot, its label on a light backing that keeps grid
lines off its words, drawn under every curve and band so that it hides no data, on screen
and in every export; and where along the line its label goes, clear of the curves."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from . import style

LABEL_FILL = (255, 255, 255, 215)   # light: the grid and decade lines do not cross its words
UNDER_DATA = -8                     # above the grey floor band (-10), under the curves, their
                                    # quartile bands and markers (log_curves.LogCurves: 0)


def floor_line(label: str, position: float = 0.02, pos=None) -> pg.InfiniteLine:
    """A horizontal dashed line at log10 ``pos`` labelled ``label``, the label's left end
    ``position`` of the way along it (centred, it crossed the left axis of a narrow plot)
    and above it."""
    options = {"position": position, "color": (60, 60, 60), "fill": LABEL_FILL,
               "anchors": [(0, 1), (0, 1)]}
    line = pg.InfiniteLine(
        pos=pos, angle=0, label=label, labelOpts=options,
        pen=style.cosmetic_pen((90, 90, 90), 1.5, QtCore.Qt.PenStyle.DashLine))
    line.setZValue(UNDER_DATA)
    # the backing under the line, not over it: the dashes ran lighter across the words
    line.label.setFlag(QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent)
    return line


def free_spans(curves, low: float, high: float, x_range, margin: float) -> list:
    """The spans of ``x_range`` (view units) over which no segment or marker of
    ``curves`` ((x, y) arrays in view units, NaN a gap) enters the band ``low``..
    ``high`` of y, each ``margin`` clear of them: [(start, stop)], left to right."""
    blocked = []
    for x, y in curves:
        x, y = np.asarray(x, float), np.asarray(y, float)                # (k,)
        inside = np.isfinite(y) & (low <= y) & (y <= high)
        blocked += [(v, v) for v in x[inside]]
        xa, xb, ya, yb = x[:-1], x[1:], y[:-1], y[1:]                     # (k-1,)
        with np.errstate(divide="ignore", invalid="ignore"):
            t_low, t_high = (low - ya) / (yb - ya), (high - ya) / (yb - ya)
        flat = ya == yb
        first = np.where(flat, 0.0, np.maximum(np.minimum(t_low, t_high), 0.0))
        last = np.where(flat, 1.0, np.minimum(np.maximum(t_low, t_high), 1.0))
        crosses = (np.isfinite(xa + xb + ya + yb) & (first <= last)
                   & np.where(flat, (low <= ya) & (ya <= high), True))
        blocked += list(zip(xa[crosses] + first[crosses] * (xb - xa)[crosses],
                            xa[crosses] + last[crosses] * (xb - xa)[crosses]))
    spans, start = [], x_range[0]
    for left, right in sorted((a - margin, b + margin) for a, b in blocked):
        if left > start:
            spans.append((start, left))
        start = max(start, right)
    if start < x_range[1]:
        spans.append((start, x_range[1]))
    return spans


def place_label(line: pg.InfiniteLine, view: pg.ViewBox, curves, texts) -> None:
    """Put ``line``'s label (above it, at its left end) where no curve crosses it: the
    first of ``texts`` (longest first) that fits a stretch of the line clear of
    ``curves`` ((x, y) in view units), leftmost; else the last, in the widest stretch
    (a steep curve ran through the words, on screen and in every export)."""
    (x0, x1), _ = view.viewRange()
    pixel_x, pixel_y = view.viewPixelSize()
    if not (pixel_x > 0 and pixel_y > 0 and x1 > x0):
        return
    label = line.label
    metrics = QtGui.QFontMetricsF(label.textItem.font())
    floor = line.value()
    reach = 7                             # pixels: half a marker, and a little air
    high = floor + (metrics.height() + 4 + reach) * pixel_y
    start = x0 + 0.02 * (x1 - x0)                         # as floor_line puts it at first
    spans = free_spans(curves, floor, high, (start, x1), reach * pixel_x)
    choice = None
    for text in texts:
        # a tenth to spare: PDF and PNG lay text out a little wider than the screen
        width = (metrics.horizontalAdvance(text) * 1.1 + 8) * pixel_x
        choice = next(((text, left) for left, right in spans if right - left >= width), None)
        if choice is not None:
            break
    if choice is None:
        widest = max(spans, key=lambda span: span[1] - span[0], default=(start, x1))
        choice = (texts[-1], widest[0])
    text, left = choice
    if text != label.format:
        label.setFormat(text)
    position = (left - x0) / (x1 - x0)
    if abs(position - label.orthoPos) > 1e-6:
        label.setPosition(position)
