"""The dashed noise-floor line of a log plot, its label readable over the curves drawn
through it: on a light backing, above every curve, on screen and in every export."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore

from . import style

LABEL_FILL = (255, 255, 255, 215)   # light enough to read over a curve, which still shows
OVER_CURVES = 2                     # above curves (0) and their markers (log_curves: 1)


def floor_line(label: str, position: float = 0.02, pos=None) -> pg.InfiniteLine:
    """A horizontal dashed line at log10 ``pos`` labelled ``label``, the label's left end
    ``position`` of the way along it (centred, it crossed the left axis of a narrow plot)
    and above it."""
    options = {"position": position, "color": (60, 60, 60), "fill": LABEL_FILL,
               "anchors": [(0, 1), (0, 1)]}
    line = pg.InfiniteLine(
        pos=pos, angle=0, label=label, labelOpts=options,
        pen=style.cosmetic_pen((90, 90, 90), 1.5, QtCore.Qt.PenStyle.DashLine))
    line.setZValue(OVER_CURVES)
    return line
