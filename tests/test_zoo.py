"""The shipped checkpoints (resources/checkpoints): the built-in model trained alike with
each encoding, small enough to ship, each far better than the unigram baseline, each
run by --weights trained, and the README's tables are theirs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from posviz.models.builtin import BuiltinBackend
from posviz.models.checkpoint import zoo, zoo_folder
from posviz.models.config import ModelConfig
from posviz.models.corpus import token_stream
from posviz.models.encodings import KINDS
from posviz.models.training import perplexity
from test_training import cli

README = Path(__file__).resolve().parents[1] / "README.md"
ZOO = zoo()
TRAINED = tuple(c.config.pe for c in ZOO)      # the trained kinds: some of KINDS, or all
pytestmark = pytest.mark.skipif(not ZOO, reason="no trained checkpoints installed")


def readme_rows(heading: str) -> list[list[str]]:
    """The cells of the first table after ``heading`` in the README."""
    text = README.read_text(encoding="utf-8")
    after = text[text.index(heading):]
    rows = []
    for line in after.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]                                          # without the header


def test_six_encodings_trained_alike_at_the_default_size_and_small_enough_to_ship():
    assert list(TRAINED) == [kind for kind in KINDS if kind in TRAINED]   # once each
    default = ModelConfig(mask="causal")
    first = ZOO[0]
    for checkpoint in ZOO:
        assert checkpoint.matches(default.replace(pe=checkpoint.config.pe))
        assert checkpoint.config.seed == 0 and not checkpoint.record["interrupted"]
        assert checkpoint.record["recipe"] == first.record["recipe"]
        assert checkpoint.record["steps"] == first.record["recipe"]["steps"]
        assert checkpoint.record["data"] == first.record["data"]
        assert (checkpoint.path("tokenizer").read_bytes()
                == first.path("tokenizer").read_bytes())
        with safe_open(str(checkpoint.path("weights")), "pt") as stored:
            assert {stored.get_tensor(k).dtype for k in stored.keys()} == {
                __import__("torch").float16}
    size = sum(f.stat().st_size for f in zoo_folder().rglob("*") if f.is_file())
    assert size < 40e6
    assert ZOO[TRAINED.index("learned")].config.max_len == first.record["recipe"]["length"]


def test_each_beats_the_unigram_baseline_by_a_wide_margin():
    """At least three times lower: 1.1 nats a token (the README gives each ratio)."""
    ratios = [c.record["unigram_perplexity"] / c.record["held_out_perplexity"] for c in ZOO]
    assert min(ratios) > 3
    text = " ".join(README.read_text(encoding="utf-8").split())
    assert (f"is {min(ratios):.1f} (learned) to {max(ratios):.1f} (RoPE) times lower"
            in text)
    assert ZOO[TRAINED.index("learned")].record["unigram_perplexity"] == pytest.approx(
        ZOO[0].record["unigram_perplexity"])


def test_the_stored_weights_are_the_ones_measured():
    """The record's held-out perplexity (weights as trained, float32) from the shipped
    float16 weights, for one checkpoint (the others take as long each)."""
    checkpoint = ZOO[TRAINED.index("rope")]
    backend = BuiltinBackend(checkpoint.config, str(checkpoint.folder))
    ids = token_stream(backend.tokenizer, checkpoint.held_out())
    measured = perplexity(backend.model, ids, checkpoint.record["recipe"]["length"])
    assert measured == pytest.approx(checkpoint.record["held_out_perplexity"], rel=2e-3)


@pytest.mark.parametrize("kind", TRAINED)
def test_report_runs_each_trained_encoding(kind):
    status, out, err = cli("report", "--weights", "trained", "--pe", kind, "--mask",
                           "causal", "--text", "And God said, Let there be light",
                           "--json", "--quiet")
    assert status == 0, err
    report = json.loads(out)
    assert report["config"]["weights"] == "trained" and report["config"]["pe"] == kind
    assert report["tokens"][:3] == ["And", "God", "said"]
    top = report["outputs"]["predictions"][0]["original"]
    assert report["outputs"]["kind"] == "causal" and sum(top["probabilities"]) < 1


def test_the_readme_table_is_the_records():
    rows = {row[0]: row for row in readme_rows("| encoding | steps |")}
    assert list(rows) == list(TRAINED)
    for checkpoint in ZOO:
        row, record = rows[checkpoint.config.pe], checkpoint.record
        assert row[1] == str(record["steps"])
        assert row[2] == f"{record['final_loss']:.2f}"
        assert row[3] == f"{record['held_out_perplexity']:.1f}"
        assert row[4] == f"{record['seconds'] / 60:.1f}"
    assert f"{ZOO[0].record['unigram_perplexity']:.1f}" in README.read_text()


def test_the_readme_says_what_the_records_hold_of_the_data_and_the_recipe():
    text = " ".join(README.read_text(encoding="utf-8").split())
    record = ZOO[0].record
    data, recipe = record["data"], record["recipe"]
    assert f"{data['held_out_sections']} of {data['sections']}" in text
    assert data["held_out_rule"] == "section i (from 0) where i % 20 == 9"  # the 10th, 30th
    seen = recipe["steps"] * recipe["batch"] * recipe["length"]
    assert f"{recipe['steps']} steps ({seen / 1e6:.1f} M tokens" in text
    assert f"about {seen / data['train_tokens']:.1f} passes" in text
    assert f"{data['train_tokens'] / 1e6:.2f} M training tokens" in text
    assert f"BPE of {recipe['vocab']} tokens" in text
    assert f"windows of {recipe['length']} tokens" in text
    assert (recipe["lr"], recipe["warmup"], recipe["weight_decay"]) == (3e-3, 50, 0.1)
    assert all(c.record["machine"]["threads"] == 1 for c in ZOO)


def test_the_readme_says_what_press2022_and_haviv2022_measure():
    """The README's claims, recomputed: ALiBi and sinusoidal at the training length and
    four times it on press2022's tokens, the unigram baseline on them, and the probe of
    the model without positions (press2022 and haviv2022 take about two minutes each)."""
    from posviz.analysis.experiments import trained
    from posviz.models.corpus import unigram_perplexity
    text = " ".join(README.read_text(encoding="utf-8").split())
    rows = {row[0]: row for row in readme_rows("| encoding | 128 (trained) |")}
    first = ZOO[0]
    ids = token_stream(first.tokenizer(), first.held_out())
    count = trained.PRESS_TOKENS
    assert f"same {count:,} held-out tokens".replace(",", " ") in text
    counts = __import__("numpy").asarray(first.record["token_counts"])
    assert f"unigram {unigram_perplexity(counts, ids[1:count + 1]):.1f} on them" in text
    for kind, lengths in (("alibi", (128, 512)), ("sinusoidal", (128, 512))):
        checkpoint = ZOO[TRAINED.index(kind)]
        model = BuiltinBackend(checkpoint.config, str(checkpoint.folder)).model
        measured = [perplexity(model, ids, n, count) for n in lengths]
        assert rows[kind][1] == f"{measured[0]:.1f}" and rows[kind][3] == f"{measured[1]:.1f}"
        assert rows[kind][4] == f"{measured[1] / measured[0]:.2f}"
    assert rows["learned"][2].startswith("refused")
    from posviz.analysis.engine import Engine
    from posviz.analysis.experiments.probe import probe
    nope = ZOO[TRAINED.index("none")]
    texts = trained.probe_texts(nope)
    assert f"{len(texts)} held-out passages of {len(texts[0].split())} words" in text
    layers = probe(Engine(BuiltinBackend(nope.config, str(nope.folder))), texts).layers
    assert max(row.r2 for row in layers) < 0.035                  # "R² at most 0.03"
    assert f"error {min(r.mae for r in layers):.1f} to {max(r.mae for r in layers):.1f}" \
        f" positions against {layers[0].chance_mae:.1f}" in text
