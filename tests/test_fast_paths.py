"""Each faster computation on arrays against the plain one it replaced: the same numbers
(the model's fast paths against its plain run: test_fast_path_matrix)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from posviz.analysis.symmetry import compare
from posviz.models import hooks
from posviz.models.orders import inverse
from posviz.models.trace import Trace
from posviz.views.pooling import pool_signed_max


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
    tiles[1, 0, -1, 0] = np.nan                                          # kept, as the loop's
    tiles[1, 1, 0, -1] = -np.inf
    np.testing.assert_array_equal(pool_signed_max(tiles, block), pooled_plainly(tiles, block))


@pytest.mark.parametrize("shape", [(3, 2, 5, 5), (6, 12, 128, 128)])   # below / above SMALL
def test_stacking_recorded_layers_equals_torch_stack(shape):
    parts = [torch.rand(shape[1:]) for _ in range(shape[0])]
    names = [f"blocks.{l}.x" for l in range(shape[0])]
    values = dict(zip(names, parts))
    stacked = hooks._stack(values, names)
    np.testing.assert_array_equal(stacked, torch.stack(parts).numpy())
    assert stacked.dtype == np.float32 and not values


def plain_comparison(reference: Trace, permuted: Trace, order: np.ndarray) -> dict:
    """The metrics by their definitions (analysis.symmetry's docstrings), nothing cached."""
    H, Hp = reference.hidden, permuted.hidden
    inv = inverse(order)
    diff = Hp - H[:, order]
    L = H.shape[0]
    return {
        "hidden_equivariance": np.linalg.norm(diff.reshape(L, -1), axis=1)
        / np.linalg.norm(H.reshape(L, -1), axis=1),
        "token_change": np.linalg.norm(diff[:, inv], axis=2) / np.linalg.norm(H, axis=2),
        "pooled_change": np.linalg.norm(Hp.mean(axis=1) - H.mean(axis=1), axis=1)
        / np.linalg.norm(H.mean(axis=1), axis=1),
        "attention_aligned": permuted.attention[:, :, inv][:, :, :, inv],
    }


def test_reference_norms_kept_per_reference_are_those_of_each_reference():
    rng = np.random.default_rng(3)
    n, order = 9, np.random.default_rng(4).permutation(9)
    refs = [trace_with(rng.random((2, 2, n, n)).astype(np.float32), rng.normal(size=(3, n, 4)))
            for _ in range(6)]                      # more references than are kept
    moved = trace_with(rng.random((2, 2, n, n)).astype(np.float32), rng.normal(size=(3, n, 4)))
    for ref in refs + refs[::-1] + refs:
        c = compare(ref, moved, order)
        for name, expected in plain_comparison(ref, moved, order).items():
            np.testing.assert_allclose(getattr(c, name), expected, rtol=1e-12, err_msg=name)


def causal_pair(rng, L, h, n, start, d=4):
    """A causal reference and a run whose first ``start`` slots are the reference's."""
    A = np.tril(rng.random((L, h, n, n))).astype(np.float32)
    Ap = np.tril(rng.random((L, h, n, n))).astype(np.float32)
    Ap[:, :, :start] = A[:, :, :start]
    H = rng.normal(size=(L + 1, n, d)).astype(np.float32)
    Hp = rng.normal(size=(L + 1, n, d)).astype(np.float32)
    Hp[:, :start] = H[:, :start]
    return trace_with(A, H), trace_with(Ap, Hp)


FIELDS = ("hidden_equivariance", "attention_equivariance", "last_token_change",
          "pooled_change", "token_change", "attention_aligned")


@pytest.mark.parametrize("n, start", [(2, 1), (9, 4), (40, 37), (40, 1)])
def test_comparing_only_the_moved_rows_gives_the_same_numbers(n, start):
    rng = np.random.default_rng(n + start)
    reference, permuted = causal_pair(rng, 3, 2, n, start)
    order = np.r_[np.arange(start), start + rng.permutation(n - start)]
    fast = compare(reference, permuted, order, start)
    slow = compare(reference, permuted, order)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    inv = inverse(order)
    aligned = permuted.attention[:, :, inv][:, :, :, inv]
    np.testing.assert_array_equal(fast.attention_aligned, aligned)
    np.testing.assert_array_equal(fast.attention_equivariance[1:],
                                  np.abs(aligned - reference.attention).max(axis=(1, 2, 3)))


@pytest.mark.parametrize("spoil", ["above the diagonal", "nan"])
def test_a_reference_that_is_not_causal_is_compared_in_full(spoil):
    rng = np.random.default_rng(5)
    n, start = 12, 6
    reference, permuted = causal_pair(rng, 2, 2, n, start)
    if spoil == "nan":
        reference.attention[1, 0, 2, 1] = np.nan
        permuted.attention[1, 0, 2, 1] = np.nan
    else:
        reference.attention[0, 1, 3, 9] = 0.25
        permuted.attention[0, 1, 3, 9] = 0.25
    order = np.r_[np.arange(start), start + rng.permutation(n - start)]
    fast = compare(reference, permuted, order, start)
    inv = inverse(order)
    aligned = permuted.attention[:, :, inv][:, :, :, inv]
    np.testing.assert_array_equal(fast.attention_aligned, aligned)
    np.testing.assert_array_equal(fast.attention_equivariance[1:],
                                  np.abs(aligned - reference.attention).max(axis=(1, 2, 3)))


@pytest.mark.parametrize("n", [20, 64, 65, 130, 200])            # blocks of 1, 1, 2, 3, 4
def test_tiles_pooled_a_layer_and_a_head_at_a_time_are_the_plain_pooling(n):
    from posviz.views.pooling import MosaicTiles, pool_block
    rng = np.random.default_rng(n)
    a, b = (rng.random((4, 3, n, n)).astype(np.float32) for _ in range(2))
    reference = trace_with(b, rng.normal(size=(5, n, 2)))
    tiles = MosaicTiles(reference)
    for layer in range(4):
        for heads in (slice(0, 1), slice(1, 3)):    # a head, then two together
            tiles.heads(layer, heads, b[layer, heads], a[layer, heads],
                        a[layer, heads] - b[layer, heads])
        tiles.layer_done(layer)
    block = pool_block(n)
    for mode, maps in (("difference", a - b), ("reordered", a), ("original", b)):
        np.testing.assert_array_equal(tiles.tiles[mode], pooled_plainly(maps, block), mode)
    # nothing hidden: the largest difference of the full maps is in the picture
    assert np.abs(tiles.tiles["difference"]).max() == np.abs(a - b).max()


@pytest.mark.parametrize("colours", [256, 300])
def test_colouring_by_byte_indices_equals_indexing_the_table(colours):
    from posviz.views.mosaic import colour

    rng = np.random.default_rng(colours)
    table = rng.integers(0, 2**32, colours, dtype=np.uint32)
    values = (rng.random((37, 41)) * 3 - 1).astype(np.float32)
    values[0, :4] = [np.nan, np.inf, -np.inf, 1e30]
    low, high = -0.25, 1.5
    index = (values - np.float32(low)) * np.float32(colours / (high - low))
    index = np.clip(np.nan_to_num(index, nan=0.0), 0, colours - 1)       # NaN: lowest
    np.testing.assert_array_equal(colour(values, table, (low, high)),
                                  table[index.astype(np.intp)])


@pytest.mark.parametrize("n", [20, 65, 130, 512])                # blocks of 1, 2, 3, 8
def test_the_mosaic_tells_the_gap_it_pooled_and_the_gaps_are_the_same(n):
    """A layer's gap, max |aligned - original|, told by the mosaic's pooled difference
    (a pass over the maps saved) equals the one taken from the maps, NaN included."""
    from posviz.analysis.symmetry import AttentionGaps
    from posviz.views.pooling import MosaicTiles, pool_block
    rng = np.random.default_rng(n)
    A = rng.random((3, 2, n, n)).astype(np.float32)
    Ap = rng.random((3, 2, n, n)).astype(np.float32)
    Ap[1, 1, n // 2, n // 3] = np.nan                             # a layer's gap is NaN
    Ap[2, 0, 1, 2] = -5.0                                         # the largest, negative
    H = rng.normal(size=(4, n, 3))
    order = rng.permutation(n)
    reference, permuted = trace_with(A, H), trace_with(Ap, H[:, order])
    plain = compare(reference, permuted, order)
    tiles = MosaicTiles(reference, ("difference",))
    gaps = AttentionGaps(reference, order, sinks=(tiles,))
    for layer in range(3):
        gaps(layer, permuted.attention[layer])
    told = compare(reference, permuted, order, attention=gaps)
    np.testing.assert_array_equal(told.attention_equivariance, plain.attention_equivariance)
    assert np.isnan(told.attention_equivariance[2]) and told.attention_equivariance[3] > 5
    d = rng.normal(size=(2, n, n)).astype(np.float32)
    fresh = MosaicTiles(reference, ("difference",))
    got = fresh.heads(0, slice(0, 2), A[0], A[0] + d, d)
    assert got == (None if pool_block(n) == 1 else float(np.abs(d).max()))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1,), (12, 16, 16), (1, 512, 512), (4, 3, 130)])
def test_the_gap_from_numpys_extremes_is_torchs_aminmax_gap(dtype, shape):
    """largest_gap (numpy's maximum and minimum) against the torch aminmax it replaced,
    bit for bit and sign of zero included (a NaN's sign is no number): NaN, infinities, zeros of both signs, the
    largest |value| negative or positive."""
    from posviz.analysis.symmetry import largest_gap

    def by_aminmax(d):
        low, high = torch.aminmax(torch.as_tensor(d))
        return max(high.item(), -low.item())
    rng = np.random.default_rng(len(shape))
    d = rng.normal(size=shape).astype(dtype)
    cases = [d, -d, np.zeros(shape, dtype), -np.zeros(shape, dtype), np.abs(d), -np.abs(d)]
    for special in (np.nan, np.inf, -np.inf, -0.0):
        spoilt = d.copy()
        spoilt.flat[spoilt.size // 2] = special
        cases.append(spoilt)
    for case in cases:
        got, was = largest_gap(case), by_aminmax(case)
        assert np.array_equal([got], [was], equal_nan=True), (case.dtype, got, was)
        assert np.isnan(got) or (np.signbit(got) == np.signbit(was)
                                 and got == np.abs(case).max())
