"""The random texts of ``paper chi2023`` ("averaged over 64 random texts
of 32 tokens") and of ``probe`` without --texts were drawn from seeds the provenance did
not record (its seeds held the model's only): each records its texts' seed, in the JSON,
the made-by line and a figure's metadata."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.analysis.experiments.texts import GENERATED_SEED, PAPER_TEXT_SEEDS, random_texts
from posviz.cli import main


def run(capsys, args) -> tuple[dict, str]:
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["provenance"]
    assert main(args) == 0
    return record, capsys.readouterr().out.splitlines()[0]


def test_a_paper_check_records_its_random_texts_seed(capsys):
    record, first = run(capsys, ["paper", "chi2023"])
    assert record["seeds"] == {"model": 0, "texts": PAPER_TEXT_SEEDS["chi2023"]} == \
        {"model": 0, "texts": 1}, record
    assert "seeds model=0, texts=1;" in first, first
    facts = posviz.paper("chi2023").file_facts()          # what its figure's file holds
    assert json.loads(facts["seeds"]) == record["seeds"], facts
    record, _ = run(capsys, ["paper", "alibi-slopes"])      # no random texts: none said
    assert "texts" not in record["seeds"], record


def test_a_probe_records_the_seed_of_the_texts_it_generates(capsys):
    args = ["probe", "--layers", "1", "--d-model", "16", "--heads", "2", "--folds", "2"]
    record, first = run(capsys, args)
    assert record["seeds"] == {"model": 0, "texts": GENERATED_SEED} == \
        {"model": 0, "texts": 0}, record
    assert "seeds model=0, texts=0;" in first, first
    probe = posviz.probe(layers=1, d_model=16, heads=2, folds=2)
    assert probe.to_dict()["provenance"] == record
    assert json.loads(probe.file_facts()["seeds"]) == record["seeds"]
    given, _ = run(capsys, [*args, "--texts", "resources/sentences.txt"])
    assert given["seeds"] == {"model": 0}, given              # texts given: none drawn


def test_the_readme_says_the_generated_texts_seed_and_the_seed_draws_them():
    """The README's claim: the probe's generated texts come from seed 0, recorded; the
    seed recorded draws them again (random_texts of that seed: a batch of 16)."""
    with open("README.md", encoding="utf-8") as readme:
        text = " ".join(readme.read().split())
    assert 'from seed 0, fixed: its provenance\'s seeds say `"texts": 0`' in text
    from posviz.analysis.experiments import probe
    from posviz.analysis.engine import Engine
    engine = Engine(posviz.load(layers=1, d_model=16, heads=2, progress=False).backend)
    drawn = probe.generated_texts(engine, "linear", 2)[:16]   # the first seed's batch
    assert drawn and drawn == random_texts(16, probe.GENERATED_WORDS, GENERATED_SEED,
                                           probe.GENERATED_VOCABULARY)[:len(drawn)]
