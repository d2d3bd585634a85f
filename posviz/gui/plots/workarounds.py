"""Where the plots work around pyqtgraph and SVG renderers, each in one named place.

Every workaround says why it exists, checks that what it relies on is there (falling
back to plain pyqtgraph otherwise) and asks ``posviz.boot.enabled(NAME)`` first,
so it can be turned off to compare: ``POSVIZ_WORKAROUNDS_OFF=heatmap-coloured-pixels``.

- ``heatmap-coloured-pixels``: HeatmapImage paints pixels coloured beforehand (on the
  compute worker for the mosaic) and exports its cells sharp; it reaches into
  ImageItem's private render state, as of pyqtgraph 0.13.7 and 0.14.0.
- ``token-axis``: TokenAxis (style.py) draws a bottom axis's labels itself, upright or
  turned; it reaches into AxisItem's style, size and cached picture, as of pyqtgraph
  0.13.7 and 0.14.0.
- ``svg-flatten-strokes``: flatten_scaled_strokes rewrites an exported SVG so thin
  curves stay thin in renderers that ignore non-scaling strokes (QSvgGenerator of Qt 6).
- let_title_shrink: a plot's title does not hold its plot at least as wide as its text
  (LabelItem.updateMin sets that minimum on every resize, as of pyqtgraph 0.13/0.14),
  so maps side by side take equal shares of the width (no switch: a layout choice).
- drop_export_menu: no "Export..." entry from pyqtgraph's scene (a plain attribute of
  GraphicsScene, no switch: it changes what the menu offers, not how anything works).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from posviz.boot import enabled

# -- heatmap-coloured-pixels -----------------------------------------------------------
#
# pyqtgraph renders a float image through its lookup table into an Indexed8 QImage,
# which the raster engine converts on every paint (about 4 ms at 600 x 500 pixels).
# Handing it premultiplied ARGB pixels makes each paint about 0.3 ms, and lets a worker
# colour the mosaic ahead. That means replacing ImageItem.render and marking its private
# render state done: written against pyqtgraph 0.13.7 / 0.14.0, whose ImageItem has the
# attributes below. Without them (or switched off) the item is a plain ImageItem with a
# lookup table: the same pixels, painted slower.

PRIVATE_RENDER_STATE = ("_renderRequired", "_unrenderable", "_exportOpts")
RENDER_STATE_VERSIONS = ("0.13.", "0.14.")     # pyqtgraph releases whose render() it knows
FAST = QtGui.QImage.Format.Format_ARGB32_Premultiplied


def _pyqtgraph_is(versions) -> bool:
    return pg.__version__.startswith(tuple(versions))


def coloured_pixels_usable(item: pg.ImageItem) -> bool:
    """May this item be given pixels coloured beforehand?"""
    return (enabled("heatmap-coloured-pixels")
            and _pyqtgraph_is(RENDER_STATE_VERSIONS)
            and all(hasattr(item, name) for name in PRIVATE_RENDER_STATE)
            and hasattr(pg.functions, "ndarray_to_qimage"))


def lookup_table(table: np.ndarray) -> np.ndarray:
    """(256,) uint32 0xAARRGGBB -> (256, 3) uint8 RGB, what ImageItem.setLookupTable takes."""
    return np.stack([(table >> 16) & 0xFF, (table >> 8) & 0xFF, table & 0xFF],
                    axis=1).astype(np.uint8)


class HeatmapImage(pg.ImageItem):
    """An ImageItem that is cheap to paint (see heatmap-coloured-pixels above)."""

    def __init__(self, **kwargs):
        super().__init__(axisOrder="row-major", **kwargs)
        self._coloured = None             # (values, their ARGB pixels) from set_coloured
        self.coloured_pixels = coloured_pixels_usable(self)

    def set_values(self, values: np.ndarray, table: np.ndarray, levels) -> None:
        """Show ``values`` (rows, cols) in the colours of ``table`` ((256,) uint32 ARGB)
        spanning ``levels``."""
        if self.coloured_pixels:
            from posviz.views.mosaic import colour  # cheap: the core is loaded by now
            self.set_coloured(values, colour(values, table, levels), levels, table)
        else:
            self.set_coloured(values, None, levels, table)

    def set_coloured(self, values: np.ndarray, argb, levels, table: np.ndarray) -> None:
        """Show ``values`` (rows, cols) as the pixels ``argb`` (rows, cols, uint32
        premultiplied ARGB, from core.mosaic.colour with ``table`` and ``levels``, e.g. on a
        worker): no lookup table runs on the GUI thread."""
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
        """On export, embed the cells enlarged without smoothing: SVG renderers blur a
        small embedded image when they scale it up, and a heatmap's cells must stay
        sharp."""
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


# -- token-axis ------------------------------------------------------------------------
#
# A bottom TokenAxis writes its labels itself, turned a quarter when they do not fit side
# by side; AxisItem has no public hook for that. The axis asks pyqtgraph for its ticks
# and line alone by switching "showValues" off in its style for that one call (setStyle
# would lay the axis out again in the middle of a paint), tells it the room its labels
# take through _updateMaxTextSize, and drops its cached picture when its tokens change
# (its range did not). Written against pyqtgraph 0.13.7 / 0.14.0. Without these
# attributes (or switched off) it is a plain AxisItem: pyqtgraph writes the labels,
# upright, thinned by TokenAxis so they do not overlap.


def token_axis_usable(axis: pg.AxisItem) -> bool:
    """May this axis draw its own labels?"""
    return (enabled("token-axis")
            and isinstance(getattr(axis, "style", None), dict) and "showValues" in axis.style
            and callable(getattr(axis, "_updateMaxTextSize", None))
            and hasattr(axis, "picture"))


def ticks_and_line(axis: pg.AxisItem, painter):
    """AxisItem.generateDrawSpecs of ``axis`` without its tick labels (see above)."""
    shown, axis.style["showValues"] = axis.style["showValues"], False
    try:
        return pg.AxisItem.generateDrawSpecs(axis, painter)
    finally:
        axis.style["showValues"] = shown


def reserve_label_room(axis: pg.AxisItem, pixels: int) -> None:
    """Make the axis as deep as labels of ``pixels`` need (across the axis)."""
    axis._updateMaxTextSize(pixels)


def redraw_axis(axis: pg.AxisItem) -> None:
    """Draw the axis again from scratch: its labels changed, its range did not."""
    if enabled("token-axis") and hasattr(axis, "picture"):
        axis.picture = None
        axis.update()
    else:                                    # the public way: the same range again
        axis.setRange(*axis.range)


# -- svg-flatten-strokes ---------------------------------------------------------------
#
# pyqtgraph draws curves in data coordinates under a scaling transform, with cosmetic
# pens that QSvgGenerator writes as ``vector-effect="non-scaling-stroke"``. Renderers
# that ignore that attribute (librsvg, Inkscape, LibreOffice) scale the stroke width by
# the transform, and a curve becomes a band hundreds of pixels wide. The rewrite reads
# the SVG of Qt 6's QSvgGenerator (groups with transform="matrix(a,b,c,d,e,f)"); any
# group it does not recognise is left as written.

_MATRIX = re.compile(r'transform="matrix\(([^)]*)\)"')
_GROUP = re.compile(r"(<g [^>]*>)(.*?)(</g>)", re.S)
_NUMBER = r"-?[\d.]+(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"({_NUMBER}),({_NUMBER})")


def flatten_svg_strokes(path: Path) -> bool:
    """Apply flatten_scaled_strokes to an SVG this Qt wrote, when switched on; returns
    whether the file was rewritten."""
    if not enabled("svg-flatten-strokes") or not QtCore.qVersion().startswith("6."):
        return False
    flatten_scaled_strokes(Path(path))
    return True


def flatten_scaled_strokes(path: Path) -> None:
    """Move data-to-pixel scalings from groups into the coordinates they hold.

    Only groups whose children are polylines, polygons, absolute M/L/C/Z paths and
    unrotated rectangles are rewritten; everything else is left as written.
    """
    text = path.read_text(encoding="utf-8")

    def rewrite(group: re.Match) -> str:
        opening, body, closing = group.groups()
        found = _MATRIX.search(opening)
        if found is None:
            return group.group(0)
        a, b, c, d, e, f = (float(v) for v in found.group(1).split(","))
        if (a, b, c, d) == (1.0, 0.0, 0.0, 1.0):
            return group.group(0)            # a translation does not scale strokes
        shapes = re.findall(r"<(\w+)", body)
        if not shapes or any(s not in ("polyline", "polygon", "path", "rect") for s in shapes):
            return group.group(0)
        if "rect" in shapes and (b, c) != (0.0, 0.0):
            return group.group(0)            # a rotated rectangle is no longer a rect
        if re.search(r'\sd="[^"]*[^MLCZ\d\s.,eE+-][^"]*"', body):
            return group.group(0)            # a path command other than M, L, C, Z

        def move(pair: re.Match) -> str:
            x, y = float(pair.group(1)), float(pair.group(2))
            return f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}"

        def move_rect(rect: re.Match) -> str:
            x, y, w, h = (float(rect.group(k)) for k in ("x", "y", "w", "h"))
            x0, x1 = sorted((a * x + e, a * (x + w) + e))
            y0, y1 = sorted((d * y + f, d * (y + h) + f))
            return (f'<rect{rect.group("pre")}x="{x0:.6g}" y="{y0:.6g}" '
                    f'width="{x1 - x0:.6g}" height="{y1 - y0:.6g}"')

        body = re.sub(r'(points|d)="([^"]*)"',
                      lambda attr: f'{attr.group(1)}="{_PAIR.sub(move, attr.group(2))}"', body)
        body = re.sub(rf'<rect(?P<pre>[^>]*?)x="(?P<x>{_NUMBER})" y="(?P<y>{_NUMBER})" '
                      rf'width="(?P<w>{_NUMBER})" height="(?P<h>{_NUMBER})"', move_rect, body)
        return _MATRIX.sub('transform="matrix(1,0,0,1,0,0)"', opening) + body + closing

    path.write_text(_GROUP.sub(rewrite, text), encoding="utf-8")


# -- the scene's export menu -----------------------------------------------------------


def drop_export_menu(canvas: pg.GraphicsLayoutWidget) -> None:
    """No "Export..." from pyqtgraph in the canvas's right-click menu: it would save the
    canvas without the figure's heading and note (the panel adds "Export figure as
    PNG / SVG / CSV…" instead). GraphicsScene.contextMenu holds it in pyqtgraph 0.13
    and 0.14; on a scene without that list nothing is changed."""
    scene = canvas.scene()
    if isinstance(getattr(scene, "contextMenu", None), list):
        scene.contextMenu = []


def let_title_shrink(plot: pg.PlotItem) -> None:
    """Let ``plot`` be narrower than its title's text (a long title is cut, not the
    plot's share of the row widened); a no-op if LabelItem keeps no updateMin."""
    title = plot.titleLabel
    keep_minimum = getattr(title, "updateMin", None)
    if keep_minimum is None:
        return

    def update_min():
        keep_minimum()
        title.setMinimumWidth(0)
    title.updateMin = update_min
    update_min()

