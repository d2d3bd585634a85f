"""Colours a reader can see: every curve's pen at least 3:1 against the white background
(the T5 curve was pale yellow, 1.3:1), and a map of cosines coloured over its data's
range (a sinusoidal table's 0.6…1 took a few shades of a −1…1 scale)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PySide6")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtGui  # noqa: E402
from test_experiment_figure import compared  # noqa: E402
from test_plots_legibility import evaluate, show  # noqa: E402

from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402
from posviz.gui.plots import PlotsPanel, style  # noqa: E402
from posviz.gui.plots.positions import cosine_scale  # noqa: E402
from posviz.models.encodings import ENCODINGS  # noqa: E402
from conftest import on_screen  # noqa: E402

LEAST = 3.0             # WCAG 2's least contrast for graphics against their background


def luminance(colour: QtGui.QColor) -> float:
    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (linear(c) for c in colour.getRgbF()[:3])
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(colour, background=style.BACKGROUND) -> float:
    first, second = (luminance(pg.mkColor(c)) for c in (colour, background))
    return (max(first, second) + 0.05) / (min(first, second) + 0.05)


def test_the_contrast_ratio_is_wcag_s():
    assert contrast("#000000") == pytest.approx(21.0)
    assert contrast("#777777") == pytest.approx(4.48, abs=0.01)
    assert contrast("#f0e442") < 1.4            # the T5 curve's old yellow


@pytest.mark.parametrize("colour", style.CURVE_COLOURS)
def test_every_curve_colour_stands_out_on_white(colour):
    assert contrast(colour) >= LEAST, colour


def test_every_encoding_s_pen_in_the_comparison_stands_out(qtbot):
    """The encodings compared, every kind the built-in model has: each curve's pen."""
    values = {kind: (cls.title, [0.1 * (k + 1), 0.2 * (k + 1), 0.3 * (k + 1)])
              for k, (kind, cls) in enumerate(ENCODINGS.items())}
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    figure.resize(900, 600)
    figure.show()
    figure.show_compare(compared(values), "hidden_equivariance")
    pens = [item.opts["pen"] for item in figure.plot.items
            if isinstance(item, pg.PlotCurveItem)]
    assert len({pen.color().name() for pen in pens}) >= len(ENCODINGS)
    weak = {pen.color().name(): round(contrast(pen.color()), 2) for pen in pens
            if contrast(pen.color()) < LEAST}
    assert not weak, weak


APART = 35.0            # CIE76 ΔE: two curves' colours told apart at a glance


def lab(colour) -> np.ndarray:
    """CIE L*a*b* (D65) of an sRGB colour."""
    rgb = np.array(pg.mkColor(colour).getRgbF()[:3])
    rgb = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722],
                    [0.0193, 0.1192, 0.9505]]) @ rgb / np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def delta_e(first, second) -> float:
    return float(np.linalg.norm(lab(first) - lab(second)))


def test_delta_e_is_cie76_s():
    assert delta_e("#ffffff", "#000000") == pytest.approx(100.0, abs=0.01)
    assert delta_e("#d55e00", "#b87a00") < 30      # sinusoidal's and ALiBi's old oranges


def test_every_two_curve_colours_are_far_apart():
    """Sinusoidal's and ALiBi's curves took two similar oranges (ΔE 27), the sixth and
    seventh curves two blues (ΔE 12)."""
    near = {(a, b): round(delta_e(a, b), 1) for k, a in enumerate(style.CURVE_COLOURS)
            for b in style.CURVE_COLOURS[k + 1:] if delta_e(a, b) < APART}
    assert not near, near


def test_every_encoding_s_pen_in_the_comparison_has_its_own_colour(qtbot):
    """The encodings compared, every kind: any two curves' colours ΔE76 >= APART."""
    values = {kind: (cls.title, [0.1 * (k + 1), 0.2 * (k + 1), 0.3 * (k + 1)])
              for k, (kind, cls) in enumerate(ENCODINGS.items())}
    figure = on_screen(qtbot, ExperimentFigure(), 900, 600)
    figure.show_compare(compared(values), "hidden_equivariance")
    colours = {item.opts["pen"].color().name(): item for item in figure.plot.items
               if isinstance(item, pg.PlotCurveItem)}
    assert len(colours) == len(ENCODINGS)
    near = {(a, b): round(delta_e(a, b), 1) for a in colours for b in colours
            if a < b and delta_e(a, b) < APART}
    assert not near, near


def test_a_map_of_cosines_is_coloured_over_its_data():
    cmap, levels = cosine_scale(np.array([[1.0, 0.62], [0.62, 1.0]]))
    assert cmap == style.SEQUENTIAL and levels == pytest.approx((0.62, 1.0))
    cmap, levels = cosine_scale(np.array([[1.0, -0.4], [-0.4, np.nan]]))
    assert cmap == style.DIVERGING and levels == pytest.approx((-1.0, 1.0))
    cmap, levels = cosine_scale(np.array([[0.5, -0.2], [-0.2, 0.5]]))
    assert cmap == style.DIVERGING and levels == pytest.approx((-0.5, 0.5))


def test_the_sinusoidal_similarity_map_spans_its_cosines(qtbot):
    """The built-in sinusoidal model's similarity map: its bar and image from the
    smallest cosine to the largest (1, a position with itself), not −1…1."""
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 760)
    panel.show()
    show(panel, evaluate(pe="sinusoidal"))
    figure = panel.figures()["encoding_similarity"]
    panel._refresh(["encoding_similarity"])         # its tab drawn, as an export does
    cosines = figure.data["cosine"]
    low, high = float(np.nanmin(cosines)), float(np.nanmax(cosines))
    assert low > -1 + 1e-3 and high == pytest.approx(1.0, abs=1e-5)
    expected = (low, high) if low >= 0 else (-max(-low, high), max(-low, high))
    assert tuple(figure.bar.levels()) == pytest.approx(expected, abs=1e-6)
    assert tuple(figure.map.image.getLevels()) == pytest.approx(expected, abs=1e-6)
