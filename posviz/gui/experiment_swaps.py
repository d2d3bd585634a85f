"""The swap map's cells of identical tokens: grey and outlined, off the colour scale,
named in the note and on hover. Swapping two equal tokens leaves the input as it was;
their value (equivariance against the original's rows permuted) is how much the two
slots' outputs differ in one run, another quantity than a swap's effect: it is in the
tooltip and the CSV, not in the colours."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtGui, QtWidgets  # before pyqtgraph, so it binds PySide6

from .plots import style

IDENTICAL_NOTE = ("Pairs of identical tokens (grey, outlined): the input does not change; "
                  "their value, how much the two slots' outputs differ in one run, is not "
                  "a swap's effect and is off the colour scale (hover or CSV).")
GREY = (205, 205, 205)  # under an identical pair's cell, which the map leaves blank
IDENTICAL_HOVER = ("identical tokens: the input does not change; this is how much the two "
                   "slots' outputs differ")
INSET = 0.1             # of a cell: neighbouring outlines stay apart


def off_the_scale(change: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The map's values (n, n) with ``cells`` blank (NaN: the image leaves them clear)."""
    shown = np.asarray(change, float).copy()
    shown[cells] = np.nan
    return shown


def outline_cells(plot: pg.PlotItem, cells: np.ndarray) -> list[QtWidgets.QGraphicsItem]:
    """Grey under the map's ``cells`` (n, n) bool, [row i, column j] at x = j, y = i
    (blank in its image), outlined by a black line under a white dashed one, seen on
    every colour of the map."""
    path, whole = QtGui.QPainterPath(), QtGui.QPainterPath()
    for i, j in zip(*np.nonzero(cells)):
        path.addRect(QtCore.QRectF(j + INSET, i + INSET, 1 - 2 * INSET, 1 - 2 * INSET))
        whole.addRect(QtCore.QRectF(float(j), float(i), 1.0, 1.0))
    grey = QtWidgets.QGraphicsPathItem(whole)
    grey.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
    grey.setBrush(QtGui.QColor(*GREY))
    grey.setZValue(-1)                               # under the image
    plot.addItem(grey)
    items = [grey]
    for colour, width, dash in (("k", 3.0, QtCore.Qt.PenStyle.SolidLine),
                                ("w", 1.5, QtCore.Qt.PenStyle.DashLine)):
        item = QtWidgets.QGraphicsPathItem(path)
        item.setPen(style.cosmetic_pen(colour, width, dash))
        item.setZValue(5)
        plot.addItem(item)
        items.append(item)
    return items


def hover_text(pairs, i: int, j: int) -> str:
    """What the swap map's cell (token i, swapped with j) holds, in words."""
    tokens = pairs.tokens
    text = (f"{tokens[i]!r}({i}) ↔ {tokens[j]!r}({j}): relative change "
            f"{pairs.change[i, j]:.3g}")
    return f"{text} ({IDENTICAL_HOVER})" if i != j and tokens[i] == tokens[j] else text
