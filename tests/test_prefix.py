"""Causal prefix reuse on the built-in model: a reorder computed from its first moved
slot on, the earlier slots taken from the reference run, equals a full recomputation."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from posviz.analysis.engine import Engine
from posviz.analysis.floor import shift_invariant
from posviz.analysis.prefix import first_moved
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.trace import Trace

TEXT = " ".join("the cat sat on a mat because it was warm and the dog ran home".split() * 2)
TOL = 1e-5
FIELDS = ("embeddings", "encodings", "hidden", "attention", "scores", "attn_out", "mlp_out")


def assert_traces_close(fast: Trace, slow: Trace, tol: float = TOL) -> None:
    assert fast.tokens == slow.tokens
    np.testing.assert_array_equal(fast.position_ids, slow.position_ids)
    for name in FIELDS:
        a, b = getattr(fast, name), getattr(slow, name)
        assert (a is None) == (b is None), name
        if a is not None:
            assert a.shape == b.shape and a.dtype == b.dtype, name
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)


def moved_late(n: int, seed: int) -> np.ndarray:
    """A chip moved within the last quarter (what a drag near the end does)."""
    rng = np.random.default_rng(seed)
    src, dst = rng.choice(np.arange(3 * n // 4, n), size=2, replace=False)
    order = list(range(n))
    order.insert(int(dst), order.pop(int(src)))
    return np.asarray(order)


class Counting(BuiltinBackend):
    """The built-in backend, counting how many slots each call computed."""

    def __init__(self, config):
        super().__init__(config)
        self.slots = []

    def run(self, seq, request, should_stop=None):
        self.slots.append(request.n - request.start)
        return super().run(seq, request, should_stop)


def test_first_moved_is_the_first_slot_whose_token_or_position_changed():
    ids = np.arange(6)
    assert first_moved(np.arange(6), ids, ids) == 6
    assert first_moved(np.array([0, 1, 3, 2, 4, 5]), ids, ids) == 2
    assert first_moved(np.array([1, 0, 2, 3, 4, 5]), ids, ids) == 0
    shifted = ids.copy()
    shifted[4] += 1                  # same token, another position id: it moved too
    assert first_moved(np.arange(6), shifted, ids) == 4


@pytest.mark.parametrize("pe", ["none", "sinusoidal", "learned", "rope", "alibi", "t5"])
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_a_suffix_run_equals_a_full_recomputation(pe, norm):
    config = ModelConfig(pe=pe, norm=norm, mask="causal", layers=3)
    fast_backend = Counting(config)
    seq = fast_backend.tokenize(TEXT)
    n = len(seq)
    fast, slow = Engine(fast_backend), Engine(BuiltinBackend(config), reuse_prefix=False)
    assert fast.reuse_prefix and not slow.reuse_prefix
    rng = np.random.default_rng(1)
    orders = [moved_late(n, seed) for seed in range(3)]
    orders += [np.r_[np.arange(5), 5 + rng.permutation(n - 5)], rng.permutation(n)]
    for positions in (Positions(), Positions(mode="token", offset=3)):
        for order in orders:
            a = fast.evaluate(seq, order, positions)
            b = slow.evaluate(seq, order, positions)
            assert_traces_close(a.permuted, b.permuted)
            for metric in ("hidden_equivariance", "attention_equivariance",
                           "last_token_change", "pooled_change", "token_change"):
                np.testing.assert_allclose(getattr(a.comparison, metric),
                                           getattr(b.comparison, metric),
                                           rtol=1e-4, atol=TOL, err_msg=metric)
    # the reference once per positions, then only the slots from the first moved one on
    start = first_moved(orders[0], Positions().ids(orders[0]), np.arange(n))
    floor = [n] if shift_invariant(fast_backend) else []   # the floor's shifted reference
    assert fast_backend.slots[:len(floor) + 2] == [n, *floor, n - start]
    assert n - start <= n // 4


def test_float64_suffix_equals_full_to_rounding():
    config = ModelConfig(pe="rope", mask="causal", dtype="float64")
    backend = BuiltinBackend(config)
    seq = backend.tokenize(TEXT)
    order = moved_late(len(seq), 7)
    fast = Engine(backend).evaluate(seq, order, Positions())
    slow = Engine(backend, reuse_prefix=False).evaluate(seq, order, Positions())
    assert_traces_close(fast.permuted, slow.permuted, tol=1e-12)


def test_a_bidirectional_model_always_runs_in_full():
    backend = Counting(ModelConfig(mask="bidirectional"))
    seq = backend.tokenize(TEXT)
    engine = Engine(backend)
    assert not engine.reuse_prefix
    engine.evaluate(seq, moved_late(len(seq), 0), Positions())
    assert backend.slots == [len(seq), len(seq)]
