"""A window started again comes back where it was left, also without a window manager:
at 1024 × 700 on Xvfb it came back 25 px lower (Qt's restoreGeometry places the frame
with a title bar it guesses before the window is shown, and there was none)."""
import os
import subprocess
import sys

import pytest

pytest.importorskip("PySide6")

from conftest import xvfb  # noqa: E402

START = r"""
import sys
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from posviz.gui.window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
if sys.argv[2] == "first":
    w.resize(1024, 700)
w.show()
QTest.qWait(800)
g = w.geometry()
print(g.x(), g.y(), g.width(), g.height(), flush=True)
w.close()                       # as a user quits: the window's place kept for next time
"""


@pytest.mark.xvfb
def test_a_window_started_again_is_where_it_was_left(tmp_path):
    settings = tmp_path / "settings.ini"
    places = []
    with xvfb("1366x768") as display:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
               "POSVIZ_SETTINGS": str(settings), "HOME": str(tmp_path)}
        for start in ("first", "second", "third"):
            out = subprocess.run([sys.executable, "-c", START, str(settings), start],
                                 env=env, capture_output=True, text=True, timeout=120)
            places.append(tuple(map(int, out.stdout.split()[-4:])))
    assert places[0][2:] == (1024, 700)
    assert places[1] == places[0] and places[2] == places[0], places
