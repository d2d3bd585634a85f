"""Each paper preset against the paper's qualitative claim (and its command)."""
import json

import numpy as np
import pytest

from posviz.analysis.experiments import papers
from posviz.cli import main
from posviz.errors import PosvizInputError


def test_alibi_slopes_are_the_papers_geometric_sequence():
    check = papers.alibi_slopes()
    heads = len(check.values["measured"])
    expected = [2.0 ** (-8 * h / heads) for h in range(1, heads + 1)]   # Press et al. 2022
    assert check.values["measured"] == pytest.approx(expected, rel=1e-4)
    assert check.holds


def test_rope_decays_for_aligned_vectors_not_for_random_ones():
    values = papers.rope_decay().values
    assert values["aligned_far"] < 0.6 * values["aligned_near"]
    assert 0.7 < values["random_ratio"] < 1.4


def test_an_offset_changes_absolute_positions_but_not_rope():
    check = papers.sinha2022()
    floor = check.values["noise_floor"]
    for pe in ("sinusoidal", "learned"):
        assert check.values[pe]["output_change"] > 100 * floor
    assert check.values["rope"]["score_change"] <= floor
    assert check.values["rope"]["output_change"] <= floor
    assert check.holds


def test_attention_output_variance_shrinks_with_position_without_positions():
    check = papers.chi2023()
    spread = np.array(check.values["variance_by_position"])
    assert check.values["rank_correlation_with_position"] < -0.9
    assert spread[-4:].mean() < 0.5 * spread[:2].mean()
    assert check.holds


def test_a_causal_mask_leaks_position_and_a_bidirectional_one_does_not():
    check = papers.haviv2022()
    causal, bidirectional = check.values["causal"], check.values["bidirectional"]
    assert all(row["mae"] < 0.9 * row["chance_mae"] for row in causal[1:])
    assert all(row["mae"] > 0.95 * row["chance_mae"] for row in bidirectional)
    assert check.holds


def test_paper_command(capsys):
    from posviz.cli.paper import PAPERS
    assert PAPERS == papers.PAPERS and set(papers.PRESETS) <= set(PAPERS)
    assert main(["paper", "alibi-slopes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"name", "citation", "reports", "measures", "values", "holds"} <= set(data)
    assert "Press" in data["citation"]
    assert main(["paper", "vaswani2017"]) == 2
    assert "must be one of" in capsys.readouterr().err
    with pytest.raises(PosvizInputError):
        papers.check_paper("nope")
