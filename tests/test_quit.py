"""Quitting ends the process, also after a file dialog and the export it led to.

The window runs in its own process, started as `posviz` starts it (gui.app.main). A
user's session that had exported a figure through a file dialog left the process alive
after Quit: the window was gone, the event loop still ran (a figure drawn off screen for
the file stayed "visible" to Qt, which then saw a window left open). The bound is a hang
check, not a timing: the process takes seconds to start, compute and quit.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

HANG_S = 60         # far above the seconds a quit takes; past it the process hangs

PROBE = textwrap.dedent(r"""
    import sys
    from pathlib import Path
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QAction
    from PySide6.QtWidgets import QApplication, QDialog, QFileDialog, QInputDialog
    import posviz.gui.app as app_module
    import posviz.gui.window as window_module

    how, out = sys.argv[1], Path(sys.argv[2])

    def say(*words):
        print(*words, flush=True)

    def answer(kind, then):
        # the modal dialog of this kind the app shows: answer it as a user would
        dialog = QApplication.activeModalWidget()
        if not isinstance(dialog, kind):
            QTimer.singleShot(50, lambda: answer(kind, then))
            return
        say("shown", type(dialog).__name__, dialog.windowTitle())
        then(dialog)

    def choose_file(dialog):
        dialog.selectFile(str(out / "mosaic.png"))
        dialog.accept()
        QTimer.singleShot(50, lambda: answer(QInputDialog, lambda d: d.accept()))

    def choose_folder(dialog):
        dialog.reject()                       # closed without a choice
        QTimer.singleShot(50, lambda: answer(QDialog, accept_export))

    def accept_export(dialog):
        if isinstance(dialog, QFileDialog) or dialog.windowTitle() != "Export figures":
            QTimer.singleShot(50, lambda: answer(QDialog, accept_export))
            return
        dialog.folder_edit.setText(str(out))  # typed instead
        dialog.accept()

    def exported(window):
        if how == "figure":
            QTimer.singleShot(50, lambda: answer(QFileDialog, choose_file))
            window.plots._export_dialog("attention_mosaic", "png")   # the figure's menu
        else:
            def browse(dialog):
                if isinstance(dialog, QFileDialog) or not hasattr(dialog, "folder_edit"):
                    QTimer.singleShot(50, lambda: answer(QDialog, browse))
                    return
                QTimer.singleShot(50, lambda: answer(QFileDialog, choose_folder))
                dialog._browse()              # its "…" button: the folder's file dialog
            QTimer.singleShot(50, lambda: answer(QDialog, browse))
            window.export_figures()           # File > Export figures
        say("written", len(list(out.iterdir())))
        quit_action = next(a for a in window.findChildren(QAction)
                           if a.text() == "&Quit")
        QTimer.singleShot(100, quit_action.trigger)

    def first(window):
        def shown(*_):
            window.controller.evaluated.disconnect(shown)
            QTimer.singleShot(100, lambda: exported(window))
        window.controller.evaluated.connect(shown)

    start = window_module.MainWindow.start
    def started(self, *args, **kwargs):
        first(self)
        return start(self, *args, **kwargs)
    window_module.MainWindow.start = started
    code = app_module.main([])
    say("exec returned", code)
""")


@pytest.mark.parametrize("how", ["figure", "folder"])
def test_quit_ends_the_process_after_a_file_dialog_and_an_export(how, tmp_path):
    out = tmp_path / "figures"
    out.mkdir()
    env = {**os.environ, "POSVIZ_SETTINGS": str(tmp_path / "settings.ini"),
           "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", PROBE, how, str(out)], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        told, _ = process.communicate(timeout=HANG_S)
    except subprocess.TimeoutExpired:
        process.kill()
        told, _ = process.communicate()
        pytest.fail(f"the process was still alive {HANG_S} s after it started; it said:\n"
                    f"{told}")
    assert "shown QFileDialog" in told, told           # the file dialog was shown
    assert "written 0" not in told and "written" in told, told     # and the export ran
    assert "exec returned 0" in told, told
    assert process.returncode == 0, told


def test_figures_drawn_off_screen_for_files_neither_hold_the_quit_nor_stay(qtbot, tmp_path):
    """The panel's twins drawn for files (and the mosaic's own twin in them) are no
    windows the user can close: shown off screen they must not count as open, and the
    mosaic's twin goes with the twin that made it, not at the process's end."""
    from PySide6 import QtCore, QtWidgets

    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.gui.plots import PlotsPanel, mosaic_look
    from posviz.gui.plots.mosaic_figure import MosaicFigure
    from posviz.gui.settings import make_settings
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    from posviz.views.shown import Shown, build_views

    session = Session(BuiltinBackend(ModelConfig()), "the cat sat on the mat")
    session.reverse()
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    panel = PlotsPanel(make_settings())
    panel.set_session(session)
    qtbot.addWidget(panel)
    panel.show()
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(session.selection))))
    app = QtWidgets.QApplication.instance()
    before = {id(widget) for widget in app.topLevelWidgets()}
    off_screen = QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen
    seen = []

    def told(done, total, file):       # while the twins exist: none would hold a quit
        seen.extend(w for w in app.topLevelWidgets()
                    if w.isVisible() and w.testAttribute(off_screen))
    twin = panel.drawn_alone()         # as File > Export draws the window's figures
    assert twin.export_all(tmp_path, formats=("png",), csv=False, told=told)
    twin.close()
    twin.deleteLater()
    assert any(isinstance(widget, MosaicFigure) for widget in seen)
    assert not [w for w in seen if w.testAttribute(QtCore.Qt.WidgetAttribute.WA_QuitOnClose)]
    for _ in range(3):                 # the twins' deleteLater, then what they took along
        QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
        qtbot.wait(10)
    left = [type(w).__name__ for w in app.topLevelWidgets()
            if id(w) not in before and isinstance(w, MosaicFigure)]
    assert left == []


RUNNING = textwrap.dedent(r"""
    import sys
    from PySide6.QtCore import QTimer
    from PySide6.QtGui import QAction
    import posviz.__main__ as entry
    import posviz.gui.window as window_module

    def say(*words):
        print(*words, flush=True)

    def experiment(window):             # the lab: its lengths run for seconds in torch
        tab = window.experiments
        window.plots.tabs.setCurrentWidget(tab)
        tab.what.setCurrentIndex(tab.what.findData("extend"))
        def started(*_):
            tab._relay.said.disconnect(started)
            say("running")
            quit_action = next(a for a in window.findChildren(QAction)
                               if a.text() == "&Quit")
            QTimer.singleShot(3000, quit_action.trigger)      # deep in a length's forwards
        tab._relay.said.connect(started)
        tab.run()

    start = window_module.MainWindow.start
    def started(self, *args, **kwargs):
        def shown(*_):
            self.controller.evaluated.disconnect(shown)
            QTimer.singleShot(100, lambda: experiment(self))
        self.controller.evaluated.connect(shown)
        return start(self, *args, **kwargs)
    window_module.MainWindow.start = started
    sys.argv = ["posviz"]
    entry.main()                        # as `posviz` runs: the process ends in it
    say("returned")
""")


def test_quit_while_an_experiment_runs_ends_the_process_cleanly(tmp_path):
    """Quit while the context-extension lab's worker was inside torch: the interpreter's
    teardown under that thread aborted the process ("terminate called without an active
    exception", status 134); the window's process now ends as a command's does (leave)."""
    env = {**os.environ, "POSVIZ_SETTINGS": str(tmp_path / "settings.ini"),
           "QT_QPA_PLATFORM": "offscreen", "HOME": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", RUNNING], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        told, _ = process.communicate(timeout=HANG_S + 60)
    except subprocess.TimeoutExpired:
        process.kill()
        told, _ = process.communicate()
        pytest.fail(f"the process was still alive {HANG_S + 60} s after it started:\n{told}")
    assert "running" in told, told
    assert "terminate called" not in told, told
    assert process.returncode == 0, told
    assert "returned" not in told, told          # it ended in entry.main, not after it
