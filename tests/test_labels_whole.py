"""Every dock title, tab text and button label whole at 1024 × 700 and 1366 × 768 (the
scenario dock's title and the model panel's tab read "M…" at 1024 once), with a
scenario open and each tab of the plots shown."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtWidgets import (QAbstractButton, QDockWidget, QTabBar,  # noqa: E402
                               QToolButton)

SCENARIO = Path(__file__).parents[1] / "resources" / "scenarios" / "02-causal-prefix-swap.posviz"


def cut_labels(window) -> list[str]:
    """Texts shown narrower than they need, among the visible docks, tabs and buttons."""
    cut = []
    for dock in window.findChildren(QDockWidget):
        if dock.isVisible() and not dock.isFloating():
            need = dock.fontMetrics().horizontalAdvance(dock.windowTitle()) + 2 * 20
            if dock.width() < need:
                cut.append(f"dock {dock.windowTitle()!r}: {dock.width()} < {need}")
    for bar in window.findChildren(QTabBar):
        if bar.isVisible():
            for i in range(bar.count()):
                rect = bar.tabRect(i)             # squeezed (elided), or past the bar
                if rect.width() < bar.tabSizeHint(i).width() or rect.right() >= bar.width():
                    cut.append(f"tab {bar.tabText(i)!r}: {bar.tabRect(i).width()} < "
                               f"{bar.tabSizeHint(i).width()}")
    for button in window.findChildren(QAbstractButton):
        if (button.isVisible() and button.text() and not isinstance(button, QToolButton)
                and button.width() < button.minimumSizeHint().width()):
            cut.append(f"button {button.text()!r}: {button.width()}")
    return cut


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_every_dock_title_tab_and_button_is_whole(qtbot, window, size):
    from posviz.document.session_file import read
    from posviz.gui.scenarios import open_scenario
    window.resize(*size)
    open_scenario(window.files, SCENARIO, read(SCENARIO))
    qtbot.waitUntil(lambda: window.scenario_panel is not None
                    and window.scenario_panel.isVisible(), timeout=30_000)
    qtbot.wait(100)
    cut = []
    for tab in range(window.plots.tabs.count()):
        window.plots.tabs.setCurrentIndex(tab)
        qtbot.wait(50)
        cut += cut_labels(window)
    assert not cut, cut


def test_the_check_sees_a_cut_tab_and_a_narrow_dock(qtbot, window):
    """The check itself: a tab narrower than its text, and a dock narrower than its
    title, are reported."""
    bar = window.model_dock.findChild(QTabBar) or QTabBar(window.centralWidget())
    bar.addTab("Model explanation that is long")
    bar.setElideMode(bar.elideMode())
    bar.setFixedWidth(60)
    bar.show()
    window.model_dock.setWindowTitle("A model dock with a title far longer than its width")
    window.resizeDocks([window.model_dock], [200], Qt.Horizontal)
    qtbot.wait(50)
    cut = " ".join(cut_labels(window))
    assert "tab 'Model explanation that is long'" in cut and "dock 'A model dock" in cut
