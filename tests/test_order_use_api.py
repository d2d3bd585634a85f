"""`posviz order-use` and posviz.order_use: the same numbers, the same provenance, and
bad input refused in one line naming the arguments of the entry point used."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.errors import PosvizInputError
from posviz.models.training.checkpoint import zoo
from test_training import cli

pytestmark = pytest.mark.skipif(not zoo(), reason="the trained checkpoints are not installed")


def test_the_api_is_the_command_and_a_trained_rope_model_uses_order():
    status, out, err = cli("order-use", "--weights", "trained", "--pe", "rope",
                           "--windows", "25", "--json")
    assert status == 0, err
    printed = json.loads(out)
    made = posviz.order_use(pe="rope", windows=25)
    assert made.to_dict() == printed
    assert printed["provenance"]["encoding"] == "rope"
    assert printed["provenance"]["weights"] == "trained"
    assert printed["windows"] == 25 and printed["start_token"]
    # the shuffled context costs the model: its ratio is the recorded kind of number
    assert printed["ratio"] == pytest.approx(printed["shuffled"]["all_but_last"]
                                             / printed["original"]) and printed["ratio"] > 1.5


def test_bad_input_is_one_line_naming_the_entry_point_s_arguments():
    status, _, err = cli("order-use", "--pe", "rope")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--weights" in err
    status, _, err = cli("order-use", "--weights", "trained", "--pe", "rope", "--windows",
                         "0")
    assert status == 2 and "--windows must be at least 1" in err
    with pytest.raises(PosvizInputError, match=r"^windows must be at least 1"):
        posviz.order_use(pe="rope", windows=0)
    with pytest.raises(PosvizInputError, match=r"weights trained"):
        posviz.order_use(pe="rope", weights="random")
    assert "order_use" in dir(posviz)
