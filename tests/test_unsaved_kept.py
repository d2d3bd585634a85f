"""A start that does not open the last session (--text, --model, --reset-settings, a
FILE.posviz) keeps its unsaved edits: it replaced an untitled session's edits silently."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QApplication

from posviz.document import session_file
from posviz.gui import app as app_module
from posviz.gui import window as window_module
from posviz.gui.folders import recent_files
from posviz.gui.last_session import keep_unsaved
from posviz.gui.settings import make_settings

TIMEOUT = 30_000


def started_by_main(qtbot, monkeypatch, argv) -> window_module.MainWindow:
    """The window ``posviz ARGV`` opens (gui.app.main, its event loop not entered), its
    first evaluation painted."""
    made = []

    class Recorded(window_module.MainWindow):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            made.append(self)
    monkeypatch.setattr(window_module, "MainWindow", Recorded)
    monkeypatch.setattr(QApplication, "exec", staticmethod(lambda: 0))
    assert app_module.main(argv) == 0
    w, = made
    qtbot.addWidget(w)
    qtbot.waitUntil(lambda: w.controller.last_shown is not None, timeout=TIMEOUT)
    return w


@pytest.mark.parametrize("argv", [["--text", "a new sentence for the class"],
                                  ["--reset-settings"], ["FILE"]])
def test_an_untitled_session_s_edits_survive_a_fresh_start(qtbot, window, monkeypatch,
                                                            argv, tmp_path, capsys):
    if argv == ["FILE"]:                      # another session, opened by name
        argv = [str(tmp_path / "other.posviz")]
        session_file.write(argv[0], window.files.document())
    s = window.session
    s.set_order(np.roll(np.arange(len(s.order)), 3))
    order, text = tuple(s.order.tolist()), s.text
    assert window.files.path is None and window.isWindowModified()
    window.close()                                  # kept as the last session
    again = started_by_main(qtbot, monkeypatch, argv)
    kept = [f for f in recent_files(again.settings) if "-recovered" in f]
    assert len(kept) == 1, recent_files(again.settings)
    doc = session_file.read(kept[0])
    assert doc.text == text and tuple(doc.order) == order           # nothing lost
    assert kept[0] in again.state_label.text()                      # and told where,
    assert kept[0] in capsys.readouterr().err                       # in the terminal too
    assert again.session.order.tolist() != list(order) or again.session.text != text


def test_nothing_unsaved_is_not_copied(qtbot, window):
    """A last session without edits (or none at all) is not copied."""
    window.close()
    assert not window.isWindowModified()
    assert keep_unsaved(make_settings()) is None


def test_a_file_named_relative_on_the_command_line_is_bound_by_its_whole_path(
        qtbot, window, monkeypatch, tmp_path):
    """``posviz resources/scenarios/X.posviz`` kept "resources/scenarios/X.posviz" as
    the last session's file and in Open Recent: a start from another folder lost it."""
    session_file.write(tmp_path / "mine.posviz", window.files.document())
    window.close()
    monkeypatch.chdir(tmp_path)
    again = started_by_main(qtbot, monkeypatch, ["mine.posviz"])
    assert again.files.path == tmp_path / "mine.posviz"
    assert recent_files(again.settings)[0] == str(tmp_path / "mine.posviz")
