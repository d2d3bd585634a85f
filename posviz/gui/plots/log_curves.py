"""The curves of a log-y plot, drawn by one item that a reorder only hands new values:
each curve's line (a gap at NaN), its markers, and a band between two quartiles."""
from __future__ import annotations

import math

import numpy as np
import pyqtgraph as pg
from pyqtgraph.graphicsItems.ScatterPlotItem import Symbols
from PySide6 import QtCore, QtGui

MARKER_PX = 8           # a marker's width, in pixels on screen and in every export
ANTIALIAS = QtGui.QPainter.RenderHint.Antialiasing


class LogCurves(pg.GraphicsObject):
    """Every LogCurve of a plot, painted in one pass: the quartile bands, the lines,
    then the markers (MARKER_PX wide whatever the scale; later curves' on top). A
    reorder hands each curve its values and repaints: pyqtgraph's curve, scatter and
    path items re-derived bounds, paths and a symbol atlas at each update (most of the
    symmetry figure's update)."""

    def __init__(self, plot):
        super().__init__()
        self.curves: list[LogCurve] = []
        self._data_rect: QtCore.QRectF | None = None     # what is drawn; None: nothing
        plot.addItem(self)

    def shown(self) -> list["LogCurve"]:
        return [curve for curve in self.curves if curve.visible]

    def refresh(self) -> None:
        """Draw the curves' new values or visibility (the figure calls it once after
        setting every curve's values)."""
        self.prepareGeometryChange()
        drawn = [xy for curve in self.shown() for xy in (curve.points, curve.band_points)]
        x = np.concatenate([x for x, _ in drawn] or [np.empty(0)])
        y = np.concatenate([y for _, y in drawn] or [np.empty(0)])
        self._data_rect = (QtCore.QRectF(x.min(), y.min(), np.ptp(x), np.ptp(y))
                           if x.size else None)
        self.update()

    def boundingRect(self) -> QtCore.QRectF:
        if self._data_rect is None:
            return QtCore.QRectF()
        pixel_x, pixel_y = self.pixelVectors()          # a pixel, in view units
        pad_x, pad_y = (0.0 if v is None else MARKER_PX * v.length()
                        for v in (pixel_x, pixel_y))
        return self._data_rect.adjusted(-pad_x, -pad_y, pad_x, pad_y)

    def viewTransformChanged(self) -> None:
        self.prepareGeometryChange()            # the markers' padding is in pixels
        super().viewTransformChanged()

    def paint(self, painter, *args) -> None:
        shown = self.shown()
        exporting = self._exportOpts is not False
        painter.setRenderHint(ANTIALIAS, exporting and self._exportOpts.get("antialias", True))
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        for curve in shown:
            if curve.band is not None:
                painter.setBrush(curve.fill)
                painter.drawPolygon(curve.band)
        painter.setBrush(QtCore.Qt.BrushStyle.NoBrush)
        for curve in shown:
            painter.setPen(curve.pen)
            for run in polylines(*curve.getData()):
                painter.drawPolyline(run)
        # the markers in device pixels, as pyqtgraph's ScatterPlotItem draws them
        to_device = painter.transform()
        painter.resetTransform()
        painter.setRenderHint(ANTIALIAS, True)
        painter.setPen(QtCore.Qt.PenStyle.NoPen)
        for curve in shown:
            painter.setBrush(curve.brush)
            x, y = pg.transformCoordinates(to_device, np.vstack(curve.points))    # (2, k)
            for at_x, at_y in zip(x.tolist(), y.tolist()):
                painter.drawPath(curve.marker.translated(at_x, at_y))


def polylines(x: np.ndarray, y: np.ndarray) -> list[QtGui.QPolygonF]:
    """The runs of at least two finite points of (k,) x, y: a line broken at NaN."""
    runs, run = [], []
    for at_x, at_y in zip(x.tolist(), y.tolist()):
        if math.isfinite(at_y):
            run.append(QtCore.QPointF(at_x, at_y))
            continue
        if len(run) > 1:
            runs.append(QtGui.QPolygonF(run))
        run = []
    return runs + [QtGui.QPolygonF(run)] if len(run) > 1 else runs


class LogCurve:
    """A line with markers on a log-y plot, drawn by the figure's LogCurves; ``yData``
    keeps the values before the log, ``getData()`` gives what is drawn."""

    band = None                                 # a QuartileBand's polygon (view coordinates)
    band_points = (np.empty(0), np.empty(0))

    def __init__(self, curves: LogCurves, pen, symbol: str, brush):
        self.pen, self.symbol, self.brush = pen, symbol, pg.mkBrush(brush)
        self.marker = QtGui.QTransform.fromScale(MARKER_PX, MARKER_PX).map(Symbols[symbol])
        self.visible = True
        self.xData = self.yData = None
        self.points = (np.empty(0), np.empty(0))    # (k,) x and log10 y of finite values
        self._drawn = (np.empty(0), np.empty(0))
        self.curves = curves
        curves.curves.append(self)
        self.sample = _LegendSample(self, pen=pen, symbol=symbol, symbolBrush=brush,
                                    symbolPen=None, symbolSize=MARKER_PX)

    def setData(self, x: np.ndarray, y: np.ndarray) -> None:
        """x, y: (k,) with y > 0 or NaN (a gap); drawn at log10(y) at the figure's next
        ``LogCurves.refresh``."""
        self.xData, self.yData = x, y
        logged = np.log10(y)
        finite = np.isfinite(logged)
        self._drawn = (x, logged)
        self.points = (x[finite], logged[finite])

    def getData(self) -> tuple[np.ndarray, np.ndarray]:
        """(k,) x and log10 y, as drawn (NaN: a gap)."""
        return self._drawn

    def setVisible(self, visible: bool) -> None:
        self.visible = bool(visible)
        self.curves.refresh()

    def isVisible(self) -> bool:
        return self.visible


class _LegendSample(pg.PlotDataItem):
    """What the legend draws for a LogCurve (it reads a PlotDataItem's options); never
    plotted. A click on the legend entry shows or hides the curve it stands for."""

    def __init__(self, curve: LogCurve, **opts):
        super().__init__([0.0], [0.0], **opts)    # one point, so the symbol options exist
        self._curve = curve

    def setVisible(self, visible: bool) -> None:
        super().setVisible(visible)
        self._curve.setVisible(visible)


class QuartileBand(LogCurve):
    """A median line with the band between the first and third quartiles behind it
    (log-y, values > 0); its legend entry shows or hides both."""

    def __init__(self, curves: LogCurves, pen, symbol: str, brush, fill):
        super().__init__(curves, pen, symbol, brush)
        self.fill = pg.mkBrush(fill)

    def set_quartiles(self, x: np.ndarray, low: np.ndarray, median: np.ndarray,
                      high: np.ndarray) -> None:
        """x, and the first quartile, median and third quartile (k,) each; the band
        spans the layers where both quartiles are finite."""
        low, high = np.log10(low), np.log10(high)
        finite = np.isfinite(low) & np.isfinite(high)
        x_band, low, high = np.asarray(x, float)[finite], low[finite], high[finite]
        self.band_points = (np.concatenate([x_band, x_band[::-1]]),
                            np.concatenate([low, high[::-1]]))              # (2k,) each
        self.band = QtGui.QPolygonF(list(map(QtCore.QPointF, *self.band_points)))
        self.setData(x, median)
