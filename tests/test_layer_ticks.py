"""Layer axes of deep models: as many labels as fit, never touching, always "in" and the
last layer, in the window and in an exported image."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtGui  # noqa: E402

from posviz.gui.plots.layer_axis import layer_ticks, set_layer_ticks  # noqa: E402


def drawn_labels(axis: pg.AxisItem) -> list[tuple[str, object]]:
    """(text, rect) of each tick label the axis paints at its present size."""
    image = QtGui.QImage(10, 10, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        specs = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(text, rect) for rect, _, text in specs[2]]


def assert_readable(labels, last: int) -> None:
    texts = [text for text, _ in labels]
    assert texts[0] == "in" and texts[-1] == str(last), texts
    rects = sorted((rect for _, rect in labels), key=lambda r: r.left())
    for a, b in zip(rects, rects[1:]):
        assert a.right() < b.left(), texts         # no two labels touch


def test_thinned_ticks_keep_in_and_the_last_layer():
    assert [t for _, t in layer_ticks(31, 5)[0]] == ["in", "5", "10", "15", "20", "25",
                                                     "30"]
    assert [t for _, t in layer_ticks(31, 2)[0]][-2:] == ["28", "30"]
    assert [t for _, t in layer_ticks(30, 5)[0]][-2:] == ["25", "29"]  # 27 is too close
    assert [t for _, t in layer_ticks(5)[0]] == ["in", "1", "2", "3", "4"]


@pytest.mark.parametrize("width", [300, 500, 900, 1800])
def test_a_30_layer_axis_labels_what_fits(qtbot, width):
    canvas = pg.GraphicsLayoutWidget()
    qtbot.addWidget(canvas)
    plot = canvas.addPlot()
    plot.plot(np.arange(31), np.ones(31))
    plot.setXRange(-0.2, 30.2, padding=0)
    set_layer_ticks(plot.getAxis("bottom"), 31)
    canvas.resize(width, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    labels = drawn_labels(plot.getAxis("bottom"))
    assert_readable(labels, 30)
    if width >= 1800:
        assert len(labels) == 31                   # every layer where there is room
    set_layer_ticks(plot.getAxis("bottom"), 0)     # back to plain numbers
    assert "in" not in [text for text, _ in drawn_labels(plot.getAxis("bottom"))]


def test_the_symmetry_figure_of_a_30_layer_model(qtbot, window, tmp_path):
    panel = window.model_panel
    with qtbot.waitSignal(window.controller.evaluated, timeout=120_000):
        panel.field("layers").setValue(30)
    figure = window.plots.figures()["symmetry"]
    assert_readable(drawn_labels(figure.plot.getAxis("bottom")), 30)
    assert figure.export_png(tmp_path / "symmetry.png").stat().st_size > 1000
    assert_readable(drawn_labels(figure.plot.getAxis("bottom")), 30)


@pytest.mark.parametrize("name", ["symmetry", "branch_norms"])
def test_the_last_layer_of_30_is_whole_in_a_1024_pixel_window(qtbot, window, name):
    """At 1024 × 700 a 30-layer plot gives each layer about 10 pixels: a fixed margin of
    0.2 layer left the last layer's markers half cut at the plot's edge."""
    from PySide6.QtCore import QPointF
    window.resize(1024, 700)
    panel = window.model_panel
    with qtbot.waitSignal(window.controller.evaluated, timeout=120_000):
        panel.field("layers").setValue(30)
    if name == "branch_norms":
        window.plots.tabs.setCurrentIndex(1)
    qtbot.wait(200)
    plot = window.plots.figures()[name].plot
    view = plot.vb
    assert view.width() < 600                       # the crowded case
    right = view.mapViewToScene(QPointF(30, 0)).x()
    left = view.mapViewToScene(QPointF(0, 0)).x()
    box = view.sceneBoundingRect()
    assert box.right() - right >= 8 and left - box.left() >= 8, (box, left, right)
    assert_readable(drawn_labels(plot.getAxis("bottom")), 30)
