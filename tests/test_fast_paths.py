"""Each faster computation against the plain one it replaced: the same numbers."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from posviz.core import hooks
from posviz.core.mosaic import pool_signed_max
from posviz.core.symmetry import compare, inverse
from posviz.core.trace import Trace


def trace_with(attention: np.ndarray, hidden: np.ndarray) -> Trace:
    n = hidden.shape[1]
    return Trace(tokens=("t",) * n, position_ids=np.arange(n), embeddings=hidden[0],
                 encodings=None, hidden=hidden, attention=attention)


@pytest.mark.parametrize("n", [1, 7, 64])
def test_aligned_attention_is_the_permuted_maps_indexed_back(n):
    rng = np.random.default_rng(n)
    A = rng.random((2, 3, n, n)).astype(np.float32)
    Ap = rng.random((2, 3, n, n)).astype(np.float32)
    H = rng.normal(size=(3, n, 4))
    order = rng.permutation(n)
    c = compare(trace_with(A, H), trace_with(Ap, H[:, order]), order)
    inv = inverse(order)
    slow = Ap[:, :, inv][:, :, :, inv]                      # aligned[j, k] = A'[inv j, inv k]
    np.testing.assert_array_equal(c.attention_aligned, slow)
    expected = np.abs(slow - A).max(axis=(1, 2, 3))
    np.testing.assert_array_equal(c.attention_equivariance[1:], expected)


def pooled_plainly(tiles: np.ndarray, block: int) -> np.ndarray:
    """Per block, the entry of largest magnitude (of +v and -v, +v), by loops."""
    n = tiles.shape[-1]
    m = -(-n // block)
    out = np.zeros(tiles.shape[:-2] + (m, m), tiles.dtype)
    for index in np.ndindex(*tiles.shape[:-2]):
        for i in range(m):
            for j in range(m):
                cells = tiles[index][i * block:(i + 1) * block, j * block:(j + 1) * block]
                high, low = cells.max(), cells.min()
                out[index + (i, j)] = high if high >= -low else low
    return out


@pytest.mark.parametrize("block, n", [(2, 9), (3, 10), (4, 33), (8, 64), (8, 61), (16, 40)])
def test_pooling_by_rows_then_columns_equals_the_plain_blocks(block, n):
    rng = np.random.default_rng(block * n)
    tiles = rng.normal(size=(2, 3, n, n)).astype(np.float32)
    tiles[1, 2, :block, :block] = -np.abs(tiles[1, 2, :block, :block])   # all negative
    tiles[0, 1, :block, :block] = 0.5
    tiles[0, 1, 0, 0] = -0.5                                             # a tie: +v wins
    np.testing.assert_array_equal(pool_signed_max(tiles, block), pooled_plainly(tiles, block))


@pytest.mark.parametrize("shape", [(3, 2, 5, 5), (6, 12, 128, 128)])   # below / above SMALL
def test_stacking_recorded_layers_equals_torch_stack(shape):
    parts = [torch.rand(shape[1:]) for _ in range(shape[0])]
    names = [f"blocks.{l}.x" for l in range(shape[0])]
    values = dict(zip(names, parts))
    stacked = hooks._stack(values, names)
    np.testing.assert_array_equal(stacked, torch.stack(parts).numpy())
    assert stacked.dtype == np.float32 and not values
