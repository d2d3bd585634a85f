"""The wheel over a plot scrolls the page around it; Ctrl + wheel zooms the plot."""
from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")

from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from posviz.gui.experiment_figure import ExperimentFigure  # noqa: E402

ROWS = [{"layer": k, "mae": 2.0, "chance_mae": 2.5, "r2": 0.1} for k in range(5)]


def wheel(widget, modifiers=QtCore.Qt.KeyboardModifier.NoModifier):
    centre = QtCore.QPointF(widget.width() / 2, widget.height() / 2)
    event = QtGui.QWheelEvent(centre, widget.mapToGlobal(centre), QtCore.QPoint(),
                              QtCore.QPoint(0, -120), QtCore.Qt.MouseButton.NoButton,
                              modifiers, QtCore.Qt.ScrollPhase.NoScrollPhase, False)
    QtWidgets.QApplication.sendEvent(widget, event)


def test_a_plain_wheel_scrolls_the_page_and_ctrl_zooms(qtbot):
    figure = ExperimentFigure()
    figure.setMinimumHeight(900)
    figure.show_probe(ROWS, "probe")
    page = QtWidgets.QScrollArea()
    page.setWidget(figure)
    page.setWidgetResizable(True)
    page.resize(600, 400)
    qtbot.addWidget(page)
    page.show()
    qtbot.waitExposed(page)
    view = figure.plot.getViewBox()
    before = view.viewRange()
    bar = page.verticalScrollBar()
    assert bar.value() == 0 and bar.maximum() > 0
    wheel(figure.canvas.viewport())
    assert view.viewRange() == before and bar.value() > 0      # the page moved, not the plot
    wheel(figure.canvas.viewport(), QtCore.Qt.KeyboardModifier.ControlModifier)
    assert view.viewRange() != before
