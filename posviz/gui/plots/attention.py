"""Attention maps: the selected head before and after the reorder, and all heads at once.

Permuted maps are shown *aligned* back to the original token order
(``Comparison.attention_aligned``): for an equivariant layer they equal the original
maps exactly, and the difference map is white.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass, field

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from . import style
from .base import Figure, HeatmapImage


def _quote(token: str) -> str:
    return "'" + token.replace("'", "’") + "'"


class _HeatmapPlot:
    """One labelled heatmap: a PlotItem with a single row-major ImageItem, rows at top."""

    def __init__(self, canvas: pg.GraphicsLayoutWidget, title: str, cmap: str, levels,
                 left: str = "query", bottom: str = "key", row=None, col=None):
        self.plot = canvas.addPlot(row=row, col=col, axisItems=style.token_axes())
        style.style_plot(self.plot, title, left, bottom)
        self.plot.invertY(True)
        self.plot.hideButtons()
        self.image = HeatmapImage()
        self.image.setColorMap(style.colormap(cmap))
        self.image.setLevels(levels)
        self.plot.addItem(self.image)
        self.table = style.argb_table(cmap)
        self.shape = None

    def set_image(self, array: np.ndarray, levels) -> None:
        # Coloured here, not by pyqtgraph's render: about 0.3 ms less per map at n = 128.
        self.image.set_coloured(array, style.colour(array, self.table, levels), levels)
        if array.shape != self.shape:
            self.shape = array.shape
            rows, cols = array.shape
            self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0)

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


class AttentionFigure(Figure):
    """Selected layer and head: original, permuted (aligned back), and their difference."""

    name = "attention"
    title = "Attention of the selected head"
    dims = ("query", "key")
    hovered = QtCore.Signal(str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.difference_range = style.DEFAULT_DIFFERENCE_RANGE
        canvas = self.canvas
        self.original = _HeatmapPlot(canvas, "original order", style.SEQUENTIAL,
                                     style.ATTENTION_LEVELS, col=0)
        self.aligned = _HeatmapPlot(canvas, "reordered, aligned back", style.SEQUENTIAL,
                                    style.ATTENTION_LEVELS, col=1)
        self.difference = _HeatmapPlot(canvas, "difference (reordered − original)",
                                       style.DIVERGING, self._diff_levels(), col=3)
        self.attention_bar = style.color_bar(style.ATTENTION_LEVELS, style.SEQUENTIAL,
                                             "attention weight")
        self.attention_bar.setImageItem([self.original.image, self.aligned.image])
        canvas.addItem(self.attention_bar, row=0, col=2)
        self.difference_bar = style.color_bar(self._diff_levels(), style.DIVERGING,
                                              "difference")
        self.difference_bar.setImageItem(self.difference.image)
        canvas.addItem(self.difference_bar, row=0, col=4)
        self.aligned.plot.setXLink(self.original.plot)
        self.aligned.plot.setYLink(self.original.plot)
        self.difference.plot.setXLink(self.original.plot)
        self.difference.plot.setYLink(self.original.plot)
        self.tokens: tuple[str, ...] = ()
        self.where = ""
        self.corner.setToolTip("The largest |reordered − original| in the selected head's map")
        canvas.scene().sigMouseMoved.connect(self._mouse_moved)

    def _diff_levels(self):
        return (-self.difference_range, self.difference_range)

    def set_difference_range(self, r: float) -> None:
        self.difference_range = float(r)
        self.difference_bar.setLevels(self._diff_levels())
        if "difference" in self.data:
            self.difference.set_image(self.data["difference"], self._diff_levels())

    def update_from(self, ev, layer: int, head: int) -> None:
        ref = ev.reference
        original = ref.attention[layer - 1, head]                             # (n, n)
        aligned = ev.comparison.attention_aligned[layer - 1, head]            # (n, n)
        difference = aligned - original                                       # (n, n)
        self.data = {"original": original, "reordered_aligned": aligned,
                     "difference": difference}
        self.original.set_image(original, style.ATTENTION_LEVELS)
        self.aligned.set_image(aligned, style.ATTENTION_LEVELS)
        self.difference.set_image(difference, self._diff_levels())
        if ref.tokens != self.tokens:
            self.tokens = ref.tokens
            self.labels = {"query": list(ref.tokens), "key": list(ref.tokens)}
            for plot in (self.original, self.aligned, self.difference):
                plot.set_ticks(ref.tokens, ref.tokens)
        self.where = f"layer {layer} head {head}"
        gap = float(np.abs(difference).max()) if difference.size else 0.0
        self.set_title(f"Attention of layer {layer}, head {head}: original, reordered "
                       f"(aligned back to the original tokens), difference")
        self.set_corner(f"max |Δ| = {gap:.2g}", widest="max |Δ| = 8.8e-88")

    def _mouse_moved(self, scene_pos) -> None:
        for plot, key in ((self.original, "original"), (self.aligned, "reordered_aligned"),
                          (self.difference, "difference")):
            cell = plot.cell_at(scene_pos)
            if cell is not None and key in self.data:
                q, k = cell
                value = float(self.data[key][q, k])
                what = {"original": "", "reordered_aligned": " reordered",
                        "difference": " difference"}[key]
                text = (f"{self.where}: query {_quote(self.tokens[q])} -> key "
                        f"{_quote(self.tokens[k])}{what} = {value:.3f}")
                self.canvas.setToolTip(text)
                self.hovered.emit(text)
                return


MOSAIC_MODES = {
    "difference": "reordered (aligned) − original",
    "original": "original order",
    "reordered": "reordered, aligned back",
}


class _TileImage(HeatmapImage):
    """The mosaic image; a left click reports the pixel it hit."""

    def __init__(self, on_click):
        super().__init__()
        self._on_click = on_click

    def mouseClickEvent(self, ev):
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self._on_click(ev.pos())
        else:
            super().mouseClickEvent(ev)


# -- pooling a long sequence's mosaic ------------------------------------------------------
#
# At n = 512 the mosaic of a 6-layer, 12-head model would hold 19 M pixels, and even at
# n = 128 1.2 M: too many to colour and paint during a drag, and more than a screen
# shows (Qt would drop the rows and columns it has no room for, hiding whatever they
# hold). A tile larger than MOSAIC_TILE pixels a side is therefore pooled in blocks of ``block`` x ``block`` cells,
# each block showing its value of largest magnitude, sign kept: no difference is hidden
# (the block is at least as dark as its darkest cell), and attention weights (>= 0) show
# their block maximum. The figure's ``displayed()`` and CSV hold these pooled numbers,
# with each query / key labelled by the tokens of its block.

MOSAIC_TILE = 64
MOSAIC_GAP = 1         # pixels between tiles


def pool_block(n: int) -> int:
    """Cells per block a side so that an (n, n) tile is at most MOSAIC_TILE pixels."""
    return 1 if n <= MOSAIC_TILE else -(-n // MOSAIC_TILE)


def pool_signed_max(tiles: np.ndarray, block: int) -> np.ndarray:
    """(..., n, n) -> (..., m, m), m = ceil(n / block): per block the entry of largest
    |value|, with its sign (of +v and -v, +v). The last block of a row or column may be
    smaller: it is padded with zeros, which never outweigh a value of the block."""
    if block == 1:
        return tiles
    import torch
    import torch.nn.functional as F

    x = torch.from_numpy(np.ascontiguousarray(tiles))                        # (..., n, n)
    n = x.shape[-1]
    m = -(-n // block)
    if m * block != n:
        x = F.pad(x, (0, m * block - n, 0, m * block - n))
    high, low = _block_extremes(x, block)                                    # (..., m, m)
    return torch.where(high >= -low, high, low).numpy()


def _block_extremes(x, block: int):
    """(..., m*block, m*block) tensor -> the max and the min of each block, (..., m, m).

    Measured with torch 2.13 on 2 threads, at 6 x 12 maps: for small blocks, element-wise
    maxima of strided slices are about twice as fast as reductions over a reshaped
    block, and for blocks of 8 about half as fast; both beat max_pool2d with indices.
    """
    import torch

    if block <= 4:
        def extreme(op):
            cols = x[..., 0::block]
            for k in range(1, block):
                cols = op(cols, x[..., k::block])                          # (..., N, m)
            rows = cols[..., 0::block, :]
            for k in range(1, block):
                rows = op(rows, cols[..., k::block, :])                    # (..., m, m)
            return rows
        return extreme(torch.maximum), extreme(torch.minimum)
    m = x.shape[-1] // block
    blocks = x.reshape(*x.shape[:-2], m, block, m, block)
    return blocks.amax(dim=-1).amax(dim=-2), blocks.amin(dim=-1).amin(dim=-2)


POOL_CHUNK_BYTES = 16 << 20   # layers pooled at once: their difference stays this small


def _mosaic_tiles(ev, mode: str, block: int, should_stop=None) -> np.ndarray:
    """(L, h, m, m): what each tile of ``mode`` shows, pooled in blocks, a few layers
    at a time (at n = 512 one layer's difference is 12 MB: it never exists whole)."""
    original = ev.reference.attention                                     # (L, h, n, n)
    aligned = ev.comparison.attention_aligned                             # (L, h, n, n)
    shown = {"difference": lambda a, b: a - b, "original": lambda a, b: b,
             "reordered": lambda a, b: a}[mode]
    if block == 1:
        return shown(aligned, original)
    L = original.shape[0]
    step = max(1, POOL_CHUNK_BYTES // original[0].nbytes)
    chunks = []
    for first in range(0, L, step):
        if should_stop is not None and should_stop():
            from ...core.errors import Cancelled
            raise Cancelled("superseded by a newer request")
        layers = slice(first, first + step)
        chunks.append(pool_signed_max(shown(aligned[layers], original[layers]), block))
    return np.concatenate(chunks)                                         # (L, h, m, m)


def mosaic_image(tiles: np.ndarray, gap: int = MOSAIC_GAP, fill=np.nan) -> np.ndarray:
    """(L, h, m, m) tiles -> one (L*(m+gap)-gap, h*(m+gap)-gap) image, layers down and
    heads across, with ``fill`` between tiles (NaN: drawn transparent)."""
    L, h, m, _ = tiles.shape
    padded = np.full((L, m + gap, h, m + gap), fill, tiles.dtype)
    padded[:, :m, :, :m] = tiles.transpose(0, 2, 1, 3)                  # (L, m, h, m)
    return padded.reshape(L * (m + gap), h * (m + gap))[:L * (m + gap) - gap,
                                                        :h * (m + gap) - gap]


@dataclass(frozen=True)
class MosaicLook:
    """What the mosaic shows, and in which colours: set by the figure on the GUI thread,
    read by ``prepare_mosaic`` on the compute worker."""

    mode: str
    levels: tuple[float, float]
    table: np.ndarray = field(compare=False)     # (256,) uint32 ARGB, style.argb_table


@dataclass(frozen=True)
class Mosaic:
    """One mosaic, ready to show: tiles (L, h, m, m) as displayed (pooled when n >
    MOSAIC_TILE, ``block`` tokens a side per pixel), the image of them (NaN between
    tiles) and its pixels coloured for ``look``."""

    tiles: np.ndarray
    image: np.ndarray
    block: int
    look: MosaicLook
    argb: np.ndarray


_PREPARED: dict[int, Mosaic] = {}    # id(Evaluation) -> the mosaic prepared for it
_LOOK: MosaicLook | None = None      # the look of the mosaic on screen, once there is one


def make_mosaic(ev, look: MosaicLook, should_stop=None) -> Mosaic:
    """The evaluation's mosaic in ``look`` (any thread; ``should_stop`` as in prepare)."""
    block = pool_block(ev.reference.attention.shape[-1])
    tiles = _mosaic_tiles(ev, look.mode, block, should_stop)                # (L, h, m, m)
    argb = mosaic_image(style.colour(tiles, look.table, look.levels), fill=0)
    return Mosaic(tiles, mosaic_image(tiles), block, look, argb)


def prepare_mosaic(ev, should_stop=None) -> None:
    """Make the evaluation's mosaic ahead, on the compute worker, in the look of the
    one on screen; MosaicFigure.update_from then only hands its pixels to Qt."""
    look = _LOOK
    if look is None:                  # no mosaic yet: nothing to match
        return
    mosaic = make_mosaic(ev, look, should_stop)
    if id(ev) not in _PREPARED:
        weakref.finalize(ev, _PREPARED.pop, id(ev), None)
    _PREPARED[id(ev)] = mosaic


def mosaic_for(ev, look: MosaicLook) -> Mosaic:
    """The evaluation's mosaic in ``look``: the one prepared ahead if it matches."""
    prepared = _PREPARED.get(id(ev))
    if prepared is not None and prepared.look == look:
        return prepared
    return make_mosaic(ev, look)


def _block_labels(tokens, block: int) -> list[str]:
    """One label per pooled block: its token, or its first and last tokens."""
    if block == 1:
        return list(tokens)
    return [tokens[i] if i == min(i + block, len(tokens)) - 1
            else f"{tokens[i]} … {tokens[min(i + block, len(tokens)) - 1]}"
            for i in range(0, len(tokens), block)]


class MosaicFigure(Figure):
    """Every layer × head as one image (one ImageItem for all tiles: cheap to paint).

    A tile is (n, n) pixels, or, for n > MOSAIC_TILE, (m, m) pooled blocks of
    ``block`` x ``block`` cells (see ``pool_signed_max``); ``data`` holds exactly
    what is painted, and query / key index the blocks then.
    """

    name = "attention_mosaic"
    title = "All layers and heads"
    dims = ("layer", "head", "query", "key")
    gap = MOSAIC_GAP                          # transparent pixels between tiles
    hovered = QtCore.Signal(str)
    tileClicked = QtCore.Signal(int, int)     # layer 1..L, head 0..h-1

    def __init__(self, parent=None):
        super().__init__(parent)
        self.mode = "difference"
        self.difference_range = style.DEFAULT_DIFFERENCE_RANGE
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "layer", "head")
        self.plot.invertY(True)
        self.plot.setAspectLocked(True)
        self.plot.hideButtons()
        self.image = _TileImage(self._clicked)
        self.plot.addItem(self.image)
        self.outline = QtWidgets.QGraphicsRectItem()
        self.outline.setPen(style.cosmetic_pen("#ff7f0e", 3))
        self.outline.setZValue(10)
        self.plot.addItem(self.outline)
        # The image arrives coloured (see Mosaic): the bar shows the same map and
        # levels, and is not linked to the image.
        self.bar = style.color_bar(self._levels(), style.DIVERGING)
        self.canvas.addItem(self.bar, row=0, col=1)
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        self._set_look()
        self._grid = None                     # (L, h, m) of the current layout, m pixels a tile
        self.block = 1                        # tokens per pixel of a tile, a side
        self.tokens: tuple[str, ...] = ()
        self.selected = (1, 0)
        self._ev = None

    # -- colours --------------------------------------------------------------------
    def _levels(self):
        if self.mode == "difference":
            return (-self.difference_range, self.difference_range)
        return style.ATTENTION_LEVELS

    def _cmap_name(self) -> str:
        return style.DIVERGING if self.mode == "difference" else style.SEQUENTIAL

    def _set_look(self) -> None:
        """Colour the bar for the mode and range, and let the worker prepare the next
        mosaics in the same look."""
        global _LOOK
        name = self._cmap_name()
        self.bar.setColorMap(style.colormap(name))
        self.bar.setLevels(self._levels())
        self.look = _LOOK = MosaicLook(self.mode, self._levels(), style.argb_table(name))

    def set_mode(self, mode: str) -> None:
        if mode not in MOSAIC_MODES:
            raise ValueError(f"unknown mosaic mode {mode!r}")
        self.mode = mode
        self._set_look()
        if self._ev is not None:
            self.update_from(self._ev, *self.selected)

    def set_difference_range(self, r: float) -> None:
        self.difference_range = float(r)
        self._set_look()
        if self._ev is not None and self.mode == "difference":
            self.update_from(self._ev, *self.selected)

    # -- geometry -------------------------------------------------------------------
    def tile_origin(self, layer: int, head: int) -> tuple[int, int]:
        """(x, y) of the top-left pixel of a tile, in image (= view) coordinates."""
        n = self._grid[2]
        return head * (n + self.gap), (layer - 1) * (n + self.gap)

    def tile_center(self, layer: int, head: int) -> QtCore.QPointF:
        x, y = self.tile_origin(layer, head)
        n = self._grid[2]
        return QtCore.QPointF(x + n / 2, y + n / 2)

    def tile_at(self, x: float, y: float):
        """View coordinates -> (layer 1..L, head, query, key), or None over a gap
        (query and key count pooled blocks when ``block`` > 1)."""
        if self._grid is None:
            return None
        L, h, n = self._grid
        col, row = int(np.floor(x)), int(np.floor(y))
        head, key = divmod(col, n + self.gap)
        layer, query = divmod(row, n + self.gap)
        if 0 <= layer < L and 0 <= head < h and query < n and key < n and col >= 0 and row >= 0:
            return layer + 1, head, query, key
        return None

    # -- content --------------------------------------------------------------------
    def update_from(self, ev, layer: int, head: int) -> None:
        self._ev = ev
        mosaic = mosaic_for(ev, self.look)
        tiles, self.block = mosaic.tiles, mosaic.block
        L, h, n, _ = tiles.shape                                              # (L, h, m, m)
        g = self.gap
        rows, cols = mosaic.image.shape
        if self._grid != (L, h, n):
            self._grid = (L, h, n)
            self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)
            self.plot.getAxis("left").setTicks(
                [[(l * (n + g) + n / 2, str(l + 1)) for l in range(L)], []])
            self.plot.getAxis("bottom").setTicks(
                [[(k * (n + g) + n / 2, str(k)) for k in range(h)], []])
        self.image.set_coloured(mosaic.image, mosaic.argb, mosaic.look.levels)
        self.data = {MOSAIC_DATA[self.mode]: tiles}
        self.tokens = ev.reference.tokens
        names = _block_labels(self.tokens, self.block)
        self.labels = {"query": names, "key": names}
        self.coords = {"layer": list(range(1, L + 1))}
        if self.block > 1:      # a block's coordinate: the index of its first token
            starts = list(range(0, len(self.tokens), self.block))
            self.coords.update(query=starts, key=starts)
        pooled = (f" — each pixel: the largest |value| of {self.block}×{self.block} "
                  "tokens" if self.block > 1 else "")
        self.set_title(f"All layers (rows) × heads (columns): {MOSAIC_MODES[self.mode]}"
                       f" — click a tile to select it{pooled}")
        self.set_selection(layer, head)

    def set_selection(self, layer: int, head: int) -> None:
        self.selected = (layer, head)
        if self._grid is None:
            return
        x, y = self.tile_origin(layer, head)
        n = self._grid[2]
        self.outline.setRect(QtCore.QRectF(x - 0.5, y - 0.5, n + 1, n + 1))

    def _clicked(self, pos) -> None:
        hit = self.tile_at(pos.x(), pos.y())
        if hit is not None:
            self.tileClicked.emit(hit[0], hit[1])

    def _mouse_moved(self, scene_pos) -> None:
        if self._grid is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return
        point = self.plot.vb.mapSceneToView(scene_pos)
        hit = self.tile_at(point.x(), point.y())
        if hit is None:
            return
        layer, head, q, k = hit
        value = float(next(iter(self.data.values()))[layer - 1, head, q, k])
        names = self.labels["query"]
        largest = "largest |value| " if self.block > 1 else ""
        text = (f"layer {layer} head {head}: query {_quote(names[q])} -> key "
                f"{_quote(names[k])} {self.mode} {largest}= {value:.3f}")
        self.canvas.setToolTip(text)
        self.hovered.emit(text)


MOSAIC_DATA = {"difference": "difference", "original": "original",
               "reordered": "reordered_aligned"}
