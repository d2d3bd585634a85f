"""Colours, fixed colour levels and axis helpers shared by every figure.

Colour maps are perceptually uniform: viridis for values in [0, 1] (attention), CET-D1
(blue-white-red) for signed differences. Levels are fixed, not fitted to the data, so the
same colour means the same number before and after a reorder.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from .axis_titles import fit
from .units import with_unit

BACKGROUND = "w"
FOREGROUND = (40, 40, 40)
SEQUENTIAL = "viridis"          # attention weights, in [0, 1]
DIVERGING = "CET-D1"            # signed differences, white at 0
ATTENTION_LEVELS = (0.0, 1.0)
# Okabe-Ito's hues (colour-blind readers) darkened, yellow made violet; olive and grey for
# an orange and a blue too near others: each 3:1 on white (WCAG), any two ΔE76 >= 35 apart
CURVE_COLOURS = ("#0072b2", "#d55e00", "#009e73", "#c06a9c", "#808000", "#6a3d9a",
                 "#7f7f7f", "#000000")

# The one source of the figures' text and furniture: every axis, colour bar and legend
# of every figure takes these (style_axis, color_bar, legend_below), so ticks, fonts and
# bars read the same across plots and in exported files.
TEXT_COLOUR = "#202020"
NOTE_COLOUR = "#505050"
FONT_PT = 9.0           # tick labels, axis labels, legends, colour-bar labels, notes
TITLE_PT = 10.0         # a figure's heading and a plot's own title
TICK_LENGTH = -5        # pixels; negative: into the plot, as pyqtgraph draws them
BAR_WIDTH = 14          # pixels: the colour strip of every colour bar
MIN_TICK_GAP = 4        # pixels: closer than this, a token axis ticks only its labels


def text_font(points: float = FONT_PT, bold: bool = False) -> QtGui.QFont:
    """The figures' font at ``points``."""
    font = QtGui.QFont()
    font.setPointSizeF(points)
    font.setBold(bold)
    return font


def style_axis(axis: pg.AxisItem) -> None:
    """Dark line, ticks and text in the figures' font, no SI prefix on the numbers; drawn
    from a picture of itself kept until it changes (the maps beside it repaint at every
    reorder, and their region reaches its ticks: its labels were drawn again each time)."""
    axis.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.DeviceCoordinateCache)
    axis.setPen(pg.mkPen(FOREGROUND))
    axis.setTextPen(pg.mkPen(FOREGROUND))
    no_si_prefix(axis)
    axis.setStyle(tickFont=text_font(), tickLength=TICK_LENGTH)
    axis.label.setFont(text_font())


def no_si_prefix(axis: pg.AxisItem) -> None:
    """Numbers on ``axis`` as they are, whatever its range was or will be."""
    axis.enableAutoSIPrefix(False)
    # pyqtgraph still sets a scale from the present range (×1000 after a log range under
    # 1) and, disabled, never resets it: every later label would be multiplied by it
    axis.autoSIPrefixScale, axis.labelUnitPrefix = 1.0, ""


def colormap(name: str) -> pg.ColorMap:
    return pg.colormap.get(name)


@lru_cache(maxsize=None)
def argb_table(name: str) -> np.ndarray:
    """(256,) uint32: the colour map as opaque 0xAARRGGBB pixels, for
    posviz.views.mosaic.colour (one read-only table per map, shared)."""
    rgb = colormap(name).getLookupTable(nPts=256).astype(np.uint32)         # (256, 3)
    table = (0xFF000000 | rgb[:, 0] << 16 | rgb[:, 1] << 8 | rgb[:, 2]).astype(np.uint32)
    table.setflags(write=False)
    return table


def lookup_table(table: np.ndarray) -> np.ndarray:
    """(256,) uint32 0xAARRGGBB -> (256, 3) uint8 RGB, what ImageItem.setLookupTable takes."""
    return np.stack([(table >> 16) & 0xFF, (table >> 8) & 0xFF, table & 0xFF],
                    axis=1).astype(np.uint8)


def style_plot(plot: pg.PlotItem, title: str = "", left: str = "", bottom: str = "",
               short_left: str | tuple[str, ...] = "") -> None:
    """Dark axes and text on a white background, with a title and axis labels.

    The right-click menu keeps the view's entries (View All, the axes' ranges) and
    loses pyqtgraph's "Plot Options": its transforms (log x or y, FFT, derivative) would
    relabel axes whose data are already transformed (the symmetry curves are drawn at
    log10) or are token indices, so the figure would say something false.

    The left label becomes ``short_left`` (or the first of a few that fits) when the
    plot is too short to hold it whole (fit_label).
    """
    plot.setMenuEnabled(False, enableViewBoxMenu=True)
    for side in ("left", "bottom", "right", "top"):
        style_axis(plot.getAxis(side))
    if title:
        plot.setTitle(title, color=TEXT_COLOUR, size=f"{TITLE_PT:g}pt")
    if left:
        fit_label(plot.getAxis("left"), left, short_left)
    if bottom:
        fit_label(plot.getAxis("bottom"), bottom)


LABEL_COLOUR = TEXT_COLOUR


def fit_label(axis: pg.AxisItem, text: str, short: str | tuple[str, ...] = "") -> None:
    """Label ``axis`` with ``text``; while the part of the axis in sight is too short to
    hold it (a short plot, or one half under the fold), with the first of ``short``
    (one or a few, longest first) that fits, with its unit, else the last (or ``text``)
    without, and past that elided: an axis label is never cut (axis_titles.fit)."""
    shorts = tuple(filter(None, (short,) if isinstance(short, str) else short))
    fit(axis, tuple(dict.fromkeys((with_unit(text), *map(with_unit, shorts),
                                   *(shorts or (text,))[-1:]))), LABEL_COLOUR)


def cosmetic_pen(colour, width: float = 2.0, style=QtCore.Qt.PenStyle.SolidLine) -> QtGui.QPen:
    pen = pg.mkPen(colour, width=width, style=style)
    pen.setCosmetic(True)
    return pen


def legend_below(canvas: pg.GraphicsLayoutWidget, columns: int = 2) -> pg.LegendItem:
    """A legend in its own row under the plot, so it never covers data."""
    legend = pg.LegendItem(labelTextColor=FOREGROUND, colCount=columns, frame=False,
                           labelTextSize=f"{FONT_PT:g}pt")
    canvas.addItem(legend, row=1, col=0)
    legend.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred,
                         QtWidgets.QSizePolicy.Policy.Maximum)
    canvas.ci.layout.setRowStretchFactor(0, 10)
    canvas.ci.layout.setRowStretchFactor(1, 0)
    return legend


def place_legend(canvas: pg.GraphicsLayoutWidget, legend: pg.LegendItem,
                 beside: bool) -> None:
    """Put the legend under the plot (row 1) or beside it (column 1, one entry a row),
    where it leaves the plot more room; it never covers data either way."""
    layout = canvas.ci.layout
    where = (0, 1) if beside else (1, 0)
    if canvas.ci.items.get(legend) == [where]:
        return
    canvas.ci.removeItem(legend)
    canvas.addItem(legend, row=where[0], col=where[1])
    layout.setColumnStretchFactor(0, 10)
    layout.setColumnStretchFactor(1, 0)
    layout.setRowStretchFactor(1, 0)
    if beside:
        legend.setColumnCount(1)
        layout.setRowMaximumHeight(1, 0)      # the empty row under the plot: no room


def legend_width(legend: pg.LegendItem, columns: int) -> float:
    """Pixels the legend needs in ``columns`` columns (items fill rows left to right)."""
    spacing = legend.layout.horizontalSpacing()
    # the text's own width: a LabelItem laid out in a wide column stretches to fill it
    widths = [sample.width() + _text_width(label) + 2 * spacing
              for sample, label in legend.items]
    return sum(max(widths[c::columns], default=0.0) for c in range(columns))


def _text_width(label) -> float:
    item = getattr(label, "item", None)
    return (item.boundingRect().width() if item is not None
            else label.boundingRect().width())


def fit_legend(legend: pg.LegendItem, width: float, most: int = 2) -> int:
    """Lay the legend out in as many columns (up to ``most``) as ``width`` pixels hold,
    so a narrow figure stacks its legend instead of clipping it; returns the count."""
    columns = 1
    for count in range(max(most, 1), 1, -1):
        if legend_width(legend, count) + 16 <= width:
            columns = count
            break
    if columns != legend.columnCount:
        legend.setColumnCount(columns)
        # the scene laid out again at the canvas's size: it kept the width the former
        # columns needed, wider than the canvas, and was cut at the right
        for view in legend.scene().views() if legend.scene() is not None else ():
            if isinstance(view, pg.GraphicsView):
                view.setRange(view.range, padding=0, disableAutoPixel=False)
    return columns


def nice_ceiling(x: float) -> float:
    """The smallest 1, 2 or 5 × 10^k at or above x: an axis limit that stays put while the
    data wiggle (a moving limit relabels the axis and repaints the plot twice)."""
    if not np.isfinite(x) or x <= 0:
        return 1.0
    decade = 10.0 ** np.floor(np.log10(x))
    for step in (1.0, 2.0, 5.0, 10.0):
        if step * decade >= x * (1 - 1e-12):
            return float(step * decade)
    return float(10 * decade)


def nice_top(x: float) -> float:
    """The smallest multiple of a 1, 2 or 5 × 10^k step (at most 8 steps) at or above x:
    an axis limit that stays put while the data wiggle and leaves less than a third of
    the axis empty (nice_ceiling's 50 over data reaching 21 left more than half)."""
    step = nice_ceiling(x / 8)
    return float(np.ceil(x / step * (1 - 1e-12)) * step) if np.isfinite(x) and x > 0 else 1.0


def size_tabs_by_current_page(tabs: QtWidgets.QTabWidget) -> None:
    """Let ``tabs`` be as narrow as its current page allows: a hidden page (a wide row
    of controls) no longer widens every tab past a small window's viewport."""
    def follow(current: int) -> None:
        for index in range(tabs.count()):
            horizontal = (QtWidgets.QSizePolicy.Policy.Preferred if index == current
                          else QtWidgets.QSizePolicy.Policy.Ignored)
            page = tabs.widget(index)
            page.setSizePolicy(horizontal, page.sizePolicy().verticalPolicy())
            page.updateGeometry()
    tabs.currentChanged.connect(follow)
    follow(tabs.currentIndex())


def legend_sample(**style) -> pg.PlotDataItem:
    """A legend entry drawn by pyqtgraph's own sample (which reads a PlotDataItem's
    options; any other item would raise inside a paint, which PySide cannot survive)."""
    return pg.PlotDataItem([0], [0], **style)
