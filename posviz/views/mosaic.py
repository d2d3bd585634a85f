"""The attention mosaic: every layer × head of an Evaluation as one image, and its pixels.

At n = 512 the mosaic of a 6-layer, 12-head model would hold 19 M pixels, and even at
n = 128 1.2 M: too many to colour and paint during a drag, and more than a screen
shows (Qt would drop the rows and columns it has no room for, hiding whatever they
hold). A tile larger than MOSAIC_TILE pixels a side is therefore pooled in blocks of
``block`` x ``block`` cells, each block showing its value of largest magnitude, sign
kept: no difference is hidden (the block is at least as dark as its darkest cell), and
attention weights (>= 0) show their block maximum. The figure's ``displayed()`` and CSV
hold these pooled numbers, with each query / key labelled by the tokens of its block.

Pure numpy / torch, so the compute worker makes the mosaic ahead and the GUI thread only
hands its pixels to Qt. Colour tables come in through MosaicLook.table.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..errors import Cancelled

MOSAIC_TILE = 64
MOSAIC_GAP = 1         # pixels between tiles
POOL_CHUNK_BYTES = 16 << 20   # maps pooled between two asks whether to stop
# of the maps' difference at once (pooled_difference); measured at MiniLM's n = 512 with
# 1, 2, 4 and 16 MB: 12.5, 11.4, 10.7 and 17.0 ms (fastest of 20)
DIFFERENCE_CHUNK_BYTES = 4 << 20
# What a tile shows in each mode, and the name of those numbers in displayed() / CSV.
MOSAIC_DATA = {"difference": "difference", "original": "original",
               "reordered": "reordered_aligned"}


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
    # colours takes byte indices (a quarter of the memory of intp): ~1.4x faster
    small = np.uint8 if table.shape[0] <= 256 else np.intp
    return np.take(table, index.astype(small), mode="wrap")


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

    return _pooled(torch.from_numpy(np.ascontiguousarray(tiles)), block).numpy()


def pooled_difference(aligned: np.ndarray, original: np.ndarray, block: int,
                      should_stop=None) -> np.ndarray:
    """(L, h, n, n) maps twice -> (L, h, m, m): aligned - original as the mosaic shows it
    (pool_signed_max), taken a few maps at a time into one reused buffer on torch's
    threads, so the whole difference never exists (75 MB at MiniLM's n = 512).
    ``should_stop`` is asked between them (as in make_mosaic)."""
    import torch

    L, h, n, _ = aligned.shape
    if block == 1:                                  # the difference itself
        return aligned - original
    m = -(-n // block)
    out = np.empty((L, h, m, m), aligned.dtype)                       # (L, h, m, m)
    # a few maps at a time, so that their difference stays in the cache: one temporary
    # of DIFFERENCE_CHUNK_BYTES or one map, reused (.view never copies: writes land in out)
    a, o = (torch.from_numpy(np.ascontiguousarray(t)).view(L * h, n, n)
            for t in (aligned, original))                              # (L*h, n, n)
    pooled = torch.from_numpy(out).view(L * h, m, m)                   # (L*h, m, m)
    step = max(1, DIFFERENCE_CHUNK_BYTES // (a[0].numel() * a.element_size()))
    gap = torch.empty((min(step, L * h), n, n), dtype=a.dtype)        # (step, n, n)
    for start in range(0, L * h, step):
        if should_stop is not None and should_stop():
            raise Cancelled("superseded by a newer request")
        maps = slice(start, start + step)
        within = gap[:pooled[maps].shape[0]]
        pooled[maps] = _pooled(torch.sub(a[maps], o[maps], out=within), block)
    return out


def _pooled(x, block: int):
    """(..., r, c) tensor -> (..., ceil(r / block), ceil(c / block)): pool_signed_max."""
    import torch
    import torch.nn.functional as F

    pad_rows, pad_cols = -x.shape[-2] % block, -x.shape[-1] % block
    if pad_rows or pad_cols:
        x = F.pad(x, (0, pad_cols, 0, pad_rows))
    high, low = _block_extremes(x, block)                            # (..., r', c')
    return torch.where(high >= -low, high, low)


def _block_extremes(x, block: int):
    """(..., r*block, c*block) tensor -> the max and the min of each block, (..., r, c).

    Measured with torch 2.13 on 2 threads: for blocks of 2, element-wise maxima of
    strided slices, pairs of rows first (whole rows: 1.5-2x faster than columns first
    at n = 128); for larger ones, a reduction over each block's rows (whole rows of
    the map, contiguous) and then over its columns, 1.5-3x faster at n = 256-512 than
    one reduction over a reshaped block; both beat max_pool2d with indices.
    """
    import torch

    if block <= 2:
        def extreme(op):
            rows = x[..., 0::block, :]
            for k in range(1, block):
                rows = op(rows, x[..., k::block, :])                       # (..., r, C)
            cells = rows[..., 0::block]
            for k in range(1, block):
                cells = op(cells, rows[..., k::block])                     # (..., r, c)
            return cells
        return extreme(torch.maximum), extreme(torch.minimum)
    *lead, R, C = x.shape
    r, c = R // block, C // block
    rows = x.reshape(*lead, r, block, C)                               # (..., r, block, C)
    high = rows.amax(dim=-2).reshape(*lead, r, c, block).amax(dim=-1)  # (..., r, c)
    low = rows.amin(dim=-2).reshape(*lead, r, c, block).amin(dim=-1)
    return high, low


def mosaic_tiles(ev, mode: str, block: int, should_stop=None) -> np.ndarray:
    """(L, h, m, m): what each tile of ``mode`` shows, pooled in blocks of ``block``.
    Pooled a few maps at a time, ``should_stop`` asked between them (as in
    make_mosaic)."""
    original = ev.reference.attention                                     # (L, h, n, n)
    aligned = ev.comparison.attention_aligned                             # (L, h, n, n)
    if mode == "difference":
        return pooled_difference(aligned, original, block, should_stop)
    shown = aligned if mode == "reordered" else original
    if block == 1:
        return shown
    step = max(1, POOL_CHUNK_BYTES // original[0].nbytes)
    chunks = []
    for first in range(0, shown.shape[0], step):
        if should_stop is not None and should_stop():
            raise Cancelled("superseded by a newer request")
        chunks.append(pool_signed_max(shown[first:first + step], block))
    return np.concatenate(chunks)                                         # (L, h, m, m)


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
    """What the mosaic shows (one of document.MOSAIC_MODES), and in which colours: the
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


def make_mosaic(ev, look: MosaicLook, should_stop=None) -> Mosaic:
    """The evaluation's mosaic in ``look`` (any thread; ``should_stop`` is asked between
    chunks of layers, and errors.Cancelled raised when it says yes)."""
    block = pool_block(ev.reference.attention.shape[-1])
    tiles = mosaic_tiles(ev, look.mode, block, should_stop)                 # (L, h, m, m)
    argb = mosaic_image(colour(tiles, look.table, look.levels), fill=0)
    return Mosaic(tiles, mosaic_image(tiles), block, look, argb)


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
                gap: int = MOSAIC_GAP) -> MosaicGrid:
    """The layout that shows the tiles largest in a view ``aspect`` = width / height
    (both in pixels): a deep model in a wide view wraps its layers into blocks side by
    side (from WRAP_FROM_LAYERS layers, and only for tiles WRAP_GAIN times larger than
    the best with fewer blocks). Blocks are 1.5 tiles apart: room for their labels."""
    best, best_scale = None, -1.0
    for columns in range(1, layers + 1 if layers >= WRAP_FROM_LAYERS else 2):
        if columns > 1 and -(-layers // columns) == -(-layers // (columns - 1)):
            continue                     # no fewer rows than one block fewer: no gain
        grid = MosaicGrid(layers, heads, tile, columns, gap,
                          block_gap=(3 * tile + 1) // 2 + 2 * gap if columns > 1 else 0)
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
    """The (L*(m+gap)-gap, cols) image of mosaic_image, laid out as ``grid``: each block
    of ``per_column`` layers beside the one before, ``fill`` between (any dtype)."""
    if grid.columns == 1:
        return image
    band = grid.tile + grid.gap                  # rows per layer
    out = np.full((grid.height, grid.width), fill, image.dtype)
    for column in range(grid.columns):
        first = column * grid.per_column
        last = min(first + grid.per_column, grid.layers)
        if first >= last:
            break
        rows = image[first * band:last * band - grid.gap]
        x = grid.block_x(column)
        out[:rows.shape[0], x:x + grid.block_width] = rows
    return out
