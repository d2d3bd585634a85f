"""Each positional encoding against its paper's definition and, where installed, the
reference implementation in transformers."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from posviz.errors import PosvizInputError
from posviz.models.encodings import (AlibiEncoding, LearnedEncoding, RotaryEncoding,
                                     T5RelativeBias, alibi_slopes, apply_rope, make_encoding,
                                     relative_position_bucket, rope_angles, sinusoidal_table)


# -- sinusoidal ----------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 7, 8, 63, 64])
def test_sinusoidal_matches_the_formula_for_even_and_odd_widths(d):
    pe = sinusoidal_table(torch.arange(20), d).numpy()
    assert pe.shape == (20, d)
    for p in range(20):
        for j in range(d):
            i2 = j - j % 2                                   # 2i
            angle = p / 10000 ** (i2 / d)
            expected = math.sin(angle) if j % 2 == 0 else math.cos(angle)
            assert pe[p, j] == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_rows_kept_for_a_range_are_the_table_of_any_positions_asked_for():
    from posviz.models.encodings import SinusoidalEncoding
    enc = SinusoidalEncoding(15, scale=0.5)
    gen = torch.Generator().manual_seed(0)
    asked = [torch.arange(12), torch.randperm(12, generator=gen), torch.tensor([11, 0]),
             torch.arange(40, 70), torch.arange(30)[torch.randperm(30, generator=gen)],
             torch.arange(3 * SinusoidalEncoding.KEPT_ROWS),          # too many to keep
             torch.tensor([7]), torch.arange(5, dtype=torch.float64) / 2]  # between slots
    for positions in asked:
        expected = 0.5 * sinusoidal_table(positions.to(torch.float64), 15)
        assert torch.equal(enc.absolute(positions), expected)


@pytest.mark.parametrize("d", [16, 15])
def test_sinusoidal_shift_is_a_fixed_linear_map(d):
    """PE(p + k) = M_k PE(p) for every p, with M_k independent of p (Vaswani 2017, §3.5).
    For an odd width this holds for the sin/cos pairs; the last lone sine has no partner."""
    k = 5
    pe = sinusoidal_table(torch.arange(0, 60), d).numpy()
    paired = 2 * (d // 2)
    freqs = 10000.0 ** (-np.arange(0, paired, 2) / d)
    M = np.zeros((paired, paired))
    for i, w in enumerate(freqs):
        c, s = math.cos(k * w), math.sin(k * w)
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[c, s], [-s, c]]   # (sin a, cos a) -> shifted
    shifted = pe[:-k, :paired] @ M.T
    np.testing.assert_allclose(shifted, pe[k:, :paired], atol=1e-10)


# -- learned -------------------------------------------------------------------------
def test_learned_table_is_seeded_and_bounded():
    a = LearnedEncoding(8, max_len=10, seed=3).absolute(torch.arange(10))
    b = LearnedEncoding(8, max_len=10, seed=3).absolute(torch.arange(10))
    c = LearnedEncoding(8, max_len=10, seed=4).absolute(torch.arange(10))
    assert torch.equal(a, b) and not torch.equal(a, c)
    with pytest.raises(PosvizInputError, match="beyond the learned table of 10"):
        LearnedEncoding(8, max_len=10).absolute(torch.arange(11))


# -- RoPE ----------------------------------------------------------------------------
def test_rope_scores_depend_only_on_the_offset_between_positions():
    gen = torch.Generator().manual_seed(0)
    d_head = 16
    q = torch.randn(1, 1, d_head, generator=gen, dtype=torch.float64)
    k = torch.randn(1, 1, d_head, generator=gen, dtype=torch.float64)
    rope = RotaryEncoding(d_head)

    def score(p_q, p_k):
        qr = apply_rope(q, rope.angles(torch.tensor([p_q])))
        kr = apply_rope(k, rope.angles(torch.tensor([p_k])))
        return float((qr * kr).sum())

    for p_q, p_k in [(0, 3), (7, 2), (40, 40), (100, 97)]:
        for shift in (1, 13, 500):
            assert score(p_q + shift, p_k + shift) == pytest.approx(score(p_q, p_k), abs=1e-9)
    assert abs(score(0, 3) - score(0, 4)) > 1e-6      # a different offset does matter


def test_rope_preserves_norms_and_rejects_odd_head_width():
    x = torch.randn(2, 5, 8, dtype=torch.float64)
    rotated = apply_rope(x, rope_angles(torch.arange(5), 8))
    torch.testing.assert_close(rotated.norm(dim=-1), x.norm(dim=-1))
    with pytest.raises(PosvizInputError, match="even head width"):
        RotaryEncoding(7)


def test_rope_matches_transformers_llama():
    llama = pytest.importorskip("transformers.models.llama.modeling_llama")
    h, n, d_head = 3, 6, 8
    q, k = torch.randn(2, h, n, d_head, dtype=torch.float64)
    positions = torch.tensor([4, 0, 2, 9, 1, 3])
    angles = rope_angles(positions, d_head)                # (n, d_head/2)
    emb = torch.cat([angles, angles], dim=-1)              # HF layout: (n, d_head)
    q_ref, k_ref = llama.apply_rotary_pos_emb(q[None], k[None], emb.cos()[None],
                                              emb.sin()[None])
    q_ours, k_ours = RotaryEncoding(d_head).rotate(q, k, positions)
    torch.testing.assert_close(q_ours, q_ref[0])
    torch.testing.assert_close(k_ours, k_ref[0])


# -- ALiBi ---------------------------------------------------------------------------
def test_alibi_slopes_are_the_papers():
    assert alibi_slopes(8) == pytest.approx([2.0 ** -i for i in range(1, 9)])
    # 12 heads: the 8-head slopes, then every other slope of the 16-head sequence.
    assert alibi_slopes(12) == pytest.approx([2.0 ** -i for i in range(1, 9)]
                                             + [2.0 ** -(i + 0.5) for i in range(4)])
    assert len(alibi_slopes(5)) == 5 and alibi_slopes(1) == pytest.approx([2.0 ** -8])


@pytest.mark.parametrize("heads", [4, 8, 12, 6])
def test_alibi_slopes_match_transformers_bloom(heads):
    bloom = pytest.importorskip("transformers.models.bloom.modeling_bloom")
    alibi = bloom.build_alibi_tensor(torch.ones(1, 4), heads, torch.float64)  # (h, 1, n)
    np.testing.assert_allclose(alibi[:, 0, 1].numpy(), alibi_slopes(heads), rtol=1e-6)


def test_alibi_bias_is_minus_slope_times_distance():
    bias = AlibiEncoding(4).bias(torch.tensor([0, 1, 2, 5]), causal=True)  # (h, n, n)
    slopes = torch.tensor(alibi_slopes(4), dtype=torch.float64)
    assert bias.shape == (4, 4, 4)
    torch.testing.assert_close(bias[:, 3, 0], -5 * slopes)
    torch.testing.assert_close(bias[:, 2, 1], -1 * slopes)
    assert torch.all(bias[:, range(4), range(4)] == 0)


# -- T5 relative bias ----------------------------------------------------------------
@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", [(32, 128), (16, 64), (8, 20)])
def test_t5_buckets_match_transformers(bidirectional, num_buckets, max_distance):
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    relative = torch.arange(-400, 401)
    ours = relative_position_bucket(relative, bidirectional, num_buckets, max_distance)
    ref = t5.T5Attention._relative_position_bucket(relative, bidirectional, num_buckets,
                                                   max_distance)
    assert torch.equal(ours, ref)


def test_t5_buckets_by_hand():
    """Exact for small distances, then logarithmic; causal looks back only."""
    rel = torch.tensor([-3, -1, 0, 1, 3])
    assert relative_position_bucket(rel, True, 32, 128).tolist() == [3, 1, 0, 17, 19]
    assert relative_position_bucket(rel, False, 32, 128).tolist() == [3, 1, 0, 0, 0]


def test_t5_bias_depends_only_on_relative_position():
    t5 = T5RelativeBias(n_heads=3, seed=1)
    a = t5.bias(torch.tensor([0, 1, 2, 3]), causal=False)
    b = t5.bias(torch.tensor([10, 11, 12, 13]), causal=False)
    torch.testing.assert_close(a, b)
    assert a.shape == (3, 4, 4)


def test_make_encoding_rejects_unknown_kind():
    with pytest.raises(ValueError, match="unknown positional encoding"):
        make_encoding("absolute-ish", d_model=8, n_heads=2)


# -- the profile against relative distance -------------------------------------------
def test_bias_profiles_are_the_bias_seen_from_one_query():
    reach = 6
    distances = np.arange(-reach, reach + 1)
    profile = AlibiEncoding(4).profile(reach, causal=False)
    assert profile.distances.tolist() == distances.tolist()
    np.testing.assert_allclose(profile.values,
                               -np.asarray(alibi_slopes(4))[:, None] * np.abs(distances))
    assert profile.rows == ("head 0", "head 1", "head 2", "head 3")
    t5 = T5RelativeBias(n_heads=3, seed=2)
    causal = t5.profile(reach, causal=True)
    bias = t5.bias(torch.arange(2 * reach + 1), causal=True)[:, reach].numpy()   # (h, D)
    np.testing.assert_array_equal(causal.values[:, :reach + 1], bias[:, :reach + 1])
    assert np.isnan(causal.values[:, reach + 1:]).all()       # keys ahead are masked


def test_sinusoidal_profile_is_a_cosine_of_the_distance_alone():
    d = 16
    profile = make_encoding("sinusoidal", d_model=d, n_heads=2).profile(8, causal=False)
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)
    theory = np.cos(profile.distances[:, None] * omega).mean(axis=1)
    np.testing.assert_allclose(profile.values[0], theory, atol=1e-12)
    assert profile.rows == ("all positions",) and profile.axis == "cosine"


def test_rope_profile_is_the_roformer_decay():
    profile = RotaryEncoding(8).profile(10, causal=True)
    theta = rope_angles(torch.ones(1), 8).numpy()[0]               # (d_head/2,)
    theory = np.cos(profile.distances[:, None] * theta).mean(axis=1)
    np.testing.assert_allclose(profile.values[0], theory, atol=1e-12)
    assert RotaryEncoding(8, scale=0.0).profile(3, False).values.tolist() == [[1.0] * 7]


@pytest.mark.parametrize("kind", ["none", "learned"])
def test_no_profile_without_a_relation_between_distant_positions(kind):
    assert make_encoding(kind, d_model=8, n_heads=2).profile(5, causal=False) is None
