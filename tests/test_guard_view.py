"""One guard for a layer and a head: ``export --model minilm --layer 7``
was refused only after the whole load (5.5 s, the weights read), though the model's
config (6 layers, 12 heads) is read first; now refused as the config is read, in the same
words as a figure's ``layer=`` from Python and the built-in model's --layer."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main

pytest.importorskip("transformers")
from test_hf import save_tiny  # noqa: E402


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    folder = tmp_path_factory.mktemp("view") / "bert"       # 3 layers, 4 heads
    save_tiny("bert", folder)
    return folder


@pytest.fixture
def no_weights(monkeypatch):
    from posviz.models.hf import loading

    def read_model(*args, **kwargs):
        raise AssertionError("the weights were read before the refusal")
    monkeypatch.setattr(loading, "read_model", read_model)


@pytest.mark.parametrize("flag, value, said", [
    ("--layer", "4", "--layer must be from 1 to 3 (got 4)"),
    ("--layer", "0", "--layer must be from 1 to 3 (got 0)"),
    ("--head", "4", "--head must be from 0 to 3 (got 4)")])
def test_export_refuses_a_layer_or_head_before_the_weights(flag, value, said, bert,
                                                           no_weights, tmp_path, capsys):
    assert main(["export", "--model", str(bert), "--offline", "--text", "the dog plays",
                 "--out", str(tmp_path / "out"), flag, value, "--quiet"]) == 2
    assert said in capsys.readouterr().err
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_the_built_in_model_and_a_figure_say_the_same(capsys, tmp_path):
    assert main(["export", "--layers", "2", "--text", "the dog plays", "--out",
                 str(tmp_path / "out"), "--layer", "3", "--quiet"]) == 2
    assert "--layer must be from 1 to 2 (got 3)" in capsys.readouterr().err
    report = posviz.load(pe="none", layers=2, heads=2).compare("the dog plays")
    with pytest.raises(posviz.errors.PosvizInputError, match=r"layer must be from 1 to 2 \(got 3\)"):
        report.figure("attention", layer=3)
    with pytest.raises(posviz.errors.PosvizInputError, match=r"head must be from 0 to 1 \(got 2\)"):
        report.attention(1, 2)


def test_a_sweep_s_layer_is_refused_before_the_weights_too(bert, no_weights, capsys):
    """A sweep's layer counts from 0 (the embeddings) to L."""
    assert main(["sweep", "--model", str(bert), "--offline", "--text", "the dog plays",
                 "--kind", "swap", "--layer", "4", "--quiet"]) == 2
    assert "--layer must be from 0 to 3 (got 4)" in capsys.readouterr().err
    with pytest.raises(posviz.errors.PosvizInputError,
                       match=r"layer must be from 0 to 3 \(got 4\)"):
        posviz.sweep(["the dog plays"], model=str(bert), kind="swap", layer=4)
