"""Where a command writes is checked before its work: ``report --save-session
/proc/x.posviz`` computed a 5,000-word report for 20 s before "cannot write into /proc",
``train --out /proc/nope`` trained before "No such file or directory", and ``sweep --csv``
refused a missing folder only. Each is refused at once, in one line naming its option."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main, report, sweep
from posviz.errors import PosvizInputError
from posviz.models.training import train as training


@pytest.fixture
def no_work(monkeypatch):
    """Any run fails the test: the refusal must come before it."""
    def work(*_, **__):
        raise AssertionError("the work ran before the refusal")
    monkeypatch.setattr(report, "evaluate", work)
    monkeypatch.setattr(sweep, "experiment_model", work)
    monkeypatch.setattr(training, "train", work)


@pytest.mark.parametrize("command, said", [
    (["report", "--text", "a b", "--save-session", "/proc/x.posviz"],
     "--save-session /proc/x.posviz: cannot write into /proc"),
    (["report", "--text", "a b", "--save-session", "MISSING/x.posviz"],
     "--save-session MISSING/x.posviz: no such folder"),
    (["report", "--text", "a b", "--save-session", "FOLDER"], "is a folder, not a file"),
    (["export", "--text", "a b", "--out", "FOLDER", "--save-session", "/proc/x.posviz"],
     "--save-session /proc/x.posviz: cannot write into /proc"),
    (["sweep", "--text", "a b c", "--csv", "/proc/x.csv"],
     "--csv /proc/x.csv: cannot write into /proc"),
    (["train", "--out", "/proc/nope", "--steps", "2"],
     "--out /proc/nope: cannot write into /proc"),
    (["train", "--out", "FILE", "--steps", "2"], "is a file, not a folder")])
def test_a_destination_that_cannot_be_written_is_refused_first(command, said, no_work,
                                                               tmp_path, capsys):
    (tmp_path / "FILE").write_text("x")
    places = {"FOLDER": str(tmp_path), "FILE": str(tmp_path / "FILE"),
              "MISSING/x.posviz": str(tmp_path / "missing" / "x.posviz")}
    command = [places.get(word, word) for word in command]
    said = said.replace("MISSING/x.posviz", places["MISSING/x.posviz"])
    assert main(command) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and len(err.splitlines()) == 1, err


def test_python_s_train_names_its_argument(no_work):
    with pytest.raises(PosvizInputError, match=r"out='/proc/nope': cannot write into /proc"):
        posviz.train("/proc/nope", steps=2)


@pytest.mark.parametrize("command", [
    ["export", "--text", "a b", "--out"], ["compare", "--text", "a b", "--out"],
    ["extend", "--out"], ["train", "--steps", "2", "--out"]])
def test_every_out_folder_refused_names_out(command, no_work, tmp_path, capsys):
    """export, compare and extend said "README.md is a file, not a folder", naming no
    option (train named --out); Python's train names out= for an existing file."""
    blocker = tmp_path / "README.md"
    blocker.write_text("x")
    for out, said in ((blocker, f"--out {blocker}: {blocker} is a file, not a folder"),
                      (blocker / "sub", f"--out {blocker / 'sub'}: ")):
        assert main([*command, str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("posviz: error: " + said) and len(err.splitlines()) == 1, err
    with pytest.raises(PosvizInputError) as refused:
        posviz.train(str(blocker), steps=2)
    assert str(refused.value) == f"out={str(blocker)!r}: {blocker} is a file, not a folder"
