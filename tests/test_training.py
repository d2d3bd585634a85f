"""Training the built-in model: a tiny run on a committed sample of the King James text
(tests/data/kjv-genesis-1-12.txt: Genesis 1-12, public domain, one chapter a
paragraph, as the Debian package bible-kjv prints it), its checkpoint loaded as
--weights PATH, the corpus and the tokenizer."""
from __future__ import annotations

import contextlib
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from posviz.cli import main
from posviz.document.spec import ModelSpec
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.training.checkpoint import Checkpoint, Recipe
from posviz.models.config import ModelConfig, Positions
from posviz.models.training.corpus import (HELD_OUT_AT, HELD_OUT_EVERY, kjv_sections,
                                           read_corpus, token_stream, unigram_perplexity)
from posviz.models.request import Request
from posviz.models.training.train import perplexity, train

SAMPLE = Path(__file__).with_name("data") / "kjv-genesis-1-12.txt"
TEXT = "And God said, Let there be light: and there was light."
TINY = ModelConfig(layers=2, heads=2, d_model=32, pe="t5", mask="causal")
RECIPE = Recipe(corpus=str(SAMPLE), vocab=400, length=32, batch=8, steps=40, warmup=4,
                store="float32")                 # the weights as trained: equal numbers


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """(checkpoint, model in memory) of a tiny model trained for 40 steps."""
    return train(TINY, RECIPE, tmp_path_factory.mktemp("tiny") / "t5")


def cli(*argv) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def test_the_loss_falls_and_the_record_says_how_it_was_trained(trained):
    checkpoint, _ = trained
    record = checkpoint.record
    curve = np.array(record["loss_curve"])                                # (steps, 2)
    assert curve[0, 0] == 1 and curve[-1, 0] == RECIPE.steps and not record["interrupted"]
    assert curve[-5:, 1].mean() < curve[:5, 1].mean() - 0.5
    # starts near uniform: logits of unit spread add about 1/2 to log V
    assert math.log(400) < curve[0, 1] < math.log(400) + 1.5
    assert record["recipe"]["steps"] == 40 and record["config"]["pe"] == "t5"
    assert record["data"]["held_out_sections"] == 1 and record["data"]["vocab"] == 400
    assert sum(record["token_counts"]) == record["data"]["train_tokens"]
    assert 1 < record["held_out_perplexity"] < 400 and record["unigram_perplexity"] > 1
    assert checkpoint.config == TINY and checkpoint.vocab == 400


def test_the_folder_loads_with_weights_path_and_gives_the_numbers_of_the_model_in_memory(
        trained):
    checkpoint, model = trained
    status, out, err = cli("report", "--weights", str(checkpoint.folder), "--text", TEXT,
                           "--json", "--quiet")
    assert status == 0, err
    loaded = json.loads(out)
    assert loaded["config"]["weights"] == str(checkpoint.folder.resolve())
    assert loaded["config"]["pe"] == "t5" and loaded["config"]["d_model"] == 32

    from posviz.analysis.engine import Engine
    from posviz.api import Model, Report
    in_memory = BuiltinBackend(TINY, str(checkpoint.folder))
    in_memory.model = model                  # the trained module itself, not a reload
    seq = in_memory.tokenize(TEXT)
    # the default reorder: reversed, the start token held at slot 0
    assert seq.tokens[0] == "<|endoftext|>" and loaded["order"][0] == 0
    assert loaded["order"][1:] == list(range(len(seq)))[:0:-1]
    ev = Engine(in_memory).evaluate(seq, np.array(loaded["order"]), Positions())
    report = Report(Model(in_memory, ModelSpec.builtin(TINY, str(checkpoint.folder))),
                    None, ev)
    expected = json.loads(json.dumps(report.to_dict()))
    assert loaded["tokens"] == expected["tokens"] and len(loaded["tokens"]) > 10
    assert loaded["layers"] == expected["layers"]                          # exactly
    assert loaded["outputs"] == expected["outputs"]
    assert loaded["outputs"]["kind"] == "causal"


def test_the_recorded_forward_is_the_trained_one(trained):
    """The window's path (a recorded run) and the training forward give the same
    next-token loss: the held-out perplexity, computed both ways."""
    checkpoint, model = trained
    backend = BuiltinBackend(TINY, str(checkpoint.folder))
    ids = token_stream(backend.tokenizer, checkpoint.held_out())[:97]      # 3 windows
    by_training = perplexity(backend.model, ids, 32)
    nll = 0.0
    for k in range(3):
        window = ids[32 * k: 32 * k + 33]
        trace = backend.model.run(window[:-1].tolist(), Request.original(np.arange(32)))
        logits = backend.model.logits(torch.as_tensor(trace.hidden[-1]))   # (32, V)
        nll -= logits.double().log_softmax(-1)[torch.arange(32), window[1:]].sum().item()
    assert by_training == pytest.approx(math.exp(nll / 96), rel=1e-5)


def test_training_is_seeded(tmp_path):
    short = Recipe(corpus=str(SAMPLE), vocab=300, length=16, batch=4, steps=3, warmup=0,
                   store="float32")
    first = train(TINY, short, tmp_path / "a")[1].state_dict()
    again = train(TINY, short, tmp_path / "b")[1].state_dict()
    other = train(TINY.replace(seed=1), short, tmp_path / "c")[1].state_dict()
    assert all(torch.equal(first[k], again[k]) for k in first)
    assert not torch.equal(first["embed.weight"], other["embed.weight"])


def test_the_train_command_writes_a_checkpoint_and_refuses_bad_recipes(tmp_path):
    status, out, err = cli("train", "--corpus", str(SAMPLE), "--vocab", "300", "--length",
                           "16", "--batch", "4", "--steps", "6", "--warmup", "1",
                           "--layers", "1", "--d-model", "16", "--pe", "learned",
                           "--threads", "1", "--out", str(tmp_path / "c"))
    assert status == 0, err
    assert "6 steps" in out and "held-out perplexity" in out
    assert "step 6 of 6, loss" in err and "tokens/s" in err and "left" in err
    checkpoint = Checkpoint.read(tmp_path / "c")
    assert checkpoint.config.max_len == 16          # the learned table: the training length
    from safetensors import safe_open
    with safe_open(str(checkpoint.path("weights")), "pt") as stored:
        assert stored.get_tensor("pe_table").dtype == torch.float16      # the default
    assert checkpoint.record["machine"]["threads"] == 1
    for argv, words in ((["--steps", "0"], "--steps must be at least 1"),
                        (["--corpus", str(tmp_path / "none.txt")], "no such corpus"),
                        (["--heads", "3"], "do not divide")):
        status, out, err = cli("train", "--out", str(tmp_path / "d"), *argv)
        assert status == 2 and words in err and len(err.strip().splitlines()) == 1


def test_weights_refusals_are_one_line(trained, tmp_path):
    folder = str(trained[0].folder)
    for argv, words in (
            (["--weights", folder, "--pe", "rope"], "--pe rope contradicts the checkpoint"),
            (["--weights", folder, "--seed", "3"], "--seed draws random weights"),
            (["--weights", str(tmp_path)], "is not a posviz checkpoint"),
            (["--weights", folder, "--model", "minilm"], "--weights only applies")):
        status, out, err = cli("report", *argv, "--text", TEXT)
        assert status == 2 and words in err, err
        assert len(err.strip().splitlines()) == 1


def test_a_session_file_keeps_the_weights(trained, tmp_path):
    from posviz.document.session_file import read
    folder = str(trained[0].folder)
    path = tmp_path / "trained.posviz"
    status, _, err = cli("report", "--weights", folder, "--text", TEXT, "--save-session",
                         str(path), "--quiet")
    assert status == 0, err
    doc = read(path)
    assert doc.spec.weights == str(Path(folder).resolve()) and doc.spec.trained
    assert json.loads(path.read_text())["model"]["weights"] == doc.spec.weights
    status, out, _ = cli("report", "--session", str(path), "--json")
    _, direct, _ = cli("report", "--weights", folder, "--text", TEXT, "--json", "--quiet")
    assert json.loads(out)["layers"] == json.loads(direct)["layers"]


# -- the corpus -------------------------------------------------------------------------


def test_the_kjv_listing_becomes_chapters_without_references():
    listing = ("Ge1:1 In the beginning God created the heaven and the earth.\n"
               "Ge1:2 And the earth was without form, and void.\n"
               "Ge2:1 Thus the heavens and the earth were finished.\n"
               "1Sa1:1 Now there was a certain man.\n")
    assert kjv_sections(listing) == [
        "In the beginning God created the heaven and the earth. "
        "And the earth was without form, and void.",
        "Thus the heavens and the earth were finished.", "Now there was a certain man."]


def test_one_section_in_twenty_is_held_out_and_never_trained_on():
    corpus = read_corpus(str(SAMPLE))
    assert len(corpus.sections) == 12
    assert corpus.held_out == [corpus.sections[HELD_OUT_AT]]
    assert len(corpus.train) == 11 and corpus.sections[HELD_OUT_AT] not in corpus.train
    assert HELD_OUT_EVERY == 20


def test_the_unigram_baseline_against_its_formula():
    counts = np.array([3, 1, 0])                     # add-one: 4/7, 2/7, 1/7
    targets = np.array([0, 1, 2, 0])
    expected = math.exp(-(2 * math.log(4 / 7) + math.log(2 / 7) + math.log(1 / 7)) / 4)
    assert unigram_perplexity(counts, targets) == pytest.approx(expected)


def test_the_tokenizer_reads_any_text_and_marks_word_pieces(trained):
    tokenizer = trained[0].tokenizer()
    ids = tokenizer.encode("Behold, the zebra’s café")
    assert tokenizer.decode(ids) == " Behold, the zebra’s café"      # bytes: nothing lost
    chips = tokenizer.chips(tokenizer.encode("Behold, the zebras"))
    assert "".join(c.removeprefix("##") for c in chips if c != "␣") == "Behold,thezebras"
    assert any(c.startswith("##") for c in chips) and not any("Ġ" in c for c in chips)
    stream = token_stream(tokenizer, ["a b", "c"])
    assert (stream == tokenizer.end_id).sum() == 2 and stream[-1] == tokenizer.end_id


def test_ctrl_c_saves_what_was_trained(tmp_path, monkeypatch):
    """KeyboardInterrupt during the steps (here from the first progress report, at step
    1): the model trained so far is evaluated and written, its record marked."""
    def interrupt(progress):
        raise KeyboardInterrupt
    short = Recipe(corpus=str(SAMPLE), vocab=300, length=16, batch=4, steps=50, warmup=0)
    checkpoint, _ = train(TINY, short, tmp_path / "a", progress=interrupt)
    assert checkpoint.record["interrupted"] and checkpoint.record["steps"] == 1
    assert BuiltinBackend(TINY, str(checkpoint.folder)).checkpoint.summary().startswith(
        "trained 1 step (interrupted)")
    import posviz.cli.train as command
    monkeypatch.setattr(command, "reporter", lambda args: (None, interrupt))
    status, out, _ = cli("train", "--corpus", str(SAMPLE), "--vocab", "300", "--length",
                         "16", "--steps", "50", "--layers", "1", "--out", str(tmp_path / "b"))
    assert status == 130 and ": 1 step in" in out
    assert Checkpoint.read(tmp_path / "b").record["interrupted"]


def test_a_trained_trace_reads_as_its_chips(trained):
    backend = BuiltinBackend(TINY, str(trained[0].folder))
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))[::-1]
    from posviz.analysis.engine import Engine
    ev = Engine(backend).evaluate(seq, order, Positions())
    assert ev.reference.tokens == seq.tokens and "##" in "".join(seq.tokens)
    assert ev.run.tokens in (seq.tokens, tuple(seq.tokens[i] for i in order))
