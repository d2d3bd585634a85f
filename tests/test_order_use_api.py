"""`posviz order-use` and posviz.order_use: the same numbers, the same provenance, and
bad input refused in one line naming the arguments of the entry point used."""
from __future__ import annotations

import json
import re

import pytest

import posviz
from posviz.errors import PosvizInputError, Refused
from posviz.models.training.checkpoint import zoo
from test_training import cli

pytestmark = pytest.mark.skipif(not zoo(), reason="the trained checkpoints are not installed")


def test_the_api_is_the_command_and_a_trained_rope_model_uses_order():
    status, out, err = cli("order-use", "--pe", "rope", "--windows", "25", "--json")
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
    status, _, err = cli("order-use", "--weights", "random", "--pe", "rope")
    assert status == 2 and len(err.strip().splitlines()) == 1 and "--weights trained" in err
    status, _, err = cli("order-use", "--weights", "trained", "--pe", "rope", "--windows",
                         "0")
    assert status == 2 and "--windows must be at least 1" in err
    with pytest.raises(PosvizInputError, match=r"^windows must be at least 1"):
        posviz.order_use(pe="rope", windows=0)
    with pytest.raises(PosvizInputError, match=r"give weights trained \(with pe\)"):
        posviz.order_use(pe="rope", weights="random")
    status, _, err = cli("order-use", "--model", "minilm", "--weights", "trained")
    assert status == 2 and "--weights only applies to the built-in model, not to --model " \
        "minilm" in err
    with pytest.raises(PosvizInputError, match=r"^weights only applies to the built-in "
                                               r"model, not to model='minilm'"):
        posviz.order_use("minilm", weights="trained")
    assert "order_use" in dir(posviz)


def test_more_windows_than_the_held_out_text_makes_are_refused_not_capped():
    status, _, err = cli("order-use", "--pe", "rope", "--windows", "100000")
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    said = re.search(r"--windows 100000 asks for more windows than exist: the "
                     r"held-out text's [\d,]+ tokens make ([\d,]+) windows of 128 slots "
                     r"\(give at most \1, or a shorter --length\)", err)
    assert said and 100 < int(said[1].replace(",", "")) < 100000
    with pytest.raises(Refused, match=rf"^windows=100000 asks .* make {said[1]} windows "
                                      rf"of 128 slots \(give at most {said[1]}, or a "
                                      rf"shorter length\)") as refused:
        posviz.order_use(pe="rope", windows=100000)
    assert refused.value.reason == "count"
    # the default, at most 400, says so when the text makes fewer
    status, out, err = cli("order-use", "--pe", "rope", "--length", "600")
    fewer = re.search(r"over (\d+) held-out windows of 600 slots .*, all the held-out text "
                      r"makes$", out, re.M)
    assert status == 0 and fewer and int(fewer[1]) < 400, err


@pytest.mark.parametrize("given, named", [
    (["--positions", "token", "--offset", "3", "--literal"], "--positions, --offset, --literal do"),
    (["--text-file", "FILE"], "--text-file does"), (["--order", "1,0"], "--order does")])
def test_options_of_a_text_s_run_are_refused_not_ignored(given, named, tmp_path):
    """--positions token --offset 3 --literal ran and printed what a run without them
    prints: order-use reads no text, so nothing read them."""
    (tmp_path / "text.txt").write_text("a b c", "utf-8")
    given = [str(tmp_path / "text.txt") if word == "FILE" else word for word in given]
    status, out, err = cli("order-use", "--pe", "none", "--windows", "2", *given)
    assert status == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert f"{named} not apply to order-use" in err


def test_the_text_is_made_by_what_the_json_records_with_the_seed_of_its_shuffles():
    status, out, err = cli("order-use", "--pe", "none", "--windows", "2", "--json")
    assert status == 0, err
    printed = json.loads(out)
    from posviz.document.provenance import made_by
    used = posviz.order_use(pe="none", windows=2)
    assert printed["provenance"]["seeds"] == {"shuffles": used.result.seed}
    status, out, err = cli("order-use", "--pe", "none", "--windows", "2")
    assert status == 0, err
    assert out.splitlines()[0] == made_by(printed["provenance"])
    assert "seeds shuffles=" in out.splitlines()[0]


def test_order_use_takes_progress_as_every_call_does(capsys):
    """``progress``: a callable told each pass over the windows (the whole run's count),
    True its lines on stderr, False nothing, anything else refused before a model."""
    told = []
    counted = posviz.order_use(pe="rope", windows=3,
                               progress=lambda done, total: told.append((done, total)))
    assert told and told[-1][0] == told[-1][1] and [d for d, _ in told] == sorted(
        d for d, _ in told)
    capsys.readouterr()
    posviz.order_use(pe="rope", windows=3, progress=True)
    assert "pass" in capsys.readouterr().err
    quiet = posviz.order_use(pe="rope", windows=3, progress=False)
    assert capsys.readouterr().err == "" and quiet.to_dict() == counted.to_dict()
    with pytest.raises(PosvizInputError, match=r"^progress must be True, False, None"):
        posviz.order_use(pe="rope", progress="yes")
