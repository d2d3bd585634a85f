"""Every fast path against the plain run it stands for: one matrix over the Request.

The plain run is a plain Request, the reordered tokens in slot order (Backend.run,
checked against transformers' own outputs in test_hf_families and against the direct
computation in test_hooks), and compare() of it with the original order's plain run.
Each fast path must give its numbers:

- aligned: the order computed in the original tokens' frame (an aligned Request);
- suffix: a causal order from its first moved slot on, from the reference's keys and
  values (a suffix Request), and the engine choosing it;
- batched: B orders in one forward (Backend.record), in slot order and aligned, their
  metrics taken as the layers pass (analysis.batch_metrics);
- streamed: the engine's comparison, the maps handed to sinks a layer at a time as they
  are computed and pooled into the mosaic's tiles on the way;
- on disk: a long input's case forced at a small size, the maps in a temporary file,
  one head kept, a real model's branches kept as their norms.

On the built-in model with every encoding kind of the registry under every mask (in
both precisions, every norm placement, with and without residuals, at several
positions), and on a tiny random model of every Hugging Face family. A model that does
not declare a path's capability (models.backend.Capabilities) must refuse it.
"""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

pytest.importorskip("torch")

from posviz.analysis.batch_metrics import compare_batch  # noqa: E402
from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.prefix import first_moved, stitch  # noqa: E402
from posviz.analysis.symmetry import METRICS, compare  # noqa: E402
from posviz.models import maps as layer_maps  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.models.encodings import ENCODINGS  # noqa: E402
from posviz.models.hooks import Recorder, trace_from  # noqa: E402
from posviz.models.options import MASKS  # noqa: E402
from posviz.models.orders import per_token  # noqa: E402
from posviz.models.request import Request  # noqa: E402
from posviz.models.trace import Trace, in_slot_order  # noqa: E402
from posviz.views.pooling import MosaicTiles, pool_block, pool_signed_max  # noqa: E402
from posviz.views.shown import branch_norms  # noqa: E402

TEXT = "the cat sat on the mat because it was warm and the dog ran home"
LONG = " ".join(TEXT.split() * 5)[:-10]                 # 73 words: tiles of 2 a side
FIELDS = ("embeddings", "encodings", "hidden", "attention", "scores", "attn_out", "mlp_out")
# the built-in model's variants: norm placement, residuals, positions, precision
VARIANTS = (("pre", True, Positions(), "float64"),
            ("post", True, Positions("token", 3), "float32"),
            ("none", False, Positions("slot", 2), "float64"))
# a float32 run through another path rounds apart, far below the noise floor (100 eps)
TOL = {"float64": 1e-12, "float32": 1e-5}
HF_TOL = 1e-5


# -- what is compared ---------------------------------------------------------------------
def assert_traces_close(fast: Trace, slow: Trace, tol: float) -> None:
    assert fast.tokens == slow.tokens
    np.testing.assert_array_equal(fast.position_ids, slow.position_ids)
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.shape == b.shape and a.dtype == b.dtype, name
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)


def assert_same_comparisons(got, want, tol: float) -> None:
    for name in (*METRICS, "token_change"):
        a, b = got.metric(name), want.metric(name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)
    if got.attention_aligned is not None:
        np.testing.assert_allclose(got.attention_aligned, want.attention_aligned,
                                   rtol=tol, atol=tol)


def plain_reference(backend, seq, positions, scores=False) -> Trace:
    """The plain run of the original order."""
    return backend.run(seq, Request.original(positions.ids(np.arange(len(seq))),
                                             scores=scores))


def plainly(backend, seq, order, positions, reference: Trace, scores=False):
    """The plain run of ``order`` and compare() of it with ``reference``'s."""
    run = backend.run(seq, Request(order, positions.ids(order), scores=scores))
    return run, compare(reference, run, order)


def orders_of(seq, seed: int) -> list[np.ndarray]:
    """A shuffle and a reversal of the movable tokens (no prefix kept), and the last two
    swapped (a causal run keeps all but them)."""
    movable = np.flatnonzero(seq.movable())
    rng = np.random.default_rng(seed)
    orders = [np.arange(len(seq)) for _ in range(3)]
    orders[0][movable] = rng.permutation(movable)
    orders[1][movable] = movable[::-1]
    orders[2][movable[-2:]] = movable[:-3:-1]
    return orders


def late_orders(seq, seed: int) -> list[np.ndarray]:
    """Orders that keep a prefix: a chip moved within the last third, the second half
    shuffled."""
    n, movable = len(seq), np.flatnonzero(seq.movable())
    rng = np.random.default_rng(seed)
    moved = list(range(n))
    src, dst = rng.choice(movable[-max(3, len(movable) // 3):], size=2, replace=False)
    moved.insert(int(dst), moved.pop(int(src)))
    half = np.arange(n)
    tail = movable[len(movable) // 2:]
    half[tail] = np.roll(tail, 1)
    return [np.asarray(moved), half]


# -- the paths ------------------------------------------------------------------------------
def aligned(backend, seq, positions, tol, seed):
    if not backend.capabilities.aligned:
        order = orders_of(seq, seed)[0]
        with pytest.raises(ValueError):
            backend.run(seq, Request(order, positions.ids(order), aligned=True))
        assert not Engine(backend).evaluate(seq, order, positions).aligned
        return
    engine = Engine(backend, reuse_prefix=False)
    reference = plain_reference(backend, seq, positions, scores=True)
    for order in orders_of(seq, seed):
        pos = positions.ids(order)
        frame = backend.run(seq, Request(order, pos, aligned=True, scores=True))
        assert frame.tokens == seq.tokens
        np.testing.assert_array_equal(frame.position_ids, per_token(order, pos))
        run, want = plainly(backend, seq, order, positions, reference, scores=True)
        assert_traces_close(in_slot_order(frame, order), run, tol)
        ev = engine.evaluate(seq, order, positions)
        assert ev.aligned
        assert_same_comparisons(ev.comparison, want, tol)
        np.testing.assert_allclose(ev.permuted.hidden, run.hidden, rtol=tol, atol=tol)


def suffix(backend, seq, positions, tol, seed):
    identity = np.arange(len(seq))
    keep = Request.original(positions.ids(identity), keep_past=True, scores=True)
    if not backend.capabilities.prefix:
        with pytest.raises(ValueError):
            backend.run(seq, keep)
        assert not Engine(backend).reuse_prefix
        return
    reference = backend.run(seq, keep)
    engine = Engine(backend)
    for order in late_orders(seq, seed):
        pos = positions.ids(order)
        start = first_moved(order, pos, reference.position_ids)
        assert start > 0
        tail = backend.run(seq, Request(order, pos, start=start, past=reference.past,
                                        scores=True))
        assert tail.n_tokens == len(seq) - start
        run, want = plainly(backend, seq, order, positions, reference, scores=True)
        assert_traces_close(stitch(reference, tail, start), run, tol)
        ev = engine.evaluate(seq, order, positions)
        assert ev.start == start
        assert_same_comparisons(ev.comparison, want, tol)


def batched(backend, seq, positions, tol, seed):
    assert backend.capabilities.batched
    orders = np.stack(orders_of(seq, seed))
    pos = positions.ids(orders)                                               # (B, n)
    reference = Engine(backend).reference(seq, positions)
    singles = [backend.run(seq, Request(order, positions.ids(order), scores=True))
               for order in orders]
    for frame in sorted({False, backend.capabilities.aligned}):
        # the recorded values: each order's run, its rows (and map columns) put back
        recorder = Recorder(scores=True)
        backend.record(seq, Request(orders, pos, aligned=frame), recorder)
        batch = trace_from(recorder, reference.n_layers, (), None, {})
        for b, (order, single) in enumerate(zip(orders, singles)):
            rows = np.argsort(order) if frame else np.arange(len(order))
            for name, axes in (("hidden", 1), ("attn_out", 1), ("mlp_out", 1),
                               ("attention", 2), ("scores", 2)):
                got, want = getattr(batch, name), getattr(single, name)
                if want is None:
                    assert got is None, name
                    continue
                want = want[:, rows] if axes == 1 else want[:, :, rows][:, :, :, rows]
                np.testing.assert_allclose(got[:, b], want, rtol=tol, atol=tol,
                                           err_msg=f"{name} {b}")
        # the metrics taken as the layers pass
        got = compare_batch(backend, seq, orders, pos, reference, aligned=frame)
        for comparison, order, single in zip(got, orders, singles):
            want = compare(reference, single, order)
            assert comparison.attention_aligned is None and comparison.floor == want.floor
            assert_same_comparisons(comparison, want, tol)


def streamed(backend, seq, positions, tol, seed, keep=None, mosaic=True, orders=None):
    engine = Engine(backend)
    reference = plain_reference(backend, seq, positions)
    for order in orders or orders_of(seq, seed):
        tiles = MosaicTiles(engine.reference(seq, positions))
        ev = engine.evaluate(seq, order, positions, sinks=(tiles,) if mosaic else (),
                             keep=keep)
        assert ev.run.attention is None                     # no layer's maps kept in it
        run, want = plainly(backend, seq, order, positions, reference)
        inv = np.argsort(order)
        back = np.stack([run.attention[l][:, inv][:, :, inv]
                         for l in range(run.n_layers)])                   # (L, h, n, n)
        original = np.stack([reference.attention[l] for l in range(run.n_layers)])
        assert_same_comparisons(ev.comparison, want, tol)
        if ev.comparison.attention_aligned is None:         # one head kept: the one asked
            layer, head, kept = ev.kept
            assert (layer, head) == keep
            np.testing.assert_allclose(kept, back[layer, head], rtol=tol, atol=tol)
        if mosaic:
            block = pool_block(len(seq))
            for mode, maps in (("original", original), ("reordered", back),
                               ("difference", back - original)):
                np.testing.assert_allclose(tiles.tiles[mode], pool_signed_max(maps, block),
                                           rtol=tol, atol=tol, err_msg=mode)


def on_disk(backend, seq, positions, tol, seed, monkeypatch):
    orders = orders_of(seq, seed)
    whole = Engine(backend).evaluate(seq, orders[0], positions)
    with monkeypatch.context() as patch:
        for name in ("IN_MEMORY", "KEEP_ALL"):
            patch.setattr(layer_maps, name, 0)
        layers = whole.reference.n_layers
        for keep, mosaic, some in (((layers - 1, 1), True, orders[::2]),
                                   ((0, 0), False, orders[1::2])):
            streamed(backend, seq, positions, tol, seed, keep, mosaic, some)
        # a real model's branches past BRANCHES_WHOLE: their norms, all the views read
        patch.setattr(layer_maps, "BRANCHES_WHOLE", 0)
        ev = Engine(backend).evaluate(seq, orders[0], positions, keep=(0, 1))
    assert isinstance(ev.reference.attention, layer_maps.LayerMaps)
    assert ev.comparison.attention_aligned is None and ev.kept[:2] == (0, 1)
    assert_same_comparisons(ev.comparison, whole.comparison, tol)
    if ev.run.attn_out is None:
        for trace, full in ((ev.reference, whole.reference), (ev.run, whole.run)):
            assert trace.mlp_out is None
            np.testing.assert_array_equal(trace.attn_norm, np.linalg.norm(full.attn_out, axis=2))
            np.testing.assert_array_equal(trace.mlp_norm, np.linalg.norm(full.mlp_out, axis=2))
        got, want = branch_norms(ev)[0], branch_norms(whole)[0]
        assert got.keys() == want.keys() and len(got) == 6
        for key in want:
            np.testing.assert_array_equal(got[key], want[key], err_msg=key)


PATHS = {"aligned": aligned, "suffix": suffix, "batched": batched, "streamed": streamed,
         "on disk": on_disk}


# -- the models -----------------------------------------------------------------------------
def builtin_variants(kind: str, mask: str, text: str):
    for k, (norm, residual, positions, dtype) in enumerate(VARIANTS):
        backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe=kind,
                                             mask=mask, norm=norm, residual=residual,
                                             dtype=dtype, seed=k, max_len=128))
        yield backend, backend.tokenize(text), positions, TOL[dtype], k


@pytest.mark.parametrize("mask", MASKS)
@pytest.mark.parametrize("kind", list(ENCODINGS))
@pytest.mark.parametrize("path", list(PATHS))
def test_a_fast_path_of_the_built_in_model_gives_the_plain_numbers(path, kind, mask,
                                                                   monkeypatch):
    text = LONG if path == "on disk" else TEXT
    for backend, seq, positions, tol, k in builtin_variants(kind, mask, text):
        if path == "on disk":
            if k == MASKS.index(mask):         # one variant of each precision: enough
                on_disk(backend, seq, positions, tol, k, monkeypatch)
        else:
            PATHS[path](backend, seq, positions, tol, k)


hf_families = pytest.importorskip("test_hf_families")
import test_hf  # noqa: E402

from posviz.models.hf.families import FAMILIES  # noqa: E402


def save_tiny_of(family, folder) -> None:
    """A tiny random model of ``family``: the first of its model types that test_hf or
    test_hf_families knows how to make (a family's recipe adds one there)."""
    for model_type in family.model_types:
        if model_type in test_hf.FAMILIES + test_hf.LLAMA_LIKE:
            return test_hf.save_tiny(model_type, folder)
        if model_type in hf_families.EXPECTED:
            return hf_families.save_type(model_type, folder)
    pytest.fail(f"no tiny model of the {family.name} family: add its configuration to "
                "tests/test_hf_families.py")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """family name -> its tiny model's backend, made when first asked for."""
    from posviz.models import hf
    made = {}

    def backend(family):
        if family.name not in made:
            folder = tmp_path_factory.mktemp(family.name)
            save_tiny_of(family, folder)
            made[family.name] = hf.load_backend(str(folder))
        return made[family.name]
    return backend


@pytest.mark.parametrize("family", FAMILIES, ids=[f.name for f in FAMILIES])
@pytest.mark.parametrize("path", list(PATHS))
def test_a_fast_path_of_every_family_gives_the_plain_numbers(path, family, tiny,
                                                             monkeypatch):
    backend = tiny(family)
    seq = backend.tokenize(hf_families.TEXT)
    # positions that travel with the tokens, from an offset, where they reach the model
    # other than by the slots: in the frame and the suffix
    for k, positions in enumerate((Positions(), Positions("token", 2))):
        if k and (not backend.capabilities.position_ids or path not in ("aligned", "suffix")):
            break
        if path == "on disk":
            on_disk(backend, seq, positions, HF_TOL, k, monkeypatch)
        else:
            PATHS[path](backend, seq, positions, HF_TOL, k)
