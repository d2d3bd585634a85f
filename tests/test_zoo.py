"""The shipped checkpoints (resources/checkpoints): the built-in model trained alike with
each encoding, small enough to ship, each far better than the unigram baseline, each
run by --weights trained, and the README's tables are theirs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from safetensors import safe_open

from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.training.checkpoint import zoo, zoo_folder
from posviz.models.config import ModelConfig
from posviz.models.training.corpus import token_stream
from posviz.models.encodings import KINDS
from posviz.models.training.train import perplexity
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


SEEDS = json.loads((zoo_folder() / "seeds.json").read_text()) if ZOO else {}


def readme_text() -> str:
    return " ".join(README.read_text(encoding="utf-8").split())


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
        assert checkpoint.start_token and not checkpoint.recipe.init
        assert (checkpoint.path("tokenizer").read_bytes()
                == first.path("tokenizer").read_bytes())
        with safe_open(str(checkpoint.path("weights")), "pt") as stored:
            assert {stored.get_tensor(k).dtype for k in stored.keys()} == {
                __import__("torch").float16}
    size = sum(f.stat().st_size for f in zoo_folder().rglob("*") if f.is_file())
    assert size < 40e6
    assert ZOO[TRAINED.index("learned")].config.max_len == first.record["recipe"]["length"]


def test_each_beats_the_unigram_baseline_by_a_wide_margin():
    """At least seven times lower (the README gives each ratio)."""
    ratios = [c.record["unigram_perplexity"] / c.record["held_out_perplexity"] for c in ZOO]
    assert min(ratios) > 7
    assert (f"is {min(ratios):.1f} (learned) to {max(ratios):.1f} (RoPE) times lower"
            in readme_text())
    assert ZOO[TRAINED.index("learned")].record["unigram_perplexity"] == pytest.approx(
        ZOO[0].record["unigram_perplexity"])


def test_the_stored_weights_are_the_ones_measured():
    """The record's held-out perplexity (weights as trained, float32) from the shipped
    float16 weights, for one checkpoint (the others take as long each)."""
    checkpoint = ZOO[TRAINED.index("rope")]
    backend = BuiltinBackend(checkpoint.config, str(checkpoint.folder))
    ids = token_stream(backend.tokenizer, checkpoint.held_out())
    measured = perplexity(backend.model, ids, checkpoint.recipe.length,
                          start_id=backend.tokenizer.end_id)
    assert measured == pytest.approx(checkpoint.record["held_out_perplexity"], rel=2e-3)


@pytest.mark.parametrize("kind", TRAINED)
def test_report_runs_each_trained_encoding_after_its_pinned_start_token(kind):
    status, out, err = cli("report", "--weights", "trained", "--pe", kind, "--mask",
                           "causal", "--text", "And God said, Let there be light",
                           "--json", "--quiet")
    assert status == 0, err
    report = json.loads(out)
    assert report["config"]["weights"] == "trained" and report["config"]["pe"] == kind
    assert report["tokens"][:4] == ["<|endoftext|>", "And", "God", "said"]
    assert report["order"][0] == 0                       # the start token keeps slot 0
    top = report["outputs"]["predictions"][0]["original"]
    assert report["outputs"]["kind"] == "causal" and sum(top["probabilities"]) < 1


def test_the_readme_table_is_both_seeds_records():
    rows = {row[0]: row for row in readme_rows("| encoding | held-out perplexity |")}
    assert list(rows) == list(TRAINED) == list(SEEDS["encodings"])
    assert SEEDS["seeds"] == [0, 1] and SEEDS["recipe"] == ZOO[0].record["recipe"]
    for checkpoint in ZOO:
        row, by_seed = rows[checkpoint.config.pe], SEEDS["encodings"][checkpoint.config.pe]
        record, zero, one = checkpoint.record, by_seed["0"], by_seed["1"]
        assert zero["held_out_perplexity"] == record["held_out_perplexity"]
        assert zero["order_use"] == record["order_use"]["ratio"]
        for cell, key, digits in ((1, "held_out_perplexity", 1), (2, "order_use", 2),
                                  (3, "order_use_all_but_last_two", 2),
                                  (4, "training_minutes", 1)):
            assert row[cell] == f"{zero[key]:.{digits}f} / {one[key]:.{digits}f}", (
                checkpoint.config.pe, key)
        assert max(zero["training_minutes"], one["training_minutes"]) <= 20
    assert f"{ZOO[0].record['unigram_perplexity']:.1f}" in README.read_text()


def test_the_readme_says_only_what_holds_in_both_seeds():
    from posviz.analysis.experiments.seeds import in_both
    text = readme_text()
    relative, others = ("rope", "t5", "alibi"), ("sinusoidal", "learned", "none")

    def span(kinds, key, digits):
        values = [SEEDS["encodings"][k][s][key] for k in kinds for s in ("0", "1")]
        return f"{min(values):.{digits}f} to {max(values):.{digits}f}"
    assert f"lower perplexity ({span(relative, 'held_out_perplexity', 1)})" in text
    assert f"the absolute ones and NoPE ({span(others, 'held_out_perplexity', 1)})" in text
    assert (f"use order more ({span(relative, 'order_use', 2)} against "
            f"{span(others, 'order_use', 2)})") in text
    assert in_both(SEEDS, lambda m: max(m[k]["held_out_perplexity"] for k in relative)
                   < min(m[k]["held_out_perplexity"] for k in others))
    assert in_both(SEEDS, lambda m: min(m[k]["order_use"] for k in relative)
                   > max(m[k]["order_use"] for k in others))
    gap = max(m["none"][s]["held_out_perplexity"] / min(
        m[k][s]["held_out_perplexity"] for k in ("sinusoidal", "learned")) - 1
        for m in [SEEDS["encodings"]] for s in ("0", "1"))
    assert f"within {100 * gap:.1f} % of the sinusoidal and learned ones" in text
    flips = [SEEDS["encodings"]["learned"][s]["held_out_perplexity"]
             > SEEDS["encodings"]["none"][s]["held_out_perplexity"] for s in ("0", "1")]
    assert flips == [True, False]                 # "behind NoPE in seed 0, ahead in seed 1"
    # press2022 at four times the training length, both seeds
    growth = {k: [SEEDS["encodings"][k][s]["perplexity_at"]["512"]
                  / SEEDS["encodings"][k][s]["perplexity_at"]["128"] for s in ("0", "1")]
              for k in ("alibi", "t5", "none", "rope", "sinusoidal")}
    assert all(0.96 < g < 0.98 for g in growth["alibi"])           # "3 % better"
    assert all(abs(g - 1) < 0.01 for g in growth["t5"])            # "within 1 %"
    assert (f"the model without positions {100 * (growth['none'][0] - 1):.0f} % (seed 0) "
            f"and {100 * (growth['none'][1] - 1):.0f} % (seed 1) worse") in text
    assert (f"RoPE {growth['rope'][0]:.1f} and {growth['rope'][1]:.1f} times and "
            f"sinusoidal {growth['sinusoidal'][0]:.1f} and {growth['sinusoidal'][1]:.1f} "
            f"times worse") in text


def test_the_readme_says_what_the_records_hold_of_the_data_and_the_recipe():
    text = readme_text()
    record = ZOO[0].record
    data, recipe = record["data"], record["recipe"]
    assert f"{data['held_out_sections']} of {data['sections']} chapters" in text
    assert data["held_out_rule"] == "the books Est, Job, John, Rev (bible -f's names)"
    assert f"{data['held_out_tokens']:,} tokens".replace(",", " ") in text
    assert f"{100 * data['held_out_8gram_overlap']:.2f} % of their word 8-grams" in text
    assert data["held_out_8gram_overlap"] <= 0.005
    seen = recipe["steps"] * recipe["batch"] * recipe["length"]
    assert f"{recipe['steps']} steps ({seen / 1e6:.1f} M tokens" in text
    assert f"about {seen / data['train_tokens']:.1f} passes" in text
    assert f"{data['train_tokens'] / 1e6:.2f} M training tokens" in text
    assert f"BPE of {recipe['vocab']} tokens" in text
    assert f"windows of {recipe['length']} slots" in text
    assert f"{recipe['batch']} windows a step" in text
    assert (recipe["lr"], recipe["warmup"], recipe["weight_decay"], recipe["start"]) == (
        3e-3, 100, 0.1, True)
    assert all(c.record["machine"]["threads"] == 1 for c in ZOO)


def test_the_readme_says_what_press2022_and_haviv2022_measure():
    """The README's claims, recomputed: ALiBi and sinusoidal at the training length and
    four times it on press2022's tokens, the unigram baseline on them, and the linear
    probe of the model without positions and of the order-blind control."""
    from posviz.analysis.experiments import trained
    from posviz.models.training.corpus import unigram_perplexity
    text = readme_text()
    rows = {row[0]: row for row in readme_rows("| encoding | 128 (trained) |")}
    first = ZOO[0]
    tokenizer = first.tokenizer()
    ids = token_stream(tokenizer, first.held_out())
    count = trained.PRESS_TOKENS
    assert f"same {count:,} held-out tokens".replace(",", " ") in text
    counts = __import__("numpy").asarray(first.record["token_counts"])
    assert first.start_token                  # every token is predicted, the first too
    assert f"unigram {unigram_perplexity(counts, ids[:count]):.1f} on them" in text
    for kind, lengths in (("alibi", (128, 512)), ("sinusoidal", (128, 512))):
        checkpoint = ZOO[TRAINED.index(kind)]
        model = BuiltinBackend(checkpoint.config, str(checkpoint.folder)).model
        measured = [perplexity(model, ids, n, count, start_id=tokenizer.end_id)
                    for n in lengths]
        assert rows[kind][1] == f"{measured[0]:.1f}" and rows[kind][3] == f"{measured[1]:.1f}"
        assert rows[kind][4] == f"{measured[1] / measured[0]:.2f}"
        assert rows[kind][5] == f"{checkpoint.record['order_use']['ratio']:.2f}"
    assert rows["learned"][2].startswith("refused")
    from posviz.analysis.engine import Engine
    from posviz.analysis.experiments.probe import probe
    nope, control = ZOO[TRAINED.index("none")], trained.controls()[0]
    texts = trained.probe_texts(nope)
    assert f"{len(texts)} held-out passages of {len(texts[0].split())} words" in text
    best = [max(row.r2 for row in probe(Engine(BuiltinBackend(c.config, str(c.folder))),
                                        texts).layers[1:]) for c in (nope, control)]
    assert f"0.{round(100 * best[0])} (linear)" in text and best[0] > 0.8
    assert f"against 0.{round(100 * best[1]):02d} and" in text and best[1] < 0.2
    assert control.record["order_use"]["ratio"] < 1.05
