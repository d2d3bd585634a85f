"""Values on hover: every line plot names the point under the mouse (curve, layer,
value) in the status line and a tooltip of sane width, and takes it back when the hover
ends, so no plot's text outlives its hover."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402
from test_plots_legibility import evaluate  # noqa: E402

from posviz.gui.plots.hover import TIP_WIDTH, wrapped  # noqa: E402
from posviz.gui.plots.layers import SymmetryFigure  # noqa: E402
from posviz.gui.plots.layers import CURVE_LABELS, CURVES_TIP, BranchNormsFigure  # noqa: E402
from posviz.gui.plots.token_change import TokenChangeFigure  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402
from conftest import on_screen  # noqa: E402


@pytest.fixture(scope="module")
def shown():
    ev = evaluate(pe="none", mask="causal")
    return Shown(ev, build_views(ev, None))


def alone(figure, qtbot, shown, size=(700, 450)):
    qtbot.addWidget(figure)
    figure.resize(*size)
    figure.show()
    qtbot.waitExposed(figure)
    figure.update_from(shown, 1, 0)
    figure.grab()
    said = []
    figure.hovered.connect(said.append)
    return figure, said


def move(figure, scene_pos) -> None:
    figure.canvas.scene().sigMouseMoved.emit(scene_pos)


def at_point(figure, x, y_view) -> QtCore.QPointF:
    return figure.plot.vb.mapViewToScene(QtCore.QPointF(float(x), float(y_view)))


def test_the_symmetry_curves_name_the_point_under_the_mouse(qtbot, shown):
    figure, said = alone(SymmetryFigure(), qtbot, shown)
    values = figure.data["pooled_change"]                              # (L+1,)
    layer = int(np.nanargmax(values))
    y = figure.curves["pooled_change"].getData()[1][layer]       # log10, as drawn
    move(figure, at_point(figure, layer, y) + QtCore.QPointF(3, -2))   # near, not on it
    text = said[-1]
    assert text.startswith(f"{CURVE_LABELS['pooled_change']}, layer {layer}: ") or \
        text.split(",")[0] in CURVE_LABELS.values(), text               # another on it
    value = float(text.rsplit(": ", 1)[1].split(" ")[0])
    name = next(m for m, label in CURVE_LABELS.items() if text.startswith(label + ","))
    assert value == pytest.approx(figure.data[name][layer], rel=1e-3)
    assert figure.canvas.toolTip() == text
    # an exact 0 on the zero row reads 0, not the row's stand-in value
    zero = np.flatnonzero(figure.data["hidden_equivariance"] == 0)
    assert zero.size
    row = figure.curves["hidden_equivariance"].getData()[1][zero[0]]
    move(figure, at_point(figure, zero[0], row))
    assert said[-1].split(": ")[1].split(" ")[0] == "0", said[-1]
    far = figure.plot.vb.sceneBoundingRect().topLeft() + QtCore.QPointF(1, 1)
    if all(np.hypot(*(lambda p: (p.x() - far.x(), p.y() - far.y()))(
            at_point(figure, x, y))) > 20 for c in figure.curves.values()
            for x, y in zip(*c.getData())):
        move(figure, far)
        assert said[-1] == "" and figure.canvas.toolTip() == ""


def test_the_input_layer_is_named_and_the_median_gives_its_band(qtbot, shown):
    figure, said = alone(SymmetryFigure(), qtbot, shown)
    series = figure._series
    token = next(s for s in series if s.name.startswith("median token"))
    assert "middle half" in token.extra[1]
    hidden = next(s for s in series if s.name == CURVE_LABELS["hidden_equivariance"])
    move(figure, at_point(figure, 0, hidden.y[0]))
    assert ", the input to block 1: " in said[-1]


def test_the_norms_plot_names_its_curves(qtbot, shown):
    figure, said = alone(BranchNormsFigure(), qtbot, shown, (900, 450))
    values = figure.data["residual"]
    move(figure, at_point(figure, 2, values[2]))
    assert said[-1] in (f"residual stream, reordered, layer 2: {values[2]:.3g}",
                        f"residual stream, original, layer 2: {values[2]:.3g}"), said[-1]


def test_leaving_a_plot_takes_its_text_back(qtbot, shown):
    """The bar chart's "token 'cat' changed by 0.224" stayed in the status line while
    the mouse was over another plot."""
    figure, said = alone(TokenChangeFigure(), qtbot, shown)
    bar = figure.plot.vb.mapViewToScene(QtCore.QPointF(1.5, 0.0))
    move(figure, bar)
    assert said[-1].startswith("layer 1: token ")
    QtWidgets.QApplication.sendEvent(figure.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert said[-1] == "" and figure.canvas.toolTip() == ""
    move(figure, bar)
    assert said[-1].startswith("layer 1: token ")
    move(figure, figure.plot.vb.sceneBoundingRect().bottomRight() + QtCore.QPointF(5, 5))
    assert said[-1] == ""                       # outside its bars: nothing to name
    move(figure, bar)
    figure.hide()                               # another tab
    assert said[-1] == ""


def test_a_long_tooltip_wraps_at_a_sane_width(qtbot, shown):
    """The symmetry plot's guide ran 1,550 pixels wide, past the window's edge."""
    figure, _ = alone(SymmetryFigure(), qtbot, shown)
    assert figure.heading.toolTip() == wrapped(CURVES_TIP) and figure.canvas.toolTip() == ""
    assert wrapped("layer 1: 0.5") == "layer 1: 0.5"
    QtWidgets.QToolTip.showText(QtCore.QPoint(10, 10), wrapped(CURVES_TIP), figure)
    tips = [w for w in QtWidgets.QApplication.topLevelWidgets()
            if w.inherits("QTipLabel") and w.isVisible()]
    assert tips and tips[0].width() <= TIP_WIDTH + 40, tips[0].width()
    whole = QtGui.QFontMetrics(tips[0].font()).horizontalAdvance(CURVES_TIP.split("\n")[5])
    assert whole > 2 * TIP_WIDTH                 # the long line did need wrapping
    QtWidgets.QToolTip.hideText()


def test_every_long_figure_tooltip_wraps(qtbot):
    """The tab, heading, note and control tips of the plots wrap at TIP_WIDTH."""
    from posviz.gui.plots import PlotsPanel
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    for index in range(panel.tabs.count()):
        panel.tabs.setCurrentIndex(index)
    tips = [panel.tabs.tabToolTip(i) for i in range(panel.tabs.count())]
    for figure in panel.figures().values():
        tips += [figure.heading.toolTip(), figure.note.toolTip()]
    tips += [panel.figures()["relative_profile"].span.toolTip()]
    long = [tip for tip in tips if len(tip) > 70]
    assert long and all(tip.startswith(f"<table width={TIP_WIDTH}>") for tip in long), [
        tip[:60] for tip in long if not tip.startswith("<table")]


def test_the_encoding_comparison_names_its_curves(qtbot):
    """The Experiments tab's per-layer curves say encoding, layer and value too."""
    from test_plots_readable import compared

    from posviz.gui.experiments.figure import ExperimentFigure
    figure = on_screen(qtbot, ExperimentFigure(), 900, 600)
    figure.show_compare(compared({"none (NoPE)": [0.0, 0.12, 0.16],
                                  "RoPE (Su 2021)": [0.07, 0.3, 0.5]}), "hidden_equivariance")
    figure.grab()
    said = []
    figure.hovered.connect(said.append)
    rope = next(s for s in figure._series if s.name.startswith("RoPE"))
    move(figure, at_point(figure, 2, rope.y[2]))
    assert said[-1] == "RoPE (Su 2021), layer 2: 0.5"
    QtWidgets.QApplication.sendEvent(figure.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert said[-1] == ""
