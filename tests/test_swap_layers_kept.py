"""A swap sweep keeps its map at every layer ((L+1)·n² float64 a text) only for the
window's layer chooser: the command line and the API keep the one layer they report,
and the guard counts the every-layer maps when they are kept (about 104 MB a text of
1,000 tokens on 12 layers)."""
from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.analysis.engine import Engine
from posviz.analysis.experiments import sweep as sweeps
from posviz.cli import main
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig
from posviz.models.limits import guard

TEXT = "the cat sat on the mat"


def kept_layers(monkeypatch) -> list:
    """The ``layers`` of every SwapMap the sweep makes from now on."""
    made, real = [], sweeps.SwapMap

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]
    monkeypatch.setattr(sweeps, "SwapMap", spy)
    return made


def test_the_api_and_the_command_line_keep_one_layer_of_a_swap_map(
        monkeypatch, tmp_path, capsys):
    made = kept_layers(monkeypatch)
    result = posviz.sweep(TEXT, kind="swap", progress=False)
    assert result.result.pairs[0].layers is None
    assert main(["sweep", "--text", TEXT, "--kind", "swap", "--json"]) == 0
    capsys.readouterr()
    assert len(made) == 2 and all(m.layers is None for m in made)


def test_the_window_s_sweep_keeps_every_layer_and_each_is_that_layer_s_map():
    engine = Engine(BuiltinBackend(ModelConfig(layers=2)))
    pairs = sweeps.sweep(engine, [TEXT], "swap", every_layer=True).pairs[0]
    assert pairs.layers.shape == (3, len(pairs.tokens), len(pairs.tokens))
    for layer in range(3):
        one = sweeps.sweep(engine, [TEXT], "swap", layer=layer).pairs[0]
        assert np.allclose(pairs.at(layer).change, one.change)


def test_the_guard_counts_the_every_layer_maps_when_they_are_kept():
    one = guard.Orders("swap", 1, 1000)
    every = guard.Orders("swap", 1, 1000, every_layer=True)
    assert every.kept(12, 1000) - one.kept(12, 1000) == 8 * 13 * 1000 * 1000
    backend = BuiltinBackend(ModelConfig(layers=2))
    seqs = [backend.tokenize(TEXT)]
    asked = []
    real = guard.check

    def spy(*args, orders=None, **kwargs):
        asked.append(orders)
        return real(*args, orders=orders, **kwargs)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(guard, "check", spy)
        guard.check_sweep(backend, seqs, "swap", 1, every_layer=True)
        guard.check_sweep(backend, seqs, "swap", 1)
    assert [o.every_layer for o in asked] == [True, False]
