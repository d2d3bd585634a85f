"""The attention mosaic: every layer × head of an Evaluation as one image, and its pixels.

At n = 512 the mosaic of a 6-layer, 12-head model would hold 19 M pixels, and even at
n = 128 1.2 M: too many to colour and paint during a drag, and more than a screen
shows (Qt would drop the rows and columns it has no room for, hiding whatever they
hold). Its tiles are therefore pooled to at most MOSAIC_TILE pixels a side
(views.pooling). The figure's ``displayed()`` and CSV hold these pooled numbers, with
each query / key labelled by the tokens of its block.

Pure numpy / torch, so the compute worker makes the mosaic ahead and the GUI thread only
hands its pixels to Qt. Colour tables come in through MosaicLook.table.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from .pooling import MosaicTiles

MOSAIC_GAP = 1         # pixels between tiles


def colour(values: np.ndarray, table: np.ndarray, levels) -> np.ndarray:
    """Map values to pixels as pyqtgraph's ImageItem does: (v - low) * 256 / (high -
    low), clipped to the table and truncated. Pure numpy, so a worker thread can do it;
    the result (same shape, uint32) is premultiplied ARGB, so Qt paints it unconverted.
    NaN gets the lowest colour (the mosaic leaves its gaps out of ``values``).
    """
    low, high = levels
    index = values - np.float32(low)
    index *= np.float32(table.shape[0] / (high - low))
    np.fmax(index, 0, out=index)                  # fmax / fmin: NaN becomes the lowest
    np.fmin(index, table.shape[0] - 1, out=index)
    # every index is in range: mode "wrap" skips the bounds checks, and a table of 256
    # colours takes byte indices (a quarter of the memory of intp; benchmarks/README.md)
    small = np.uint8 if table.shape[0] <= 256 else np.intp
    return np.take(table, index.astype(small), mode="wrap")


def mosaic_image(tiles: np.ndarray, gap: int = MOSAIC_GAP, fill=np.nan) -> np.ndarray:
    """(L, h, m, m) tiles -> one (L*(m+gap)-gap, h*(m+gap)-gap) image, layers down and
    heads across, with ``fill`` between tiles (NaN: drawn transparent)."""
    L, h, m, _ = tiles.shape
    padded = np.full((L, m + gap, h, m + gap), fill, tiles.dtype)
    padded[:, :m, :, :m] = tiles.transpose(0, 2, 1, 3)                  # (L, m, h, m)
    return padded.reshape(L * (m + gap), h * (m + gap))[:L * (m + gap) - gap,
                                                        :h * (m + gap) - gap]


def block_labels(tokens, block: int) -> list[str]:
    """One label per pooled block: its token, or its first and last tokens."""
    if block == 1:
        return list(tokens)
    return [tokens[i] if i == min(i + block, len(tokens)) - 1
            else f"{tokens[i]} … {tokens[min(i + block, len(tokens)) - 1]}"
            for i in range(0, len(tokens), block)]


@dataclass(frozen=True)
class MosaicLook:
    """What the mosaic shows (one of document.spec.MOSAIC_MODES), and in which colours: the
    levels the colour table spans. Two looks are equal when mode and levels are."""

    mode: str
    levels: tuple[float, float]
    table: np.ndarray = field(compare=False)     # (256,) uint32 ARGB


@dataclass(frozen=True)
class Mosaic:
    """One mosaic, ready to show: tiles (L, h, m, m) as displayed (pooled when n >
    MOSAIC_TILE, ``block`` tokens a side per pixel), the image of them (NaN between
    tiles) and its pixels coloured for ``look``."""

    tiles: np.ndarray            # (L, h, m, m)
    image: np.ndarray            # (rows, cols), NaN in the gaps
    block: int
    look: MosaicLook
    argb: np.ndarray             # (rows, cols) uint32 premultiplied ARGB, 0 in the gaps


def make_mosaic(tiles: MosaicTiles, look: MosaicLook) -> Mosaic:
    """The mosaic of ``look.mode``'s tiles (views.pooling), coloured for ``look``."""
    shown = tiles.tiles[look.mode]                                          # (L, h, m, m)
    argb = mosaic_image(colour(shown, look.table, look.levels), fill=0)
    return Mosaic(shown, mosaic_image(shown), tiles.block, look, argb)


def recoloured(mosaic: Mosaic, look: MosaicLook) -> Mosaic:
    """The same tiles in other colours or levels (``look.mode`` must be the mosaic's)."""
    if look.mode != mosaic.look.mode:
        raise ValueError(f"a {mosaic.look.mode} mosaic cannot be shown as {look.mode}")
    argb = mosaic_image(colour(mosaic.tiles, look.table, look.levels), fill=0)
    return replace(mosaic, look=look, argb=argb)


# -- layout: where each tile goes on screen ----------------------------------------------
LABEL_STEPS = (1, 2, 5, 10, 20, 50, 100)   # label every k-th layer, k one of these
WRAP_FROM_LAYERS = 8     # fewer layers always read as one column
WRAP_GAIN = 1.25         # blocks side by side only when their tiles show this much larger


@dataclass(frozen=True)
class MosaicGrid:
    """Where the (L, h) tiles of m x m pixels go: layers run down in ``columns`` blocks
    of ``per_column`` layers side by side, heads across within a block, ``gap`` pixels
    between tiles and ``block_gap`` between blocks (room for the block's layer labels).
    Coordinates are image pixels, x right and y down; layers count from 0 here."""

    layers: int
    heads: int
    tile: int
    columns: int = 1
    gap: int = MOSAIC_GAP
    block_gap: int = 0

    @property
    def per_column(self) -> int:
        return -(-self.layers // self.columns)

    @property
    def block_width(self) -> int:
        return self.heads * (self.tile + self.gap) - self.gap

    @property
    def width(self) -> int:
        return self.columns * self.block_width + (self.columns - 1) * self.block_gap

    @property
    def height(self) -> int:
        return self.per_column * (self.tile + self.gap) - self.gap

    def block_x(self, column: int) -> int:
        """x of the first pixel of a block of layers."""
        return column * (self.block_width + self.block_gap)

    def origin(self, layer: int, head: int) -> tuple[int, int]:
        """(x, y) of the top-left pixel of a tile (layer 0..L-1, head 0..h-1)."""
        column, row = divmod(layer, self.per_column)
        return (self.block_x(column) + head * (self.tile + self.gap),
                row * (self.tile + self.gap))

    def at(self, x: float, y: float):
        """Image coordinates -> (layer 0..L-1, head, query, key), or None over a gap."""
        col, row = int(np.floor(x)), int(np.floor(y))
        if col < 0 or row < 0:
            return None
        column, inside = divmod(col, self.block_width + self.block_gap)
        head, key = divmod(inside, self.tile + self.gap)
        r, query = divmod(row, self.tile + self.gap)
        layer = column * self.per_column + r
        if (inside < self.block_width and column < self.columns and r < self.per_column
                and layer < self.layers and head < self.heads
                and key < self.tile and query < self.tile):
            return layer, head, query, key
        return None


def mosaic_grid(layers: int, heads: int, tile: int, aspect: float,
                gap: int = MOSAIC_GAP, least_block_gap: int = 0) -> MosaicGrid:
    """The layout that shows the tiles largest in a view ``aspect`` = width / height
    (both in pixels): a deep model in a wide view wraps its layers into blocks side by
    side (from WRAP_FROM_LAYERS layers, and only for tiles WRAP_GAIN times larger than
    the best with fewer blocks). Blocks are 1.5 tiles apart, at least
    ``least_block_gap`` pixels: room for their labels."""
    best, best_scale = None, -1.0
    for columns in range(1, layers + 1 if layers >= WRAP_FROM_LAYERS else 2):
        if columns > 1 and -(-layers // columns) == -(-layers // (columns - 1)):
            continue                     # no fewer rows than one block fewer: no gain
        grid = MosaicGrid(layers, heads, tile, columns, gap,
                          block_gap=max((3 * tile + 1) // 2 + 2 * gap, least_block_gap)
                          if columns > 1 else 0)
        scale = min(aspect / grid.width, 1.0 / grid.height)
        if scale > best_scale * (WRAP_GAIN if columns > 1 else 1):
            best, best_scale = grid, scale
    return best


def label_step(spacing: float, label: float) -> int:
    """Label every k-th layer so labels ``label`` pixels tall, ``spacing`` pixels apart
    layer to layer, never overlap: the smallest k of LABEL_STEPS with k * spacing >=
    label."""
    for k in LABEL_STEPS:
        if k * spacing >= label:
            return k
    return LABEL_STEPS[-1]


def wrap_image(image: np.ndarray, grid: MosaicGrid, fill=np.nan) -> np.ndarray:
    """The (L*(m+gap)-gap, cols) image of mosaic_image (MOSAIC_GAP between tiles), laid
    out as ``grid``: each block of ``per_column`` layers beside the one before, and
    ``grid.gap`` pixels between tiles, ``fill`` between (any dtype)."""
    if grid.columns == 1 and grid.gap == MOSAIC_GAP:
        return image
    m, band = grid.tile, grid.tile + MOSAIC_GAP      # the source's pixels per tile
    out = np.full((grid.height, grid.width), fill, image.dtype)
    for layer in range(grid.layers):
        for head in range(grid.heads):
            x, y = grid.origin(layer, head)
            out[y:y + m, x:x + m] = image[layer * band:layer * band + m,
                                          head * band:head * band + m]
    return out
