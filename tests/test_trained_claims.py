"""Claims on trained models and encodings side by side: press2022 and haviv2022 on a zoo
of tiny checkpoints trained alike (tests/tiny_zoo.py; the shipped zoo is checked in
test_zoo.py), and `posviz compare` against `posviz report`."""
from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

from posviz.analysis.experiments import trained as claims
from posviz.analysis.experiments.papers import check_paper
from posviz.models.training import checkpoint as checkpoints
from posviz.models.training.corpus import token_stream
from posviz.models.training.train import perplexity
from test_training import cli
from tiny_zoo import KINDS, tiny_zoo_folder

TEXT = "and the evening and the morning were the first day"


@pytest.fixture
def zoo(monkeypatch):
    """The tiny zoo as the shipped one, press2022 reading six windows at 4 × 16."""
    folder = tiny_zoo_folder()
    monkeypatch.setattr(checkpoints, "ZOO_FOLDERS", (folder,))
    monkeypatch.setattr(claims, "PRESS_TOKENS", 4 * 16 * 6)
    return folder


def test_press2022_reports_perplexity_by_length_beside_the_unigram_baseline(zoo):
    check = check_paper("press2022")
    values = check.values
    assert check.weights == "trained" and values["train_length"] == 16
    assert values["lengths"] == [16, 32, 64] and values["tokens"] == 384
    assert set(values["perplexity"]) == set(KINDS)
    assert values["perplexity"]["learned"]["32"] is None            # beyond its table
    assert values["perplexity"]["learned"]["64"] is None
    assert "16 positions" in values["refused"]["learned"]
    # each value is the perplexity function's on the same held-out tokens
    first = checkpoints.Checkpoint.read(zoo / "alibi")
    from posviz.models.builtin.backend import BuiltinBackend
    model = BuiltinBackend(first.config, str(first.folder)).model
    ids = token_stream(first.tokenizer(), first.held_out())
    start = first.tokenizer().end_id if first.start_token else None
    assert values["perplexity"]["alibi"]["32"] == pytest.approx(perplexity(
        model, ids, 32, 384, start_id=start))
    counts = np.asarray(first.record["token_counts"]) + 1.0
    predicted = ids[:384] if first.start_token else ids[1:385]
    unigram = math.exp(-np.log(counts / counts.sum())[predicted].mean())
    assert values["unigram_perplexity"] == pytest.approx(unigram)
    status, out, err = cli("paper", "press2022", "--json")
    assert status == 0 and json.loads(out)["values"]["perplexity"] == values["perplexity"]


def test_press2022_in_the_window_tells_each_checkpoint_and_its_forwards_done(zoo):
    """It ran for 79 s in the window under a busy bar that said only "running the paper
    check…": its reading is said, then each checkpoint is a stage, counting its forwards
    (a batch of windows each: a 512-token checkpoint was one step of 5-9 s untold)."""
    from posviz.runtime.experiments import ExperimentJob, run_experiment
    told = []
    check = run_experiment(ExperimentJob("paper", paper="press2022", weights="trained"),
                           progress=lambda done, total: told.append((done, total)),
                           say=told.append)
    stages = [k for k, item in enumerate(told) if isinstance(item, str)]
    assert [told[k] for k in stages] == [
        f"reading the held-out text and loading the {len(KINDS)} checkpoints"] + [
        f"held-out perplexity of the {kind} checkpoint at "
        f"{'16' if kind == 'learned' else '16, 32 and 64'} tokens (checkpoint {k + 1} of "
        f"{len(KINDS)})" for k, kind in enumerate(KINDS)]
    for start, end in zip(stages[1:], stages[2:] + [len(told)]):
        counts = told[start + 1:end]               # 0, 1, ... total: each forward
        total = counts[0][1]
        assert counts == [(done, total) for done in range(total + 1)], counts
    # 3, 2 and 1 forwards at 16, 32 and 64 tokens; the learned table is refused past 16
    assert [told[k + 1][1] for k in stages[1:]] == [3 if kind == "learned" else 6
                                                    for kind in KINDS]
    assert check.values["perplexity"] == check_paper("press2022").values["perplexity"]


def test_haviv2022_on_trained_weights_probes_every_checkpoint(zoo, monkeypatch):
    """On 12 held-out texts, and the default (random weights) on 30 generated ones: the
    same fits on fewer tokens (the default counts took 20 s)."""
    from posviz.analysis.experiments import papers, texts
    monkeypatch.setattr(claims, "PROBE_TEXTS", 12)
    monkeypatch.setattr(papers, "random_texts",
                        lambda count, *args, **kw: texts.random_texts(min(count, 30), *args,
                                                                       **kw))
    check = check_paper("haviv2022", weights="trained")
    assert check.weights == "trained" and set(KINDS) <= set(check.values["mlp"])
    assert set(check.values["linear"]) == set(check.values["mlp"])
    rows = check.values["mlp"]["none"]
    assert [row["layer"] for row in rows] == [0, 1, 2]
    assert all(row["chance_mae"] > 0 for row in rows)
    assert check.holds == all(r["mae"] < 0.9 * r["chance_mae"] for r in rows[1:])
    assert check_paper("haviv2022").weights == "random"             # the default


def test_a_paper_on_weights_it_does_not_speak_of_is_refused_in_one_line(zoo):
    """... in a sentence that reads ("a claim about the architecture's, so random
    weights" did not)."""
    for argv, words in ((["press2022", "--weights", "random"],
                         "press2022 checks a claim about trained weights; on random "
                         "weights posviz checks: "),
                        (["rope-decay", "--weights", "trained"],
                         "rope-decay checks a claim about the architecture, so it runs on "
                         "random weights; on trained weights posviz checks: ")):
        status, _, err = cli("paper", *argv)
        assert status == 2 and words in err and len(err.strip().splitlines()) == 1


def test_a_missing_zoo_or_checkpoint_is_refused_naming_what_there_is(zoo, monkeypatch):
    status, _, err = cli("report", "--weights", "trained", "--pe", "rope", "--mask",
                         "causal", "--text", TEXT)
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "no trained checkpoint for rope, causal" in err
    assert "none, learned, alibi (causal, 2 layers × 2 heads, d 32)" in err
    monkeypatch.setattr(checkpoints, "ZOO_FOLDERS", ())
    status, _, err = cli("paper", "press2022")
    assert status == 2 and "no trained checkpoints are installed" in err


def test_compare_gives_each_encoding_the_numbers_report_gives_it(zoo, tmp_path):
    order = "1,0,2,3,4,5,6,7,8,9"
    for weights, extra in (("random", []), ("trained", ["--layers", "2", "--heads", "2",
                                                        "--d-model", "32"])):
        given = ["--order", order] if weights == "random" else []   # BPE: reversed
        status, out, err = cli("compare", "--pe", "none,alibi", "--weights", weights,
                               "--mask", "causal", *extra, "--text", TEXT, *given, "--json",
                               "--quiet")
        assert status == 0, err
        result = json.loads(out)
        assert [m["pe"] for m in result["models"]] == ["none", "alibi"]
        for model in result["models"]:
            _, alone, _ = cli("report", "--pe", model["pe"], "--weights", weights, "--mask",
                              "causal", *extra, "--text", TEXT, "--order",
                              ",".join(map(str, result["order"])), "--json", "--quiet")
            rows = json.loads(alone)["layers"]        # report also spreads over tokens
            assert model["layers"] == [{key: row[key] for key in model["layers"][0]}
                                       for row in rows]
    status, out, err = cli("compare", "--pe", "none,alibi,learned", "--mask", "causal",
                           "--text", TEXT, "--order", order, "--out", str(tmp_path),
                           "--format", "png,svg", "--quiet")
    assert status == 0, err
    assert (tmp_path / "compare.png").stat().st_size > 5000
    assert "<svg" in (tmp_path / "compare.svg").read_text()
    # the figure itself names the mask and weights (its heading's second line)
    svg = (tmp_path / "compare.svg").read_text()
    assert "causal mask, pre-LN, seed 0), random weights" in svg
    table = (tmp_path / "compare.csv").read_text()
    assert f"# text: {TEXT}\n" in table and "# weights: random" in table
    assert "# posviz: " in table and "mask=causal" in table
    rows = [r for r in csv.reader((tmp_path / "compare.csv").open()) if r[0][0] != "#"]
    assert rows[0] == ["layer", "none", "alibi", "learned"] and len(rows) == 1 + 5
    assert float(rows[1][1]) == 0.0 and float(rows[1][3]) > 0    # learned moves the input


def test_compare_on_trained_weights_carries_an_order_of_words_to_their_tokens(zoo):
    """The window's order (the built-in model's words) is the reorder the trained
    checkpoints run, word by word over their own tokens: it ran a reversal instead."""
    from posviz.analysis.experiments.carry import carry_order
    from posviz.analysis.experiments.encodings import compare_encodings
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    config = ModelConfig(layers=2, heads=2, d_model=32, mask="causal")
    words = BuiltinBackend(config).tokenize(TEXT)                    # random: words
    order = [1, 0] + list(range(2, len(words)))                      # "the and evening …"
    result = compare_encodings(config, ("none", "alibi"), "trained", TEXT, order,
                               ordered=words)
    tokens = BuiltinBackend(config.replace(pe="none"), "trained").tokenize(TEXT)
    assert result.carried and result.tokens == tokens.tokens != words.tokens
    assert list(result.order) == list(carry_order(words, order, tokens))
    reordered = "".join(result.tokens[i] for i in result.order).replace("##", "")
    start = "<|endoftext|>"                         # the trained checkpoints' slot 0, held
    assert result.tokens[result.order[0]] == start
    assert reordered[len(start):].startswith("theand")
    assert result.to_dict()["order_carried_by_words"]
    same = compare_encodings(config, ("none", "alibi"), "random", TEXT, order,
                             ordered=words)
    assert not same.carried and list(same.order) == order


def test_compare_refuses_in_one_line(zoo):
    for argv, words in ((["--pe", "none"], "at least two different encodings"),
                        (["--pe", "none,nope"], "got 'nope'"),
                        (["--pe", "none,rope", "--model", "minilm"], "--model does not apply"),
                        (["--pe", "none,alibi", "--weights", str(zoo / "none")],
                         "a checkpoint folder holds one encoding"),
                        (["--pe", "none,rope", "--weights", "trained", "--mask", "causal",
                          "--layers", "2", "--heads", "2", "--d-model", "32"],
                         "no trained checkpoint for rope")):
        status, _, err = cli("compare", *argv, "--text", TEXT)
        assert status == 2 and words in err and len(err.strip().splitlines()) == 1, err


TINY_FLAGS = ("--mask", "causal", "--layers", "2", "--heads", "2", "--d-model", "32")


def test_sweep_probe_and_export_take_trained_weights(zoo, tmp_path):
    status, out, err = cli("sweep", "--weights", "trained", "--pe", "alibi", *TINY_FLAGS,
                           "--text", TEXT, "--kind", "reverse", "--json", "--quiet")
    assert status == 0, err
    swept = json.loads(out)
    _, reported, _ = cli("report", "--weights", "trained", "--pe", "alibi", *TINY_FLAGS,
                         "--text", TEXT, "--json", "--quiet")
    layers = json.loads(reported)["layers"]
    assert [row["hidden_equivariance"]["median"] for row in swept["layers"]] == \
        pytest.approx([row["hidden_equivariance"] for row in layers], rel=1e-5)
    texts = tmp_path / "texts.txt"
    texts.write_text("\n".join(f"{TEXT} {k}" for k in range(6)))
    status, out, err = cli("probe", "--weights", "trained", "--pe", "none", *TINY_FLAGS,
                           "--texts", str(texts), "--json", "--quiet")
    assert status == 0 and len(json.loads(out)["layers"]) == 3, err
    status, out, err = cli("probe", "--weights", "trained", "--model-seed", "2", *TINY_FLAGS,
                           "--texts", str(texts))
    assert status == 2 and "--model-seed draws random weights" in err
    # the tiny learned table has the training length's 16 positions: a shorter text
    status, out, err = cli("export", "--weights", "trained", "--pe", "learned", *TINY_FLAGS,
                           "--text", "the evening and the morning", "--out", str(tmp_path / "figures"), "--format",
                           "png", "--quiet")
    assert status == 0, err
    symmetry = (tmp_path / "figures" / "symmetry.csv").read_text()
    assert "weights=trained" in symmetry and "pe=learned" in symmetry


def test_press2022_on_a_terminal_tells_each_length_on_stderr(zoo):
    """`posviz paper press2022` ran for a minute or more saying nothing: on a terminal it
    tells each length as it starts; a pipe or a log gets only the results."""
    import contextlib
    import io

    from posviz.cli import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    err = Terminal()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        assert main(["paper", "press2022"]) == 0
    lines = err.getvalue().splitlines()
    assert lines[0] == "posviz: checking press2022 on trained weights"   # before torch loads
    assert [line for line in lines[1:] if " step " not in line] == [
        f"posviz: reading the held-out text and loading the {len(KINDS)} checkpoints"] + [
        f"posviz: held-out perplexity of the {kind} checkpoint at "
        f"{'16' if kind == 'learned' else '16, 32 and 64'} tokens (checkpoint {k + 1} of "
        f"{len(KINDS)})" for k, kind in enumerate(KINDS)]
    steps = [line for line in lines if " step " in line]       # and its steps, counted
    assert steps and steps[-1] == "posviz: step 6 of 6 (stage 3 of 3), 100 % done"
    status, _, told = cli("paper", "press2022")
    assert status == 0 and told == ""


def test_the_trained_checks_tell_each_stage_and_its_steps(zoo, monkeypatch):
    """sinha2022 on trained weights ran 71 s on one line ("running the paper check…"):
    each model is a stage that says what it does, and each text a step."""
    from posviz.analysis.experiments import pretrained
    monkeypatch.setattr(pretrained, "BUNDLED_MODELS", ())
    monkeypatch.setattr(pretrained, "example_texts", lambda: ["and the evening", "the day"])
    said, steps = [], []
    check_paper("sinha2022", weights="trained", progress=lambda *step: steps.append(step),
                say=said.append)
    assert said == ["shifting every position id of the trained learned checkpoint, 2 "
                    "texts (model 1 of 1)"]                  # the tiny zoo's one of them
    assert steps == [(1, 2), (2, 2)]
    monkeypatch.setattr(claims, "PROBE_TEXTS", 12)
    said.clear()
    check_paper("haviv2022", weights="trained", progress=lambda *step: None,
                say=said.append)
    assert [line.split(": ")[0] for line in said] == [
        f"probing {kind} ({k} of 3, {feature})" for k, kind in
        enumerate(KINDS, start=1) for feature in ("linear", "mlp") for _ in range(2)]
    assert said[0].endswith("running the texts")
