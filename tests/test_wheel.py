"""The wheel over a plot scrolls the page around it; Ctrl + wheel zooms the plot."""
from types import SimpleNamespace

import pytest

pytest.importorskip("PySide6")

import numpy as np  # noqa: E402
from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402

from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402

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


def test_a_ctrl_zoom_stays_near_the_data_and_a_double_click_frames_it_again(qtbot):
    """Zooming out with Ctrl stops at a few times the data's frame (the Experiments
    page's plot was once zoomed to 10^±300); a double click shows the frame again."""
    from posviz.gui.plots.wheel import ZOOM_OUT
    figure = ExperimentFigure()
    figure.show_probe(ROWS, "probe")
    figure.resize(600, 400)
    qtbot.addWidget(figure)
    figure.show()
    qtbot.waitExposed(figure)
    view = figure.plot.getViewBox()
    (x0, x1), (y0, y1) = framed = view.viewRange()
    for _ in range(60):
        wheel(figure.canvas.viewport(), QtCore.Qt.KeyboardModifier.ControlModifier)
    (a0, a1), (b0, b1) = view.viewRange()
    assert a1 - a0 > 1.5 * (x1 - x0)                          # it did zoom out
    assert a1 - a0 <= ZOOM_OUT * (x1 - x0) * 1.01 and b1 - b0 <= ZOOM_OUT * (y1 - y0) * 1.01
    assert max(map(abs, (a0, a1, b0, b1))) < 100
    # the scene's double click, as pyqtgraph reports it (synthetic clicks after a
    # wheel do not reach its click detection offscreen)
    double = SimpleNamespace(double=lambda: True,
                             scenePos=lambda: view.sceneBoundingRect().center())
    figure.canvas.scene().sigMouseClicked.emit(double)
    assert np.allclose(view.viewRange(), framed, rtol=1e-6, atol=1e-9)
