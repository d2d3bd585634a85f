"""`posviz report`: the same core, headless; bad input is one line and status 2."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from posviz.cli import main
from posviz.core.backend import BuiltinBackend
from posviz.core.config import ModelConfig, Positions
from posviz.core.engine import Engine

BASE = ["report", "--layers", "2", "--heads", "2", "--d-model", "16", "--seed", "3"]


def run(capsys, *args):
    code = main([*BASE, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_matches_the_core(capsys):
    code, out, err = run(capsys, "--pe", "rope", "--mask", "causal", "--text",
                         "the cat sat on the mat", "--order", "5,4,3,2,1,0", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) >= {"tokens", "order", "config", "layers"}
    assert data["tokens"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert data["order"] == [5, 4, 3, 2, 1, 0]
    assert data["config"]["pe"] == "rope" and data["config"]["mask"] == "causal"
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, seed=3, pe="rope",
                                         mask="causal"))
    expected = Engine(backend).evaluate(backend.tokenize("the cat sat on the mat"),
                                        [5, 4, 3, 2, 1, 0], Positions()).comparison.rows()
    assert [row["layer"] for row in data["layers"]] == [0, 1, 2]
    assert data["layers"][0]["attention_equivariance"] is None
    for got, want in zip(data["layers"], expected):
        for key in ("hidden_equivariance", "last_token_change", "pooled_change"):
            assert got[key] == pytest.approx(want[key])


def test_default_order_is_the_reverse(capsys):
    code, out, _ = run(capsys, "--text", "a b c d", "--json")
    assert json.loads(out)["order"] == [3, 2, 1, 0]


def test_table_report(capsys):
    code, out, _ = run(capsys, "--pe", "none", "--text", "a b c d", "--dtype", "float64")
    assert code == 0
    assert "hidden eq." in out and out.count("equivariant") >= 3


@pytest.mark.parametrize("args, message", [
    (["--text", "   "], "text is empty"),
    (["--text", "a b c", "--order", "0,1"], "has 2 entries but there are 3 tokens"),
    (["--text", "a b c", "--order", "0,0,1"], "not a permutation"),
    (["--text", "a b c", "--order", "x"], "whole numbers"),
    (["--heads", "3"], "do not divide"),
    (["--pe", "rope", "--heads", "16"], "even head width"),
    (["--pe", "learned", "--offset", "1020"], "positions"),
    (["--pe", "bogus"], "invalid choice"),
    (["--layers", "0"], "layers"),
    (["--offset", "-1"], "offset"),
    (["--frobnicate"], "unrecognized"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert "Traceback" not in err


def test_the_console_script_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "posviz", *BASE, "--text", "a b",
                             "--order", "1,0,5"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "posviz: error" in result.stderr
