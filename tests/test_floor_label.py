"""The noise floor's label sits where no curve or marker crosses it: a steep curve of an
exported symmetry plot ran through its words."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from posviz.gui.plots.noise_floor import free_spans  # noqa: E402


def test_the_stretches_clear_of_a_steep_segment_and_a_marker():
    steep = (np.array([0.0, 1.0]), np.array([-10.0, 0.0]))      # crosses -5..-4 at 0.5..0.6
    marker = (np.array([3.0]), np.array([-4.5]))
    spans = free_spans([steep, marker], -5.0, -4.0, (0.0, 4.0), 0.05)
    assert np.ravel(spans) == pytest.approx([0.0, 0.45, 0.65, 2.95, 3.05, 4.0])
    flat = (np.array([0.0, 4.0]), np.array([-4.5, -4.5]))          # along the band
    assert free_spans([flat], -5.0, -4.0, (0.0, 4.0), 0.05) == []
    gap = (np.array([0.0, 1.0, 2.0]), np.array([-4.5, np.nan, -4.5]))  # NaN: no segment
    assert np.ravel(free_spans([gap], -5.0, -4.0, (0.0, 2.0), 0.05)) == pytest.approx(
        [0.05, 1.95])


def test_a_figure_puts_its_label_past_a_curve_that_crosses_the_floor(qtbot):
    """A curve rises from the row marked 0 at layer in to 1 at layer 1, through the
    floor near the plot's left edge, where the label stood: at every size the label is
    clear of it, whole."""
    from test_plots_readable import alone, compared

    from posviz.gui.experiments.figure import ExperimentFigure
    figure = alone(ExperimentFigure(), qtbot, (900, 500))
    figure.show_compare(compared({"none (NoPE)": [0.0, 1e3, 0.6, 0.7],
                                  "RoPE (Su 2021)": [0.2, 0.3, 0.4, 0.5]}),
                        "hidden_equivariance")
    for width in (900, 520):
        figure.resize(width, 500)
        figure._settle()
        line = figure.labelled[0][0]
        label, view = line.label, figure.plot.vb
        (x0, x1), _ = view.viewRange()
        left = x0 + label.orthoPos * (x1 - x0)
        curve = next(item for item in figure.plot.items if hasattr(item, "getData")
                     and len(item.getData()[0]) == 4)
        x, y = curve.getData()
        crossing = x[0] + (line.value() - y[0]) / (y[1] - y[0]) * (x[1] - x[0])
        right = left + label.boundingRect().width() * view.viewPixelSize()[0]
        assert x0 < crossing < x1 and not left <= crossing <= right, (crossing, left, right)
        assert label.format == "noise floor"
