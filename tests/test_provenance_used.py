"""What the provenance records is what the run used, and one record feeds every output:
config.seed of trained weights, pe_scale with nothing to scale, empty ``layer``/``head``
entries of a figure that selects none, MiniLM's ``head=null`` beside a figure's head, and
a MiniLM figure's options that were its Trace's extras, not the JSON's provenance."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.cli import main

TEXT = "the cat sat on the mat"


def report_json(capsys, *args) -> dict:
    assert main(["report", "--text", TEXT, *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_trained_weights_record_no_seed_in_the_config(capsys):
    data = report_json(capsys, "--weights", "trained", "--pe", "rope", "--mask", "causal")
    assert "seed" not in data["config"] and data["config"]["weights"] == "trained", data
    assert data["provenance"]["seeds"] == {}
    random = report_json(capsys, "--pe", "rope", "--seed", "3")
    assert random["config"]["seed"] == 3                     # random weights: their seed


@pytest.mark.parametrize("pe, scaled", [("none", False), ("alibi", True), ("rope", True)])
def test_the_position_scale_is_recorded_where_it_scales_something(pe, scaled, capsys):
    """NoPE adds nothing to scale; ALiBi scales its slopes, RoPE its angles."""
    options = report_json(capsys, "--pe", pe)["provenance"]["options"]
    assert ("pe_scale" in options) == scaled, options


@pytest.fixture(scope="module")
def reports():
    made = {"built-in": posviz.load(pe="none", progress=False).compare(TEXT)}
    try:
        made["minilm"] = posviz.load("minilm", progress=False).compare(TEXT)
    except posviz.errors.PosvizInputError:
        pass                                                  # not installed
    return made


@pytest.mark.parametrize("which", ["built-in", "minilm"])
def test_a_figure_records_the_json_provenance(which, reports):
    """One record of the run feeds the figure's metadata and the JSON."""
    if which not in reports:
        pytest.skip("MiniLM is not installed")
    report = reports[which]
    record = report.to_dict()["provenance"]
    for name in ("symmetry", "attention"):
        facts = report.figure(name).panel().provenance(name)
        read = {key: json.loads(facts[key]) if key in ("seeds", "options") else facts[key]
                for key in ("encoding", "mask", "weights", "seeds", "dtype", "options")}
        assert read == {key: record[key] for key in read}, (name, read, record)
    assert "pe_scale" not in record["options"]               # NoPE, or a pretrained model
    if which == "minilm":             # its LM head, named apart from a figure's head
        assert "head" not in record["options"] and record["options"]["lm_head"] is None
        model = report.figure("attention").panel().provenance("attention")["model"]
        assert "lm_head=null" in model and "head=null" not in model.replace("lm_head", "")


@pytest.mark.parametrize("name, selects", [("symmetry", ()), ("outputs", ()),
                                           ("encoding_similarity", ()),
                                           ("relative_profile", ()),
                                           ("attention", ("layer", "head")),
                                           ("token_change", ("layer",))])
def test_a_figure_says_only_the_layer_and_head_it_selects(name, selects, reports):
    """A figure that selects no layer or head carried empty entries for them."""
    facts = reports["built-in"].figure(name).panel().provenance(name)
    assert {"layer", "head"} & set(facts) == set(selects), facts
    assert all(facts[key] for key in selects), facts
