"""A reorder run in the original tokens' frame (Backend.run(aligned=True)): the original tokens
at the positions, and under the mask, that the order gives them. Every operation but
attention works row by row, and attention sees its keys permuted with their positions
and mask, so this is the order's run with its rows put back, to rounding. The engine
compares it with no gather; the slot-order Trace is gathered only when asked for.

Checked here against the run in slot order (Backend.run, itself checked against
transformers' outputs in test_hf and test_hf_families), on the built-in model for every
encoding and mask and on tiny random Hugging Face models of every family that can.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from test_prefix import assert_traces_close

from posviz.analysis.engine import Engine
from posviz.analysis.predictions import compare_outputs
from posviz.analysis.symmetry import METRICS, compare
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.orders import per_token
from posviz.models.request import Request
from posviz.models.trace import in_slot_order
from posviz.views.shown import build_views

TEXT = "the cat sat on the mat because it was warm and dry"
PES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
POSITIONS = (Positions(), Positions("token", 3), Positions("slot", 2))


def assert_same_comparisons(got, want, tol):
    for name in (*METRICS, "token_change", "attention_aligned"):
        np.testing.assert_allclose(got.metric(name), want.metric(name), rtol=tol, atol=tol,
                                   err_msg=name)


def orders_of(n: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    first_moved = np.r_[1, 0, np.arange(2, n)]      # under a causal mask: no prefix kept
    return [rng.permutation(n) for _ in range(3)] + [first_moved, np.arange(n)[::-1].copy()]


@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
@pytest.mark.parametrize("pe", PES)
def test_an_aligned_run_is_the_run_with_its_rows_put_back(pe, mask):
    for k, positions in enumerate(POSITIONS):
        backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe=pe, mask=mask,
                                             dtype="float64", seed=k, max_len=64))
        seq = backend.tokenize(TEXT)
        for order in orders_of(len(seq), seed=k):
            pos = positions.ids(order)
            aligned = backend.run(seq, Request(order, pos, aligned=True))
            assert aligned.tokens == tuple(seq.ids)
            assert np.array_equal(aligned.position_ids, per_token(order, pos))
            assert_traces_close(in_slot_order(aligned, order), backend.run(seq, Request(order, pos)),
                                1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
def test_the_engine_compares_an_aligned_run_as_it_compares_one_in_slot_order(mask, dtype):
    tol = 1e-12 if dtype == "float64" else 1e-5
    for pe in PES:
        backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe=pe, mask=mask,
                                             dtype=dtype, max_len=64))
        seq = backend.tokenize(TEXT)
        engine = Engine(backend, reuse_prefix=False)
        assert engine.aligned(Positions()) and not engine.aligned(Positions(literal=True))
        for order in orders_of(len(seq)):
            got = engine.evaluate(seq, order, Positions("token", 1))
            want = engine.evaluate(seq, order, Positions("token", 1, literal=True))
            assert got.aligned and not want.aligned
            assert_same_comparisons(got.comparison, want.comparison, tol)
            assert_traces_close(got.permuted, want.permuted, tol)
            np.testing.assert_allclose(got.slot_hidden(2), want.permuted.hidden[2],
                                       rtol=tol, atol=tol)


def test_the_theory_holds_in_either_frame():
    """Without positions and mask every layer is equivariant; under a causal mask the
    leak shows from the first block on (as in test_symmetry). In the original frame the
    bidirectional case is the reference's own computation; in slot order it is a
    different one that rounds alike."""
    for mask, equivariant in (("bidirectional", True), ("causal", False)):
        backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="none",
                                             mask=mask))
        seq = backend.tokenize(TEXT)
        for aligns in (True, False):
            ev = Engine(backend).evaluate(seq, orders_of(len(seq))[0],
                                          Positions(literal=not aligns))
            assert ev.aligned == aligns
            c = ev.comparison
            assert bool((c.hidden_equivariance[1:] < c.floor).all()) == equivariant
            assert bool((c.attention_equivariance[1:] < c.floor).all()) == equivariant


def test_compare_refuses_an_aligned_run_of_other_tokens():
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(TEXT)
    order = orders_of(len(seq))[0]
    in_slots = backend.run(seq, Request(order, np.arange(len(seq))))
    reference = backend.run(seq, Request.original(np.arange(len(seq))))
    with pytest.raises(ValueError, match="aligned"):
        compare(reference, in_slots, order, aligned=True)


def test_what_a_reorder_shows_gathers_no_map():
    """The views and outputs read the aligned run as it is: the slot-order Trace (a
    gather of every map) is built only when something asks for it."""
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    ev = Engine(backend).evaluate(seq, orders_of(len(seq))[0], Positions())
    build_views(ev, None)
    compare_outputs(backend, ev)
    assert "permuted" not in vars(ev)
    assert ev.permuted is ev.permuted                  # built once, when asked


def test_a_backend_that_declares_no_aligned_frame_runs_in_slot_order():
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    backend.capabilities = dataclasses.replace(backend.capabilities, aligned=False)
    assert not Engine(backend).aligned(Positions())
    seq = backend.tokenize(TEXT)
    ev = Engine(backend).evaluate(seq, orders_of(len(seq))[0], Positions())
    assert not ev.aligned and np.array_equal(ev.permuted.hidden, ev.run.hidden)


# -- Hugging Face models ---------------------------------------------------------------
pytest.importorskip("transformers")
hf_families = pytest.importorskip("test_hf_families")
from test_hf import load_tiny, save_tiny, shuffled_movable  # noqa: E402
from test_hf_families import EXPECTED, TYPES, folders  # noqa: E402,F401  (a fixture)

# every position signal in the position ids; a causal one's mask taken as given
ALIGNED = {"bert", "roberta", "distilbert", "gpt2", "llama"}


@pytest.fixture(scope="module")
def family_backends(folders, tmp_path_factory):  # noqa: F811
    from posviz.models import hf
    return {**{t: hf.load_backend(str(folders / t)) for t in TYPES},
            **load_tiny(("bert", "gpt2"), tmp_path_factory.mktemp("tiny"))}


@pytest.mark.parametrize("model_type", (*TYPES, "bert", "gpt2"))
def test_families_with_position_ids_run_aligned(family_backends, model_type):
    """Bidirectional ones as they are; causal ones (GPT-2, Llama's kin) with their mask
    handed over in the tokens' frame, which the slot-order run must match, maps
    included."""
    backend = family_backends[model_type]
    aligns = backend.capabilities.aligned
    assert aligns == (backend.family.name in ALIGNED)
    assert Engine(backend).aligned(Positions()) == aligns
    seq = backend.tokenize(hf_families.TEXT)
    order = shuffled_movable(seq, 1)
    if not aligns:
        with pytest.raises(ValueError):
            backend.run(seq, Request(order, np.arange(len(seq)), aligned=True))
        assert not Engine(backend).evaluate(seq, order, Positions()).aligned
        return
    for positions in (Positions(), Positions("token", 2)):
        pos = positions.ids(order)
        assert_traces_close(in_slot_order(backend.run(seq, Request(order, pos, aligned=True)), order),
                            backend.run(seq, Request(order, pos)), 1e-5)
        engine, literal = Engine(backend), dataclasses.replace(positions, literal=True)
        assert_same_comparisons(engine.evaluate(seq, order, positions).comparison,
                                engine.evaluate(seq, order, literal).comparison, 1e-5)


def test_a_bert_configured_as_a_decoder_is_causal_and_runs_in_slot_order(tmp_path):
    """transformers masks such a BERT causally, by row: it is said to be causal, and the
    original frame would not be its reordered run."""
    from transformers import AutoModel

    from posviz.models import hf
    save_tiny("bert", tmp_path)
    model = AutoModel.from_pretrained(tmp_path, is_decoder=True, attn_implementation="eager")
    model.save_pretrained(tmp_path)
    backend = hf.load_backend(str(tmp_path))
    assert backend.family.name == "bert" and not backend.capabilities.aligned
    assert backend.mask == "causal" and backend.facts().mask == "causal"
    seq = backend.tokenize(hf_families.TEXT)
    order = shuffled_movable(seq, 1)
    ev = Engine(backend).evaluate(seq, order, Positions())
    assert not ev.aligned
    np.testing.assert_allclose(ev.permuted.hidden, backend.run(seq, Request(
        order, np.arange(len(seq)))).hidden)
    # and masked so: no slot attends to a later one, and the first moved slot's
    # predecessors keep the hidden states they had (the causal leak runs one way)
    assert not np.triu(ev.comparison.attention_aligned[..., order, :][..., order], 1).any()
    first = int(np.flatnonzero(order != np.arange(len(seq)))[0])
    np.testing.assert_allclose(ev.permuted.hidden[:, :first], ev.reference.hidden[:, :first],
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("orders", [[0, 0, 2, 3], [[0, 1, 2, 3], [3, 2, 1, 1]], [0, 1, 2, 4]])
def test_an_aligned_record_refuses_orders_that_are_not_permutations(orders):
    from posviz.errors import PosvizInputError
    from posviz.models.hooks import Recorder
    model = BuiltinBackend(ModelConfig()).model
    words = "the cat sat down".split()
    pos = np.zeros(np.shape(orders), dtype=np.int64) + np.arange(4)
    with pytest.raises(PosvizInputError, match="permutation"):
        model.record(words, Request(orders, pos, aligned=True), Recorder())
