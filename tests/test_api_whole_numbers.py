"""A whole-number argument that is not one (2.5, "3", True) is refused in the API with
the meaning the command line gives its flag ("--folds must be a whole number (got
'2.5')"): "folds must be a whole number (got 2.5)", not "at least 2" or "from 0 to 4"
(a user's run: the same input, two different reasons), and in the argument's
own name (``model_seed``, not the model's ``seed``)."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError

TEXT = "the cat sat on the mat"
MODEL = []


def loaded():
    if not MODEL:
        MODEL.append(posviz.load(layers=2, progress=False))
    return MODEL[0]


# name: (the API's call with the value, the command's argv with it as text)
CALLS = {
    "folds": (lambda v: posviz.probe(folds=v), lambda v: ["probe", "--folds", v]),
    "layer": (lambda v: posviz.sweep(TEXT, kind="swap", layer=v),
              lambda v: ["sweep", "--text", TEXT, "--kind", "swap", "--layer", v]),
    "width": (lambda v: loaded().compare(TEXT).figure("symmetry").save("x.png", width=v),
              lambda v: ["export", "--text", TEXT, "--out", "x", "--width", v]),
    "dpi": (lambda v: loaded().compare(TEXT).figure("symmetry").save("x.png", dpi=v),
            lambda v: ["export", "--text", TEXT, "--out", "x", "--dpi", v]),
    "head": (lambda v: loaded().compare(TEXT).figure("attention", head=v),
             lambda v: ["export", "--text", TEXT, "--out", "x", "--head", v]),
}


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize("value", [2.5, "3", True])
def test_a_whole_number_argument_that_is_not_one_says_so_on_both_sides(
        name, value, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    call, argv = CALLS[name]
    with pytest.raises(PosvizInputError) as refused:
        call(value)
    assert str(refused.value) == f"{name} must be a whole number (got {value!r})"
    if value != "3" and value is not True:           # "3" is one on the command line
        assert main(argv(str(value))) == 2
        assert capsys.readouterr().err == (f"posviz: error: --{name} must be a whole "
                                           f"number (got '{value}')\n")


def test_attention_and_hidden_layers_and_the_model_seed_are_named_as_given():
    report = loaded().compare(TEXT)
    for call, said in ((lambda: report.attention(layer=1.0, head=0), "layer"),
                       (lambda: report.attention(layer=1, head="0"), "head"),
                       (lambda: report.hidden(layer=True), "layer")):
        with pytest.raises(PosvizInputError, match=f"^{said} must be a whole number"):
            call()
    with pytest.raises(PosvizInputError, match=r"^model_seed must be a whole number "
                                               r"from 0 to \d+ \(got 2.5\)"):
        posviz.sweep(TEXT, model_seed=2.5)


def test_a_none_layer_or_head_of_a_report_is_refused_in_one_line():
    report = loaded().compare(TEXT)
    for call, said in ((lambda: report.hidden(None), "layer"),
                       (lambda: report.attention(None, 0), "layer"),
                       (lambda: report.attention(1, None), "head")):
        with pytest.raises(PosvizInputError) as refused:
            call()
        assert str(refused.value) == f"{said} must be a whole number (got None)"
