"""A layer or head given where nothing chooses one is refused, never ignored: ``sweep
--kind random --layer 3`` ran every layer's bands and wrote no layer, and
``report.figure("symmetry", layer=3)`` drew every layer; the command line in one line
(status 2), the API with a PosvizInputError, both through the guard's check_chosen,
each naming what is drawn instead."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main, make_parser
from posviz.errors import PosvizInputError

TEXT = "the cat sat on the mat"
# Each command whose parser takes --layer or --head, and what the option chooses there:
# export's figures of one layer and head (it draws them all, so both are used); a
# sweep's swap map (its other kinds measure every layer)
USES = {"export": {"--layer": "always", "--head": "always"},
        "sweep": {"--layer": "--kind swap"}}
SWEEP_KINDS = ("random", "prefix", "reverse", "all")


def test_every_command_taking_a_layer_or_head_is_listed_here():
    """A new command with --layer or --head joins USES (and a test of its refusal)."""
    commands = make_parser()._subparsers._group_actions[0].choices
    taking = {name: {flag for action in parser._actions for flag in action.option_strings
                     if flag in ("--layer", "--head")}
              for name, parser in commands.items()}
    assert {name: flags for name, flags in taking.items() if flags} == \
        {name: set(uses) for name, uses in USES.items()}


@pytest.mark.parametrize("kind", SWEEP_KINDS)
def test_a_sweep_of_every_layer_refuses_a_layer(kind, capsys):
    assert main(["sweep", "--text", TEXT, "--kind", kind, "--layer", "2", "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (f"posviz: error: --layer 2 does not apply to --kind {kind}, "
                            f"which measures every layer (a layer chooses the map of "
                            f"--kind swap)\n")
    for call in (lambda: posviz.sweep(TEXT, kind=kind, layer=2),
                 lambda: posviz.load().sweep(TEXT, kind=kind, layer=2)):
        with pytest.raises(PosvizInputError) as raised:
            call()
        assert str(raised.value) == (f"layer=2 does not apply to kind={kind!r}, which "
                                     f"measures every layer (a layer chooses the map of "
                                     f"kind='swap')")


def test_a_swap_sweep_takes_its_layer(capsys):
    assert main(["sweep", "--text", TEXT, "--kind", "swap", "--layer", "2", "--json"]) == 0
    assert '"layer": 2' in capsys.readouterr().out
    assert posviz.sweep(TEXT, kind="swap", layer=2).pairs[0].layer == 2


@pytest.fixture(scope="module")
def report():
    pytest.importorskip("PySide6")
    return posviz.load(layers=2).compare(TEXT)


def figure_cases():
    """(figure, option): every figure's options it never draws, read off its class."""
    from posviz.gui.plots.figures import FIGURE_TYPES
    return [(name, option) for name, figure in FIGURE_TYPES.items()
            for option in ("layer", "head")
            if option not in figure.selects + getattr(figure, "may_select", ())]


@pytest.mark.parametrize("name, option", figure_cases())
def test_a_figure_refuses_a_layer_or_head_it_does_not_draw(name, option, report,
                                                           monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    from posviz.gui.plots.figures import FIGURE_TYPES
    with pytest.raises(PosvizInputError) as raised:
        report.figure(name, **{option: 1})
    said = str(raised.value)
    drawn = "every" if option in FIGURE_TYPES[name].dims else "no"
    assert said.startswith(f"{option}=1 does not apply to the {name} figure, which draws "
                           f"{drawn} {option} ({option} chooses the {option} of the "), said
    assert "attention" in said                  # where the option does choose
    assert "\n" not in said


def test_the_figures_that_draw_one_layer_or_head_take_it(report, monkeypatch):
    monkeypatch.setenv("QT_QPA_PLATFORM", "offscreen")
    assert figure_cases()                       # the symmetry figure, at least
    assert ("symmetry", "layer") in figure_cases()
    attention = report.figure("attention", layer=2, head=1)
    assert (attention.layer, attention.head) == (2, 1)
    assert report.figure("token_change", layer=2).layer == 2
    # the similarity figure draws a head for a real model's per-head bias only: the
    # built-in sinusoidal model's is refused (it drew the same, and named head 1)
    with pytest.raises(PosvizInputError, match="head=1 does not apply to the "
                       "encoding_similarity figure"):
        report.figure("encoding_similarity", head=1)


def test_the_similarity_figure_takes_a_head_where_the_model_biases_each_head():
    from types import SimpleNamespace

    from posviz.gui.plots.positions import per_head
    assert per_head(SimpleNamespace(pair_rows=("head 0", "head 1")))      # ALiBi, T5
    assert not per_head(SimpleNamespace(pair_rows=("all heads",)))       # absolute
    assert not per_head(None)


@pytest.mark.parametrize("result", ["sweep", "probe", "comparison"])
def test_an_experiments_figure_takes_no_layer(result):
    """An experiment's figure draws every layer: ``layer`` is not among its arguments."""
    made = {"sweep": lambda: posviz.sweep(TEXT, count=2, layers=1),
            "probe": lambda: posviz.probe(layers=1, d_model=16, heads=2),
            "comparison": lambda: posviz.compare_encodings(TEXT, encodings="none,rope",
                                                          layers=1)}[result]()
    with pytest.raises(PosvizInputError, match="unknown option 'layer'"):
        made.figure(layer=1)


@pytest.mark.parametrize("command", ["report", "probe", "paper", "compare", "extend"])
@pytest.mark.parametrize("flag", ["--layer", "--head"])
def test_a_command_of_no_one_layer_takes_no_layer_flag(command, flag, capsys):
    """The commands USES leaves out refuse the flag as unknown, before anything runs:
    argparse read ``report --layer 1`` as ``--layers 1`` (its abbreviation) and ran a
    model of one layer."""
    assert main([command, flag, "1"]) == 2
    assert capsys.readouterr().err == (f"posviz: error: unknown option {flag} of posviz "
                                       f"{command} (posviz {command} -h lists what it "
                                       f"takes)\n")


@pytest.mark.parametrize("call", ["probe", "paper", "compare_encodings", "train", "extend",
                                  "order_use", "load"])
def test_a_function_of_no_one_layer_takes_no_layer(call):
    with pytest.raises(PosvizInputError, match=f"unknown option 'layer' of posviz.{call}"):
        getattr(posviz, call)(layer=1)
