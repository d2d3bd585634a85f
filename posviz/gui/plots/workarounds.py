"""Where the plots patch pyqtgraph (0.13.7, 0.14.0), each in one named place.

- ``heatmap-coloured-pixels`` (a switch of posviz.boot): HeatmapImage paints ARGB pixels
  coloured on the worker, replacing ImageItem.render (pyqtgraph converts an Indexed8 image
  at each paint); it exports its cells enlarged, unsmoothed, so no SVG renderer blurs
  them. Switched off, a plain ImageItem: the same pixels, slower.
- let_title_shrink: a plot's title does not hold its plot as wide as its text."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from .style import lookup_table
from posviz.boot import enabled

PRIVATE_RENDER_STATE = ("_renderRequired", "_unrenderable", "_exportOpts")
FAST = QtGui.QImage.Format.Format_ARGB32_Premultiplied


class HeatmapImage(pg.ImageItem):
    """An ImageItem that is cheap to paint (heatmap-coloured-pixels, above)."""

    def __init__(self, **kwargs):
        super().__init__(axisOrder="row-major", **kwargs)
        self._coloured = None             # (values, their ARGB pixels) from set_coloured
        self.coloured_pixels = (  # may it be given pixels coloured beforehand?
            enabled("heatmap-coloured-pixels") and pg.__version__[:5] in ("0.13.", "0.14.")
            and all(hasattr(self, name) for name in PRIVATE_RENDER_STATE)
            and hasattr(pg.functions, "ndarray_to_qimage"))

    def set_values(self, values: np.ndarray, table: np.ndarray, levels) -> None:
        """Show ``values`` (rows, cols) in ``table``'s colours ((256,) uint32 ARGB)."""
        from posviz.views.mosaic import colour  # cheap: the core is loaded by now
        argb = colour(values, table, levels) if self.coloured_pixels else None
        self.set_coloured(values, argb, levels, table)

    def set_coloured(self, values: np.ndarray, argb, levels, table: np.ndarray) -> None:
        """Show ``values`` (rows, cols) as the pixels ``argb`` (rows, cols) uint32
        premultiplied ARGB (views.mosaic.colour of them, on the worker), or None."""
        if not self.coloured_pixels or argb is None:
            self.setLookupTable(lookup_table(table), update=False)
            self.setImage(values, autoLevels=False, levels=levels)
            return
        self.setImage(values, autoLevels=False, levels=levels)
        self._coloured = (self.image, np.ascontiguousarray(argb, dtype=np.uint32))

    def render(self):
        if not self.coloured_pixels:
            return super().render()
        if self._coloured is not None and self._coloured[0] is self.image:
            self.qimage = pg.functions.ndarray_to_qimage(self._coloured[1], FAST)
            self._renderRequired = self._unrenderable = False
            return
        self._coloured = None
        super().render()
        if self.qimage is not None and self.qimage.format() != FAST:
            self.qimage = self.qimage.convertToFormat(FAST)

    def paint(self, painter, *args):
        """On export, the cells enlarged without smoothing (SVG renderers blur them)."""
        if not self.coloured_pixels or self._exportOpts is False or self.image is None:
            return super().paint(painter, *args)
        if self._renderRequired:
            self.render()
        if self.qimage is None:
            return
        w, h = self.qimage.width(), self.qimage.height()
        k = max(1, 1024 // max(w, h))                 # about 1024 pixels a side at most
        sharp = self.qimage.scaled(w * k, h * k, QtCore.Qt.AspectRatioMode.IgnoreAspectRatio,
                                   QtCore.Qt.TransformationMode.FastTransformation)
        painter.drawImage(QtCore.QRectF(0, 0, w, h), sharp)


def let_title_shrink(plot: pg.PlotItem) -> None:
    """Let ``plot`` be narrower than its title, which LabelItem.updateMin forbids at every
    resize: maps side by side share the row equally (a layout choice, no switch)."""
    title = plot.titleLabel
    keep_minimum = getattr(title, "updateMin", None)
    if keep_minimum is None:
        return

    def update_min():
        keep_minimum()
        title.setMinimumWidth(0)
    title.updateMin = update_min
    update_min()

