"""The engine compares a reorder a layer at a time as the forward computes it, keeping
no layer's maps once compared (analysis.symmetry.AttentionGaps), and keeps a long
input's reference maps on disk (models.maps.LayerMaps). Every number must equal the
plain computation over whole Traces: the reordered run in slot order with all its maps,
compared with compare(); on every built-in configuration and on tiny Hugging Face
models of every family, with the maps in memory and on disk, kept whole or one head."""
from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.symmetry import METRICS, compare
from posviz.models import maps as layer_maps
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.request import Request
from posviz.views.pooling import MosaicTiles, pool_block, pool_signed_max

TEXT = "the cat sat on the mat because it was warm and the dog ran home"
TOL = {"float32": 1e-6, "float64": 1e-12}
PES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
VARIANTS = [("pre", True, Positions()), ("post", True, Positions("token", 3)),
            ("none", False, Positions("slot", 5))]


def orders_of(n: int, seed: int) -> list[np.ndarray]:
    """A shuffle, a reversal, and a late swap (a causal run reuses its prefix there)."""
    rng = np.random.default_rng(seed)
    late = np.arange(n)
    late[[n - 3, n - 1]] = late[[n - 1, n - 3]]
    return [rng.permutation(n), np.arange(n)[::-1].copy(), late]


def plainly(backend, seq, order, positions):
    """compare() of the reference and the order's run in slot order, and the run's maps
    put back in the original order by fancy indexing, every map whole."""
    identity = np.arange(len(seq))
    reference = backend.run(seq, Request(identity, positions.ids(identity)))
    run = backend.run(seq, Request(order, positions.ids(order)))
    inv = np.argsort(order)
    aligned = np.stack([run.attention[l][:, inv][:, :, inv]
                        for l in range(run.n_layers)])                  # (L, h, n, n)
    original = np.stack([reference.attention[l] for l in range(run.n_layers)])
    return original, aligned, compare(reference, run, order)


def assert_streamed_equals_plain(backend, seq, order, positions, tol, keep=None,
                                 mosaic=True):
    """Without ``mosaic`` nobody takes a layer whole: it is compared a head at a time."""
    engine = Engine(backend)
    tiles = MosaicTiles(engine.reference(seq, positions))
    ev = engine.evaluate(seq, order, positions, sinks=(tiles,) if mosaic else (),
                         keep=keep)
    assert ev.run.attention is None                       # no layer's maps kept in it
    original, aligned, want = plainly(backend, seq, order, positions)
    got = ev.comparison
    for name in (*METRICS, "token_change"):
        np.testing.assert_allclose(got.metric(name), want.metric(name), rtol=tol, atol=tol,
                                   err_msg=name)
    if got.attention_aligned is not None:
        np.testing.assert_allclose(got.attention_aligned, aligned, rtol=tol, atol=tol)
    else:                                              # one head kept: the one asked for
        layer, head, kept = ev.kept
        assert (layer, head) == keep
        np.testing.assert_allclose(kept, aligned[layer, head], rtol=tol, atol=tol)
    if not mosaic:
        return ev
    block = pool_block(len(seq))
    for mode, maps in (("original", original), ("reordered", aligned),
                       ("difference", aligned - original)):
        np.testing.assert_allclose(tiles.tiles[mode], pool_signed_max(maps, block),
                                   rtol=tol, atol=tol, err_msg=mode)
    return ev


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
@pytest.mark.parametrize("pe", PES)
def test_a_streamed_comparison_equals_the_plain_one(pe, mask, dtype):
    for k, (norm, residual, positions) in enumerate(VARIANTS):
        backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe=pe, mask=mask,
                                             norm=norm, residual=residual, dtype=dtype,
                                             seed=k, max_len=64))
        seq = backend.tokenize(TEXT)
        for order in orders_of(len(seq), k):
            assert_streamed_equals_plain(backend, seq, order, positions, TOL[dtype])


@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
def test_maps_on_disk_and_one_head_kept_give_the_same_numbers(mask, monkeypatch):
    """A long input's case, forced at a small size: the reference's maps written to a
    temporary file, and the reordered run keeping only the head on screen."""
    monkeypatch.setattr(layer_maps, "IN_MEMORY", 0)
    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)
    words = TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(70))      # pooled in blocks of 2
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="rope",
                                         mask=mask))
    seq = backend.tokenize(text)
    for order, keep in zip(orders_of(len(seq), 0), itertools.cycle([(1, 1), (2, 0)])):
        for mosaic in (True, False):
            ev = assert_streamed_equals_plain(backend, seq, order, Positions(), 1e-6, keep,
                                              mosaic)
            assert isinstance(ev.reference.attention, layer_maps.LayerMaps)
            assert ev.comparison.attention_aligned is None


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
    words = TEXT.split()
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe="rope"))
    seq = backend.tokenize(" ".join(words[i % len(words)] for i in range(70)))
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
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    order = orders_of(len(seq), 0)[0]
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


# -- Hugging Face models ---------------------------------------------------------------
hf_families = pytest.importorskip("test_hf_families")
from test_hf import load_tiny, shuffled_movable  # noqa: E402
from test_hf_families import TYPES, folders  # noqa: E402,F401  (a fixture)


@pytest.fixture(scope="module")
def family_backends(folders, tmp_path_factory):  # noqa: F811
    from posviz.models import hf
    return {**{t: hf.load_backend(str(folders / t)) for t in TYPES},
            **load_tiny(("bert", "gpt2", "llama"), tmp_path_factory.mktemp("tiny"))}


@pytest.mark.parametrize("model_type", (*TYPES, "bert", "gpt2", "llama"))
def test_a_streamed_comparison_equals_the_plain_one_on_every_family(family_backends,
                                                                    model_type):
    backend = family_backends[model_type]
    seq = backend.tokenize(hf_families.TEXT)
    n = len(seq)
    late = np.arange(n)
    late[[n - 3, n - 2]] = late[[n - 2, n - 3]]            # a causal model reuses the prefix
    for order in (shuffled_movable(seq, 1), late):
        assert_streamed_equals_plain(backend, seq, order, Positions(), 1e-5)


@pytest.mark.parametrize("model_type", ("bert", "gpt2", "llama"))
def test_a_long_input_keeps_branch_norms_and_compares_by_head(family_backends, model_type,
                                                              monkeypatch):
    """Past BRANCHES_WHOLE a real model's run keeps its branches' per-token norms only:
    they are the norms of the outputs a short run keeps, and the views' branch curves are
    unchanged; with the maps on disk and no mosaic, every metric is the plain one."""
    from posviz.views.shown import branch_norms
    backend = family_backends[model_type]
    seq = backend.tokenize(hf_families.TEXT)
    order = shuffled_movable(seq, 2)
    whole = Engine(backend).evaluate(seq, order, Positions())
    monkeypatch.setattr(layer_maps, "BRANCHES_WHOLE", 0)
    monkeypatch.setattr(layer_maps, "IN_MEMORY", 0)
    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)
    ev = assert_streamed_equals_plain(backend, seq, order, Positions(), 1e-5, (1, 1),
                                      mosaic=False)
    for trace, full in ((ev.reference, whole.reference), (ev.run, whole.run)):
        assert trace.attn_out is None and trace.mlp_out is None
        np.testing.assert_array_equal(trace.attn_norm, np.linalg.norm(full.attn_out, axis=2))
        np.testing.assert_array_equal(trace.mlp_norm, np.linalg.norm(full.mlp_out, axis=2))
    got, want = branch_norms(ev)[0], branch_norms(whole)[0]
    assert got.keys() == want.keys() and len(got) == 6
    for key in want:
        np.testing.assert_array_equal(got[key], want[key], err_msg=key)
