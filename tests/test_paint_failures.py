"""A paint that fails leaves no painter behind. A QPainter still active on a device when
the device is destroyed aborts the process ("QPaintDevice: Cannot destroy paint device
that is being painted", then a segmentation fault): a test runner keeps a failed test's
frames, and with them the painter, until its teardown, so one failed export took the
whole run down there. Run in a process of its own, since the old behaviour is a crash."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = """
import sys
from PySide6 import QtWidgets
app = QtWidgets.QApplication([])
from posviz.gui.plots.layers import SymmetryFigure
figure = SymmetryFigure()
figure.resize(400, 300)
def fails(painter):
    raise ValueError("a figure that fails to paint")
figure._render_all = fails
try:
    figure.render_image()
except ValueError as error:
    kept = error                 # its frames alive, as a test runner keeps a failure's
figure.close()
del figure, kept
app.processEvents()
print("survived")
"""


def test_a_figure_whose_painting_fails_can_be_destroyed():
    pytest.importorskip("PySide6")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                            env=env, timeout=120)
    assert "being painted" not in result.stderr
    assert result.returncode == 0 and result.stdout.strip() == "survived", result.stderr
