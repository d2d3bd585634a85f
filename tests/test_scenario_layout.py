"""A scenario's explanation leaves the plots readable: at 1024 × 700 it opens as a tab of
the model panel, and the symmetry plot keeps the size it has without it; in a wide
window it opens beside the plots."""
from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from posviz.document import session_file
from posviz.document.scenarios import scenario_paths
from posviz.gui.scenarios import open_scenario
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow

TIMEOUT = 30_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def _opened(qtbot, width: int, height: int) -> MainWindow:
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.start(last=False)
    return w


def _with_scenario(qtbot, w: MainWindow, name: str = "causal") -> None:
    path = next(p for p in scenario_paths() if name in p.name)
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        open_scenario(w.files, path, session_file.read(path))
    qtbot.wait(200)


def _symmetry_plot(w: MainWindow):
    """(figure width, the symmetry plot's data area) in pixels."""
    figure = w.plots.current_figures()["symmetry"]
    return figure.canvas.width(), figure.plot.getViewBox().sceneBoundingRect()


def test_at_1024_by_700_the_symmetry_plot_keeps_its_size_beside_a_scenario(qtbot):
    w = _opened(qtbot, 1024, 700)
    _, alone = _symmetry_plot(w)
    _with_scenario(qtbot, w)
    panel = w.scenario_panel
    assert panel.isVisible() and w.tabifiedDockWidgets(panel) == [w.model_dock]
    width, area = _symmetry_plot(w)
    assert area.right() <= width                      # whole, not cut at the right edge
    assert area.width() >= 0.95 * alone.width() and area.height() >= 0.95 * alone.height()
    assert area.width() >= 250 and area.height() >= 100, area


def test_in_a_wide_window_the_scenario_opens_beside_the_plots(qtbot):
    w = _opened(qtbot, 1600, 1000)
    _with_scenario(qtbot, w)
    panel = w.scenario_panel
    assert w.dockWidgetArea(panel) == Qt.LeftDockWidgetArea
    assert not w.tabifiedDockWidgets(panel) and panel.isVisible()
    width, area = _symmetry_plot(w)
    assert area.right() <= width and area.height() >= 100
