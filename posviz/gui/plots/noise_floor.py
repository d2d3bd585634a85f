"""The dashed noise-floor line of a log plot, its label on a light backing that keeps grid
lines off its words, drawn under every curve and band so that it hides no data, on screen
and in every export."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

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
