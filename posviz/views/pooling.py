"""The mosaic's tiles: each map pooled to at most MOSAIC_TILE pixels a side.

A tile larger than MOSAIC_TILE cells a side is pooled in blocks of ``block`` x
``block`` cells, each block showing its value of largest magnitude, sign kept: no
difference is hidden (the block is at least as dark as its darkest cell), and attention
weights (>= 0) show their block maximum. ``MosaicTiles`` pools every mode a layer at a
time as the comparison passes (a consumer of Engine.evaluate), so a long input's maps
are pooled without ever being held whole.
"""
from __future__ import annotations

from functools import cached_property

import numpy as np

from ..models.trace import PerTrace

MOSAIC_TILE = 64
# What a tile shows in each mode, and the name of those numbers in displayed() / CSV.
MOSAIC_DATA = {"difference": "difference", "original": "original",
               "reordered": "reordered_aligned"}


def pool_block(n: int) -> int:
    """Cells per block a side so that an (n, n) tile is at most MOSAIC_TILE pixels."""
    return 1 if n <= MOSAIC_TILE else -(-n // MOSAIC_TILE)


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
    contiguous) and then over its columns."""
    import torch.nn.functional as F

    pad_rows, pad_cols = -x.shape[-2] % block, -x.shape[-1] % block
    if pad_rows or pad_cols:
        x = F.pad(x, (0, pad_cols, 0, pad_rows))
    *lead, R, C = x.shape
    r, c = R // block, C // block
    rows = x.reshape(*lead, r, block, C)                               # (..., r, block, C)
    high = rows.amax(dim=-2).reshape(*lead, r, c, block).amax(dim=-1)  # (..., r, c)
    low = rows.amin(dim=-2).reshape(*lead, r, c, block).amin(dim=-1)
    return high.where(high >= -low, low)


def _original_tiles(reference) -> np.ndarray:
    """(L, h, m, m): the reference's maps pooled, a layer at a time."""
    A = reference.attention                                            # (L, h, n, n)
    block = pool_block(A.shape[-1])
    return np.stack([pool_signed_max(A[layer], block).copy() for layer in range(len(A))])


original_tiles = PerTrace(_original_tiles)       # once per reference run


class MosaicTiles:
    """Every mode's tiles, (L, h, m, m) each (``tiles[mode]``), in blocks of ``block``.

    Handed each layer's original and aligned maps, (h, n, n), as the comparison passes
    (``consumer(layer, original, aligned)``: see Engine.evaluate); the original's tiles
    are pooled once per reference run."""

    def __init__(self, reference):
        self.reference = reference
        self.block = pool_block(reference.n_tokens)
        self._reordered: list[np.ndarray] = []
        self._difference: list[np.ndarray] = []
        self._gap = None                                                   # (n, n)

    def __call__(self, layer: int, original: np.ndarray, aligned: np.ndarray) -> None:
        import torch

        if layer != len(self._reordered):
            raise ValueError(f"layer {layer} given after {len(self._reordered)} layers")
        a, o = torch.from_numpy(aligned), torch.from_numpy(original)
        if self.block == 1:
            self._reordered.append(aligned.copy())
            self._difference.append((aligned - original))
            return
        if self._gap is None or self._gap.shape != a.shape[1:]:
            self._gap = torch.empty(a.shape[1:], dtype=a.dtype)           # one for all heads
        self._reordered.append(_pooled(a, self.block).numpy())
        self._difference.append(np.stack([                                # a head at a time
            _pooled(torch.sub(a[k], o[k], out=self._gap), self.block).numpy()
            for k in range(a.shape[0])]))

    @cached_property
    def tiles(self) -> dict[str, np.ndarray]:
        """mode -> (L, h, m, m), once every layer has passed."""
        return {"difference": np.stack(self._difference),
                "original": original_tiles(self.reference),
                "reordered": np.stack(self._reordered)}

    @classmethod
    def of(cls, ev) -> "MosaicTiles | None":
        """The tiles of an evaluation whose aligned maps were kept whole
        (Comparison.attention_aligned), else None."""
        aligned = ev.comparison.attention_aligned                         # (L, h, n, n)
        if aligned is None:
            return None
        tiles = cls(ev.reference)
        for layer in range(len(aligned)):
            tiles(layer, ev.reference.attention[layer], aligned[layer])
        return tiles
