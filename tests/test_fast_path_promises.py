"""What the model's fast paths promise besides their numbers (those: test_fast_path_matrix):
the theory in either frame, which model runs which path, what a Request refuses, and
how maps on disk and maps kept whole are read and compared."""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

pytest.importorskip("torch")

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.prefix import first_moved  # noqa: E402
from posviz.analysis.symmetry import METRICS, compare  # noqa: E402
from posviz.models import maps as layer_maps  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.models.hooks import Recorder  # noqa: E402
from posviz.models.request import Request  # noqa: E402
from posviz.views.pooling import pool_block, pool_signed_max  # noqa: E402
from test_fast_path_matrix import (LONG, TEXT, hf_families, late_orders,  # noqa: E402
                                   orders_of, plain_reference, test_hf)

WORDS = "the cat sat on the mat because it was warm and dry"


def test_the_theory_holds_in_either_frame():
    """Without positions and mask every layer is equivariant; under a causal mask the
    leak shows from the first block on (as in test_symmetry). In the original frame the
    bidirectional case is the reference's own computation; in slot order it is a
    different one that rounds alike."""
    for mask, equivariant in (("bidirectional", True), ("causal", False)):
        backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="none",
                                             mask=mask))
        seq = backend.tokenize(WORDS)
        for aligns in (True, False):
            ev = Engine(backend).evaluate(seq, orders_of(seq, 0)[0],
                                          Positions(literal=not aligns))
            assert ev.aligned == aligns
            c = ev.comparison
            assert bool((c.hidden_equivariance[1:] < c.floor).all()) == equivariant
            assert bool((c.attention_equivariance[1:] < c.floor).all()) == equivariant


def test_compare_refuses_an_aligned_run_of_other_tokens():
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(WORDS)
    order = orders_of(seq, 0)[0]
    in_slots = backend.run(seq, Request(order, np.arange(len(seq))))
    reference = plain_reference(backend, seq, Positions())
    with pytest.raises(ValueError, match="aligned"):
        compare(reference, in_slots, order, aligned=True)


def test_what_a_reorder_shows_gathers_no_map():
    """The views and outputs read the aligned run as it is: the slot-order Trace (a
    gather of every map) is built only when something asks for it."""
    from posviz.analysis.predictions import compare_outputs
    from posviz.views.shown import build_views
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16))
    seq = backend.tokenize(WORDS)
    ev = Engine(backend).evaluate(seq, orders_of(seq, 0)[0], Positions())
    build_views(ev, None)
    compare_outputs(backend, ev)
    assert "permuted" not in vars(ev)
    assert ev.permuted is ev.permuted                  # built once, when asked


def test_a_backend_that_declares_no_aligned_frame_runs_in_slot_order():
    import dataclasses
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    backend.capabilities = dataclasses.replace(backend.capabilities, aligned=False)
    assert not Engine(backend).aligned(Positions())
    seq = backend.tokenize(WORDS)
    ev = Engine(backend).evaluate(seq, orders_of(seq, 0)[0], Positions())
    assert not ev.aligned and np.array_equal(ev.permuted.hidden, ev.run.hidden)


def test_a_bidirectional_model_always_runs_in_full():
    backend = BuiltinBackend(ModelConfig(mask="bidirectional"))
    seq = backend.tokenize(TEXT)
    engine = Engine(backend)
    assert not engine.reuse_prefix
    order = late_orders(seq, 0)[0]
    assert engine.evaluate(seq, order, Positions(literal=True)).start == 0
    assert engine.evaluate(seq, order, Positions()).start == 0


def test_first_moved_is_the_first_slot_whose_token_or_position_changed():
    ids = np.arange(6)
    assert first_moved(np.arange(6), ids, ids) == 6
    assert first_moved(np.array([0, 1, 3, 2, 4, 5]), ids, ids) == 2
    assert first_moved(np.array([1, 0, 2, 3, 4, 5]), ids, ids) == 0
    shifted = ids.copy()
    shifted[4] += 1                  # same token, another position id: it moved too
    assert first_moved(np.arange(6), shifted, ids) == 4


@pytest.mark.parametrize("orders, message", [
    ([[0, 0, 2, 3]], "permutation"), ([[0, 1, 2, 3], [3, 2, 1, 1]], "permutation"),
    ([[0, 1, 2, 4]], "permutation"), ([[0, 1, 2]], "tokens")])
def test_an_aligned_request_refuses_orders_that_are_not_permutations(orders, message):
    from posviz.errors import PosvizInputError
    model = BuiltinBackend(ModelConfig()).model
    pos = np.zeros(np.shape(orders), dtype=np.int64) + np.arange(np.shape(orders)[1])
    with pytest.raises(PosvizInputError, match=message):
        model.record("the cat sat down".split(), Request(orders, pos, aligned=True),
                     Recorder())


def test_a_request_says_what_it_runs_and_refuses_what_no_model_can():
    order, pos = np.array([2, 0, 1]), np.arange(3)
    assert Request(order, pos).mode == "plain" and not Request(order, pos).batched
    assert Request(order, pos, aligned=True).mode == "aligned"
    assert Request(order, pos, start=1, past=()).mode == "suffix"
    np.testing.assert_array_equal(Request(order, pos, start=1, past=()).rows(), [0, 1])
    np.testing.assert_array_equal(Request(order, pos, aligned=True).row_positions(),
                                  [1, 2, 0])
    assert Request(np.stack([order, order]), np.stack([pos, pos])).batched
    for bad in (dict(aligned=True, start=1, past=()), dict(start=1),
                dict(start=3, past=()), dict(aligned=True, keep_past=True)):
        with pytest.raises(ValueError):
            Request(order, pos, **bad)
    with pytest.raises(ValueError):                     # a batch keeps no maps of its own
        Request(np.stack([order, order]), np.stack([pos, pos]), scores=True)
    from posviz.errors import PosvizInputError
    with pytest.raises(PosvizInputError, match="position ids"):
        Request(order, np.arange(4))


def test_the_original_order_on_disk_is_compared_a_head_at_a_time(monkeypatch):
    """The reference compared with itself (the window's first evaluation of a new text)
    reads its file a head at a time, never a whole layer, and gives the same numbers."""
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    identity = np.arange(len(seq))
    plain = Engine(backend).evaluate(seq, identity, Positions())
    monkeypatch.setattr(layer_maps, "IN_MEMORY", 0)
    reads = []
    read = layer_maps.LayerMaps.__getitem__
    monkeypatch.setattr(layer_maps.LayerMaps, "__getitem__",
                        lambda self, key: reads.append(key) or read(self, key))
    ev = Engine(backend).evaluate(seq, identity, Positions())
    assert ev.reference.attention.array is None and reads
    assert all(not np.isscalar(key) for key in reads)            # (layer, head) each
    for metric in METRICS:
        np.testing.assert_array_equal(ev.comparison.metric(metric),
                                      plain.comparison.metric(metric))


def test_the_original_tiles_on_disk_are_pooled_a_head_at_a_time(monkeypatch):
    """The mosaic's original tiles (once per reference) read a file-backed layer a head
    at a time, never whole, and equal the whole maps pooled."""
    from posviz.views.pooling import original_tiles
    monkeypatch.setattr(layer_maps, "IN_MEMORY", 0)
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe="rope"))
    seq = backend.tokenize(LONG)
    reference = Engine(backend).reference(seq, Positions())
    whole = np.stack([reference.attention[layer] for layer in range(2)])   # (L, h, n, n)
    reads = []
    read = layer_maps.LayerMaps.__getitem__
    monkeypatch.setattr(layer_maps.LayerMaps, "__getitem__",
                        lambda self, key: reads.append(key) or read(self, key))
    tiles = original_tiles(reference)
    assert len(reads) == 4 and all(not np.isscalar(key) for key in reads)  # (layer, head)
    np.testing.assert_array_equal(tiles, pool_signed_max(whole, pool_block(len(seq))))


def test_maps_kept_whole_are_compared_after_the_forward(monkeypatch):
    """Maps kept whole have their gaps taken once the forward is done (taken between
    the model's layers they cost 6% more of an evaluation at n = 16); a long input's,
    one head kept, as each layer passes, so that the layer can go."""
    from pathlib import Path
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    order = orders_of(seq, 0)[0]
    forward_done = []
    run = backend.run

    def watched(*args, **kwargs):
        trace = run(*args, **kwargs)
        forward_done.append(True)
        return trace

    class Seen:
        """A MapsSink noting, at each layer's heads, whether the forward is done."""

        def __init__(self):
            self.after = []

        def heads(self, layer, heads, original, aligned, difference):
            self.after.append(bool(forward_done))

        def layer_done(self, layer):
            pass

    # the README's "Long inputs" paragraph says so, with the size
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert (f"up to {layer_maps.KEEP_ALL >> 20} MB of maps are kept whole instead, every "
            "head on screen at once, and compared after the forward") in readme
    monkeypatch.setattr(backend, "run", watched)
    for keep_all, after in ((layer_maps.KEEP_ALL, True), (0, False)):
        monkeypatch.setattr(layer_maps, "KEEP_ALL", keep_all)
        engine = Engine(backend)
        engine.reference(seq, Positions())
        forward_done.clear()
        seen = Seen()
        ev = engine.evaluate(seq, order, Positions(), sinks=(seen,), keep=(0, 0))
        assert seen.after == [after] * 3
        assert np.isfinite(ev.comparison.attention_equivariance[1:]).all()


def test_a_bert_configured_as_a_decoder_is_causal_and_runs_in_slot_order(tmp_path):
    """transformers masks such a BERT causally, by row: it is said to be causal, and the
    original frame would not be its reordered run."""
    from transformers import AutoModel

    from posviz.models import hf
    test_hf.save_tiny("bert", tmp_path)
    model = AutoModel.from_pretrained(tmp_path, is_decoder=True, attn_implementation="eager")
    model.save_pretrained(tmp_path)
    backend = hf.load_backend(str(tmp_path))
    assert backend.family.name == "bert" and not backend.capabilities.aligned
    assert backend.mask == "causal" and backend.facts().mask == "causal"
    seq = backend.tokenize(hf_families.TEXT)
    order = test_hf.shuffled_movable(seq, 1)
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
