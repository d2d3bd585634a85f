"""Every text output (report, sweep, probe, compare, paper) starts with one line naming
what made it, with the values of its --json provenance: ``sweep`` began "prefix sweep:
144 runs over 9 texts; noise floor 1.2e-05" with no model, encoding, mask or seeds."""
from __future__ import annotations

import json

import pytest

from posviz.cli import main

SENTENCES = "resources/sentences.txt"


def words(value) -> str:
    if isinstance(value, list):
        return " / ".join(words(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={words(v)}" for k, v in value.items()) or "none"
    return value if isinstance(value, str) else json.dumps(value)


@pytest.mark.parametrize("args", [
    ["report", "--text", "the cat sat on the mat", "--pe", "rope", "--mask", "causal",
     "--seed", "3", "--layers", "2"],
    ["sweep", "--texts", SENTENCES, "--kind", "prefix", "--count", "4", "--seed", "5",
     "--pe", "none", "--mask", "causal", "--layers", "2"],
    ["probe", "--texts", SENTENCES, "--folds", "2", "--layers", "1", "--pe", "alibi"],
    ["compare", "--text", "the cat sat on the mat", "--pe", "none,rope", "--layers", "1",
     "--dtype", "float64"],
    ["paper", "alibi-slopes"],
], ids=lambda args: args[0])
def test_a_text_output_s_first_line_is_its_json_provenance(args, capsys):
    assert main(args) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert main([*args, "--json"]) == 0
    record = json.loads(capsys.readouterr().out)["provenance"]
    said = dict(part.split(" ", 1) for part in first.split(": ", 1)[1].split("; "))
    assert first.startswith(f"made by posviz {record['posviz']}: "), first
    assert said == {key: words(value) for key, value in record.items()
                    if key not in ("posviz", "runs")}, first
    if args[0] == "sweep":
        assert said["seeds"] == "model=0, orders=5", first


def test_a_real_model_s_report_config_says_its_dtype_at_float32_too(tmp_path, capsys):
    """README: "The report's config says both" (dtype, computes_in); at the default
    float32 a real model's config said neither."""
    pytest.importorskip("transformers")
    from test_hf import save_tiny
    save_tiny("bert", tmp_path / "bert")
    assert main(["report", "--model", str(tmp_path / "bert"), "--text", "the dog plays",
                 "--json", "--quiet"]) == 0
    config = json.loads(capsys.readouterr().out)["config"]
    assert (config["dtype"], config["computes_in"]) == ("float32", "float32"), config


@pytest.mark.parametrize("how", ["python", "cli"])
def test_a_symmetry_figure_drawn_by_a_script_names_its_argument(how, monkeypatch):
    """The symmetry figure saved from Python or the command line ended '"Run as given"
    (Position ids) shows the rounding instead': the window's control, not literal=True
    or --literal."""
    import posviz
    from posviz.errors import COMMAND_LINE, spoken_as
    from posviz.gui.plots import headless
    seen = []
    build = headless.build_views

    def keeping(*args, **kwargs):
        views = build(*args, **kwargs)
        seen.append(views.symmetry_note)
        return views
    monkeypatch.setattr(headless, "build_views", keeping)
    report = posviz.load(pe="none", layers=2).compare("the cat sat on the mat")
    if how == "cli":
        with spoken_as(COMMAND_LINE):
            headless.drawn_panel(report.session, report.evaluation)
    else:
        report.figure("symmetry").panel()
    said = "--literal" if how == "cli" else "literal=True"
    assert seen and f"{said} shows the rounding instead" in seen[-1], seen
    assert "Run as given" not in seen[-1]


def test_a_probe_s_provenance_records_no_literal(capsys):
    """A probe runs no reorder, yet its provenance said "literal": false."""
    assert main(["probe", "--texts", SENTENCES, "--folds", "2", "--layers", "1",
                 "--json"]) == 0
    options = json.loads(capsys.readouterr().out)["provenance"]["options"]
    assert "literal" not in options and options["positions"] == "slot", options
