"""The mosaic's tiles: each map pooled to at most MOSAIC_TILE pixels a side.

A tile larger than MOSAIC_TILE cells a side is pooled in blocks of ``block`` x
``block`` cells, each block showing its value of largest magnitude, sign kept: no
difference is hidden (the block is at least as dark as its darkest cell), and attention
weights (>= 0) show their block maximum. ``MosaicTiles`` pools the modes asked for a
layer at a time as the comparison passes (a MapsSink of Engine.evaluate), so a long
input's maps are pooled without ever being held whole.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..analysis.symmetry import largest_gap
from ..errors import raise_held
from ..models.after import after_steps
from ..models.maps import LayerMaps
from ..models.trace import PerTrace

MOSAIC_TILE = 64
# What a tile shows in each mode, and the name of those numbers in displayed() / CSV.
MOSAIC_DATA = {"difference": "difference", "original": "original",
               "reordered": "reordered_aligned"}
# Modes pooled per evaluation ("original" is pooled once per reference run).
PER_ORDER = ("difference", "reordered")
POOLING = "pooling the original order's maps"      # _original_tiles, as told


def pool_block(n: int) -> int:
    """Cells per block a side so that an (n, n) tile is at most MOSAIC_TILE pixels."""
    return 1 if n <= MOSAIC_TILE else -(-n // MOSAIC_TILE)


def pooled_side(n: int, block: int) -> int:
    """m: an (n, n) tile's side pooled in blocks of ``block`` (the last may be smaller)."""
    return -(-n // block)


def pool_signed_max(maps: np.ndarray, block: int) -> np.ndarray:
    """(..., n, n) -> (..., m, m), m = ceil(n / block): per block the entry of largest
    |value|, with its sign (of +v and -v, +v). The last block of a row or column may be
    smaller: it is padded with zeros, which never outweigh a value of the block."""
    if block == 1:
        return maps
    import torch

    return _pooled(torch.from_numpy(np.ascontiguousarray(maps)), block).numpy()


def _pooled(x, block: int):
    """(..., r, c) tensor -> (..., ceil(r / block), ceil(c / block)): pool_signed_max,
    by the maximum and minimum over each block's rows (whole rows of the map,
    contiguous) and then over its columns, by max_pool1d (a reduction over the last
    axis's few cells was 3 × slower: benchmarks/README.md, a fifth pass); the minimum
    as the negated maximum of the negated rows, exact, NaN kept as amax keeps it."""
    import torch.nn.functional as F

    pad_rows, pad_cols = -x.shape[-2] % block, -x.shape[-1] % block
    if pad_rows or pad_cols:
        x = F.pad(x, (0, pad_cols, 0, pad_rows))
    *lead, R, C = x.shape
    r, c = R // block, C // block
    rows = x.reshape(*lead, r, block, C)                               # (..., r, block, C)
    high = F.max_pool1d(rows.amax(dim=-2).reshape(-1, 1, C), block)    # (.., 1, c)
    neg_low = F.max_pool1d(rows.amin(dim=-2).neg_().reshape(-1, 1, C), block)
    high, neg_low = high.reshape(*lead, r, c), neg_low.reshape(*lead, r, c)
    return high.where(high >= neg_low, neg_low.neg_())


def _original_tiles(reference) -> np.ndarray:
    """(L, h, m, m): the reference's maps pooled a head at a time (a long input's layer,
    on disk, is never read whole: one SmolLM2 layer and its padded copy were 0.4 GB at
    2,350 tokens)."""
    A = reference.attention                                            # (L, h, n, n)
    L, h, n = A.shape[0], A.shape[1], A.shape[-1]
    block = pool_block(n)
    m = pooled_side(n, block)
    tiles = np.empty((L, h, m, m), A.dtype)                            # (L, h, m, m)
    with after_steps(POOLING, L * h, "map") as step:
        for layer in range(L):
            heads = A.heads(layer) if isinstance(A, LayerMaps) else A[layer]  # (h, n, n)
            for head in range(h):   # a Ctrl+C held by a figure's save: raised between heads
                raise_held()
                step(layer * h + head)
                tiles[layer, head] = pool_signed_max(heads[head], block)
    return tiles


original_tiles = PerTrace(_original_tiles)       # once per reference run


class MosaicTiles:
    """The tiles of ``modes`` and the original's, (L, h, m, m) each (``tiles[mode]``), in
    blocks of ``block``.

    A MapsSink of Engine.evaluate (analysis.symmetry): handed the heads' maps as
    the comparison passes, it pools them a few heads at a time; the original's tiles are
    pooled once per reference run. Only the modes asked for are pooled (the one on
    screen, as a reorder needs: pooling both cost the built-in model 4-8 ms a reorder
    at n = 128, benchmarks/README.md)."""

    def __init__(self, reference, modes=PER_ORDER):
        self.reference = reference
        self.block = pool_block(reference.n_tokens)
        self.modes = tuple(mode for mode in PER_ORDER if mode in modes)
        A = reference.attention                                            # (L, h, n, n)
        m = pooled_side(A.shape[-1], self.block)
        # each mode's tiles, filled a few heads at a time as they pass
        self._pooled = {mode: np.empty((A.shape[0], A.shape[1], m, m), A.dtype)
                        for mode in self.modes}                            # (L, h, m, m)
        self._layers = 0

    def has(self, mode: str) -> bool:
        return mode == "original" or mode in self.modes

    def heads(self, layer: int, heads: slice, original: np.ndarray, aligned: np.ndarray,
              difference: np.ndarray) -> float | None:
        """Pools the heads; returns their gap, max |difference|, when it pooled the
        difference in blocks: each block keeps its cell of largest magnitude, so the
        tiles' largest is the maps' (a pass over the whole maps saved: with the columns
        by max_pool1d, AttentionGaps.finish at MiniLM n = 512 took about 17 % less CPU,
        benchmarks/README.md, a fifth pass)."""
        if layer != self._layers:
            raise ValueError(f"layer {layer} given after {self._layers} layers")
        shown = {"difference": difference, "reordered": aligned}
        gap = None
        for mode in self.modes:         # copied: ``difference`` is a reused buffer
            pooled = pool_signed_max(shown[mode], self.block)
            self._pooled[mode][layer, heads] = pooled
            if mode == "difference" and self.block > 1 and pooled.size:
                gap = largest_gap(pooled)
        return gap

    def layer_done(self, layer: int) -> None:
        self._layers += 1

    @cached_property
    def tiles(self) -> dict[str, np.ndarray]:
        """mode -> (L, h, m, m), once every layer has passed: the modes pooled."""
        layers = self.reference.attention.shape[0]
        if self._layers != layers:
            raise ValueError(f"tiles asked for after {self._layers} of {layers} layers")
        return {"original": original_tiles(self.reference), **self._pooled}

    @classmethod
    def of(cls, ev, modes=PER_ORDER) -> "MosaicTiles | None":
        """The tiles of an evaluation whose aligned maps were kept whole
        (Comparison.attention_aligned), else None."""
        aligned = ev.comparison.attention_aligned                         # (L, h, n, n)
        if aligned is None:
            return None
        tiles = cls(ev.reference, modes)
        for layer in range(len(aligned)):
            original = ev.reference.attention[layer]                      # (h, n, n)
            tiles.heads(layer, slice(0, len(original)), original, aligned[layer],
                        aligned[layer] - original)
            tiles.layer_done(layer)
        return tiles
