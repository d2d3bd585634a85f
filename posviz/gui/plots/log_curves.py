"""Curves on a log-y axis that update cheaply at every reorder: lines, their markers in
one item, and a band between two quartiles."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtWidgets


class LogCurve:
    """A line on a log-y plot, updated for a fraction of what a PlotDataItem costs (its
    setData re-derives log data, bounds and auto-range). Its markers are drawn by the
    figure's ``Markers``. ``yData`` keeps the values before the log."""

    def __init__(self, plot, markers: "Markers", pen, symbol: str, brush):
        self.line = pg.PlotCurveItem(pen=pen, connect="finite")
        plot.addItem(self.line)
        self.symbol, self.brush = symbol, pg.mkBrush(brush)
        self.points = (np.empty(0), np.empty(0))    # (k,) x and log10 y of finite values
        self.markers = markers
        markers.curves.append(self)
        self.sample = _LegendSample(self, pen=pen, symbol=symbol, symbolBrush=brush,
                                    symbolPen=None, symbolSize=8)
        self.xData = self.yData = None

    def setData(self, x: np.ndarray, y: np.ndarray) -> None:
        """x, y: (k,) with y > 0 or NaN (a gap); drawn at log10(y). The markers follow
        at the figure's next ``Markers.refresh``."""
        self.xData, self.yData = x, y
        logged = np.log10(y)
        self.line.setData(x, logged)
        finite = np.isfinite(logged)
        self.points = (x[finite], logged[finite])

    def setVisible(self, visible: bool) -> None:
        self.line.setVisible(visible)
        self.markers.refresh()

    def isVisible(self) -> bool:
        return self.line.isVisible()


class Markers:
    """The markers of a figure's LogCurves, all in one ScatterPlotItem: one item to
    update and paint instead of one per curve."""

    def __init__(self, plot):
        self.item = pg.ScatterPlotItem(size=8, pen=None)
        plot.addItem(self.item)
        self.item.setZValue(1)                      # over every curve's line
        self.curves: list[LogCurve] = []

    def refresh(self) -> None:
        """Show the points of the visible curves, each with its curve's symbol and brush."""
        shown = [curve for curve in self.curves if curve.isVisible()]
        counts = [len(curve.points[0]) for curve in shown]
        self.item.setData(
            x=np.concatenate([curve.points[0] for curve in shown] or [np.empty(0)]),
            y=np.concatenate([curve.points[1] for curve in shown] or [np.empty(0)]),
            symbol=[curve.symbol for curve, k in zip(shown, counts) for _ in range(k)],
            brush=[curve.brush for curve, k in zip(shown, counts) for _ in range(k)])


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
    (log-y, values > 0); its legend entry shows or hides both. The band is one closed
    path set at each reorder: a FillBetweenItem redraws from two curves, each time
    either changes, and cost three times as much."""

    def __init__(self, plot, markers: Markers, pen, symbol: str, brush, fill):
        super().__init__(plot, markers, pen, symbol, brush)
        self.band = QtWidgets.QGraphicsPathItem()
        self.band.setPen(pg.mkPen(None))
        self.band.setBrush(pg.mkBrush(fill))
        self.band.setZValue(-5)
        plot.addItem(self.band)

    def set_quartiles(self, x: np.ndarray, low: np.ndarray, median: np.ndarray,
                      high: np.ndarray) -> None:
        """x, and the first quartile, median and third quartile (k,) each; the band
        spans the layers where both quartiles are finite."""
        self.setData(x, median)
        low, high = np.log10(low), np.log10(high)
        finite = np.isfinite(low) & np.isfinite(high)
        x, low, high = x[finite], low[finite], high[finite]
        path = pg.arrayToQPath(np.concatenate([x, x[::-1]]).astype(float),
                               np.concatenate([low, high[::-1]]))          # (2k,) each
        path.closeSubpath()
        self.band.setPath(path)

    def setVisible(self, visible: bool) -> None:
        self.band.setVisible(visible)
        super().setVisible(visible)
