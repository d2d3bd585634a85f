"""A PNG drawn at a scale (a width, a DPI) draws its lines that much thicker, as it does
its text and markers: at 300 dpi (×3.1) an Experiments plot's curves stayed 2 pixels
wide, a hairline beside the same figure's SVG and PDF."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("PySide6")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtGui  # noqa: E402

import posviz  # noqa: E402

SCALE = 3


def thickness(path, colour: QtGui.QColor) -> float:
    """The curve's thickness in pixels: across the columns that hold pixels of its
    ``colour`` (within 40 of each channel), the median count of them (a marker or the
    legend's sample holds a few columns, the curve most)."""
    image = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    width, height = image.width(), image.height()
    argb = np.frombuffer(image.constBits(), np.uint32, count=image.sizeInBytes() // 4)
    argb = argb.reshape(height, image.bytesPerLine() // 4)[:, :width]
    rgb = np.stack([(argb >> 16) & 255, (argb >> 8) & 255, argb & 255], -1).astype(int)
    near = (np.abs(rgb - np.array(colour.getRgb()[:3])) <= 40).all(-1)
    counts = near.sum(0)
    return float(np.median(counts[counts > 0]))


def assert_lines_scale(figure, colour: QtGui.QColor, tmp_path) -> None:
    one = figure.export(tmp_path / "one.png", width=figure.export_size().width())
    more = figure.export(tmp_path / "more.png", width=SCALE * figure.export_size().width())
    thin, thick = thickness(one, colour), thickness(more, colour)
    assert thin >= 1 and thick >= 0.8 * SCALE * thin, (thin, thick)


def test_an_experiment_s_curves_are_as_thick_in_a_png_at_any_scale(qtbot, tmp_path):
    from conftest import on_screen
    from test_experiment_figure import compared

    from posviz.gui.experiments.figure import ExperimentFigure
    figure = on_screen(qtbot, ExperimentFigure(), 900, 600)
    figure.show_compare(compared({"rope": ("RoPE", [0.5, 0.5, 0.5, 0.5, 0.5])}),
                        "hidden_equivariance")
    curve = next(item for item in figure.plot.items if isinstance(item, pg.PlotCurveItem))
    assert_lines_scale(figure, curve.opts["pen"].color(), tmp_path)
    assert curve.opts["pen"].isCosmetic()               # as it was, once written


def test_the_symmetry_plot_s_curves_are_as_thick_in_a_png_at_any_scale(qtbot, tmp_path):
    report = posviz.load(pe="rope", mask="causal", layers=2, heads=2, d_model=16).compare(
        "the cat sat on the mat", order=[5, 4, 3, 2, 1, 0])
    figure = report.figure("symmetry")._figure()
    from posviz.gui.plots.log_curves import LogCurves
    curves = next(item for item in figure.plot.items if isinstance(item, LogCurves))
    for curve in curves.curves[1:]:                     # one curve: no other crosses it
        curve.visible = False
    curves.refresh()
    assert_lines_scale(figure, pg.mkPen(curves.curves[0].pen).color(), tmp_path)
