"""The context-extension lab: RoPE's scalings against transformers' own, and the lab run
on tiny checkpoints trained alike (the shipped zoo's numbers are in test_zoo_order)."""
from __future__ import annotations

import functools
import json
import math
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch

from posviz.analysis.experiments import extension
from posviz.models.training.checkpoint import Recipe, variant, zoo
from posviz.models.config import ModelConfig
from posviz.models.encodings import RotaryEncoding
from posviz.models.encodings.rope_scaling import (SCALINGS, TRANSFORMERS_TYPES, RopeScaling,
                                                  inverse_frequencies)
from test_training import SAMPLE, cli

CONFIG = ModelConfig(layers=2, heads=2, d_model=32, mask="causal")
RECIPE = Recipe(corpus=str(SAMPLE), vocab=400, length=16, batch=8, steps=30, warmup=3)
KINDS = ("rope", "alibi", "t5", "none")


@functools.cache
def lab_folder() -> Path:
    """rope, alibi, t5 and none trained alike for 30 steps, and rope recalibrated
    without positions for 5 (drope), in a temporary folder."""
    from posviz.models.training.train import train
    root = Path(_folder.name)
    tokenizer = None
    for kind in KINDS:
        checkpoint, _ = train(CONFIG.replace(pe=kind), RECIPE, root / kind, tokenizer)
        tokenizer = checkpoint.path("tokenizer")
    train(CONFIG.replace(pe="none"), Recipe(**{**vars(RECIPE), "steps": 5,
                                              "init": str(root / "rope")}), root / "drope")
    return root


_folder = tempfile.TemporaryDirectory(prefix="posviz-lab-")


@pytest.mark.parametrize("method", sorted(TRANSFORMERS_TYPES))
@pytest.mark.parametrize("factor", [2.0, 8.0])
def test_scalings_give_transformers_frequencies_and_attention_factor(method, factor):
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    kind = TRANSFORMERS_TYPES[method]
    parameters = {"rope_type": kind, "factor": factor, "rope_theta": 10000.0}
    if kind == "yarn":
        parameters["original_max_position_embeddings"] = 128
    config = LlamaConfig(hidden_size=64, num_attention_heads=4,
                         max_position_embeddings=int(128 * factor),
                         rope_parameters=parameters)
    theirs, attention = ROPE_INIT_FUNCTIONS[kind](config, "cpu")
    ours, our_attention = RopeScaling(method, factor, 128).frequencies(16, 10000.0)
    np.testing.assert_allclose(ours.numpy(), theirs.double().numpy(), rtol=1e-6)
    assert our_attention == pytest.approx(attention, rel=1e-12)


def test_ntk_raises_the_base_by_the_factor_to_d_over_d_minus_2():
    inv_freq, attention = RopeScaling("ntk", 4.0, 128).frequencies(16, 10000.0)
    expected = inverse_frequencies(16, 10000.0 * 4.0 ** (16 / 14))
    assert torch.equal(inv_freq, expected) and attention == 1.0
    # the fastest pair keeps its frequency, the slowest is divided by the factor
    plain = inverse_frequencies(16, 10000.0)
    assert inv_freq[0] == plain[0] and inv_freq[-1] / plain[-1] == pytest.approx(
        1 / 4.0, rel=1e-12)


def test_at_factor_one_every_scaling_is_rope_and_pi_maps_positions_into_the_trained_range():
    plain = RotaryEncoding(16)
    positions = torch.arange(40)
    for method in SCALINGS:
        same = RotaryEncoding(16, scaling=RopeScaling(method, 1.0, 128))
        assert torch.equal(same.angles(positions), plain.angles(positions)), method
    pi = RotaryEncoding(16, scaling=RopeScaling("pi", 4.0, 128))
    assert torch.equal(pi.angles(4 * positions), plain.angles(positions))
    yarn = RotaryEncoding(16, scaling=RopeScaling("yarn", 4.0, 128))
    q = k = torch.ones(1, 5, 16, dtype=torch.float64)
    rq, rk = yarn.rotate(q, k, torch.arange(5))
    pq, pk = RotaryEncoding(16, scaling=RopeScaling("pi", 1.0, 128)).rotate(q, k,
                                                                         torch.arange(5))
    # YaRN's attention factor multiplies every score by its square at position 0
    assert (rq[0, 0] @ rk[0, 0]) / (pq[0, 0] @ pk[0, 0]) == pytest.approx(
        (0.1 * math.log(4.0) + 1) ** 2, rel=1e-12)


def test_distance_bins_double_and_cover_every_distance():
    bins = extension.distance_bins(100)
    assert bins[:4] == [(0, 0), (1, 1), (2, 3), (4, 7)] and bins[-1] == (64, 99)
    covered = [d for low, high in bins for d in range(low, high + 1)]
    assert covered == list(range(100))


def test_retrieval_is_zero_for_a_model_that_reads_only_the_last_token():
    class LastTokenOnly:
        def hidden(self, ids):                        # (B, n) -> (B, n, V) one-hot
            return torch.nn.functional.one_hot(ids, 50).double()

        def logits(self, hidden):
            return hidden * 3.0
    ids = np.random.default_rng(0).integers(1, 50, 2000)
    assert extension.retrieval(LastTokenOnly(), ids, 32, 0) == (0.0, 0.0)


@pytest.fixture(scope="module")
def lab():
    folder = lab_folder()
    return folder, extension.extend(str(folder), (1, 2)).to_dict()


def test_the_lab_measures_every_method_at_every_length(lab):
    folder, result = lab
    assert result["train_length"] == 16 and result["lengths"] == [16, 32]
    assert result["seed"] == CONFIG.seed                # the figures' titles name it
    assert set(result["methods"]) == {"rope", "pi", "ntk", "yarn", "drope", "alibi", "t5",
                                      "none"}
    for name, row in result["methods"].items():
        for measure in ("perplexity", "retrieval", "retrieval_se", "copy", "attention"):
            assert set(row[measure]) == {"16", "32"}, (name, measure)
        assert all(1 < p < 400 for p in row["perplexity"].values())
        for n, mass in row["attention"].items():      # every query's weights, binned
            assert sum(mass) == pytest.approx(1.0, abs=1e-6), (name, n)
            assert len(mass) == len([b for b in extension.distance_bins(32) if b[0] < int(n)])
    rope, drope = result["methods"]["rope"], result["methods"]["drope"]
    for method in ("pi", "ntk", "yarn"):            # at the training length: RoPE itself
        assert result["methods"][method]["perplexity"]["16"] == rope["perplexity"]["16"]
    assert result["methods"]["pi"]["perplexity"]["32"] != rope["perplexity"]["32"]
    assert drope["checkpoint"] == "drope" and drope["perplexity"] != rope["perplexity"]


def test_the_lab_says_it_ran_on_exactly_the_checkpoints_its_methods_read(lab):
    """The lab's export caption listed learned and sinusoidal, which no method reads."""
    _, result = lab
    named = result["ran_on"].split("(", 1)[1].split(")", 1)[0].split(", ")
    assert named == sorted({row["checkpoint"] for row in result["methods"].values()})
    assert "learned" not in named and "sinusoidal" not in named


def test_the_lab_tells_each_method_as_a_stage_its_longer_lengths_heavier(lab):
    said = []
    extension.extend(str(lab[0]), (1, 2), say=said.append)
    assert [(s.number, s.stages) for s in said] == [(k, 8) for k in range(1, 9)]
    steps = said[0].steps                  # each forward's: a batch of windows, a map
    assert len(steps) > 2 and steps[0] < max(steps)    # the longer length's heavier


def test_the_drope_checkpoint_is_a_variant_of_rope_not_one_of_the_zoo(lab):
    folder, _ = lab
    assert sorted(c.config.pe for c in zoo(folder)) == sorted(KINDS)
    drope = variant("drope", folder)
    assert drope is not None and drope.config.pe == "none"
    assert drope.recipe.init == str(folder / "rope")
    assert drope.record["steps"] == 5


def test_the_command_prints_the_lab_and_refuses_bad_factors(lab):
    folder, result = lab
    status, out, err = cli("extend", "--weights", str(folder), "--factors", "1,2",
                           "--json", "--quiet")
    assert status == 0, err
    assert json.loads(out)["methods"] == json.loads(json.dumps(result["methods"]))
    status, out, err = cli("extend", "--weights", str(folder), "--factors", "1,2")
    assert status == 0 and "held-out perplexity" in out and "yarn" in out
    for bad in ("2,1", "0,1", "a", "1,1000"):
        status, out, err = cli("extend", "--weights", str(folder), "--factors", bad)
        assert status == 2 and len(err.strip().splitlines()) == 1 and "--factors" in err


def test_the_api_returns_what_the_command_prints_and_names_its_arguments(lab):
    folder, result = lab
    import posviz
    from posviz.errors import PosvizInputError
    made = posviz.extend(str(folder), factors=(1, 2))
    printed = json.loads(cli("extend", "--weights", str(folder), "--factors", "1,2",
                             "--json", "--quiet")[1])
    assert made.to_dict() == printed and printed["provenance"]["weights"] == str(folder)
    assert {k: v for k, v in printed.items() if k != "provenance"} == json.loads(
        json.dumps(result))
    assert "extend" in dir(posviz) and made.metrics() == extension.FIGURES
    for bad in ((2, 1), (0, 1), (1, 1.5), ()):
        with pytest.raises(PosvizInputError, match=r"^factors must"):
            posviz.extend(str(folder), factors=bad)


def test_the_lab_answers_cancel_within_a_forward_not_a_length(monkeypatch):
    """A fake lab whose length runs ten forwards: Cancel, asked for after the third, is
    answered before the fourth (it was checked only between lengths, 15-60 s apart on a
    loaded machine), and no length is counted done."""
    from posviz.analysis.experiments import extension
    from posviz.errors import Cancelled
    from posviz.models.training import train
    forwards, counted = [], []

    class Model:
        def hidden(self, x):
            forwards.append(x)
            return x

        def logits(self, h):
            return h

    def perplexity(model, *args, **kw):
        for k in range(10):
            model.logits(model.hidden(k))
        return 1.0
    monkeypatch.setattr(extension, "_model", lambda *args: Model())
    monkeypatch.setattr(train, "perplexity", perplexity)
    monkeypatch.setattr(extension, "retrieval", lambda *args: (0.0, 0.0))
    monkeypatch.setattr(extension, "copying", lambda *args: 0.0)
    monkeypatch.setattr(extension, "attention_by_distance", lambda *args: [])
    with pytest.raises(Cancelled):
        extension.extend(should_stop=lambda: len(forwards) >= 3,
                         progress=lambda *done: counted.append(done))
    assert len(forwards) == 3 and [done for done, _ in counted] == [0, 1, 2, 3]


@pytest.mark.parametrize("weights, said", [
    ("random", "{}: the lab runs trained checkpoints only (trained or a folder of them)"),
    ("/nonexist", "{}: no such checkpoint folder")])
def test_weights_it_cannot_run_are_named_not_taken_for_missing_checkpoints(weights, said):
    """--weights random and a folder that does not exist were told the lab "needs trained
    checkpoints of alibi, drope, none, rope, t5", which ship."""
    import posviz
    from posviz.errors import PosvizInputError
    status, _, err = cli("extend", "--weights", weights)
    assert status == 2 and err.strip() == "posviz: error: " + said.format(f"--weights {weights}")
    with pytest.raises(PosvizInputError) as refused:
        posviz.extend(weights)
    assert str(refused.value) == said.format(f"weights={weights!r}")


def test_a_folder_without_the_checkpoints_is_refused_before_out_is_made(tmp_path):
    """extend --out DIR --weights EMPTY made DIR, then refused naming no argument."""
    import posviz
    from posviz.errors import PosvizInputError
    empty, out = tmp_path / "empty", tmp_path / "out"
    empty.mkdir()
    said = "{}: the context-extension lab needs trained checkpoints of alibi, drope, " \
           f"none, rope, t5 in {empty}"
    status, _, err = cli("extend", "--out", str(out), "--weights", str(empty))
    assert status == 2 and err.strip() == "posviz: error: " + said.format(f"--weights {empty}")
    assert not out.exists()
    with pytest.raises(PosvizInputError) as refused:
        posviz.extend(str(empty))
    assert str(refused.value) == said.format(f"weights={str(empty)!r}")
