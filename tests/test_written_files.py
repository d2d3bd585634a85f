"""Every file a command writes is named (stdout keeps the results), older figure files
beside a new folder export are named and left in place, and File > Export figures
offers a folder of its own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from posviz.cli import main
from posviz.document.files import left_behind
from posviz.gui.plots.figures import EXPORTED

SMALL = ["--layers", "2", "--heads", "2", "--d-model", "16"]
TEXT = "the cat sat on the mat"


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out, err


def told(err: str) -> list[str]:
    """The files named by the one "wrote" line on stderr."""
    lines = [line for line in err.splitlines() if line.startswith("posviz: wrote ")]
    assert len(lines) == 1, err
    return lines[0].removeprefix("posviz: wrote ").split(", ")


@pytest.mark.parametrize("kind, suffixes", [("swap", ["", "-pairs"]), ("random", [""])])
def test_sweep_names_each_csv_it_wrote(capsys, tmp_path, kind, suffixes):
    path = tmp_path / "swaps.csv"
    count = ["--count", "4"] if kind == "random" else []      # a swap sweep takes none
    out, err = run(capsys, "sweep", *SMALL, "--text", TEXT, "--kind", kind, *count,
                   "--csv", str(path))
    named = [str(tmp_path / f"swaps{suffix}.csv") for suffix in suffixes]
    assert out == "" and told(err) == named
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(Path(p).name for p in named)


def test_a_csv_on_stdout_names_no_file(capsys):
    out, err = run(capsys, "sweep", *SMALL, "--text", TEXT, "--kind", "swap", "--csv", "-")
    assert out.startswith("# posviz: ") and err == ""         # what made it, then the table
    assert next(line for line in out.splitlines() if not line.startswith("# ")).startswith(
        "layer,metric")


def test_report_names_the_session_it_saved_and_keeps_its_json(capsys, tmp_path):
    path = tmp_path / "alibi.posviz"
    out, err = run(capsys, "report", *SMALL, "--text", TEXT, "--json",
                   "--save-session", str(path))
    assert json.loads(out)["tokens"] and told(err) == [str(path)] and path.is_file()


def test_compare_names_its_figures_on_stderr_and_stdout_stays_json(capsys, tmp_path):
    out, err = run(capsys, "compare", "--pe", "none,rope", *SMALL, "--text", TEXT, "--json",
                   "--out", str(tmp_path), "--format", "png", "--quiet")
    assert [m["pe"] for m in json.loads(out)["models"]] == ["none", "rope"]
    assert told(err) == [str(tmp_path / "compare.png"), str(tmp_path / "compare.csv")]


def test_export_lists_the_session_it_saved_with_its_figures(capsys, tmp_path):
    session = tmp_path / "s.posviz"
    out, _ = run(capsys, "export", *SMALL, "--text", TEXT, "--out", str(tmp_path / "f"),
                 "--format", "png", "--no-csv", "--save-session", str(session))
    printed = out.split()
    assert printed[-1] == str(session) and session.is_file()
    assert all(Path(p).is_file() for p in printed) and len(printed) > 3


def test_an_export_names_the_older_figures_it_did_not_write_and_keeps_them(capsys,
                                                                          tmp_path):
    folder = tmp_path / "figures"
    args = ["export", *SMALL, "--text", TEXT, "--out", str(folder), "--format", "png"]
    first, err = run(capsys, *args, "--pe", "sinusoidal")
    assert "older" not in err
    mine = folder / "cat.png"                   # not a figure name: never the export's
    mine.write_bytes(b"")
    second, err = run(capsys, *args, "--pe", "rope")
    older = sorted(set(first.split()) - set(second.split()))
    assert older and all(Path(p).name.startswith("encoding") for p in older)   # none in RoPE
    (line,) = [line for line in err.splitlines() if "older" in line]   # (and what it left out)
    assert line == (f"posviz: older figure files in {folder}, not written by this export: "
                    + ", ".join(Path(p).name for p in older))
    assert all(Path(p).is_file() for p in older) and mine.is_file()     # nothing deleted
    _, err = run(capsys, *args, "--pe", "sinusoidal")                   # all rewritten
    assert err == ""


def test_left_behind_is_only_figure_names_not_written(tmp_path):
    for name in ("encoding.png", "encoding.svg", "attention.png", "notes.png",
                 "experiment.pdf", "encoding.txt"):
        (tmp_path / name).write_text("")
    written = [tmp_path / "attention.png", tmp_path / "encoding.svg"]
    assert "encoding" in EXPORTED and "experiment" in EXPORTED
    assert [p.name for p in left_behind(tmp_path, written, EXPORTED)] == [
        "encoding.png", "experiment.pdf"]


def test_the_export_dialog_offers_a_folder_of_its_own(tmp_path, monkeypatch):
    from PySide6.QtCore import QSettings

    from posviz.gui.plots.exporting import FOLDER_KEY, export_folder
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = QSettings(str(tmp_path / "s.ini"), QSettings.IniFormat)
    assert export_folder(settings) == tmp_path / "posviz-figures"      # nothing chosen yet
    settings.setValue(FOLDER_KEY, str(tmp_path))                        # the home folder
    assert export_folder(settings) == tmp_path / "posviz-figures"
    lecture = tmp_path / "lecture"
    lecture.mkdir()
    settings.setValue(FOLDER_KEY, str(lecture))                         # the user's choice
    assert export_folder(settings) == lecture
    lecture.rmdir()
    assert export_folder(settings) == tmp_path / "posviz-figures"


def test_the_windows_export_names_older_figures_in_its_message(qtbot, window, tmp_path):
    folder = tmp_path / "figures"
    folder.mkdir()
    (folder / "experiment.png").write_bytes(b"old")      # an earlier export's
    written = window.export_to(str(folder), ["png"], None, False)
    assert written and all(path.parent == folder for path in written)
    shown = window.state_label.text()
    assert shown.startswith(f"Exported {len(written)} files to {folder}")
    assert shown.endswith("; older files there, not written now: experiment.png")
    assert (folder / "experiment.png").read_bytes() == b"old"
