"""One provenance, recorded only where something used it and said whole:
``compare --pe none,rope`` recorded ``max_len`` with no learned table among them; a
text output's first line named no options (2 layers, width 32) though its JSON's
provenance holds them; ``paper rope-decay`` said weights "random" on top while its
run said "none", and kept the seed that drew its pairs among the options; a report's
first line spelled a setting as its JSON does (residual=true) and its model line as
Python does (residual=True)."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.cli import main

TEXT = "the cat sat on the mat"
SENTENCES = "resources/sentences.txt"


@pytest.mark.parametrize("kinds, recorded", [(["none", "rope"], False),
                                             (["none", "learned"], True)])
def test_a_comparison_records_max_len_only_with_a_learned_table(kinds, recorded, capsys):
    options = posviz.compare_encodings(TEXT, encodings=kinds).to_dict()["provenance"]["options"]
    assert ("max_len" in options) == recorded, options
    assert main(["compare", "--pe", ",".join(kinds), "--text", TEXT, "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["provenance"]["options"]
    assert ("max_len" in options) == recorded, options


def leaves(value, key=""):
    """(key, value as a text output writes it) of every value a record holds."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from leaves(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from leaves(v, key)
    else:
        yield key, value if isinstance(value, str) else json.dumps(value)


@pytest.mark.parametrize("args", [
    ["sweep", "--text", "a b c d e", "--kind", "reverse", "--layers", "2", "--d-model", "32",
     "--pe", "none"],
    ["probe", "--texts", SENTENCES, "--folds", "2", "--layers", "2", "--d-model", "32"],
    ["compare", "--text", TEXT, "--pe", "none,learned", "--layers", "2", "--d-model", "32"],
    ["paper", "alibi-slopes"],
    ["paper", "rope-decay"],
    ["report", "--text", TEXT, "--layers", "2", "--d-model", "32", "--pe", "rope"],
], ids=lambda args: "-".join(args[:2]))
def test_the_first_line_holds_every_value_of_the_json_provenance(args, capsys):
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["provenance"]
    assert main(args) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert record["options"], record
    for key, value in leaves({k: v for k, v in record.items() if k != "runs"}):
        if value != "null":             # a setting that does not apply is left out
            assert value in first, (key, value, first)
    assert "null" not in first.replace(",", " ").split(), first
    for key in record["options"]:
        assert f"{key}=" in first, (key, first)
    if args[0] != "paper":
        assert "layers=2" in first and "d_model=32" in first, first


def test_a_report_s_first_and_model_lines_spell_a_setting_alike(capsys):
    assert main(["report", "--text", TEXT, "--layers", "2", "--no-residual"]) == 0
    first, model = capsys.readouterr().out.splitlines()[:2]
    assert model.startswith("model:")
    for line in (first, model):
        assert "residual=false" in line, line
        for python in ("True", "False", "None"):
            assert f"={python}" not in line, line


def agree(record: dict) -> None:
    """The top of a paper check's provenance agrees with its runs: weights the runs'
    (one value, or each distinct one), every seed the runs share, no seed kept among
    the options."""
    runs = record["runs"]
    distinct = []
    for run in runs:
        distinct += [] if run["weights"] in distinct else [run["weights"]]
    assert record["weights"] == (distinct[0] if len(distinct) == 1 else distinct), record
    for run in runs:
        for name, seed in run["seeds"].items():
            if all(other["seeds"].get(name) == seed for other in runs):
                assert record["seeds"][name] == seed, record
        assert not [k for k in run["options"] if "seed" in k], run
    assert not [k for k in record["options"] if "seed" in k], record


@pytest.mark.parametrize("name", sorted(
    __import__("posviz.analysis.experiments.papers", fromlist=["PRESETS"]).PRESETS))
def test_every_paper_check_s_top_provenance_agrees_with_its_runs(name):
    agree(posviz.paper(name).to_dict()["provenance"])


def test_a_trained_check_s_top_provenance_agrees_with_its_runs():
    """The trained checks run minutes: one made of what they run (a shipped checkpoint's
    description beside a pretrained model's) stands for them."""
    from posviz.analysis.experiments.claim import PaperCheck
    from posviz.analysis.experiments.trained import description
    from posviz.api.results import Paper
    from posviz.models.config import ModelConfig

    class Checkpoint:
        config = ModelConfig(pe="rope", mask="causal")
    models = (description(Checkpoint), {"model": "minilm", "family": "bert",
                                        "position_encoding": "learned", "dtype": "float32"})
    check = PaperCheck("sinha2022", "", "", "", {}, True, weights="trained", models=models)
    record = Paper(check, "trained").to_dict()["provenance"]
    agree(record)
    assert record["weights"] == ["trained", "pretrained"], record
