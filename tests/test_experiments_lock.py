"""While an experiment runs, the controls it was made of cannot change: the Experiment
box set to "Order use" beside the bar of a context extension, and a note of the
comparison of encodings, told of another run than the one going. Cancel stays active."""
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from posviz.gui.experiments.tab import ExperimentsTab  # noqa: E402
from conftest import on_screen  # noqa: E402

INPUTS = ("what", "kind", "count", "seed", "encodings", "texts", "features", "paper",
          "weights")


@pytest.fixture
def tab(qtbot):
    widget = on_screen(qtbot, ExperimentsTab(), 1000, 600)
    yield widget
    widget.shutdown()


def enabled(tab) -> dict:
    return {name: getattr(tab, name).isEnabled() for name in INPUTS}


def test_a_run_locks_its_inputs_and_cancel_frees_them(qtbot, tab):
    tab.count.setValue(100_000)
    assert all(enabled(tab).values())
    tab.run()
    qtbot.waitUntil(lambda: tab.progress.maximum() > 0, timeout=30_000)
    assert not any(enabled(tab).values()), enabled(tab)
    assert tab.cancel_button.isEnabled() and tab.metric_box.isEnabled()
    tab.what.setFocus()
    QTest.keyClick(tab.what, Qt.Key.Key_Down)          # a user trying: nothing changes
    assert tab.what.currentData() == "sweep"
    tab.cancel()
    assert all(enabled(tab).values()) and not tab.cancel_button.isEnabled()


def test_a_finished_run_frees_its_inputs(qtbot, tab):
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
        assert not any(enabled(tab).values())
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
    assert all(enabled(tab).values())


def test_run_while_running_keeps_the_run_and_cancel_then_run_runs_again(qtbot, tab):
    """Run, Ctrl+Return or a click while an experiment runs restarted it (its work so far
    thrown away unsaid); now Run is off, its tip says why, Esc cancels, Run runs again."""
    tab.activateWindow()
    qtbot.waitActive(tab)                       # shortcuts reach an active window
    tab.count.setValue(100_000)
    tab.setFocus()
    QTest.keyClick(tab.windowHandle(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(tab.cancel_button.isEnabled)   # Ctrl+Return ran it (an animated click)
    qtbot.waitUntil(lambda: tab.progress.maximum() > 0, timeout=30_000)
    first, generation = tab._submitted, tab.scheduler.generation
    assert not tab.run_button.isEnabled() and "Cancel" in tab.run_button.toolTip()
    QTest.keyClick(tab.windowHandle(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    QTest.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
    tab.run()                                   # a caller of the method: nothing either
    qtbot.wait(300)                             # past a shortcut's animated click
    assert tab._submitted is first and tab.scheduler.generation == generation
    assert tab.cancel_button.isEnabled()
    QTest.keyClick(tab.windowHandle(), Qt.Key.Key_Escape)      # Esc stops it
    assert not tab.cancel_button.isEnabled() and tab.run_button.isEnabled()
    assert tab.run_button.toolTip() == "Run the experiment (Ctrl+Return)"
    QTest.keyClick(tab.windowHandle(), Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
    qtbot.waitUntil(lambda: tab._submitted is not first and tab.cancel_button.isEnabled())
    tab.cancel()


def test_run_after_a_finished_run_runs_again(qtbot, tab):
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
    first = tab._submitted
    assert tab.run_button.isEnabled()
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        QTest.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        assert tab._submitted is not first
    qtbot.waitUntil(lambda: not tab.cancel_button.isEnabled())


def test_the_focus_moves_between_run_and_cancel_so_esc_cancels_a_clicked_run(qtbot):
    """Run pressed with the mouse takes the keyboard's focus; switched off while the
    experiment runs, it hands the focus to Cancel (not to whichever widget Qt's focus
    chain finds next), so Esc cancels; once cancelled, the focus is back on Run."""
    from PySide6 import QtWidgets

    window = QtWidgets.QWidget()
    layout = QtWidgets.QVBoxLayout(window)
    tab = ExperimentsTab()
    layout.addWidget(tab)
    layout.addWidget(QtWidgets.QLineEdit("the token strip's place"))
    on_screen(qtbot, window, 1000, 700)
    with qtbot.waitActive(window):              # the keyboard's focus needs it
        window.activateWindow()
    try:
        tab.count.setValue(100_000)
        QTest.mouseClick(tab.run_button, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(tab.cancel_button.isEnabled)
        assert tab.isAncestorOf(QtWidgets.QApplication.focusWidget())
        QTest.keyClick(window.windowHandle(), Qt.Key.Key_Escape)
        assert not tab.cancel_button.isEnabled() and tab.run_button.isEnabled()
        assert tab.run_button.hasFocus()           # and back to Run, for the next
    finally:
        tab.shutdown()
