"""The experiments from Python (posviz.sweep, probe, paper, compare_encodings, train):
each result's to_dict() is its command's --json to the type, its figure() is the
Experiments tab's figure, and dir(posviz) and completion offer them."""
from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.cli import main

ROOT = Path(__file__).resolve().parents[1]
SENTENCES = ROOT / "resources" / "sentences.txt"
TEXT = "the cat sat on the mat"
API = ("sweep", "probe", "paper", "compare_encodings", "train", "load", "Model", "Report")


def command_json(capsys, *argv) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_dir_and_completion_offer_the_api_without_importing_it():
    code = ("import sys, posviz, jedi\n"
            "print(sorted(set(dir(posviz)) & set(posviz.__all__)))\n"
            "done = jedi.Interpreter('posviz.', [{'posviz': posviz}]).complete()\n"
            "print(sorted({c.name for c in done} & set(posviz.__all__)))\n"
            "print([m for m in ('torch', 'numpy', 'PySide6') if m in sys.modules])")
    pytest.importorskip("jedi")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT).stdout.splitlines()
    listed, completed = eval(out[0]), eval(out[1])
    assert set(API) <= set(listed) and set(API) <= set(completed)
    assert out[2] == "[]"                                 # nothing heavy was imported


def test_a_report_is_report_json_to_the_type(capsys):
    ours = posviz.load(pe="rope", layers=2).compare(TEXT)
    theirs = command_json(capsys, "report", "--pe", "rope", "--layers", "2", "--text", TEXT)
    assert ours.to_dict() == theirs                        # lists, not tuples, and all keys
    assert ours.to_dict()["outputs"]["predictions"] == []


def test_a_sweep_is_sweep_json_and_draws_its_band(capsys):
    ours = posviz.sweep(TEXT, pe="none", mask="causal", kind="prefix", count=8, seed=1)
    theirs = command_json(capsys, "sweep", "--pe", "none", "--mask", "causal", "--text", TEXT,
                          "--kind", "prefix", "--count", "8", "--seed", "1")
    assert ours.to_dict() == theirs and ours.runs == 8
    assert theirs["provenance"]["seeds"] == {"model": 0, "orders": 1}
    figure = ours.figure("last_token_change")
    band = ours.bands["last_token_change"]
    np.testing.assert_array_equal(figure.data["last_token_change_median"], band.median)
    png, shown = figure._repr_png_()
    assert png.startswith(b"\x89PNG") and shown["width"] > 300
    with pytest.raises(posviz.errors.PosvizInputError, match="metric='swap map' is not"):
        ours.figure("swap map")                       # a prefix sweep has no swap map


def test_a_swap_sweeps_map_is_one_image(tmp_path):
    swaps = posviz.sweep(TEXT, kind="swap", layers=2)
    figure = swaps.figure("swap map")
    assert figure._repr_svg_() is None                # a map of cells: its PNG alone
    np.testing.assert_array_equal(figure.data["change"], swaps.pairs[0].change)


def test_a_probe_is_probe_json_and_draws_its_errors(capsys):
    texts = posviz.read_texts(SENTENCES)
    ours = posviz.probe(texts, pe="sinusoidal", layers=2)
    theirs = command_json(capsys, "probe", "--pe", "sinusoidal", "--layers", "2",
                          "--texts", str(SENTENCES))
    assert ours.to_dict() == theirs
    assert theirs["provenance"]["encoding"] == "sinusoidal"
    assert ours.figure().dims == ("layer",)


def test_a_probe_from_a_plain_python_process_is_the_command_s_to_the_last_digit():
    """As a kernel runs it: numpy's BLAS on every core and torch's threads spinning
    unless posviz says otherwise (the command line sets both for itself); wide enough
    (3,840 generated tokens of 384 features) for threaded sums to round differently."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")}
    code = ("import pickle, sys, posviz\n"
            "result = posviz.probe(d_model=384, layers=1)\n"
            "sys.stdout.buffer.write(pickle.dumps(result.to_dict()))")
    ours = pickle.loads(subprocess.run([sys.executable, "-c", code],
                                       capture_output=True, check=True, env=env,
                                       cwd=ROOT).stdout)
    theirs = json.loads(subprocess.run(
        [sys.executable, "-m", "posviz", "probe", "--d-model", "384", "--layers", "1",
         "--json"], capture_output=True, check=True, env=env,
        cwd=ROOT, text=True).stdout)
    assert ours == theirs                                   # every float, to the type


def test_a_paper_check_is_paper_json_and_draws_its_figure(capsys):
    ours = posviz.paper("alibi-slopes")
    assert ours.to_dict() == command_json(capsys, "paper", "alibi-slopes")
    assert ours.holds and ours.to_dict()["provenance"]["weights"] == "random"
    assert ours.figure().size()[0] > 300
    # a figure without a choice of metric says so, not "is not one of none: it has one"
    with pytest.raises(posviz.errors.PosvizInputError) as refused:
        ours.figure("r2")
    assert str(refused.value) == ("this figure has no metric to choose (metric='r2'): "
                                  "call figure() without it")


def test_a_comparison_of_encodings_is_compare_json_and_draws_its_curves(capsys, tmp_path):
    ours = posviz.compare_encodings(TEXT, [5, 4, 3, 2, 1, 0], encodings=["none", "rope"],
                                    layers=2)
    theirs = command_json(capsys, "compare", "--pe", "none,rope", "--layers", "2",
                          "--text", TEXT, "--order", "5,4,3,2,1,0")
    assert ours.to_dict() == theirs and theirs["provenance"]["encoding"] == ["none", "rope"]
    report = command_json(capsys, "report", "--pe", "rope", "--layers", "2", "--text", TEXT)
    assert theirs["config"]["d_ff"] == report["config"]["d_ff"] == 4 * 64   # not 0
    figure = ours.figure("hidden_equivariance")
    subtitle = figure.drawn().subtitle                    # Python has no window
    assert subtitle.endswith("random weights; order [5,4,3,2,1,0]"), subtitle
    np.testing.assert_array_equal(figure.data["none"], ours.models[0].curve(
        "hidden_equivariance"))
    path = figure.save(tmp_path / "compare.png")
    from PySide6 import QtGui
    image = QtGui.QImage(str(path))
    assert image.text("encoding") == '["none", "rope"]' and image.text("metric") == \
        "hidden_equivariance"
    assert image.text("model").startswith("built-in (layers=2, ")   # with its settings
    # compare --out draws it at the size Python does by default (it drew 1600 px wide)
    assert main(["compare", "--pe", "none,rope", "--layers", "2", "--text", TEXT,
                 "--order", "5,4,3,2,1,0", "--out", str(tmp_path / "cli"), "--format",
                 "png", "--no-csv", "--quiet"]) == 0
    written = QtGui.QImage(str(tmp_path / "cli" / "compare.png"))
    assert (written.width(), written.height()) == (image.width(), image.height())


def test_train_is_train_json_and_says_a_warm_up_it_cut(capsys, tmp_path):
    corpus = ROOT / "tests" / "data" / "kjv-genesis-1-12.txt"
    recipe = ["--corpus", str(corpus), "--vocab", "300", "--length", "16", "--batch", "2",
              "--steps", "3", "--warmup", "5", "--layers", "1", "--d-model", "16"]
    said = []
    ours = posviz.train(tmp_path / "api", corpus=str(corpus), vocab=300, length=16, batch=2,
                        steps=3, warmup=5, layers=1, d_model=16, say=said.append)
    assert main(["train", *recipe, "--out", str(tmp_path / "cli"), "--json", "--quiet"]) == 0
    out, err = capsys.readouterr()
    theirs = json.loads(out)
    assert err == f"posviz: note: {ours.notes[0]}\n"       # told even with --quiet
    assert ours.notes == theirs["notes"] and "warm-up of 5 steps" in ours.notes[0]
    assert f"note: {ours.notes[0]}" in said
    mine = ours.to_dict()
    for record in (mine, theirs):                         # what differs from run to run
        record.pop("folder")
        for key in ("seconds", "tokens_per_second", "machine"):
            record["record"].pop(key)
        record["provenance"].pop("weights")               # the folder written
    assert mine == theirs
    assert mine["provenance"]["options"]["recipe"]["warmup"] == 5


def test_the_probe_s_seeds_mean_in_python_what_they_mean_on_the_command_line(capsys):
    """The model's seed is model_seed / --model-seed, as the README says; the probe draws
    no orders, so seed= and --seed are refused, not taken as the model's seed."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    said = next(s for s in readme.split(". ") if "`probe`, which draws no orders" in s)
    assert "`--model-seed` (`model_seed=` in Python)" in said
    assert "refuses `--seed` (`seed=`)" in said
    ours = posviz.probe(posviz.read_texts(SENTENCES), layers=1,
                        model_seed=3)
    theirs = command_json(capsys, "probe", "--layers", "1", "--model-seed", "3",
                          "--texts", str(SENTENCES))
    assert ours.to_dict() == theirs and theirs["provenance"]["seeds"] == {"model": 3}
    with pytest.raises(posviz.errors.PosvizInputError, match="takes no seed: .* model_seed"):
        posviz.probe(layers=1, seed=3)
    assert main(["probe", "--layers", "1", "--seed", "3"]) == 2
    assert "takes no --seed: the built-in model's seed is --model-seed" in \
        capsys.readouterr().err
