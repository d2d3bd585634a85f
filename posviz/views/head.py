"""The selected head's three maps as the attention figure paints them: at most HEAD_SIDE
pixels a side, so a long input's (n, n) maps never reach the screen whole (three maps
side by side get about 500 screen pixels each; the GUI thread colours every pixel at
each reorder: benchmarks/README.md, long inputs).

Past HEAD_SIDE tokens each pixel is a block of ``block`` × ``block`` tokens: the
attention weights averaged over the block (an overview of where attention goes), the
difference the entry of largest |value| with its sign (views.pooling's rule: no
difference is hidden). The values on hover are the true ones, read cell by cell
(``head_cell``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.engine import Evaluation

HEAD_SIDE = 512         # pixels a side of a head's painted maps at most
ROWS_AT_ONCE = 256      # rows of the difference made at a time (not an (n, n) copy)


@dataclass(frozen=True)
class HeadImages:
    """One head's maps as painted: (m, m) each, m = ceil(n / block)."""

    layer: int                   # 1..L
    head: int                    # 0..h-1
    n: int                       # tokens a side of the maps
    block: int                   # tokens a side per pixel (1: not pooled)
    original: np.ndarray         # (m, m) block means of A
    aligned: np.ndarray          # (m, m) block means of A′ aligned back
    difference: np.ndarray       # (m, m) per block the largest |A′_aligned − A|, signed
    largest: float               # max |A′_aligned − A| over every cell


def head_block(n: int, side: int | None = None) -> int:
    """Tokens per pixel a side so that (n, n) maps take at most ``side`` (HEAD_SIDE)
    pixels."""
    side = HEAD_SIDE if side is None else side
    return 1 if n <= side else -(-n // side)


def _aligned_map(ev: Evaluation, layer: int, head: int):
    if ev.comparison.attention_aligned is not None:
        return ev.comparison.attention_aligned[layer - 1, head]           # (n, n)
    if ev.kept is not None and ev.kept[:2] == (layer - 1, head):
        return ev.kept[2]
    return None


def block_means(maps: np.ndarray, block: int) -> np.ndarray:
    """(r, c) -> (ceil(r / block), ceil(c / block)): each block's mean (a last, smaller
    block's over its own cells)."""
    if block == 1:
        return maps
    rows, cols = (np.arange(0, size, block) for size in maps.shape)
    sums = np.add.reduceat(np.add.reduceat(maps, rows, axis=0), cols, axis=1)
    count_r = np.diff(np.append(rows, maps.shape[0]))
    count_c = np.diff(np.append(cols, maps.shape[1]))
    return (sums / np.outer(count_r, count_c)).astype(maps.dtype)


def signed_largest(maps: np.ndarray, block: int) -> np.ndarray:
    """(r, c) -> (ceil(r / block), ceil(c / block)): each block's entry of largest
    |value|, with its sign (of +v and -v, +v)."""
    if block == 1:
        return maps
    rows, cols = (np.arange(0, size, block) for size in maps.shape)
    high = np.maximum.reduceat(np.maximum.reduceat(maps, rows, axis=0), cols, axis=1)
    low = np.minimum.reduceat(np.minimum.reduceat(maps, rows, axis=0), cols, axis=1)
    return np.where(high >= -low, high, low)


def head_images(ev: Evaluation, layer: int, head: int,
                side: int | None = None) -> HeadImages | None:
    """Layer 1..L, head 0..h-1 as painted; None when the reordered run's maps of that
    head were not kept (a long input keeps one head: Engine.evaluate's ``keep``), or when
    the model has no such head (a selection made for another model)."""
    L, h = ev.reference.attention.shape[:2]
    if not (1 <= layer <= L and 0 <= head < h):
        return None
    aligned = _aligned_map(ev, layer, head)
    if aligned is None:
        return None
    original = ev.reference.attention[layer - 1, head]                    # (n, n)
    n = original.shape[0]
    block = head_block(n, side)
    if block == 1:
        difference = aligned - original                                   # (n, n)
        largest = float(np.abs(difference).max()) if difference.size else 0.0
        return HeadImages(layer, head, n, 1, original, aligned, difference, largest)
    step = max(block, ROWS_AT_ONCE // block * block)    # whole blocks of rows at a time
    parts, largest = [], 0.0
    for r in range(0, n, step):
        difference = aligned[r:r + step] - original[r:r + step]          # (step, n)
        largest = max(largest, float(np.abs(difference).max()))
        parts.append(signed_largest(difference, block))
    return HeadImages(layer, head, n, block, block_means(original, block),
                      block_means(aligned, block), np.concatenate(parts), largest)


def pooled_cosine(table: np.ndarray, side: int | None = None) -> tuple[np.ndarray, int]:
    """(n, d) rows -> ((m, m) block means of their cosine similarity, block): the
    whole (n, n) matrix up to ``side`` (HEAD_SIDE) positions, else made a few rows at a
    time and pooled as the attention maps are."""
    from ..models.encodings import cosine_similarity

    n = table.shape[0]
    block = head_block(n, side)
    if block == 1:
        return cosine_similarity(table), 1
    norms = np.linalg.norm(table, axis=1, keepdims=True)                  # (n, 1)
    unit = table / np.where(norms > 0, norms, 1)                          # (n, d)
    step = max(block, ROWS_AT_ONCE // block * block)
    return np.concatenate([block_means(unit[r:r + step] @ unit.T, block)
                           for r in range(0, n, step)]), block


def head_cell(ev: Evaluation, layer: int, head: int, query: int, key: int):
    """(A, A′ aligned) at one cell of layer 1..L, head 0..h-1, read without copying a
    whole map (a long input's reference maps may be in a file); None when not kept."""
    aligned = _aligned_map(ev, layer, head)
    if aligned is None:
        return None
    maps = ev.reference.attention
    cell = getattr(maps, "cell", None)
    original = (cell(layer - 1, head, query, key) if cell is not None
                else maps[layer - 1, head, query, key])
    return float(original), float(aligned[query, key])
