"""The same input, the same class and the same words from Python and the command line:
``posviz.load(device="tpu")`` raised Refused[device] "'tpu' is not a
device" where ``--device tpu`` is a bad value ("--device must be one of …");
``Model.probe(seed=2)`` said "unknown option 'seed'" where ``posviz.probe(seed=1)``
explained why a probe takes no seed."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, Refused

TEXTS = ["the cat sat on the mat", "a dog ran in the park"]


@pytest.mark.parametrize("call", [lambda: posviz.load(device="tpu"),
                                  lambda: posviz.load("minilm", device="tpu"),
                                  lambda: posviz.probe(TEXTS, folds=2, device="tpu")])
def test_a_device_that_is_not_one_is_a_bad_value_named_as_the_cli_names_it(call, capsys):
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert not isinstance(raised.value, Refused), type(raised.value)
    said = "device must be one of auto, cpu, cuda, mps (got 'tpu')"
    assert str(raised.value) == said
    assert main(["report", "--device", "tpu"]) == 2
    assert capsys.readouterr().err == f"posviz: error: --{said}\n"


def test_a_probe_s_seed_is_explained_from_a_loaded_model_as_from_posviz_probe():
    explained = "probe draws no orders, so it takes no seed: the built-in model's seed is "
    with pytest.raises(PosvizInputError) as given:
        posviz.probe(TEXTS, seed=1)
    with pytest.raises(PosvizInputError) as loaded:
        posviz.load(pe="none", layers=1).probe(TEXTS, seed=2)
    assert str(given.value).startswith(explained), given.value
    assert str(loaded.value).startswith(explained), loaded.value
    assert "unknown option" not in str(loaded.value)
    with pytest.raises(PosvizInputError, match="unknown option 'colour' of Model.probe "
                       r"\(it takes texts, features, folds, positions, offset, literal, "
                       r"progress\)"):
        posviz.load(pe="none", layers=1).probe(TEXTS, colour=1)
