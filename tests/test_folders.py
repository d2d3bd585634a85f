"""File dialogs start in the folder the user last chose a file in, whichever dialog it
was (they started in the home folder, or the working folder, each time)."""
from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from PySide6 import QtWidgets  # noqa: E402

from posviz.gui import documents  # noqa: E402
from posviz.gui.plots import exporting  # noqa: E402


def test_save_starts_where_the_last_export_went_and_export_where_the_save(
        qtbot, window, tmp_path, monkeypatch):
    lecture, sessions = tmp_path / "lecture", tmp_path / "sessions"
    lecture.mkdir()
    sessions.mkdir()
    starts, answers = [], []

    def dialog(parent, caption, start, filters):
        starts.append(Path(start))
        return str(answers.pop(0)), ""

    monkeypatch.setattr(QtWidgets.QFileDialog, "getSaveFileName", staticmethod(dialog))
    monkeypatch.setattr(exporting, "save_file_name", lambda *args: dialog(*args)[0])
    monkeypatch.setattr(QtWidgets.QInputDialog, "getInt",
                        staticmethod(lambda *args: (96, True)))
    answers.append("")                                      # cancelled
    fresh = exporting.ask_export_path(window, "symmetry", "svg", window.settings)
    assert fresh is None and starts[-1].is_absolute()       # nothing chosen yet
    assert starts[-1].parent == Path.home()
    answers.append(lecture / "symmetry.svg")
    exporting.ask_export_path(window, "symmetry", "svg", window.settings)
    answers.append(lecture / "talk.posviz")
    assert window.files.save_as()
    assert starts[-1].parent == lecture                     # the export's folder
    window.files.path = None                                # untitled again
    answers.append(sessions / "other.posviz")
    assert window.files.save_as()
    answers.append("")
    window.files.path = None
    window.files.save_as()
    assert starts[-1].parent == sessions
    answers.append("")
    exporting.ask_export_path(window, "mosaic", "png", window.settings)
    assert starts[-1] == lecture / "mosaic.png"             # exports keep their own folder


def test_the_session_folder_is_remembered_across_windows(qtbot, window, tmp_path, monkeypatch):
    opened = tmp_path / "shared"
    opened.mkdir()
    assert window.files.save_to(opened / "a.posviz")
    window.files.path = None
    starts = []
    monkeypatch.setattr(documents.QFileDialog, "getOpenFileName", staticmethod(
        lambda parent, caption, start, filters: starts.append(start) or ("", "")))
    window.files.open_file()
    assert Path(starts[-1]) == opened
