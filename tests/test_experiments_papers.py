"""Each paper preset against the paper's qualitative claim (and its command)."""
import json

import numpy as np
import pytest

from posviz.analysis.experiments import papers
from posviz.analysis.experiments.claim import PaperCheck
from posviz.cli import main
from posviz.errors import PosvizInputError


def reference_slopes(n: int) -> list[float]:
    """Press et al.'s reference code (attention_with_linear_biases, get_slopes)."""
    import math

    def power_of_2(n):
        start = 2 ** (-2 ** -(math.log2(n) - 3))
        return [start * start ** i for i in range(n)]
    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + reference_slopes(2 * closest)[0::2][:n - closest]


def test_alibi_slopes_are_the_papers_rule_for_6_8_and_12_heads():
    check = papers.alibi_slopes()
    heads = len(check.values["measured"])
    expected = [2.0 ** (-8 * h / heads) for h in range(1, heads + 1)]   # Press et al. 2022
    assert check.values["measured"] == pytest.approx(expected, rel=1e-4)
    for count in (6, 12):                   # where 2^(-8h/H) is off by up to 0.69 (12)
        measured = check.values["by_heads"][str(count)]["measured"]
        assert measured == pytest.approx(reference_slopes(count), rel=1e-4)
        closed_form = [2.0 ** (-8 * h / count) for h in range(1, count + 1)]
        assert measured != pytest.approx(closed_form, rel=1e-2)
    assert "power of" in check.reports and "6, 8 and 12 heads" in check.measures
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
    # the record is read in the window and on the command line: it names no flag
    assert "--" not in check.tests and "same check on trained weights" in check.tests


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
    # the verdict reads quadratic features, and says so; the linear probe is beside it
    assert check.values["features"] == "quadratic" and "quadratic" in check.tests
    linear = check.values["linear"]["causal"]
    worst = max(row["mae"] / row["chance_mae"] for row in linear[1:])
    assert worst > 0.9 and not check.values["holds_linear"]
    assert f"{worst:.2f} × chance" in check.measures and "does not hold" in check.measures


@pytest.mark.parametrize("name", ["chi2023", "rope-decay", "alibi-slopes", "sinha2022"])
def test_every_check_names_its_weights_and_the_claim_it_tests(name, capsys):
    assert main(["paper", name, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["weights"] == "random"
    if name == "rope-decay":
        assert data["ran_on"].startswith("no model") and "seed 0" in data["ran_on"]
    else:
        assert data["ran_on"].startswith("the built-in model, untrained") and \
            "seed 0" in data["ran_on"]
    assert data["tests"].startswith("What the")          # what the architecture implies
    assert main(["paper", name]) == 0
    out = capsys.readouterr().out
    assert "ran on:   random weights: " in out and "\ntests:    What the" in out
    assert "holds here: yes (on random weights), for the claim under tests" in out
    if name == "sinha2022":                   # its trained check, as this command runs it
        assert "(--weights trained runs it on trained models)" in " ".join(out.split())


def test_one_record_per_paper_with_its_title():
    assert [p.name for p in papers.CATALOGUE] == list(papers.PAPERS)
    assert set(papers.PRESETS) | set(papers.TRAINED_PRESETS) == set(papers.PAPERS)
    assert papers.TITLES["haviv2022"].startswith("Haviv et al. 2022 — ")
    assert all(" et al. 20" in title for title in papers.TITLES.values())


def test_paper_command(capsys):
    assert main(["paper", "alibi-slopes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"name", "citation", "reports", "measures", "values", "holds"} <= set(data)
    assert "Press" in data["citation"]
    assert main(["paper", "vaswani2017"]) == 2
    assert "must be one of" in capsys.readouterr().err
    with pytest.raises(PosvizInputError):
        papers.check_paper("nope")


PRESS_VALUES = {
    "train_length": 128, "lengths": [128, 256, 512], "tokens": 32768,
    "unigram_perplexity": 377.38298162368653,
    "perplexity": {"sinusoidal": {"128": 81.64691274565965, "256": 98.24792538642134,
                                  "512": 115.62615320001589},
                   "learned": {"128": 105.81049332876148, "256": None, "512": None},
                   "alibi": {"128": 67.70703511915616, "256": 67.08837501112136,
                             "512": 66.85152327255722}},
    "growth_at_4x": {"sinusoidal": 1.4161729979944966, "alibi": 0.9873645058435457},
    "refused": {"learned": "its learned table has 128 positions: longer is refused"}}
PROBE = [{"layer": k, "r2": r2, "mae": 17.9 - k / 10, "chance_mae": 17.9}
         for k, r2 in enumerate([0.74, 0.25, 0.031, -0.012])]


def printed_values(capsys, monkeypatch, name, values) -> list[str]:
    """The lines ``posviz paper NAME`` prints under "values:" for ``values``."""
    check = PaperCheck(name, "c", "r", "m", values, True, weights="trained")
    monkeypatch.setattr(papers, "check_paper", lambda *a, **k: check)
    assert main(["paper", name]) == 0
    out = capsys.readouterr().out.splitlines()
    return out[out.index("values:") + 1:-1]


def test_paper_prints_press2022_as_its_readme_table(capsys, monkeypatch):
    lines = printed_values(capsys, monkeypatch, "press2022", PRESS_VALUES)
    assert not any("{" in line or '"' in line for line in lines)
    header = next(line for line in lines if "128 (trained)" in line)
    assert header.endswith("512  512 / 128")
    rows = {line.split()[0]: line.split()[1:] for line in lines[lines.index(header) + 1:]
            if line.split() and line.split()[0] in PRESS_VALUES["perplexity"]}
    assert rows == {"sinusoidal": ["81.6", "98.2", "115.6", "1.42"],
                    "learned": ["105.8", "refused", "refused", "—"],
                    "alibi": ["67.7", "67.1", "66.9", "0.99"]}
    table = lines[lines.index(header):lines.index(header) + 4]
    assert len({len(line) for line in table}) == 1            # right-aligned columns
    assert "unigram perplexity: 377.4" in [" ".join(line.split()) for line in lines]
    assert any("learned: its learned table has 128 positions" in line for line in lines)


def test_paper_prints_probe_runs_as_tables_by_layer(capsys, monkeypatch):
    values = {"none": PROBE, "sinusoidal": PROBE, "perplexity": {"none": 80.0,
                                                                 "sinusoidal": 85.7}}
    lines = printed_values(capsys, monkeypatch, "haviv2022", values)
    assert len(lines) < 20 and not any("{" in line for line in lines)
    r2 = lines.index("  probe R² (held out) by layer:")
    assert lines[r2 + 1].split() == ["in", "1", "2", "3"]    # layer 0: as the plots say
    assert lines[r2 + 2].split() == ["none", "0.740", "0.250", "0.031", "-0.012"]
    assert len({len(line) for line in lines[r2 + 1:r2 + 4]}) == 1
    assert any(line.split() == ["none:", "80.0"] for line in lines)


def test_rope_s_bound_by_distance_is_roformer_s_and_holds_over_the_aligned_pair():
    values = papers.rope_decay().values
    aligned, bound = (np.array(values[k]) for k in ("aligned_by_distance",
                                                     "bound_by_distance"))
    assert aligned.shape == bound.shape == (512,)
    assert bound[0] == pytest.approx((64 / 2 + 1) / 2)        # sum_j j over pairs, × 2/d
    assert aligned[0] == pytest.approx(1.0)                   # q · k / d_head, q = k = 1
    assert np.all(aligned <= bound + 1e-12)
    assert bound[256:].mean() < 0.3 * bound[0]                # the bound decays
    assert aligned[1:9].mean() == pytest.approx(values["aligned_near"])
    assert np.array(values["random_by_distance"])[256:].mean() == pytest.approx(
        values["random_far"])


def test_paper_prints_a_long_curve_by_its_ends_and_a_short_one_whole(capsys, monkeypatch):
    values = {"bound_by_distance": [16.5 - k / 100 for k in range(512)],
              "measured": [0.5, 0.25, 0.00390625]}
    lines = printed_values(capsys, monkeypatch, "rope-decay", values)
    assert lines == ["  bound by distance: 512 values, 16.5 … 11.4 (all of them in --json)",
                     "  measured: 0.5, 0.25, 0.00391"]


@pytest.mark.parametrize("name, encoding, mask, options", [
    ("alibi-slopes", ["alibi", "none"], "causal", {"layers": 1}),
    ("chi2023", "none", "causal", {"layers": 2, "heads": 4}),
    ("sinha2022", ["sinusoidal", "learned", "rope"], "bidirectional", {"layers": 4}),
])
def test_a_paper_checks_provenance_names_what_it_ran(name, encoding, mask, options,
                                                    capsys):
    """The record says the models the check's own text names: their encodings, mask,
    seed and sizes (the one provenance function, fed from the check's models)."""
    assert main(["paper", name, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    record = data["provenance"]
    assert record["model"] == "built-in" and f"seed {record['seeds']['model']}" in \
        data["ran_on"]
    assert record["encoding"] == encoding and record["mask"] == mask
    texts = {"texts": 1} if name == "chi2023" else {}     # its random texts' seed
    assert record["weights"] == "random" and record["seeds"] == {"model": 0, **texts}
    assert options.items() <= record["options"].items()
    assert record["options"]["paper"] == name and "models" not in data


@pytest.mark.parametrize("name, runs", [
    ("alibi-slopes", [(pe, heads) for heads in (6, 8, 12) for pe in ("alibi", "none")]),
    ("sinha2022", [(pe, 4) for pe in ("sinusoidal", "learned", "rope")]),
])
def test_a_paper_check_records_each_model_run_whole(name, runs, capsys):
    """One record per model run, in the order run, each the provenance of that model:
    its encoding beside its own heads, mask, weights, seeds and options, equal in
    Python and on the command line; the shared keys keep nothing a run differs in but
    the headline settings."""
    import posviz
    assert main(["paper", name, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["provenance"]
    assert posviz.paper(name).to_dict()["provenance"] == record
    assert [(run["encoding"], run["options"]["heads"]) for run in record["runs"]] == runs
    for run in record["runs"]:
        assert set(run) == {"model", "encoding", "mask", "weights", "seeds", "dtype",
                            "options"}
        assert (run["mask"], run["weights"], run["seeds"]) == (
            record["mask"], "random", {"model": 0})
        assert "paper" not in run["options"]
    assert not any(isinstance(value, list) for value in record["options"].values())
