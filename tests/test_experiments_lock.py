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
