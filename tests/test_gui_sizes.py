"""Every figure keeps a readable plot area at a projector's, a laptop's and a desktop's
window size, in a real window (Xvfb, the xcb platform), as a user would start it.

The window runs in its own process; at each size and on each tab it prints the size of
every figure's plot area (the view box inside the axes). Skipped where Xvfb is missing
(CI installs it).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import xvfb

pytestmark = pytest.mark.xvfb

SIZES = ((1024, 700), (1366, 768), (1920, 1080))
MIN_AREA = (120, 120)          # pixels: a heatmap of 10 tokens, 12 pixels a cell at least
MIN_CURVES_WIDTH = 200         # a curve over the layers needs some width

PROBE = r"""
import json, sys
import pyqtgraph as pg
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
sizes = json.loads(sys.argv[1])
w = MainWindow(make_settings())
w.move(0, 0)
w.show()
steps = []
for size in sizes:
    for tab in (0, 1, 2, "experiments"):
        steps.append((size, tab))
def measure():
    if not steps:
        print(json.dumps({"event": "done"}), flush=True)
        app.quit()
        return
    (width, height), tab = steps.pop(0)
    w.resize(width, height)
    if tab == "experiments":
        tab = w.plots.tabs.indexOf(w.experiments)
    w.plots.tabs.setCurrentIndex(tab)
    def later():
        app.processEvents()
        areas = {}
        page = w.plots.tabs.currentWidget()
        for name, figure in w.plots.figures().items():
            if not page.isAncestorOf(figure) or figure.canvas.isHidden():
                continue
            areas[name] = [[round(item.vb.width()), round(item.vb.height())]
                           for item in figure.canvas.ci.items
                           if isinstance(item, pg.PlotItem)
                           and not isinstance(item, pg.ColorBarItem)]
        print(json.dumps({"event": "areas", "size": [w.width(), w.height()], "tab": tab,
                          "experiments": page is w.experiments,
                          "dock": w.model_dock.width(), "areas": areas,
                          "panel": w.plots.width(),
                          "viewport": w.plots_scroll.viewport().width()}), flush=True)
        measure()
    QTimer.singleShot(400, later)
def first(shown, ms):
    w.controller.evaluated.disconnect(first)
    QTimer.singleShot(100, measure)
w.controller.evaluated.connect(first)
QTimer.singleShot(30, w.start)
QTimer.singleShot(90_000, app.quit)
app.exec()
"""


@pytest.fixture
def display():
    with xvfb("1920x1080", needs=("Xvfb",)) as name:
        yield name


def test_every_figure_keeps_a_readable_plot_area_at_every_size(display, tmp_path):
    """... and the three attention maps are within 5% of one width."""
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
               POSVIZ_SETTINGS=str(tmp_path / "settings.ini"))
    app = subprocess.run([sys.executable, "-c", PROBE, json.dumps(SIZES)], env=env,
                         text=True, capture_output=True, timeout=120)
    reports = [json.loads(line) for line in app.stdout.splitlines() if line.startswith("{")]
    assert reports and reports[-1]["event"] == "done", app.stderr[-2000:]
    measured = [r for r in reports if r["event"] == "areas"]
    assert {tuple(r["size"]) for r in measured} == set(SIZES)
    small = []
    assert sum(r["experiments"] for r in measured) == len(SIZES)
    for report in measured:
        # each tab of figures shows its figures (the Experiments tab: once it has run)
        assert report["areas"] or report["experiments"], report
        for name, areas in report["areas"].items():
            for width, height in areas:
                low_width = MIN_CURVES_WIDTH if name in ("symmetry", "branch_norms",
                                                          "relative_profile") else MIN_AREA[0]
                if width < low_width or height < MIN_AREA[1]:
                    small.append((report["size"], name, width, height))
        # the model panel leaves the plots most of a small window
        assert report["dock"] <= 0.25 * report["size"][0]
        # and the plots are no wider than what shows them (a hidden tab's row of
        # controls does not widen them, nor the Experiments tab's when it is shown), so
        # no figure or control is cut at the right
        assert report["panel"] <= report["viewport"], report
    assert not small, (small, measured)
    # the three attention maps are equally wide at every size (their queries are named
    # once, in a column of their own, not inside the first map's column)
    unequal = []
    for report in measured:
        maps = report["areas"].get("attention")
        if maps:
            widths = [width for width, _ in maps]
            assert len(widths) == 3, maps
            if max(widths) > 1.05 * min(widths):
                unequal.append((report["size"], widths))
    assert any(tuple(r["size"]) == (1024, 700) and "attention" in r["areas"]
               for r in measured)
    assert not unequal, unequal
