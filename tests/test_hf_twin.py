"""A twin of a Hugging Face backend: its own modules on the same weights, so an
experiment runs beside the window's evaluations without loading the model again and
without either thread's hooks recording the other's forwards."""
from __future__ import annotations

import os
import threading

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

pytest.importorskip("transformers")

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.models.config import Positions  # noqa: E402
from posviz.models.request import Request  # noqa: E402

TEXT = "the cat sat on the mat because it was warm and the dog ran"


@pytest.fixture(scope="module")
def backends(tmp_path_factory):
    from test_hf import load_tiny
    return load_tiny(("bert", "gpt2"), tmp_path_factory.mktemp("twins"))


def hooks_on(model) -> int:
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in model.modules())


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_twin_shares_every_weight_and_runs_as_the_backend_does(backends, family):
    backend = backends[family]
    twin = backend.twin()
    assert twin.model is not backend.model and twin.base is not backend.base
    for ours, theirs in ((backend.model.parameters(), twin.model.parameters()),
                         (backend.model.buffers(), twin.model.buffers())):
        ours, theirs = list(ours), list(theirs)
        assert len(ours) == len(theirs)
        assert all(a.data_ptr() == b.data_ptr() for a, b in zip(ours, theirs))
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))[::-1].copy()
    order[[0, -1]] = [0, len(seq) - 1]                       # keep the framing tokens
    a = backend.run(seq, Request(order, np.arange(len(seq))))
    b = twin.run(twin.tokenize(TEXT), Request(order, np.arange(len(seq))))
    np.testing.assert_array_equal(a.hidden, b.hidden)
    np.testing.assert_array_equal(a.attention, b.attention)


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_a_backend_and_its_twin_evaluate_side_by_side_without_mixing(backends, family):
    backend = backends[family]
    twin = backend.twin()
    seq = backend.tokenize(TEXT)
    n = len(seq)
    rng = np.random.default_rng(0)
    orders = [np.concatenate([[0], 1 + rng.permutation(n - 2), [n - 1]]) for _ in range(6)]
    positions = Positions()

    def evaluate(which, results):
        engine = Engine(which)            # gpt2: prefix reuse, with its own pre-hook
        for order in orders:
            results.append(engine.evaluate(seq, order, positions).comparison)

    alone = []
    evaluate(backend, alone)
    together = {"backend": [], "twin": []}
    threads = [threading.Thread(target=evaluate, args=(which, together[name]))
               for name, which in (("backend", backend), ("twin", twin))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive(), "the two forwards wait for each other"
    for name in together:
        assert len(together[name]) == len(orders)
        for single, side_by_side in zip(alone, together[name]):
            np.testing.assert_allclose(side_by_side.hidden_equivariance,
                                       single.hidden_equivariance, rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(side_by_side.attention_aligned,
                                       single.attention_aligned, rtol=1e-5, atol=1e-7)


def test_a_twin_made_during_a_forward_waits_for_it_and_carries_none_of_its_hooks(backends):
    backend = backends["bert"]
    seq = backend.tokenize(TEXT)
    inside, release = threading.Event(), threading.Event()

    def should_stop():                   # asked inside the forward, with its hooks on
        inside.set()
        release.wait(30)
        return False

    forward = threading.Thread(target=backend.run,
                               args=(seq, Request.original(np.arange(len(seq))),
                                     should_stop))
    forward.start()
    assert inside.wait(30) and hooks_on(backend.model) > 0
    made = []
    maker = threading.Thread(target=lambda: made.append(backend.twin()))
    maker.start()
    maker.join(0.5)                      # it may not copy the modules while hooks are on
    assert not made
    release.set()
    forward.join(30)
    maker.join(30)
    assert len(made) == 1 and hooks_on(made[0].model) == 0 and hooks_on(backend.model) == 0


def test_an_experiment_on_a_loaded_model_runs_a_twin_and_loads_nothing(backends, monkeypatch):
    from posviz.document.spec import ModelSpec
    from posviz.models import hf
    from posviz.runtime.experiments import ExperimentJob, run_experiment

    def no_load(*args, **kwargs):
        raise AssertionError("the model was loaded again")
    monkeypatch.setattr(hf, "load_backend", no_load)
    backend = backends["bert"]
    job = ExperimentJob("sweep", spec=ModelSpec.pretrained(backend.path), texts=(TEXT,),
                        kind="swap", backend=backend)
    result = run_experiment(job)
    from posviz.analysis.experiments.sweep import sweep
    direct = sweep(Engine(backend), (TEXT,), "swap")
    assert result.runs == direct.runs > 0
    for name, band in direct.bands.items():
        np.testing.assert_allclose(result.bands[name].median, band.median, rtol=1e-5)
