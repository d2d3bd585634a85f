"""Values under the mouse: the text a figure shows while hovered (its canvas's tooltip
and the status line), gone when the hover ends, and the nearest point of a line plot.

A line plot hands ``CurveHover`` its points in view coordinates with the values they
stand for (an exact 0 drawn on a log axis's zero row is still 0 in words).
"""
from __future__ import annotations

import html
from dataclasses import dataclass

import numpy as np
from PySide6 import QtCore, QtWidgets

from posviz.models.trace import layer_name

TIP_WIDTH = 420         # pixels: a long tooltip wraps at this width, never the screen's
NEAR = 12               # pixels from a point within which the mouse names it


def wrapped(text: str) -> str:
    """``text`` as a tooltip that wraps at TIP_WIDTH pixels: rich text (Qt wraps plain
    text only at the screen's width); a short one line as it is."""
    if not text or (len(text) <= 70 and "\n" not in text):
        return text
    body = html.escape(text).replace("\n", "<br>")
    return f"<table width={TIP_WIDTH}><tr><td>{body}</td></tr></table>"


@dataclass
class Series:
    """One curve as drawn: its name, its points in view coordinates (x, y: (k,)) and the
    values they stand for ((k,); NaN: no point)."""

    name: str
    x: np.ndarray
    y: np.ndarray
    values: np.ndarray
    extra: tuple = ()           # per point, words after the value ("" none), or ()
    where: tuple = ()           # per point, where it is in the x axis's own words, or ()


def nearest(series: list[Series], view, scene_pos, radius: float = NEAR):
    """(series, index) of the drawn point nearest ``scene_pos`` within ``radius`` scene
    pixels, else None; ``view`` the plot's ViewBox."""
    best, best_distance = None, radius + 1e-9
    for one in series:
        for i, (x, y) in enumerate(zip(one.x, one.y)):
            if not (np.isfinite(x) and np.isfinite(y) and np.isfinite(one.values[i])):
                continue
            point = view.mapViewToScene(QtCore.QPointF(float(x), float(y)))
            distance = float(np.hypot(point.x() - scene_pos.x(), point.y() - scene_pos.y()))
            if distance < best_distance:         # on a tie the curve drawn first
                best, best_distance = (one, i), distance
    return best


def point_words(one: Series, i: int, x_words=layer_name) -> str:
    """A curve's point in words: its name, where (its ``where``, else ``x_words`` of its
    x: a layer) and value."""
    extra = one.extra[i] if one.extra else ""
    where = one.where[i] if one.where else x_words(int(round(one.x[i])))
    return f"{one.name}, {where}: {one.values[i]:.3g}{extra}"


class CurveHover:
    """Names the point of ``plot`` nearest the mouse on ``figure`` (a Figure with a
    HoverText): ``series()`` gives the curves as drawn."""

    def __init__(self, figure, plot, series, x_words=layer_name, connect=True):
        self.figure, self.plot, self.series, self.x_words = figure, plot, series, x_words
        if connect:             # else the figure calls ``moved`` when no other item is
            figure.canvas.scene().sigMouseMoved.connect(self.moved)

    def moved(self, scene_pos) -> None:
        view = self.plot.vb
        hit = nearest(self.series(), view, scene_pos) \
            if view.sceneBoundingRect().contains(scene_pos) else None
        if hit is None:
            self.figure.hover.clear()
        else:
            self.figure.hover.show(point_words(*hit, x_words=self.x_words))


class HoverText(QtCore.QObject):
    """What a figure says of the point under the mouse (``show``): its canvas's tooltip
    and, through ``hovered``, the status line; taken back (``clear``) when the mouse
    leaves the canvas or it hides, so it never outlives the hover."""

    def __init__(self, figure):
        super().__init__(figure)
        self.figure, self.text = figure, ""
        self.resting = ""       # the canvas's own tooltip while nothing is hovered
        figure.canvas.installEventFilter(self)

    def show(self, text: str) -> None:
        if text != self.text:
            self.text = text
            self.figure.canvas.setToolTip(wrapped(text))
            self.figure.hovered.emit(text)

    def clear(self) -> None:
        if self.text:
            self.text = ""
            self.figure.canvas.setToolTip(wrapped(self.resting))
            QtWidgets.QToolTip.hideText()
            self.figure.hovered.emit("")

    def set_resting(self, text: str) -> None:
        """The canvas's tooltip while no value is hovered ("" none)."""
        self.resting = text
        if not self.text:
            self.figure.canvas.setToolTip(wrapped(text))

    def eventFilter(self, watched, event) -> bool:
        # a canvas being torn down may still send events after this object's Python
        # side is gone (its attributes with it): nothing is hovered then
        if event.type() in (QtCore.QEvent.Type.Leave, QtCore.QEvent.Type.Hide) and \
                hasattr(self, "text"):
            self.clear()
        return False
