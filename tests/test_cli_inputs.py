"""Inputs as people give them and outputs that read well at length: texts from files or
standard input, a window without a display, long orders shortened, a real model's run
told layer by layer, a probe's layer 0 written as its plots write it."""
from __future__ import annotations

import io
import re
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import posviz
from posviz.cli import main

ROOT = Path(__file__).resolve().parents[1]
TEXT = "the cat sat on the mat"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("command", [["report"], ["sweep", "--count", "3"],
                                     ["compare", "--pe", "none,rope"]])
def test_a_text_file_is_the_text(command, tmp_path, capsys):
    path = tmp_path / "text.txt"
    path.write_text(TEXT + "\n", encoding="utf-8")
    _, given, _ = run(capsys, *command, "--text", TEXT, "--json")
    code, read, err = run(capsys, *command, "--text-file", str(path), "--json")
    assert code == 0, err
    given, read = json.loads(given), json.loads(read)
    # the text as read (a report keeps its tokens only), then the same tokens and numbers
    assert read.pop("text", read.pop("texts", None)) in (None, TEXT + "\n", [TEXT + "\n"])
    given.pop("text", given.pop("texts", None))
    assert read == given


def test_standard_input_holds_a_text_no_command_line_could(tmp_path):
    words = " ".join(f"w{i % 50}" for i in range(30000))      # past the argument limit
    done = subprocess.run([sys.executable, "-m", "posviz", "report", "--pe", "rope",
                           "--layers", "1", "--text-file", "-", "--json"], input=words,
                          capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "POSVIZ_MEMORY": "1M"})
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "for 30,000 tokens" in done.stderr          # read whole, refused by the guard


@pytest.mark.parametrize("argv, says", [
    (["report", "--text", "a", "--text-file", "x"], "give --text or --text-file, not both"),
    (["report", "--text-file", "/no/such/file"], "--text-file /no/such/file: No such file "
     "or directory"),
    (["sweep", "--texts", "/no/such/file"], "--texts /no/such/file: No such file or "
     "directory"),
    (["report", "--text-file", "DIR"], "--text-file DIR: Is a directory"),
    (["probe", "--text-file", "FILE"], "the probe holds whole texts out"),
])
def test_text_file_refusals_are_one_line(argv, says, capsys, tmp_path):
    if argv[-1] == "FILE":
        argv[-1] = str(tmp_path / "t.txt")
        Path(argv[-1]).write_text(TEXT)
    if argv[-1] == "DIR":                        # a folder given for a file
        argv[-1], says = str(tmp_path), says.replace("DIR", str(tmp_path))
    code, _, err = run(capsys, *argv)
    assert code == 2 and err.count("\n") == 1 and says in err


def test_the_window_without_a_display_says_so_in_one_line():
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([sys.executable, "-m", "posviz"], capture_output=True, text=True,
                          timeout=120, env={**env, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("posviz: error: no display found")
    assert done.stderr.count("\n") == 1 and "QT_QPA_PLATFORM=offscreen" in done.stderr
    assert "posviz report" in done.stderr


def test_a_long_order_is_told_by_its_ends(capsys):
    text = " ".join(f"w{i}" for i in range(300))
    code, out, _ = run(capsys, "report", "--layers", "1", "--text", text)
    assert code == 0
    assert max(map(len, out.splitlines())) < 300                # no line of 1,500 characters
    order = next(line for line in out.splitlines() if line.startswith("order:"))
    assert order.startswith("order:  299,298,") and "…(284 more)…" in order
    report = posviz.load(layers=1).compare(text)
    assert len(repr(report)) < 150 and "300 tokens" in repr(report)
    assert report.order == list(range(299, -1, -1))              # every number kept
    code, out, _ = run(capsys, "compare", "--layers", "1", "--pe", "none,rope", "--text",
                       text)                  # compare's table too: it printed 1,500
    assert code == 0 and max(map(len, out.splitlines())) < 300, out
    order = next(line for line in out.splitlines() if line.startswith("order:"))
    assert order.startswith("order:  299,298,") and "…(284 more)…" in order


def told_comparison(tmp_path) -> tuple[list[str], int]:
    """A tiny saved llama's comparison of TEXT told by a StepPrinter: (its lines, its
    number of layers)."""
    pytest.importorskip("transformers")
    from test_hf import save_tiny

    from posviz.api import StepPrinter
    folder = tmp_path / "llama"
    save_tiny("llama", folder)
    stream = io.StringIO()
    model = posviz.load(str(folder))
    model.compare(TEXT, progress=StepPrinter(stream, tick=0))
    # each block's entry (its parts, told too at tick 0, aside), without its forward's
    # place among the report's ("forward 1 of 3, ")
    lines = [re.sub(r": forward \d of 3, ", ": ", line)
             for line in stream.getvalue().splitlines() if " (" not in line]
    return lines, model.describe()["layers"]


def test_a_real_models_run_is_told_layer_by_layer(tmp_path):
    lines, layers = told_comparison(tmp_path)
    assert "posviz: running the original order" in lines
    # its time left at its first block: the forwards before's (all three of 3 blocks)
    assert any(line.startswith(f"posviz: running the chosen order: layer 1 of {layers}")
               for line in lines)
    assert any(line.startswith("posviz: running the chosen order: layer 2 of "
                               f"{layers}, about ") and line.endswith(" s left")
               for line in lines)
    assert not any("about 0 s" in line for line in lines)


def test_each_forward_of_a_comparison_names_its_run(tmp_path):
    """A RoPE model's original order runs again at shifted positions for its noise
    floor (analysis.floor): told as "running the original order", its layers seemed to
    start anew at "layer 3 of 30" after "layer 30 of 30"."""
    FLOOR_RUN = "the original order at shifted positions, for the noise floor"
    lines, layers = told_comparison(tmp_path)
    runs = ["running the original order", f"running {FLOOR_RUN}", "running the chosen order"]
    for run in runs:                                # each run's layers once, by its name
        told = [int(line.split(": layer ")[1].split(" of ")[0]) for line in lines
                if line.startswith(f"posviz: {run}: layer ")]
        assert told == list(range(1, layers + 1)), lines
    firsts = [line.split(", about")[0] for line in lines
              if line.split(", about")[0].endswith(f": layer 1 of {layers}")]
    assert firsts == [f"posviz: {run}: layer 1 of {layers}" for run in runs], lines
    assert f"posviz: running {FLOOR_RUN}" in lines        # its start, as the others'


def test_a_probe_writes_layer_0_as_its_verdict_and_plots_do(capsys):
    code, out, _ = run(capsys, "probe", "--pe", "sinusoidal", "--layers", "2")
    assert code == 0
    rows = [line.split()[0] for line in out.splitlines()[-5:-2]]
    assert rows == ["in", "1", "2"]
    assert "layer 0" not in out and "layer in" in out


def test_a_probe_on_generated_texts_says_how_many_it_ran(capsys):
    """The text says the count the JSON holds, in Python too (not the texts given: none)."""
    argv = ("probe", "--pe", "none", "--mask", "causal", "--layers", "1")
    code, out, _ = run(capsys, *argv, "--json")
    texts = json.loads(out)["texts"]
    assert code == 0 and texts > 2
    code, out, _ = run(capsys, *argv)
    assert code == 0 and f" tokens of {texts} texts, " in out.splitlines()[1]
    assert posviz.probe(pe="none", mask="causal", layers=1).texts == texts


@pytest.mark.parametrize("kind, used", [
    ("swap", {"kind": "swap"}), ("reverse", {"kind": "reverse"}),
    ("random", {"kind": "random", "count": 3, "seed": 0}),
])
def test_a_sweep_records_only_what_its_run_read(kind, used, capsys, tmp_path):
    """A swap sweep's JSON said count 32 and seed 0: it runs every swap, drawing no
    orders. Its JSON, provenance and CSV (and Python's to_dict) hold what the run read."""
    count = ["--count", "3"] if kind == "random" else []   # refused by a fixed set
    argv = ["sweep", "--kind", kind, "--layers", "1", *count, "--text", TEXT]
    code, out, err = run(capsys, *argv, "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {key: data[key] for key in ("kind", "count", "seed") if key in data} == used
    made = data["provenance"]
    assert ("orders" in made["seeds"]) == ("seed" in used)
    assert ("count" in made["options"]) == ("count" in used)
    assert made["options"].get("layer", 1) == 1          # a swap map's layer: the last
    assert ("layer" in made["options"]) == (kind == "swap")
    code, _, _ = run(capsys, *argv, "--csv", str(tmp_path / "s.csv"))
    header = [line for line in (tmp_path / "s.csv").read_text().splitlines()
              if line.startswith("# ")]
    assert ("# count: 3" in header) == ("count" in used)
    python = posviz.sweep(TEXT, kind=kind, layers=1, **({"count": 3} if count else {}))
    python = python.to_dict()
    assert python == data


@pytest.mark.parametrize("command, refused", [
    ("probe", ["--order", "--text", "--text-file", "--literal"]),
    ("sweep", ["--order"]),
])
def test_help_lists_no_flag_the_command_refuses(command, refused, capsys):
    """probe -h listed --order, --text and --literal, which probe refuses."""
    with pytest.raises(SystemExit):
        main([command, "-h"])
    said = capsys.readouterr().out.replace("[", " ").replace("]", " ").split()
    assert not set(refused) & set(said), said


def test_a_refusal_s_big_numbers_are_grouped(capsys, monkeypatch):
    """'about 24720000.0 GB of measurements', 'needs about 5200076.8 GB' read badly: big
    sizes are whole and grouped, and a line's counts are grouped alike."""
    from posviz.models.limits import memory
    assert memory.size_text(24_720_000 * 10**9) == "24,720,000 GB"
    assert memory.size_text(5_200_076_800_000_000) == "5,200,077 GB"
    assert memory.size_text(51_600_000_000) == "51.6 GB"
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 10**9)
    code, _, err = run(capsys, "sweep", "--layers", "1", "--d-model", "16", "--heads", "2",
                       "--count", "10000000", "--text",   # in the time bound (guard.PACE)
                       " ".join(f"w{i}" for i in range(800)))
    assert code == 2 and "GB of measurements (10,000,000 runs of 800 tokens)" in err, err
    assert ".0 GB" not in err and err.count("\n") == 1


def test_an_empty_out_is_refused_not_the_current_folder(capsys, tmp_path, monkeypatch):
    """`export --out ""` wrote every figure into the current folder (Path("") is ".")."""
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "export", "--layers", "1", "--heads", "2", "--d-model",
                           "16", "--text", "the cat sat", "--out", "", "--format", "png")
    assert status == 2 and out == ""
    assert err == "posviz: error: --out needs a folder's name (got '')\n"
    assert list(tmp_path.iterdir()) == []


def test_compare_s_help_offers_no_option_it_refuses(capsys):
    """`posviz compare -h` listed --model, --offline, --device and --offload-folder, which
    compare refuses: it runs the built-in model (a user's run)."""
    import re

    from posviz.cli import main
    with pytest.raises(SystemExit):
        main(["compare", "-h"])
    offered = set(re.findall(r"^  (--[a-z-]+)", capsys.readouterr().out, re.M))
    assert "--pe" in offered
    assert not offered & {"--model", "--offline", "--device", "--offload-folder"}
    assert main(["compare", "--model", "minilm", "--text", "a b"]) == 2
    assert "--model does not apply" in capsys.readouterr().err


def test_a_number_out_of_range_is_echoed_as_typed(capsys):
    """`--pe-scale 1000` was told "(got 1000.0)", a number the user did not type."""
    from posviz.cli import main
    assert main(["report", "--pe-scale", "1000", "--text", "a b"]) == 2
    assert capsys.readouterr().err.strip().endswith("from 0 to 100 (got 1000)")
    with pytest.raises(posviz.errors.PosvizInputError, match=r"\(got 1000\)$"):
        posviz.load(pe_scale=1000)


@pytest.mark.parametrize("out, says", [("a-file", "is a file, not a folder"),
                                       ("a-file/inside", "cannot create the folder")])
def test_a_bad_out_folder_is_refused_before_the_model_loads(out, says, capsys, tmp_path):
    """``export --out`` naming a file, or a folder that cannot be made, was refused only
    after the whole run (4-7 s; with SmolLM2 a minute: a user's run): it is
    refused before any model is loaded, as ``sweep --csv`` is; here the model named
    does not exist, and the folder is what is refused."""
    (tmp_path / "a-file").write_text("")
    code, printed, said = run(capsys, "export", "--model", str(tmp_path / "no-model"),
                              "--text", TEXT, "--out", str(tmp_path / out))
    assert code == 2 and printed == "", said
    assert says in said and "no model folder" not in said, said


def test_a_refused_export_leaves_no_folder_made_for_it(capsys, tmp_path):
    """The folder is made before the run, so that a bad one is refused first; a run
    then refused (or stopped) takes away the empty folders made for it."""
    out = tmp_path / "new" / "figures"
    code, printed, said = run(capsys, "export", "--pe", "learned", "--text",
                              " ".join(["w"] * 1100), "--out", str(out))
    assert code == 2 and "positions" in said, said
    assert list(tmp_path.iterdir()) == []


class _Piped(io.TextIOWrapper):
    """Standard input as a pipe gives it (not a terminal), or a terminal (``tty``)."""

    def __init__(self, text: str, tty: bool = False):
        super().__init__(io.BytesIO(text.encode("utf-8")), encoding="utf-8")
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_texts_dash_reads_the_texts_from_standard_input_as_a_file(capsys, tmp_path,
                                                                  monkeypatch):
    """`sweep --texts -`: one text a line from standard input, the file's numbers."""
    lines = "# two texts\nthe cat sat on the mat\n\na dog ran in the park\n"
    path = tmp_path / "texts.txt"
    path.write_text(lines, encoding="utf-8")
    argv = ["sweep", "--pe", "rope", "--layers", "1", "--count", "3", "--json"]
    code, from_file, err = run(capsys, *argv, "--texts", str(path))
    assert code == 0, err
    monkeypatch.setattr(sys, "stdin", _Piped(lines))
    code, piped, err = run(capsys, *argv, "--texts", "-")
    assert code == 0, err
    piped, from_file = json.loads(piped), json.loads(from_file)
    assert piped["texts"] == ["the cat sat on the mat", "a dog ran in the park"]
    assert piped == from_file


@pytest.mark.parametrize("stdin, says", [
    (_Piped("", tty=True), "--texts - reads standard input, which is a terminal here"),
    (_Piped("\n# none\n"), "--texts - (standard input) holds no texts"),
])
def test_texts_dash_refuses_a_terminal_or_no_texts_in_one_line(stdin, says, capsys,
                                                               monkeypatch):
    monkeypatch.setattr(sys, "stdin", stdin)
    code, out, err = run(capsys, "sweep", "--pe", "rope", "--layers", "1", "--texts", "-")
    assert code == 2 and out == "" and err.count("\n") == 1 and says in err
