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
from conftest import on_screen

TIMEOUT = 30_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def _opened(qtbot, width: int, height: int) -> MainWindow:
    w = on_screen(qtbot, MainWindow(make_settings()), width, height)
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


def test_a_window_made_narrow_takes_the_scenario_into_the_model_panel(qtbot):
    """Opened wide, then made 1024 × 700 (a projector): the explanation beside both
    panels squashed the symmetry plot to 183 × 62 pixels under a five-row legend; it
    becomes a tab of the model panel, and goes back to the left when the window is
    made wide again."""
    w = _opened(qtbot, 1024, 700)
    _, alone = _symmetry_plot(w)
    w.resize(1440, 900)
    qtbot.wait(200)
    _with_scenario(qtbot, w, "nope")
    panel = w.scenario_panel
    assert w.dockWidgetArea(panel) == Qt.LeftDockWidgetArea
    assert not w.tabifiedDockWidgets(panel)
    w.resize(1024, 700)
    qtbot.waitUntil(lambda: w.tabifiedDockWidgets(panel) == [w.model_dock])
    qtbot.wait(200)
    assert panel.isVisible() and not panel.visibleRegion().isEmpty()     # raised
    width, area = _symmetry_plot(w)
    assert area.right() <= width
    assert area.width() >= 0.95 * alone.width() and area.height() >= 0.95 * alone.height()
    w.resize(1600, 1000)
    qtbot.waitUntil(lambda: not w.tabifiedDockWidgets(panel))
    assert w.dockWidgetArea(panel) == Qt.LeftDockWidgetArea and panel.isVisible()


def test_a_scenario_closed_or_floated_stays_so_when_the_window_narrows(qtbot):
    w = _opened(qtbot, 1440, 900)
    _with_scenario(qtbot, w, "nope")
    panel = w.scenario_panel
    panel.close()
    w.resize(1024, 700)
    qtbot.wait(200)
    assert panel.isHidden() and not w.tabifiedDockWidgets(panel)
    panel.show()
    panel.setFloating(True)
    w.resize(1000, 690)
    qtbot.wait(200)
    assert panel.isFloating() and not w.tabifiedDockWidgets(panel)


def test_the_restored_session_s_scenario_comes_back_readable_at_1024(qtbot):
    """The last session keeps the open scenario's title and note, so its explanation
    comes back at the next start; in a 1024 × 700 window, as a tab of the model panel."""
    w = _opened(qtbot, 1440, 900)
    _with_scenario(qtbot, w, "nope")
    assert w.dockWidgetArea(w.scenario_panel) == Qt.LeftDockWidgetArea
    w.resize(1024, 700)
    qtbot.wait(200)
    w.close()                                  # autosaved with its geometry and docks
    again = MainWindow(make_settings())
    qtbot.addWidget(again)
    again.resize(1024, 700)                    # the offscreen screen is smaller
    again.show()
    qtbot.waitExposed(again)
    with qtbot.waitSignal(again.controller.evaluated, timeout=TIMEOUT):
        again.start()
    qtbot.waitUntil(lambda: again.scenario_panel is not None)
    qtbot.wait(200)
    panel = again.scenario_panel
    assert panel.windowTitle() == "Scenario"
    assert panel.browser.toPlainText().startswith("No positions")
    assert again.tabifiedDockWidgets(panel) == [again.model_dock] and panel.isVisible()
    width, area = _symmetry_plot(again)
    assert area.right() <= width and area.width() >= 250 and area.height() >= 100, area


def test_a_scenario_left_behind_says_so_plainly_on_its_tab(qtbot):
    """After the text changed, the tab beside the model panel read "Scenario (left)",
    as if the scenario were on the left: it says it changed, and its tip what changed
    and how to go back."""
    from PySide6.QtTest import QTest
    w = _opened(qtbot, 1024, 700)
    _with_scenario(qtbot, w, "nope")
    panel = w.scenario_panel
    qtbot.waitUntil(lambda: w.tabifiedDockWidgets(panel) == [w.model_dock])
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.text_edit.setText("positions break the symmetry")
        QTest.keyClick(w.text_edit, Qt.Key_Return)
    qtbot.wait(50)
    assert panel.windowTitle() == "Scenario — changed"
    tip = panel.tab_tip()
    assert "You changed the text" in tip and "Help › Scenarios opens it again" in tip
    assert panel.toolTip() == tip
