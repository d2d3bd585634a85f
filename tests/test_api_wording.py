"""Every refusal the Python API raises speaks Python: it names the argument as a caller
writes it (``order``, ``encodings``, ``lr``, ``model_seed``…), never a command-line flag
("--order") nor the command line's form of a value ("separated by commas" alone); the
same refusal on the command line names the flag."""
from __future__ import annotations

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
    (["sweep", "--model", "minilm", "--model-seed", "3"],
     "--model-seed only applies to the built-in model, not to --model minilm"),
])
def test_the_command_line_names_its_flags(argv, said, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("posviz: error: ") and said in err and err.count("\n") == 1, err
