"""A long real-model report tells its steps on stderr even when stderr is a log or a
pipe, and bad input still gives exactly one line there."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from posviz.cli import main

pytest.importorskip("transformers")
from test_hf import save_tiny  # noqa: E402

STEPS = ["reading config", "loading tokenizer", "loading weights"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "bert"
    save_tiny("bert", folder)
    return folder


def test_a_real_models_steps_reach_a_piped_stderr(bert, capsys):
    """Run as a user would with ``2> log``: stderr is a pipe, not a terminal (a process
    of its own); --quiet in this process, where stderr is not a terminal either."""
    args = ["report", "--model", str(bert), "--text", "the dog plays", "--json"]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    told = subprocess.run([sys.executable, "-m", "posviz", *args], capture_output=True,
                          text=True, timeout=180, env=env)
    assert told.returncode == 0, told.stderr
    assert main([*args, "--quiet"]) == 0
    quiet = capsys.readouterr()
    lines = told.stderr.splitlines()
    assert all(line.startswith("posviz: ") for line in lines), lines
    steps = [line.removeprefix("posviz: ") for line in lines]
    assert steps[:3] == STEPS
    assert steps[-2:] == ["running the original order", "running the chosen order"]
    assert quiet.err == ""                                 # --quiet: results only
    assert json.loads(told.stdout) == json.loads(quiet.out)


@pytest.mark.parametrize("make, said", [
    (lambda root: root / "absent", "no model folder"),
    (lambda root: root, "no config.json"),
])
def test_a_model_that_is_not_there_is_one_line_before_any_step(capsys, tmp_path, make, said):
    code = main(["report", "--model", str(make(tmp_path)), "--text", "a b"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and said in err, err
    assert "reading config" not in err


def test_the_built_in_model_keeps_a_pipe_silent(capsys):
    assert main(["report", "--layers", "1", "--heads", "1", "--d-model", "8",
                 "--text", "a b", "--json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("order, said", [("0,1,1", "1 repeats"), ("0,x,1", "'x' is not"),
                                         ("-1,0,1", "-1 is out of range")])
def test_an_order_no_text_can_take_is_refused_before_the_model_loads(capsys, bert, order,
                                                                      said):
    code = main(["report", "--model", str(bert), "--text", "the dog plays",
                 "--order", order])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "the order must be a permutation" in err and said in err


def test_an_order_that_does_not_fit_the_tokens_ends_the_steps_with_one_error(capsys, bert):
    """Whether an order fits is known once the tokenizer has read the text: the steps
    told until then stay, and the last line, the only one not a step, says why."""
    code = main(["report", "--model", str(bert), "--text", "the dog plays",
                 "--order", "1,0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert [line for line in err if "error" in line] == err[-1:]
    assert "entries but there are" in err[-1]
    assert [line.removeprefix("posviz: ") for line in err[:3]] == STEPS
