"""Every output says what made it, in one record written by one function
(document.provenance.provenance): every command's JSON, the CSV files' comment lines and
the figures' metadata name the model, encoding, mask, weights, seeds, dtype, options and
posviz version (and the folder a model's layers were offloaded to)."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.cli import main
from posviz.document.provenance import PROVENANCE, read_comment_lines

TEXT = "the cat sat on the mat"
KEYS = {"posviz", "model", *PROVENANCE}


def command_json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0, capsys.readouterr().err
    return json.loads(capsys.readouterr().out)


def test_a_probe_on_trained_weights_names_them(capsys):
    made = command_json(capsys, "probe", "--pe", "rope", "--mask", "causal", "--weights",
                        "trained")["provenance"]
    assert set(made) == KEYS and made["posviz"] == posviz.__version__
    assert (made["model"], made["encoding"], made["mask"], made["weights"]) == (
        "built-in", "rope", "causal", "trained")
    assert made["seeds"] == {"texts": 0}       # trained weights are drawn from no seed,
    #                                            its generated texts from seed 0
    assert made["options"]["features"] == "linear" and made["options"]["layers"] == 4


@pytest.mark.parametrize("argv", [
    ["report", "--pe", "alibi", "--mask", "causal", "--seed", "5", "--text", TEXT],
    ["sweep", "--pe", "alibi", "--mask", "causal", "--model-seed", "5", "--text", TEXT,
     "--count", "4", "--seed", "2"],
    ["compare", "--pe", "alibi,none", "--mask", "causal", "--seed", "5", "--text", TEXT],
])
def test_every_json_has_the_same_record(argv, capsys):
    made = command_json(capsys, *argv)["provenance"]
    assert set(made) == KEYS
    assert made["mask"] == "causal" and made["seeds"]["model"] == 5
    assert made["encoding"] in ("alibi", ["alibi", "none"]) and made["dtype"] == "float32"
    assert made["options"]["positions"] == "slot" and made["options"]["offset"] == 0
    if argv[0] == "sweep":
        assert made["seeds"] == {"model": 5, "orders": 2}
        assert (made["options"]["kind"], made["options"]["count"]) == ("random", 4)


def test_a_paper_check_names_what_it_ran_on(capsys):
    check = command_json(capsys, "paper", "rope-decay")
    made = check["provenance"]
    # no weights, and the seed that drew its query/key pairs is a seed
    assert set(made) == KEYS | {"runs"} and made["weights"] == "none"
    assert made["options"] == {"paper": "rope-decay", "d_head": 64, "distances": 512}
    assert made["seeds"] == {"pairs": 0} == made["runs"][0]["seeds"]
    assert [run["model"] for run in made["runs"]] == [made["model"]]    # one model run
    assert made["model"] == "none: RoPE's rotation alone" and made["encoding"] == "rope"
    assert "no model" in check["ran_on"] and "seed 0" in check["ran_on"]


def test_a_figure_file_carries_the_record(tmp_path):
    from PySide6 import QtGui
    report = posviz.load(pe="t5", mask="causal", seed=7, layers=2).compare(TEXT)
    made = report.to_dict()["provenance"]
    png = report.figure("symmetry").save(tmp_path / "symmetry.png")
    image = QtGui.QImage(str(png))
    assert (image.text("encoding"), image.text("mask"), image.text("weights")) == (
        "t5", "causal", "random")
    assert json.loads(image.text("seeds")) == made["seeds"] == {"model": 7}
    assert json.loads(image.text("options")) == made["options"]
    table = report.figure("symmetry").save(tmp_path / "symmetry.csv")
    with open(table, encoding="utf-8") as handle:
        facts = read_comment_lines(handle)
    assert facts["encoding"] == "t5" and json.loads(facts["options"]) == made["options"]


def test_an_offload_folder_is_recorded(tmp_path, capsys):
    pytest.importorskip("transformers")
    pytest.importorskip("accelerate")
    from test_hf import save_tiny
    folder = tmp_path / "llama"
    save_tiny("llama", folder)
    report = command_json(capsys, "report", "--model", str(folder), "--offload-folder",
                          str(tmp_path / "offload"), "--text", TEXT, "--quiet")
    assert report["config"]["offload_folder"] == str(tmp_path / "offload")
    assert report["provenance"]["offload_folder"] == str(tmp_path / "offload")
    assert report["provenance"]["weights"] == "pretrained"
    plain = command_json(capsys, "report", "--model", str(folder), "--text", TEXT, "--quiet")
    assert "offload_folder" not in plain["config"] and "offload_folder" not in \
        plain["provenance"]


def test_the_windows_experiment_export_carries_the_record():
    from posviz.document.spec import ModelSpec
    from posviz.gui.experiments.jobs import provenance
    from posviz.models.config import ModelConfig
    from posviz.runtime.experiments import ExperimentJob
    job = ExperimentJob("sweep", ModelSpec.builtin(ModelConfig(pe="rope", mask="causal",
                                                               seed=3)), (TEXT,))
    facts = provenance(job, None)
    assert (facts["encoding"], facts["mask"], facts["weights"]) == ("rope", "causal", "random")
    assert json.loads(facts["seeds"]) == {"model": 3}
    assert json.loads(facts["options"])["positions"] == "slot"


def test_a_record_names_the_learned_table_s_rows_only_where_there_is_one():
    """Every built-in record said max_len 1024, the learned table's rows, for RoPE, ALiBi,
    sinusoidal, T5 and no positions, which have no table (a user's run)."""
    from posviz.document.provenance import model_options
    from posviz.models.config import ModelConfig
    from posviz.models.encodings import ENCODINGS
    for pe in ENCODINGS:
        config = ModelConfig(pe=pe, max_len=300)
        options = model_options({"model": "built-in", **config.to_dict()})
        assert ("max_len" in options) == (config.table_length is not None), pe
        assert options.get("max_len", 300) == 300
