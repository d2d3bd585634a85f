"""Attention maps: the selected head before and after the reorder, and all heads at once.

Permuted maps are shown *aligned* back to the original token order
(``Comparison.attention_aligned``): for an equivariant layer they equal the original
maps exactly, and the difference map is white.
"""
from __future__ import annotations

import weakref

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
        self.shape = None

    def set_image(self, array: np.ndarray, levels) -> None:
        self.image.setImage(array, autoLevels=False, levels=levels)
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
                       f"(aligned back to the original tokens), difference "
                       f"(max |Δ| = {gap:.2g})")

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


def pool_block(n: int) -> int:
    """Cells per block a side so that an (n, n) tile is at most MOSAIC_TILE pixels."""
    return 1 if n <= MOSAIC_TILE else -(-n // MOSAIC_TILE)


def pool_signed_max(tiles: np.ndarray, block: int) -> np.ndarray:
    """(..., n, n) -> (..., m, m), m = ceil(n / block): per block the entry of largest
    |value|, with its sign. The last block of a row or column may be smaller."""
    if block == 1:
        return tiles
    import torch
    import torch.nn.functional as F

    *lead, n, _ = tiles.shape
    x = torch.from_numpy(np.ascontiguousarray(tiles)).reshape(-1, 1, n, n)    # (B, 1, n, n)
    pooled = []
    for chunk in x.split(16):
        size, where = F.max_pool2d(chunk.abs(), block, ceil_mode=True, return_indices=True)
        pooled.append(chunk.flatten(2).gather(2, where.flatten(2)).view_as(size))  # (b, 1, m, m)
    out = torch.cat(pooled)
    return out.reshape(*lead, *out.shape[-2:]).numpy()


def _mosaic_tiles(ev, mode: str, block: int, should_stop=None) -> np.ndarray:
    """(L, h, m, m): what each tile of ``mode`` shows, pooled in blocks (one layer at a
    time, so the (L, h, n, n) difference never exists whole)."""
    original = ev.reference.attention                                     # (L, h, n, n)
    aligned = ev.comparison.attention_aligned                             # (L, h, n, n)
    if block == 1:
        return {"difference": lambda: aligned - original, "original": lambda: original,
                "reordered": lambda: aligned}[mode]()
    layers = []
    for layer in range(original.shape[0]):
        if should_stop is not None and should_stop():
            from ...core.errors import Cancelled
            raise Cancelled("superseded by a newer request")
        tile = {"difference": lambda: aligned[layer] - original[layer],
                "original": lambda: original[layer],
                "reordered": lambda: aligned[layer]}[mode]()              # (h, n, n)
        layers.append(pool_signed_max(tile, block))                       # (h, m, m)
    return np.stack(layers)


def mosaic_image(tiles: np.ndarray, gap: int = 1) -> np.ndarray:
    """(L, h, m, m) tiles -> one (L*(m+gap)-gap, h*(m+gap)-gap) image, layers down and
    heads across, with NaN (drawn transparent) between tiles."""
    L, h, m, _ = tiles.shape
    padded = np.full((L, m + gap, h, m + gap), np.nan, tiles.dtype)
    padded[:, :m, :, :m] = tiles.transpose(0, 2, 1, 3)                  # (L, m, h, m)
    return padded.reshape(L * (m + gap), h * (m + gap))[:L * (m + gap) - gap,
                                                        :h * (m + gap) - gap]


_PREPARED: dict[int, dict] = {}      # id(Evaluation) -> {(mode, gap): (tiles, image)}
_WORKER_MODES = {"difference"}       # the modes a mosaic is showing: prepared ahead


def prepare_mosaic(ev, should_stop=None, gap: int = 1) -> None:
    """Compute the mosaic's tiles (pooled for a long sequence) and image ahead, on the
    compute worker, for the modes a mosaic is showing; MosaicFigure.update_from then
    only hands the image to Qt."""
    block = pool_block(ev.reference.attention.shape[-1])
    done = {}
    for mode in tuple(_WORKER_MODES):
        tiles = _mosaic_tiles(ev, mode, block, should_stop)
        done[mode, gap] = (tiles, mosaic_image(tiles, gap))
    if id(ev) not in _PREPARED:
        weakref.finalize(ev, _PREPARED.pop, id(ev), None)
    _PREPARED.setdefault(id(ev), {}).update(done)


def mosaic_tiles(ev, mode: str, gap: int = 1) -> tuple[np.ndarray, np.ndarray, int]:
    """The (L, h, m, m) tiles of ``mode`` (pooled when n > MOSAIC_TILE), the mosaic
    image built from them, and the block (tokens per pixel a side)."""
    block = pool_block(ev.reference.attention.shape[-1])
    prepared = _PREPARED.get(id(ev), {}).get((mode, gap))
    if prepared is None:
        tiles = _mosaic_tiles(ev, mode, block)
        prepared = tiles, mosaic_image(tiles, gap)
    return (*prepared, block)


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
    gap = 1                                   # NaN pixels between tiles (drawn transparent)
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
        self.bar = style.color_bar(self._levels(), style.DIVERGING)
        self.bar.setImageItem(self.image)
        self.canvas.addItem(self.bar, row=0, col=1)
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        self._buffer = None                   # (L*(n+g)-g, h*(n+g)-g) mosaic pixels
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

    def _cmap(self):
        return style.colormap(style.DIVERGING if self.mode == "difference" else style.SEQUENTIAL)

    def set_mode(self, mode: str) -> None:
        if mode not in MOSAIC_MODES:
            raise ValueError(f"unknown mosaic mode {mode!r}")
        self.mode = mode
        _WORKER_MODES.clear()
        _WORKER_MODES.add(mode)
        self.bar.setColorMap(self._cmap())
        self.bar.setLevels(self._levels())
        if self._ev is not None:
            self.update_from(self._ev, *self.selected)

    def set_difference_range(self, r: float) -> None:
        self.difference_range = float(r)
        if self.mode == "difference":
            self.bar.setLevels(self._levels())
            if self._ev is not None:
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
        tiles, self._buffer, self.block = mosaic_tiles(ev, self.mode, self.gap)
        L, h, n, _ = tiles.shape                                              # (L, h, m, m)
        g = self.gap
        rows, cols = self._buffer.shape
        if self._grid != (L, h, n):
            self._grid = (L, h, n)
            self.plot.setRange(xRange=(0, cols), yRange=(0, rows), padding=0.02)
            self.plot.getAxis("left").setTicks(
                [[(l * (n + g) + n / 2, str(l + 1)) for l in range(L)], []])
            self.plot.getAxis("bottom").setTicks(
                [[(k * (n + g) + n / 2, str(k)) for k in range(h)], []])
        self.image.setImage(self._buffer, autoLevels=False, levels=self._levels())
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
