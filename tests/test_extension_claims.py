"""The README's context-extension table and sentences against the lab's stored runs
(docs/context-extension.json: `posviz extend --json` on the seed-0 and seed-1
checkpoints), and two of its cells recomputed from the shipped checkpoints by a forward
pass that shares no code with posviz's (tests/zoo_reference.py)."""
from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest
from zoo_reference import Reference, held_out_ids

ROOT = Path(__file__).resolve().parents[1]
RUNS = json.loads((ROOT / "docs" / "context-extension.json").read_text())["seeds"]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Context extension"):README.index("## Sessions and")]
PROSE = " ".join(SECTION.split())


def growth(seed: str, method: str) -> float:
    """Perplexity at the longest length over perplexity at the training length."""
    run = RUNS[seed]
    ppl = run["methods"][method]["perplexity"]
    return ppl[str(run["lengths"][-1])] / ppl[str(run["train_length"])]


def table_rows() -> dict[str, list[str]]:
    rows = {}
    for line in SECTION.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and cells[0] in RUNS["0"]["methods"]:
            rows[cells[0]] = cells[1:]
    return rows


def test_both_seeds_ran_every_method_at_four_lengths_to_eight_times_the_training_length():
    for run in RUNS.values():
        assert run["lengths"] == [128, 256, 512, 1024] and run["train_length"] == 128
        assert set(run["methods"]) == {"rope", "pi", "ntk", "yarn", "drope", "alibi", "t5",
                                       "none"}


def test_the_table_is_the_stored_runs_of_both_seeds():
    rows = table_rows()
    assert set(rows) == set(RUNS["0"]["methods"])
    for method, cells in rows.items():
        runs = [RUNS[s]["methods"][method] for s in ("0", "1")]
        for n, cell in zip(RUNS["0"]["lengths"], cells):
            assert cell == " / ".join(f"{r['perplexity'][str(n)]:.1f}" for r in runs)
        assert cells[4] == " / ".join(f"{growth(s, method):.2f}" for s in ("0", "1"))
        assert cells[5] == " / ".join(f"{r['attention']['1024'][-1] * 100:.0f} %"
                                      for r in runs)


def test_the_sentences_hold_in_both_seeds():
    both = ("0", "1")
    assert all(growth(s, "rope") > 2.5 for s in both)
    assert "(2.7 and 2.8 times" in PROSE
    scalings = [[growth(s, m) for m in ("yarn", "ntk", "pi")] for s in both]
    assert all(g == sorted(g) for g in scalings)       # YaRN, then NTK-aware, then PI
    assert "YaRN holds best (1.6 and 1.5 times), then NTK-aware (1.8 both) and " \
           "interpolation (2.0 and 1.9)" in PROSE
    assert [f"{growth(s, m):.1f}" for s in both for m in ("yarn", "ntk", "pi")] == \
        ["1.6", "1.8", "2.0", "1.5", "1.8", "1.9"]
    assert all(f"{growth(s, 'alibi'):.2f}" == "0.96" for s in both)
    assert all(abs(growth(s, "t5") - 1) < 0.09 for s in both) and "T5 within 9 %" in PROSE
    grown = [growth(s, m) for s in both for m in ("none", "drope")]
    assert 1.55 < min(grown) and max(grown) < 1.95 and "1.6 to 1.9 times" in PROSE
    less = [growth(s, "none") < growth(s, "drope") for s in both]
    assert less[0] != less[1] and "differs between the seeds" in PROSE
    far = [RUNS[s]["methods"]["rope"]["attention"]["1024"][-1] for s in both]
    assert [f"{f * 100:.0f}" for f in far] == ["47", "43"] and "(47 % and 43 %" in PROSE
    for run in RUNS.values():
        for row in run["methods"].values():
            for n, value in row["retrieval"].items():
                se = row["retrieval_se"][n]
                assert abs(value) <= 2 * se and se < 0.05
            assert max(row["copy"].values()) <= 1 / 480 + 1e-12
    assert "within two standard errors of 0" in PROSE and "1 token in 480" in PROSE


def perplexity(model: Reference, ids: np.ndarray, end: int, length: int,
               tokens: int) -> float:
    """Non-overlapping windows of ``length`` predictions, each input starting with the
    end-of-text token, as the lab measures them."""
    targets = ids[:tokens].reshape(-1, length)                              # (W, n)
    inputs = np.concatenate([np.full((len(targets), 1), end), targets[:, :-1]], 1)
    total = 0.0
    for k in range(0, len(inputs), 4):
        logits = model.logits(inputs[k:k + 4])                              # (b, n, V)
        logits = logits - logits.max(-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        picked = np.take_along_axis(log_p, targets[k:k + 4, :, None], -1)
        total -= picked.sum()
    return math.exp(total / tokens)


@pytest.mark.parametrize("method, length", [("rope", 128), ("alibi", 1024)])
def test_a_cell_recomputed_by_an_independent_forward(method, length):
    folder = ROOT / "resources" / "checkpoints" / method
    ids, end = held_out_ids(folder)
    run = RUNS["0"]
    found = perplexity(Reference(folder), ids, end, length, run["tokens"])
    assert found == pytest.approx(run["methods"][method]["perplexity"][str(length)],
                                  rel=1e-3)
    assert re.search(r"seed 0 \(the shipped checkpoints", PROSE)
