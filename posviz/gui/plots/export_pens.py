"""Lines as thick in a PNG drawn at a scale as in the figure on screen and in its SVG and
PDF. A PNG is painted on an image whose device-pixel ratio is its scale, which scales
text and markers; pyqtgraph's pens are cosmetic (their width in device pixels), which
Qt does not scale: at 300 dpi (×3.1) the curves were 2 pixels wide among text and
markers three times their screen size."""
from __future__ import annotations

from contextlib import contextmanager

import pyqtgraph as pg
from PySide6 import QtGui, QtWidgets

from .log_curves import LogCurves


def _thicker(pen, scale: float):
    """``pen`` ``scale`` times as wide when it is cosmetic (width 0: one pixel), else
    itself (a pen in the item's own units is scaled with the painter)."""
    if not isinstance(pen, QtGui.QPen) or not pen.isCosmetic():
        return pen
    wider = QtGui.QPen(pen)
    wider.setWidthF(max(pen.widthF(), 1.0) * scale)
    return wider


def _slots(item) -> list[tuple[object, str]]:
    """Where ``item`` keeps the pens it paints with: (a dict or the item, its key)."""
    if isinstance(item, (pg.PlotCurveItem, pg.PlotDataItem, pg.ErrorBarItem)):
        return [(item.opts, key) for key in ("pen", "shadowPen") if key in item.opts]
    if isinstance(item, pg.InfiniteLine):
        return [(item, "pen"), (item, "currentPen")]
    if isinstance(item, pg.AxisItem):
        return [(item, "_pen"), (item, "_tickPen")]
    if isinstance(item, LogCurves):
        return [(curve, "pen") for curve in item.curves]
    if isinstance(item, pg.ItemSample) and isinstance(getattr(item.item, "opts", None), dict):
        return [(item.item.opts, "pen")]          # a legend's sample of its curve
    return []


@contextmanager
def scaled_pens(figure: QtWidgets.QWidget, scale: float):
    """While in it, every cosmetic pen of ``figure``'s canvases (curves, their legend
    samples, lines, axes, Qt's own shapes) is ``scale`` times as wide."""
    items = [item for view in figure.findChildren(QtWidgets.QGraphicsView)
             for item in view.items()] if abs(scale - 1.0) > 1e-6 else []
    kept, seen = [], set()              # (where, key, pen) to put back; (id, key) done
    for item in items:
        for where, key in _slots(item):
            if (id(where), key) in seen:        # a curve and its legend sample's
                continue
            seen.add((id(where), key))
            pen = where[key] if isinstance(where, dict) else getattr(where, key, None)
            wider = _thicker(pen, scale)
            if wider is not pen:
                kept.append((where, key, pen))
                if isinstance(where, dict):
                    where[key] = wider
                else:
                    setattr(where, key, wider)
        if isinstance(item, (QtWidgets.QAbstractGraphicsShapeItem,
                             QtWidgets.QGraphicsLineItem)):
            pen = item.pen()
            if pen.isCosmetic():
                kept.append((item, None, pen))
                item.setPen(_thicker(pen, scale))
    axes = [item for item in items if isinstance(item, pg.AxisItem)]
    for axis in axes:
        axis.picture = None             # drawn afresh with the wider pens
    try:
        yield
    finally:
        for where, key, pen in kept:
            if key is None:
                where.setPen(pen)
            elif isinstance(where, dict):
                where[key] = pen
            else:
                setattr(where, key, pen)
        for axis in axes:
            axis.picture = None
