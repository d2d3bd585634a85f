"""Attention maps: the selected head before and after the reorder (all heads at once:
mosaic_figure.py).

Permuted maps are shown *aligned* back to the original token order
(``Comparison.attention_aligned``): for an equivariant layer they equal the original
maps exactly, and the difference map is white.
"""
from __future__ import annotations

import weakref

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from . import colorbars, style
from .base import Figure
from .repaint import repaint_whole_when_laid_out
from .tabs import ATTENTION
from .token_axis import TokenAxis, token_axes
from .wheel import frame
from .workarounds import HeatmapImage, let_title_shrink
from posviz.document.spec import Selection
from posviz.views.head import head_cell, head_images
from posviz.views.mosaic import block_labels


def _quote(token: str) -> str:
    return "'" + token.replace("'", "’") + "'"


class _HeatmapPlot:
    """One labelled heatmap: a PlotItem with a single row-major ImageItem, rows at top."""

    def __init__(self, canvas: pg.GraphicsLayoutWidget, title: str, cmap: str, levels,
                 left: str = "query", bottom: str = "key", row=None, col=None,
                 short_title: str | tuple[str, ...] = ""):
        self.plot = canvas.addPlot(row=row, col=col, axisItems=token_axes())
        style.style_plot(self.plot, title, left, bottom)
        # shorter ones, each keeping the meaning, where room is short
        shorts = (short_title,) if isinstance(short_title, str) else short_title
        self.titles = (title, *(s for s in shorts if s))
        if short_title:
            self.plot.vb.sigResized.connect(self._fit_title)
        self.plot.invertY(True)
        self.plot.hideButtons()
        self.image = HeatmapImage()
        self.image.setColorMap(style.colormap(cmap))
        self.image.setLevels(levels)
        self.plot.addItem(self.image)
        self.table = style.argb_table(cmap)
        self.shape = None           # (rows, cols) of tokens the map spans

    def _fit_title(self, *_) -> None:
        """The whole title where the map is wide enough, else the longest short one that
        fits (the shortest past that): maps side by side in a narrow window do not run
        their titles into each other."""
        metrics = QtGui.QFontMetrics(style.text_font(style.TITLE_PT))
        room = self.plot.vb.width()
        title = next((t for t in self.titles if metrics.horizontalAdvance(t) + 8 <= room),
                     self.titles[-1])
        if self.plot.titleLabel.text != title:
            self.plot.setTitle(title, color=style.TEXT_COLOUR, size=f"{style.TITLE_PT:g}pt")

    def set_image(self, array: np.ndarray, levels, block: int = 1,
                  n: int | None = None) -> None:
        """Paint ``array`` (m, m), each pixel ``block`` tokens a side of an (n, n) map:
        the view keeps counting tokens, so axes and hover read the same at any block."""
        self.image.set_values(array, self.table, levels)
        rows, cols = array.shape
        self.image.setRect(QtCore.QRectF(0, 0, cols * block, rows * block))
        shape = (rows, cols) if n is None else (n, n)
        if shape != self.shape:
            self.shape = shape
            frame(self.plot, (0, shape[1]), (0, shape[0]))

    def set_ticks(self, row_labels, col_labels) -> None:
        self.plot.getAxis("left").set_tokens(row_labels)
        self.plot.getAxis("bottom").set_tokens(col_labels)

    def cell_at(self, scene_pos):
        """Scene position -> (row, col) of the cell under it, or None."""
        if not self.plot.vb.sceneBoundingRect().contains(scene_pos) or self.shape is None:
            return None
        point = self.plot.vb.mapSceneToView(scene_pos)
        row, col = int(np.floor(point.y())), int(np.floor(point.x()))
        if 0 <= row < self.shape[0] and 0 <= col < self.shape[1]:
            return row, col
        return None


class QueryColumn(pg.GraphicsLayout):
    """The queries' token axis of a row of maps, in a column of its own, kept level with
    ``plot``'s data area (margins above and below it) and following its rows."""

    def __init__(self, plot: pg.PlotItem):
        super().__init__()
        self.plot = plot
        self.axis = TokenAxis("left")
        style.style_axis(self.axis)
        self.addItem(self.axis, row=0, col=0)
        self.axis.linkToView(plot.vb)
        style.fit_label(self.axis, "query")
        plot.vb.sigResized.connect(self._align)
        plot.geometryChanged.connect(self._align)
        self.geometryChanged.connect(self._align)

    def _align(self, *_) -> None:
        target, own = self.plot.vb.sceneBoundingRect(), self.sceneBoundingRect()
        if target.height() < 2 or own.height() < 2:
            return
        left, top, right, bottom = self.layout.getContentsMargins()
        top2 = max(0.0, target.top() - own.top())
        bottom2 = max(0.0, own.bottom() - target.bottom())
        if abs(top2 - top) > 0.5 or abs(bottom2 - bottom) > 0.5:
            self.layout.setContentsMargins(left, top2, right, bottom2)


class AttentionFigure(Figure):
    """Selected layer and head: original, permuted (aligned back), and their difference."""

    name = "attention"
    title = "Attention of the selected head"
    shows_order = True
    tab = ATTENTION
    row = 2                     # under the curves and the mosaic: they are in sight first
    dims = ("query", "key")
    selects = ("layer", "head")
    guide = ("the selected layer and head, original A, reordered A′ aligned back to the "
             "original tokens (rows and columns in the original order), and their "
             "difference A′_aligned − A on a symmetric colour range ±r (the range box; "
             "values past it take the end colours, and then the bar's ends read ≤ −r "
             "and ≥ r and the largest |Δ| beside the heading says the colours clip). "
             "Past 512 tokens each pixel is a block of tokens (the heading says how "
             "many): the weights averaged, the difference the largest |Δ| with its sign. "
             "Hover a cell for its value (a token's own, pooled or not).")

    def __init__(self, parent=None):
        super().__init__(parent)
        r = Selection().difference_range
        canvas = self.canvas
        self.original = _HeatmapPlot(canvas, "original order", style.SEQUENTIAL,
                                     style.ATTENTION_LEVELS, col=1, short_title="original")
        self.aligned = _HeatmapPlot(canvas, "reordered, aligned back", style.SEQUENTIAL,
                                    style.ATTENTION_LEVELS, col=2,
                                    short_title=("reordered, aligned", "aligned"))
        self.difference = _HeatmapPlot(canvas, "reordered − original", style.DIVERGING,
                                       (-r, r), col=4, short_title="difference")
        # The three maps share their rows: the queries are named once, in a column of
        # their own on the left, so at 1024 pixels the three fit side by side (each
        # label would cost ~80) and are equally wide.
        self.queries = QueryColumn(self.original.plot)
        canvas.addItem(self.queries, row=0, col=0)
        for plot in (self.original, self.aligned, self.difference):
            plot.plot.hideAxis("left")
        layout = canvas.ci.layout     # the maps share the width left by the axis and bars
        for col, stretch in ((0, 0), (1, 1), (2, 1), (3, 0), (4, 1), (5, 0)):
            layout.setColumnStretchFactor(col, stretch)
        for plot in (self.original, self.aligned, self.difference):
            let_title_shrink(plot.plot)        # not their titles' widths: equal shares
            plot.plot.setPreferredWidth(100)
        self.attention_bar = colorbars.color_bar(style.ATTENTION_LEVELS, style.SEQUENTIAL,
                                                 "attention weight", short="weight")
        self.attention_bar.setImageItem([self.original.image, self.aligned.image])
        canvas.addItem(self.attention_bar, row=0, col=3)
        self.difference_bar = colorbars.color_bar((-r, r), style.DIVERGING, "difference")
        self.difference_bar.setImageItem(self.difference.image)
        canvas.addItem(self.difference_bar, row=0, col=5)
        colorbars.align_bar(self.attention_bar, self.aligned.plot)
        colorbars.align_bar(self.difference_bar, self.difference.plot)
        self.aligned.plot.setXLink(self.original.plot)
        self.aligned.plot.setYLink(self.original.plot)
        self.difference.plot.setXLink(self.original.plot)
        self.difference.plot.setYLink(self.original.plot)
        self.tokens: tuple[str, ...] = ()
        self.where = ""
        self.shown_head = None       # (evaluation, layer, head) whose values hover reads
        self.block = 1               # tokens a side per pixel of the maps painted
        # (weakref to the reference Trace, layer, head, block) of the original map painted:
        # its identity only, so a trace no longer shown (maybe large) is not held here
        self._original_of = None
        self.corner.setToolTip("The largest |reordered − original| in the selected head's map")
        canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        repaint_whole_when_laid_out(canvas)

    @property
    def difference_range(self) -> float:
        """The colour range of the difference map: what its colour bar shows (the
        selection's, see ``follow``)."""
        return float(self.difference_bar.levels()[1])

    def _diff_levels(self):
        return (-self.difference_range, self.difference_range)

    def follow(self, selection) -> None:
        """The difference map in the selection's colour range."""
        r = float(selection.difference_range)
        if r == self.difference_range:
            return
        self.difference_bar.setLevels((-r, r))
        if "difference" in self.data:
            self.difference.set_image(self.data["difference"], self._diff_levels(),
                                      self.block, len(self.tokens))
            self._say_largest()

    def update_from(self, shown, layer: int, head: int) -> None:
        ref = shown.evaluation.reference
        maps = shown.views.head             # made on the worker, for the head asked for
        if maps is None or (maps.layer, maps.head) != (layer, head):
            maps = head_images(shown.evaluation, layer, head)                 # (m, m) each
        if maps is None:                # a long input keeps the head it was asked for
            self.data, self.shown_head = {}, None
            self.show_message(f"Computing layer {layer}, head {head}: a long input keeps "
                              "only the maps of the head on screen, so the order runs "
                              "again for another one.")
            return
        self.show_canvas()
        self.shown_head = (shown.evaluation, layer, head)
        self.data = {"original": maps.original, "reordered_aligned": maps.aligned,
                     "difference": maps.difference}
        block, n = maps.block, maps.n
        original_of = (weakref.ref(ref), layer, head, block)
        if self._original_of is None or self._original_of[0]() is not ref or (
                self._original_of[1:] != original_of[1:]):
            # a reorder of the same reference run leaves the original map as painted:
            # neither coloured again nor repainted
            self.original.set_image(maps.original, style.ATTENTION_LEVELS, block, n)
            self._original_of = original_of
        self.aligned.set_image(maps.aligned, style.ATTENTION_LEVELS, block, n)
        self.difference.set_image(maps.difference, self._diff_levels(), block, n)
        if ref.tokens != self.tokens or block != self.block:
            self.tokens, self.block = ref.tokens, block
            names = block_labels(ref.tokens, block)         # the CSV's: one per pixel
            self.labels = {"query": names, "key": names}
            starts = list(range(0, n, block))       # a block's coordinate: its first token
            self.coords = {} if block == 1 else {"query": starts, "key": starts}
            for plot in (self.original, self.aligned, self.difference):
                plot.set_ticks(ref.tokens, ref.tokens)
            self.queries.axis.set_tokens(ref.tokens)
        self.where = f"layer {layer} head {head}"
        gap = maps.largest
        pooled = (f" — each pixel {block}×{block} tokens: weights averaged, difference "
                  "the largest |Δ|" if block > 1 else "")
        self.set_title(f"Attention of layer {layer}, head {head}{pooled}")
        self._largest = gap
        self._say_largest()

    def _say_largest(self) -> None:
        """The largest |Δ| beside the heading, and whether the difference map's colours
        clip at ±r (its bar's ends then read ≤ −r and ≥ r)."""
        clips = any(self.difference_bar.set_clips(self.data["difference"]))
        clipped = f", colours clip at ±{self.difference_range:g}" if clips else ""
        self.set_corner(f"max |Δ| = {self._largest:.2g}{clipped}",
                        widest="max |Δ| = 8.8e-88, colours clip at ±0.03")

    def _mouse_moved(self, scene_pos) -> None:
        for plot, key in ((self.original, "original"), (self.aligned, "reordered_aligned"),
                          (self.difference, "difference")):
            cell = plot.cell_at(scene_pos)
            values = None if cell is None or self.shown_head is None else head_cell(
                *self.shown_head, *cell)                # the true values, not the block's
            if values is not None:
                q, k = cell
                original, aligned = values
                value = {"original": original, "reordered_aligned": aligned,
                         "difference": aligned - original}[key]
                what = {"original": "", "reordered_aligned": " reordered",
                        "difference": " difference"}[key]
                text = (f"{self.where}: query {_quote(self.tokens[q])} -> key "
                        f"{_quote(self.tokens[k])}{what} = {value:.3f}")
                self.hover.show(text)
                return
        self.hover.clear()
