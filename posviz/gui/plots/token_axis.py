"""The axis of token cells every map and per-token figure shares: labelled with the
tokens, turned and thinned so its labels never overlap, at any zoom."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .style import MIN_TICK_GAP, nice_ceiling, no_si_prefix


class TokenAxis(pg.AxisItem):
    """An axis of token cells (cell i spans [i, i+1)) labelled with the tokens.

    A bottom axis writes its labels upright while they fit side by side, and turns them
    a quarter (reading upwards) when they do not: a turned label needs only one line
    height per cell, so every token of a short sentence keeps its label. Past that the
    labels are thinned to every k-th token, k chosen from the axis length in pixels, so
    they never overlap at any zoom; every cell keeps a tick. (A bottom axis draws its
    labels itself, and tells pyqtgraph the room they take.)
    """

    def __init__(self, orientation: str, rotate: bool = True, **kwargs):
        super().__init__(orientation, **kwargs)
        no_si_prefix(self)
        self.tokens: list[str] = []
        self.numbered = True        # every token is its own index (see set_tokens)
        self.draws_labels = orientation == "bottom"
        if self.draws_labels:                   # the room for labels: as _reserve says
            self.setStyle(autoExpandTextSpace=False)
        self.rotate = rotate and self.draws_labels          # may labels be turned?
        self.rotated = False        # labels are turned a quarter (bottom axis only)
        self.labelled: list[int] = []   # cells given a label last time (a turned one
        # reaching past an end of the axis is then left out: generateDrawSpecs)
        self.drawn: list[QtCore.QRectF] = []    # the boxes of those labels' text (local)
        self._step = 1

    def set_tokens(self, tokens) -> None:
        self.tokens = [_short(str(t)) for t in tokens]
        # cells labelled by their own index (positions, dimensions) need no index twice
        self.numbered = all(t == str(i) for i, t in enumerate(self.tokens))
        self.setRange(*self.range)              # drawn again: same range, new labels

    def _metrics(self) -> QtGui.QFontMetricsF:
        return QtGui.QFontMetricsF(self.style.get("tickFont") or self.font())

    def tickValues(self, minVal, maxVal, size):
        n = len(self.tokens)
        if n == 0 or size <= 0:
            self.labelled = []
            return []
        low, high = sorted((minVal, maxVal))
        first, last = max(0, int(np.floor(low))), min(n - 1, int(np.ceil(high)))
        if first > last:
            self.labelled = []
            return []
        pixels = size / max(high - low, 1e-9)                  # pixels per token cell
        metrics = self._metrics()
        line = metrics.height() * 1.05
        if self.orientation in ("left", "right"):
            need, self.rotated = line, False
        else:
            need = max(metrics.horizontalAdvance(t) for t in self.tokens[first:last + 1]) + 8
            if need > pixels and not self.numbered:   # thinned: a label carries its index
                need += metrics.horizontalAdvance(f"{last} ")
            self.rotated = self.rotate and need > pixels
            if self.rotated:
                need = line
        step = max(1, int(np.ceil(need / pixels)))
        if self.numbered and step > 1:          # positions, dimensions: 2, 5, 10, 20, …
            step = int(nice_ceiling(step))
        self._step = step
        cells = range(first, last + 1)
        major = [i + 0.5 for i in cells if i % step == 0]
        self.labelled = [int(v) for v in major]
        if step == 1:
            return [(1.0, major)]
        if pixels < MIN_TICK_GAP:        # a tick per cell would merge into a grey bar
            return [(float(step), major)]
        return [(float(step), major), (1.0, [i + 0.5 for i in cells if i % step])]

    def cell_label(self, cell: int) -> str:
        """A token's label; once labels are thinned, with its index in front, so a
        reader knows which of many tokens each one is."""
        if not 0 <= cell < len(self.tokens):
            return ""
        if self._step == 1 or self.numbered:
            return self.tokens[cell]
        return f"{cell} {self.tokens[cell]}"

    def tickStrings(self, values, scale, spacing):
        if spacing != self._step:
            return [""] * len(values)
        return [self.cell_label(int(v)) for v in values]

    # -- labels drawn here (bottom axis) ---------------------------------------------
    def boundingRect(self):
        """Room for half a turned label beyond each end (the first and last cells')."""
        rect = super().boundingRect()
        if not self.draws_labels:
            return rect
        margin = np.ceil(self._metrics().height() / 2) + 1
        return rect.adjusted(-margin, 0, margin, 0)

    def label_rects(self) -> list[QtCore.QRectF]:
        """The boxes of the labels last drawn, in scene coordinates."""
        return [self.mapRectToScene(rect) for rect in self.drawn]

    def generateDrawSpecs(self, p):
        """Ticks and axis line from pyqtgraph; the labels of a bottom axis placed here,
        upright or turned, as (x, text) under each labelled tick."""
        if not self.draws_labels:
            return super().generateDrawSpecs(p)
        specs = super().generateDrawSpecs(p)   # its labels are not drawn (drawPicture)
        if specs is None:
            return None
        axis_spec, tick_specs, _ = specs
        bounds = self.mapRectFromParent(self.geometry())
        low, high = self.range
        scale = bounds.width() / (high - low) if high != low else 1.0
        metrics = self._metrics()
        labels, widest = [], 0.0
        deepest = self._deepest_label()
        # a turned label stays inside its axis: thinned, the first and last ones reached
        # half a line past its ends, into the labels of a map beside it (808 tokens at
        # 1920 pixels: "805 given" ran into "0 In"). Unthinned, a cell is a line wide.
        inside = metrics.height() / 2 if self.rotated else -1.0
        for cell in self.labelled:
            if 0 <= cell < len(self.tokens):
                x = bounds.left() + (cell + 0.5 - low) * scale
                if bounds.left() + inside - 0.01 <= x <= bounds.right() - inside + 0.01:
                    text = self.cell_label(cell)
                    if self.rotated and metrics.horizontalAdvance(text) > deepest:
                        text = metrics.elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                                  deepest)
                    labels.append((x, text))
                    widest = max(widest, metrics.horizontalAdvance(text))
        self._reserve(int(np.ceil(widest + 2 if self.rotated else metrics.height())))
        return axis_spec, tick_specs, [("labels", labels)]

    def _deepest_label(self) -> float:
        """How deep a turned label may reach: a third of the canvas (at least three
        lines), so a short figure keeps room for its data and no label runs off it."""
        views = self.scene().views() if self.scene() is not None else []
        height = views[0].height() if views else 0
        return max(3 * self._metrics().height(), height / 3) if height else float("inf")

    def _reserve(self, room: int) -> None:
        """Make the axis as deep as labels ``room`` pixels deep need, as pyqtgraph sizes
        its own (larger at once, smaller only by more than 10 pixels)."""
        if not self.style["tickTextHeight"] - 10 <= room <= self.style["tickTextHeight"]:
            self.setStyle(tickTextHeight=room)

    def drawPicture(self, p, axisSpec, tickSpecs, textSpecs):
        if not (textSpecs and textSpecs[0][0] == "labels"):
            return super().drawPicture(p, axisSpec, tickSpecs, textSpecs)
        super().drawPicture(p, axisSpec, tickSpecs, [])
        if self.style["tickFont"] is not None:
            p.setFont(self.style["tickFont"])
        p.setPen(self.textPen())
        line = self._metrics().height()
        top = self.mapRectFromParent(self.geometry()).top()
        top += max(0, self.style["tickLength"]) + self.style["tickTextOffset"][1]
        Align = QtCore.Qt.AlignmentFlag
        metrics, self.drawn = self._metrics(), []
        for x, text in textSpecs[0][1]:
            advance = metrics.horizontalAdvance(text)
            self.drawn.append(QtCore.QRectF(x - line / 2, top, line, advance) if self.rotated
                              else QtCore.QRectF(x - advance / 2, top, advance, line))
            if self.rotated:           # reads upwards and ends at its tick
                p.save()
                p.translate(x, top)
                p.rotate(-90)
                p.drawText(QtCore.QRectF(-1000, -line / 2, 1000, line),
                           int(Align.AlignRight | Align.AlignVCenter), text)
                p.restore()
            else:
                p.drawText(QtCore.QRectF(x - 500, top, 1000, line),
                           int(Align.AlignHCenter | Align.AlignTop), text)


def token_axes() -> dict[str, TokenAxis]:
    return {"left": TokenAxis("left"), "bottom": TokenAxis("bottom")}


def _short(token: str, limit: int = 10) -> str:
    return token if len(token) <= limit else token[: limit - 1] + "…"
