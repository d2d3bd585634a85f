"""Colours, fixed colour levels and axis helpers shared by every figure.

Colour maps are perceptually uniform: viridis for values in [0, 1] (attention), CET-D1
(blue-white-red) for signed differences. Levels are fixed, not fitted to the data, so the
same colour means the same number before and after a reorder.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

BACKGROUND = "w"
FOREGROUND = (40, 40, 40)
SEQUENTIAL = "viridis"          # attention weights, in [0, 1]
DIVERGING = "CET-D1"            # signed differences, white at 0
ATTENTION_LEVELS = (0.0, 1.0)
DIFFERENCE_RANGES = (1.0, 0.3, 0.1, 0.03, 0.01)   # choices of the symmetric range ±r
DEFAULT_DIFFERENCE_RANGE = 0.3
MAX_LABELS = 24                 # token labels drawn per axis before thinning to every k-th
CURVE_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9",
                 "#f0e442", "#000000")   # Okabe-Ito, readable for colour-blind users


def colormap(name: str) -> pg.ColorMap:
    return pg.colormap.get(name)


def style_plot(plot: pg.PlotItem, title: str = "", left: str = "", bottom: str = "") -> None:
    """Dark axes and text on a white background, with a title and axis labels."""
    for side in ("left", "bottom", "right", "top"):
        axis = plot.getAxis(side)
        axis.setPen(pg.mkPen(FOREGROUND))
        axis.setTextPen(pg.mkPen(FOREGROUND))
    if title:
        plot.setTitle(title, color="#202020", size="10pt")
    if left:
        plot.setLabel("left", left, color="#202020")
    if bottom:
        plot.setLabel("bottom", bottom, color="#202020")


def token_ticks(tokens, max_labels: int = MAX_LABELS) -> list[list[tuple[float, str]]]:
    """Tick levels for an axis of token cells centred at 0.5, 1.5, ...: every k-th token
    labelled as a major tick (so labels never overlap), the rest as minor ticks that
    pyqtgraph labels only when there is room."""
    n = len(tokens)
    step = max(1, int(np.ceil(n / max_labels)))
    major = [(i + 0.5, _short(t)) for i, t in enumerate(tokens) if i % step == 0]
    minor = [(i + 0.5, _short(t)) for i, t in enumerate(tokens) if i % step != 0]
    return [major, minor]


def _short(token: str, limit: int = 10) -> str:
    return token if len(token) <= limit else token[: limit - 1] + "…"


def cosmetic_pen(colour, width: float = 2.0, style=QtCore.Qt.PenStyle.SolidLine) -> QtGui.QPen:
    pen = pg.mkPen(colour, width=width, style=style)
    pen.setCosmetic(True)
    return pen
