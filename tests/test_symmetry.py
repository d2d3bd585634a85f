"""The symmetry argument itself, checked on the built-in model: exact equivariance
without positions, the leak through a causal mask, and how each encoding breaks it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from posviz.analysis.engine import Engine
from posviz.analysis.symmetry import noise_floor
from posviz.errors import PosvizInputError
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.encodings import ENCODINGS, KINDS
from posviz.models.orders import check_permutation, inverse, parse_order
from posviz.models.request import Request

TEXT = "the quick brown fox jumps over the lazy dog near a river bank"
TOL = {"float32": 1e-5, "float64": 1e-10}


def evaluate(order, text=TEXT, positions=Positions(), **config):
    backend = BuiltinBackend(ModelConfig(**config))
    seq = backend.tokenize(text)
    return Engine(backend).evaluate(seq, order, positions)


def generic_order(n, seed=0):
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(n)
        if not np.any(order == np.arange(n)):       # every token moves
            return order


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("norm", ["pre", "post", "none"])
@pytest.mark.parametrize("residual", [True, False])
def test_without_positions_every_layer_is_equivariant(dtype, norm, residual):
    ev = evaluate(generic_order(13), pe="none", dtype=dtype, norm=norm, residual=residual)
    c = ev.comparison
    assert np.all(c.hidden_equivariance <= TOL[dtype])
    assert np.all(c.attention_equivariance[1:] <= TOL[dtype])
    assert np.all(c.pooled_change <= TOL[dtype])               # pooled output invariant
    assert np.all(c.token_change <= 10 * TOL[dtype])
    # ... while the raw output at the final slot does change (a different token sits there)
    assert c.last_token_change[1] > 1e-2


def test_the_aligned_attention_is_the_reference_when_equivariant():
    ev = evaluate(generic_order(13), pe="none", dtype="float64")
    np.testing.assert_allclose(ev.comparison.attention_aligned, ev.reference.attention,
                               atol=1e-12)
    assert not np.allclose(ev.permuted.attention, ev.reference.attention)


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_the_causal_mask_leaks_position_from_the_second_layer(norm):
    n = len(TEXT.split())
    order = np.concatenate([generic_order(n - 1, seed=2), [n - 1]])   # last token stays last
    c = evaluate(order, pe="none", mask="causal", dtype="float64", norm=norm).comparison
    assert np.all(c.last_token_change[:2] <= 1e-10)    # embeddings and layer 1: unchanged
    assert np.all(c.last_token_change[2:] > 1e-4)      # layer 2 on: earlier tokens saw
    assert np.all(c.hidden_equivariance[1:] > 1e-3)    # their own prefixes


@pytest.mark.parametrize("pe", [k for k in KINDS if k != "none"])
def test_every_encoding_breaks_equivariance_from_layer_one(pe):
    c = evaluate(generic_order(13), pe=pe).comparison
    assert np.all(c.hidden_equivariance[1:] > 1e-3)
    assert np.all(c.attention_equivariance[1:] > 1e-3)


@pytest.mark.parametrize("pe", KINDS)
@pytest.mark.parametrize("mask", ["bidirectional"])
def test_positions_travelling_with_tokens_restore_equivariance(pe, mask):
    """Every encoding is a function of position ids; when the ids move with their
    tokens, the permuted run is the reference run reordered."""
    c = evaluate(generic_order(13), pe=pe, mask=mask, dtype="float64",
                 positions=Positions("token")).comparison
    assert np.all(c.hidden_equivariance <= TOL["float64"])
    assert np.all(c.attention_equivariance[1:] <= TOL["float64"])


@pytest.mark.parametrize("pe", ["rope", "alibi", "t5"])
def test_relative_encodings_ignore_a_position_offset(pe):
    order = generic_order(13)
    a = evaluate(order, pe=pe, dtype="float64", positions=Positions("slot", 0))
    b = evaluate(order, pe=pe, dtype="float64", positions=Positions("slot", 37))
    np.testing.assert_allclose(a.permuted.hidden, b.permuted.hidden, atol=1e-10)


@pytest.mark.parametrize("pe", ["sinusoidal", "learned"])
def test_absolute_encodings_see_a_position_offset(pe):
    order = generic_order(13)
    a = evaluate(order, pe=pe, positions=Positions("slot", 0))
    b = evaluate(order, pe=pe, positions=Positions("slot", 37))
    assert not np.allclose(a.permuted.hidden[0], b.permuted.hidden[0])


def test_identical_words_are_indistinguishable_without_positions():
    """Swapping the two 'the' changes nothing at all without positions, and something
    with them."""
    text = "the cat saw the dog"
    swap = [3, 1, 2, 0, 4]
    plain = evaluate(swap, text=text, pe="none", dtype="float64")
    np.testing.assert_array_equal(plain.permuted.hidden, plain.reference.hidden)
    with_pe = evaluate(swap, text=text, pe="sinusoidal", dtype="float64")
    assert with_pe.comparison.hidden_equivariance[1] > 1e-3


def test_odd_width_works_with_every_encoding_that_allows_it():
    """An odd head width (35 / 5 = 7) runs every encoding but one that acts on pairs of
    a head's dimensions (RoPE), which is refused in one line."""
    for kind, encoding in ENCODINGS.items():
        if encoding.pairs_dimensions:
            with pytest.raises(PosvizInputError, match="even head width"):
                evaluate(generic_order(13), pe=kind, d_model=35, heads=5)
        else:
            c = evaluate(generic_order(13), pe=kind, d_model=35, heads=5).comparison
            assert c.hidden_equivariance.shape == (5,)


def test_metrics_by_their_definitions():
    order = generic_order(13)
    ev = evaluate(order, pe="sinusoidal", dtype="float64")
    H, Hp, c = ev.reference.hidden, ev.permuted.hidden, ev.comparison
    for layer in range(H.shape[0]):
        assert c.hidden_equivariance[layer] == pytest.approx(
            np.linalg.norm(Hp[layer] - H[layer][order]) / np.linalg.norm(H[layer]))
        assert c.last_token_change[layer] == pytest.approx(
            np.linalg.norm(Hp[layer, -1] - H[layer, -1]) / np.linalg.norm(H[layer, -1]))
        assert c.pooled_change[layer] == pytest.approx(
            np.linalg.norm(Hp[layer].mean(0) - H[layer].mean(0))
            / np.linalg.norm(H[layer].mean(0)))
        for i in range(len(order)):       # token i now sits at slot inverse(order)[i]
            j = int(np.flatnonzero(order == i)[0])
            assert c.token_change[layer, i] == pytest.approx(
                np.linalg.norm(Hp[layer, j] - H[layer, i]) / np.linalg.norm(H[layer, i]))
    for layer in range(1, H.shape[0]):
        A, Ap = ev.reference.attention[layer - 1], ev.permuted.attention[layer - 1]
        assert c.attention_equivariance[layer] == pytest.approx(
            np.abs(Ap - A[:, order][:, :, order]).max())
    assert np.isnan(c.attention_equivariance[0])


def run(order, **config):
    """The full Trace of one order, maps and scores included."""
    backend = BuiltinBackend(ModelConfig(**config))
    seq = backend.tokenize(" ".join(f"w{i}" for i in range(len(order))))
    return backend.run(seq, Request(order, np.arange(len(order)), scores=True))


def test_trace_shapes():
    t = run(generic_order(13), layers=3, heads=2, d_model=10, d_ff=7)
    assert t.hidden.shape == (4, 13, 10) and t.attention.shape == (3, 2, 13, 13)
    assert t.scores.shape == (3, 2, 13, 13) and t.attn_out.shape == (3, 13, 10)
    assert t.mlp_out.shape == (3, 13, 10) and t.encodings.shape == (13, 10)
    np.testing.assert_allclose(t.attention.sum(-1), 1, rtol=1e-5)


def test_causal_attention_is_lower_triangular():
    t = run(generic_order(13), mask="causal")
    upper = np.triu(np.ones((13, 13), dtype=bool), k=1)
    assert np.all(t.attention[..., upper] == 0)
    assert np.all(np.isneginf(t.scores[..., upper]))


def test_permutation_checks():
    assert parse_order("2, 0,1", 3).tolist() == [2, 0, 1]
    np.testing.assert_array_equal(inverse(np.array([2, 0, 1]))[[2, 0, 1]], np.arange(3))
    for bad in ("0,0,1", "0,1", "0,1,3", "a,b,c"):
        with pytest.raises(PosvizInputError):
            parse_order(bad, 3)
    with pytest.raises(PosvizInputError):
        check_permutation([0.5, 1, 0], 3)
    assert noise_floor("float64") < 1e-12 < noise_floor("float32")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_property_equivariance_without_positions(data):
    heads = data.draw(st.sampled_from([1, 2, 3, 4]))
    d_model = heads * data.draw(st.integers(1, 8))
    n = data.draw(st.integers(1, 12))
    order = np.array(data.draw(st.permutations(range(n))))
    words = data.draw(st.lists(st.sampled_from(["a", "b", "cat", "sat", "on", "mat", "."]),
                               min_size=n, max_size=n))
    config = dict(layers=data.draw(st.integers(1, 3)), heads=heads, d_model=d_model,
                  seed=data.draw(st.integers(0, 2**16)), dtype="float64",
                  norm=data.draw(st.sampled_from(["pre", "post", "none"])),
                  residual=data.draw(st.booleans()))
    c = evaluate(order, text=" ".join(words), pe="none", **config).comparison
    assert np.all(c.hidden_equivariance <= 1e-9)
    assert np.all(np.nan_to_num(c.attention_equivariance) <= 1e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pe=st.sampled_from(KINDS), n=st.integers(2, 12), seed=st.integers(0, 1000),
       offset=st.integers(0, 50), data=st.data())
def test_property_positions_with_tokens_are_equivariant_for_every_encoding(pe, n, seed,
                                                                           offset, data):
    order = np.array(data.draw(st.permutations(range(n))))
    text = " ".join(f"w{i % 5}" for i in range(n))
    c = evaluate(order, text=text, pe=pe, seed=seed, dtype="float64", heads=2, d_model=12,
                 layers=2, positions=Positions("token", offset)).comparison
    assert np.all(c.hidden_equivariance <= 1e-9)


def test_alibi_cannot_tell_a_sentence_from_its_reverse():
    """Reversal keeps every distance |i - j|, the only thing symmetric ALiBi sees; RoPE
    and T5 buckets see the sign of j - i and do tell them apart."""
    n = len(TEXT.split())
    reverse = np.arange(n)[::-1]
    alibi = evaluate(reverse, pe="alibi", dtype="float64").comparison
    assert np.all(alibi.hidden_equivariance <= TOL["float64"])
    for pe in ("rope", "t5"):
        assert evaluate(reverse, pe=pe, dtype="float64").comparison.hidden_equivariance[1] > 1e-3
    causal = evaluate(reverse, pe="alibi", mask="causal", dtype="float64").comparison
    assert causal.hidden_equivariance[1] > 1e-3
