"""A sweep's metrics for a chunk of orders at once (analysis.batch_metrics.compare_batch)
equal analysis.symmetry.compare of one single run per order: for the
built-in model over every encoding, mask, norm placement and precision, and for tiny
random Hugging Face models. Chunks stay within their memory budget, a stop cancels, and
the reference is run once.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from posviz.analysis.batch_metrics import batch_compare, compare_batch
from posviz.analysis.engine import Engine
from posviz.analysis.experiments import runs
from posviz.analysis.experiments.runs import batch_size, run_orders
from posviz.analysis.symmetry import METRICS, compare
from posviz.errors import Cancelled
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.request import Request

TEXT = "the cat sat on the mat because it was warm and dry"
PES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
NAMES = (*METRICS, "token_change")
# float32: a batched forward rounds apart from a single one (test_experiments_batch);
# near 0 the metrics are rounding themselves, far below the noise floor (100 eps)
TOL = {"float32": dict(rtol=1e-5, atol=1e-6), "float64": dict(rtol=1e-12, atol=1e-14)}


def random_orders(n: int, count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.permutation(n) for _ in range(count)]


def assert_same_metrics(got, want, tol, where=""):
    assert np.array_equal(got.order, want.order)
    assert got.attention_aligned is None
    assert got.floor == want.floor
    for name in NAMES:
        a, b = got.metric(name), want.metric(name)
        assert a.shape == b.shape and a.dtype == b.dtype, name
        np.testing.assert_allclose(a, b, err_msg=f"{name} {where}", **tol)


def single_comparisons(backend, seq, orders, positions):
    """compare of one full single run per order, in slot order (no prefix reuse, no
    run in the original tokens' frame: the plain computation to check against)."""
    engine, literal = Engine(backend), dataclasses.replace(positions, literal=True)
    return [engine.evaluate(seq, order, literal).comparison for order in orders]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
@pytest.mark.parametrize("pe", PES)
def test_compare_batch_equals_compare_of_single_runs(pe, mask, dtype):
    for k, (norm, positions) in enumerate([("pre", Positions()), ("post", Positions("token", 3)),
                                            ("none", Positions("slot", 2))]):
        cfg = ModelConfig(layers=2, heads=2, d_model=16, pe=pe, mask=mask, norm=norm,
                          residual=norm != "none", dtype=dtype, seed=k, max_len=64)
        backend = BuiltinBackend(cfg)
        seq = backend.tokenize(TEXT)
        orders = np.stack(random_orders(len(seq), 5, seed=k))
        reference = Engine(backend).reference(seq, positions)
        got = compare_batch(backend, seq, orders, positions.ids(orders), reference)
        assert len(got) == len(orders)
        for comparison, want in zip(got, single_comparisons(backend, seq, orders, positions)):
            assert_same_metrics(comparison, want, TOL[dtype], f"{norm} {positions}")


@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
@pytest.mark.parametrize("pe", PES)
def test_an_aligned_batch_is_each_run_put_back_in_the_original_order(pe, mask):
    """record(orders=) computes order b in the words' own order, with positions and mask
    permuted instead of the words: what it records is the single run of order b with
    rows (and map columns) put back, the frame the reference is in."""
    from posviz.models.hooks import ATTN_SCORES, PATTERN, RESID_POST, Recorder, block_hook
    for k, positions in enumerate((Positions(), Positions("token", 3), Positions("slot", 2))):
        cfg = ModelConfig(layers=2, heads=2, d_model=16, pe=pe, mask=mask, dtype="float64",
                          seed=k, max_len=64)
        backend = BuiltinBackend(cfg)
        seq = backend.tokenize(TEXT)
        orders = np.stack(random_orders(len(seq), 4, seed=k))
        recorder = Recorder(scores=True)
        backend.model.record(list(seq.ids), Request(orders, positions.ids(orders), aligned=True),
                             recorder)
        for b, order in enumerate(orders):
            run = backend.run(seq, Request(order, positions.ids(order), scores=True))  # slots
            back = np.argsort(order)                     # slot of each original token
            for l in range(cfg.layers):
                for hook, want in ((RESID_POST, run.hidden[l + 1][back]),
                                   (PATTERN, run.attention[l][:, back][:, :, back]),
                                   (ATTN_SCORES, run.scores[l][:, back][:, :, back])):
                    got = recorder.values[block_hook(l, hook)][b].numpy()
                    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12,
                                               err_msg=f"{hook} {l} {positions}")


def test_an_aligned_batch_refuses_what_is_not_a_permutation():
    from posviz.errors import PosvizInputError
    from posviz.models.hooks import Recorder
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    words = list(backend.tokenize(TEXT).ids)
    n = len(words)
    for orders, message in (([[0] * n], "permutation"), ([list(range(n - 1))], "tokens")):
        with pytest.raises(PosvizInputError, match=message):
            backend.model.record(words, Request(orders, np.zeros_like(orders), aligned=True),
                                 Recorder())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_batched_arithmetic_is_compare_on_the_same_runs(dtype):
    """Fed the single runs' own arrays, the chunk's metrics are compare's, bit for bit:
    the same differences, reduced in the same order."""
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="rope",
                                         mask="causal", dtype=dtype))
    seq = backend.tokenize(TEXT)
    orders = [np.arange(len(seq))] + random_orders(len(seq), 6)
    runs_ = [backend.run(seq, Request(order, np.arange(len(seq)))) for order in orders]
    reference = runs_[0]
    got = batch_compare(reference, np.stack([t.hidden for t in runs_]),
                        np.stack([t.attention for t in runs_]), np.stack(orders))
    for comparison, trace, order in zip(got, runs_, orders):
        want = compare(reference, trace, order)
        assert_same_metrics(comparison, want, dict(rtol=0, atol=0))
        for name in NAMES:
            np.testing.assert_array_equal(comparison.metric(name), want.metric(name), name)
    # the identity order: every measure exactly 0, as compare gives
    for name in ("hidden_equivariance", "last_token_change", "token_change"):
        assert not got[0].metric(name).any(), name
    assert np.isnan(got[0].attention_equivariance[0])
    assert not got[0].attention_equivariance[1:].any()


def test_run_orders_gives_compare_in_the_order_given():
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="alibi",
                                         mask="causal"))
    seq = backend.tokenize(TEXT)
    n = len(seq)
    orders = random_orders(n, 9) + [np.arange(n)] + random_orders(n, 4, seed=1)
    positions = Positions("token", 2)
    want = single_comparisons(backend, seq, orders, positions)
    for size in (1, 4, None):
        got = list(run_orders(Engine(backend), seq, orders, positions, batch=size))
        assert len(got) == len(orders)
        for comparison, single in zip(got, want):
            for name in NAMES:
                np.testing.assert_allclose(comparison.metric(name), single.metric(name),
                                           err_msg=name, **TOL["float32"])


class Spy(BuiltinBackend):
    """A built-in backend that notes the size of every chunk it measures and every run."""

    def __init__(self, config):
        super().__init__(config)
        self.sizes, self.runs = [], 0

    def run(self, seq, request, should_stop=None):
        self.runs += 1
        return super().run(seq, request, should_stop)

    def record(self, seq, request, recorder):
        self.sizes.append(len(request.order))
        return super().record(seq, request, recorder)


def test_chunks_of_metrics_stay_within_their_memory_budget():
    backend = Spy(ModelConfig(layers=2, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    n = len(seq)
    size = batch_size(backend, n)
    assert 1 < size <= runs.MAX_BATCH
    assert size * backend.batch_bytes(n) <= runs.BATCH_BYTES
    orders = random_orders(n, 2 * size + 3)
    list(run_orders(Engine(backend), seq, orders, Positions()))
    assert backend.sizes == [size, size, 3]
    assert backend.runs == 1                       # the reference, once
    # a long text on a wide model: fewer orders at once, each chunk within the budget
    wide = BuiltinBackend(ModelConfig(layers=12, heads=8, d_model=256))
    long_size = batch_size(wide, 512)
    assert long_size < size
    assert long_size * wide.batch_bytes(512) <= runs.BATCH_BYTES \
        or long_size == 1


def test_a_stop_inside_a_chunk_of_metrics_cancels():
    backend = Spy(ModelConfig(layers=3, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    engine = Engine(backend)
    engine.reference(seq, Positions())
    asked = []

    def should_stop():                    # True from the second block of the forward on
        asked.append(1)
        return len(asked) > 2
    with pytest.raises(Cancelled):
        list(run_orders(engine, seq, random_orders(len(seq), 8), Positions(),
                        should_stop=should_stop, batch=8))
    assert backend.sizes == [8]


def test_a_backend_that_runs_no_batches_measures_one_order_at_a_time():
    import dataclasses
    backend = Spy(ModelConfig(layers=1, heads=2, d_model=8))
    backend.capabilities = dataclasses.replace(backend.capabilities, batched=False)
    seq = backend.tokenize(TEXT)
    assert batch_size(backend, 10) == 1
    assert len(list(run_orders(Engine(backend), seq, random_orders(len(seq), 3),
                               Positions()))) == 3
    assert backend.sizes == [] and backend.runs == 4


def test_bad_orders_in_a_chunk_are_refused_in_one_line():
    from posviz.errors import PosvizInputError
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(TEXT)
    n = len(seq)
    for bad, words in (([0] * n, "not a permutation"), (list(range(n - 1)), "entries")):
        orders = random_orders(n, 3) + [np.array(bad)]
        with pytest.raises(PosvizInputError, match=words) as caught:
            list(run_orders(Engine(backend), seq, orders, Positions()))
        assert "\n" not in str(caught.value)


# -- Hugging Face models ---------------------------------------------------------------
hf_families = pytest.importorskip("test_hf_families")
from test_hf import load_tiny, shuffled_movable  # noqa: E402
from test_hf_families import TYPES, folders  # noqa: E402,F401  (a fixture)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Tiny random BERT, GPT-2 and Llama models, loaded the way a real one is."""
    return load_tiny(("bert", "gpt2", "llama"), tmp_path_factory.mktemp("tiny"))


def assert_hf_metrics(backend, text, positions=Positions()):
    seq = backend.tokenize(text)
    orders = np.stack([shuffled_movable(seq, seed) for seed in range(4)])
    reference = Engine(backend).reference(seq, positions)
    got = compare_batch(backend, seq, orders, positions.ids(orders), reference)
    for comparison, want in zip(got, single_comparisons(backend, seq, orders, positions)):
        assert_same_metrics(comparison, want, dict(rtol=1e-4, atol=1e-6))


@pytest.mark.parametrize("family", ["bert", "gpt2", "llama"])
def test_compare_batch_equals_compare_on_tiny_hf_models(tiny, family):
    assert_hf_metrics(tiny[family], "the cat sat on the mat because it was warm")
    if family != "llama":            # positions carried by the tokens, from an offset
        assert_hf_metrics(tiny[family], "a dog was playing in the park",
                          Positions("token", 3))


@pytest.fixture(scope="module")
def family_backends(folders):  # noqa: F811
    from posviz.models import hf
    return {t: hf.load_backend(str(folders / t)) for t in TYPES}


@pytest.mark.parametrize("model_type", TYPES)
def test_compare_batch_equals_compare_on_every_family(family_backends, model_type):
    assert_hf_metrics(family_backends[model_type], hf_families.TEXT)
