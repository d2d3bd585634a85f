"""What a new reader misread: the row of exact zeros, the floor's label under curves,
curves hidden under equal ones, words that do not match what is drawn."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui  # noqa: E402
from test_plots_legibility import evaluate, show  # noqa: E402

from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402
from posviz.gui.plots import PlotsPanel  # noqa: E402
from conftest import on_screen  # noqa: E402
from posviz.analysis.experiments.sweep import SwapMap  # noqa: E402


def swap_map(tokens, change):
    """A swap sweep's map at layer 2 of ``tokens``, every token movable."""
    return SwapMap("", tuple(tokens), 2, change, np.ones(len(tokens), bool))


@pytest.fixture
def panel(qtbot):
    widget = on_screen(qtbot, PlotsPanel(), 1100, 760)
    return widget


def alone(figure, qtbot, size):
    """``figure`` out of its tab at ``size``, shown and painted."""
    figure.setParent(None)
    qtbot.addWidget(figure)
    figure.resize(*size)
    figure.show()
    qtbot.waitExposed(figure)
    figure.grab()
    return figure


def drawn_ticks(axis) -> list[tuple[QtCore.QRectF, str]]:
    """The labels ``axis`` paints, as pyqtgraph lays them out (it may skip a level)."""
    image = QtGui.QImage(10, 10, QtGui.QImage.Format.Format_ARGB32)
    painter = QtGui.QPainter(image)
    try:
        _, _, texts = axis.generateDrawSpecs(painter)
    finally:
        painter.end()
    return [(rect, text) for rect, _, text in texts if text]


def assert_zero_row_labelled(plot):
    """The zero row's tick says 0, on the row, and no other label touches it."""
    axis = plot.getAxis("left")
    texts = drawn_ticks(axis)
    zeros = [rect for rect, text in texts if text == "0"]
    assert len(zeros) == 1, [text for _, text in texts]
    low, high = plot.vb.viewRange()[1]
    y = (high - axis.zero_row) / (high - low) * axis.height()     # from the axis's top
    assert abs(zeros[0].center().y() - y) < 2, (zeros[0], y)
    for rect, text in texts:
        if text != "0":
            assert not rect.intersects(zeros[0]), (text, rect, zeros[0])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("size", [(550, 250), (550, 330), (900, 700)])
def test_the_zero_row_keeps_its_0_in_the_symmetry_plot(panel, qtbot, dtype, size):
    """In float64 (floor 2.2e-14) the row at 10⁻¹⁶ lost its "0" to 10⁻¹⁵, so the zeros
    read as a measured 1e-16."""
    show(panel, evaluate(pe="none", dtype=dtype))
    figure = alone(panel.figures()["symmetry"], qtbot, size)
    assert figure.plot.getAxis("left").zero_row == {"float64": -16, "float32": -7}[dtype]
    assert_zero_row_labelled(figure.plot)


@pytest.mark.parametrize("floor", [2.2e-14, 1.2e-5])
@pytest.mark.parametrize("size", [(700, 260), (700, 330), (1200, 800)])
def test_the_zero_row_keeps_its_0_in_the_sweep(qtbot, floor, size):
    median = np.array([0.0, 0.0, 0.03, 0.1, 0.16])
    band = SimpleNamespace(median=median, p10=median * 0.8, p90=median * 1.2)
    result = SimpleNamespace(bands={"pooled_change": band}, floor=floor, kind="random",
                             runs=6, texts=("a b c",))
    figure = ExperimentFigure()
    alone(figure, qtbot, size)
    figure.show_sweep(result, "pooled_change")
    figure.grab()
    assert_zero_row_labelled(figure.plot)


def test_the_zero_row_holds_still_while_the_smallest_change_wavers(qtbot):
    """At 256 tokens the smallest change wavered about 3e-8 from one reorder to the
    next, and the zero row moved between 10⁻⁸ and 10⁻⁹ at every other one: the axis
    jumped a decade during a drag (and the plot was laid out again). The row drawn stays
    while it lies as low as needed and at most a decade lower."""
    from dataclasses import replace

    from posviz.gui.plots.layers import SymmetryFigure
    from posviz.views.shown import Shown, build_views
    ev = evaluate(pe="none")                            # float32: floor 1.2e-5
    shown = Shown(ev, build_views(ev, None))
    figure = SymmetryFigure()
    qtbot.addWidget(figure)
    rows, bottoms = [], []
    # a tenth of the smallest change; alone each asks for row -8, -9, -8, -9, -7, -11
    for level in (3.2e-8, 2.9e-8, 3.2e-8, 2.9e-8, 1e-6, 2e-10):
        figure.update_from(replace(shown, views=replace(shown.views, zero_level=level)),
                           1, 0)
        rows.append(figure.plot.getAxis("left").zero_row)
        bottoms.append(figure.plot.vb.viewRange()[1][0])
    assert rows == [-8, -9, -9, -9, -7, -11]
    assert bottoms[1] == bottoms[2] == bottoms[3] < rows[1]     # the view stays put


def crossing_evaluation():
    """A causal model with no positions, its first two tokens swapped: the final slot's
    curve rises from 0 through the noise floor between layers 1 and 2."""
    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    session = Session(BuiltinBackend(ModelConfig(mask="causal", pe="none")),
                      "the cat sat on the mat because it was warm")
    session.swap(0, 1)
    return Engine(session.backend).evaluate(session.seq, session.order, session.positions)


def assert_floor_label_under_data(plot, line, svg: str):
    """The floor's label on a light backing (in the SVG export too), drawn under every
    curve, marker and band, so that its backing hides no data (it covered the median's
    band where the band crossed it)."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from posviz.gui.plots.log_curves import LogCurves
    fill = line.label.fill.color()
    assert fill.lightness() > 240 and fill.alpha() >= 200, fill.getRgb()
    # and under the dashes: the line ran lighter where it crossed the backing
    assert line.label.flags() & QtWidgets.QGraphicsItem.GraphicsItemFlag.ItemStacksBehindParent
    data = [item for item in plot.items
            if isinstance(item, (pg.PlotCurveItem, pg.PlotDataItem, pg.ScatterPlotItem,
                                 pg.FillBetweenItem, QtWidgets.QGraphicsPathItem, LogCurves))
            or hasattr(item, "scatter")]
    assert data
    assert all(line.zValue() < item.zValue() for item in data), \
        [(type(item).__name__, item.zValue()) for item in data
         if item.zValue() <= line.zValue()]
    alpha = f'fill="#ffffff" fill-opacity="{fill.alpha() / 255:.4f}'[:-1]
    assert alpha in svg, alpha


def test_the_floor_label_hides_no_curve_in_the_symmetry_plot(panel, qtbot, tmp_path):
    show(panel, crossing_evaluation())
    figure = alone(panel.figures()["symmetry"], qtbot, (960, 520))
    svg = figure.export_svg(tmp_path / "symmetry.svg").read_text(encoding="utf-8")
    assert_floor_label_under_data(figure.plot, figure.floor_line, svg)


def test_the_floor_label_hides_no_band_in_the_sweep(qtbot, tmp_path):
    import pyqtgraph as pg
    median = np.array([1e-7, 3e-5, 0.03, 0.1, 0.16])
    band = SimpleNamespace(median=median, p10=median * 0.8, p90=median * 1.2)
    result = SimpleNamespace(bands={"pooled_change": band}, floor=1.2e-5, kind="random",
                             runs=6, texts=("a b c",))
    figure = alone(ExperimentFigure(), qtbot, (960, 520))
    figure.show_sweep(result, "pooled_change")
    line = next(item for item in figure.plot.items if isinstance(item, pg.InfiniteLine))
    svg = figure.export_svg(tmp_path / "sweep.svg").read_text(encoding="utf-8")
    assert_floor_label_under_data(figure.plot, line, svg)


def test_coinciding_layers_are_named_in_words():
    from posviz.gui.plots.coincide import layer_words, same_at
    a = np.array([np.nan, 1.0, 2.0, 0.0, 5.0, 7.0])
    b = np.array([np.nan, 1.0, 2.0 * (1 + 1e-9), 0.0, 5.1, 7.0])
    assert same_at(a, b).tolist() == [False, True, True, True, False, True]
    assert layer_words(np.flatnonzero(same_at(a, b))) == "layers 1–3, 5"
    assert layer_words([0, 1]) == "layers in–1" and layer_words([2]) == "layer 2"


@pytest.mark.parametrize("residual", [False, True])
def test_a_residual_stream_equal_to_the_mlp_branch_shows_and_is_named(panel, residual):
    """With residual connections off the residual stream is the MLP branch's output: its
    curve was hidden under the MLP branch's."""
    show(panel, evaluate(residual=residual))
    panel.tabs.setCurrentIndex(1)
    figure = panel.figures()["branch_norms"]
    note = figure.note.text()
    for suffix in ("", "_original"):
        wide = figure.curves["residual" + suffix].opts["pen"].widthF()
        over = figure.curves["mlp_branch" + suffix].opts["pen"].widthF()
        assert (wide > over + 2) == (not residual), (suffix, wide, over)
    if residual:
        assert "coincide" not in note
    else:
        assert "equals the MLP branch's output at layers 1–4" in note, note
        assert "the two curves coincide" in note


def token_change(qtbot, change, tokens=("a", "b", "c", "d")):
    """The per-token bars of ``change`` (one layer), floor 1e-7."""
    from posviz.gui.plots.token_change import TokenChangeFigure
    figure = TokenChangeFigure()
    qtbot.addWidget(figure)
    comparison = SimpleNamespace(token_change=np.array([change]), floor=1e-7)
    ev = SimpleNamespace(comparison=comparison, reference=SimpleNamespace(tokens=tokens))
    figure.update_from(SimpleNamespace(evaluation=ev), 0, 0)
    return figure


@pytest.mark.parametrize("change, words", [
    ((0.3, 0.0, 0.0, 0.1), "2 of 4 tokens beyond the noise floor; unchanged: 0, no bar)"),
    ((5e-8, 8e-8, 6e-8, 9e-8), "0 of 4 tokens beyond the noise floor; grey: unchanged)"),
    ((5e-6, 0.0, 9e-8, 1e-6), "2 of 4 tokens beyond the noise floor; unchanged: grey, "
                              "or no bar where 0)"),
    ((0.3, 0.2, 0.1, 0.1), "4 of 4 tokens beyond the noise floor)")])
def test_the_token_change_title_says_what_an_unchanged_token_looks_like(qtbot, change,
                                                                        words):
    """The title said "grey: unchanged" where unchanged tokens had no bar to see."""
    figure = token_change(qtbot, change)
    assert figure.heading.text().endswith(words + "</b>"), figure.heading.text()


def test_a_tiny_change_has_a_bar_to_see_and_hover_and_a_zero_has_none(qtbot):
    """MiniLM's [CLS] changed by 0.00062 beside changes near 0.5: no bar was drawn, so
    nothing to hover, and it looked like the exact 0 of a token that did not move."""
    from posviz.gui.plots.token_change import STUB
    figure = alone(token_change(qtbot, (6.2e-4, 0.66, 0.0, 0.45),
                                ("[CLS]", "the", "[SEP]", "cat")), qtbot, (600, 330))
    heights = figure.bars.opts["height"]
    top = figure.plot.getAxis("left").range[1]
    assert heights[0] >= STUB * top > 6.2e-4 and heights[2] == 0          # 0: no bar
    assert list(heights[[1, 3]]) == [0.66, 0.45]                          # true heights
    assert figure.data["change"][0] == pytest.approx(6.2e-4)              # the CSV's
    assert "[CLS] (0.00062)" in figure.note.text() and "[SEP]" not in figure.note.text()
    assert "hover" not in figure.note.text()               # an exported note has no hover
    assert f"under {STUB:.1%} of the axis" in figure.note.text()
    assert f"under {STUB:.1%} of the axis" in figure.guide
    bar_top = figure.plot.vb.mapViewToScene(QtCore.QPointF(0.5, heights[0] * 0.5))
    said = []
    figure.hovered.connect(said.append)
    figure.canvas.scene().sigMouseMoved.emit(bar_top)
    assert said == ["layer 0: token '[CLS]' changed by 0.00062"]
    assert figure.canvas.toolTip() == said[0]


def test_coinciding_curves_are_grouped_by_the_layers_they_share():
    from posviz.gui.plots.coincide import coinciding, coinciding_words
    curves = {"none": np.array([0.0, 0.3, 0.4, 0.5]),
              "sinusoidal": np.array([0.1, 0.2, 0.4, 0.6]),
              "RoPE": np.array([0.0, 0.3, 0.4, 0.5]),
              "ALiBi": np.array([0.0, 0.9, 0.8, 0.5])}
    groups = coinciding(curves)
    assert groups == [(("none", "RoPE", "ALiBi"), [0, 3]), (("none", "RoPE"), [1]),
                      (("none", "sinusoidal", "RoPE"), [2])]
    assert coinciding_words(groups[1:2]) == "none and RoPE coincide at layer 1"
    curves["RoPE"] = np.array([0.1, 0.1, 0.1, np.nan])           # NaN: no layer there
    assert coinciding(curves) == [(("none", "ALiBi"), [0, 3]), (("sinusoidal", "RoPE"), [0]),
                                  (("none", "sinusoidal"), [2])]


def compared(curves: dict):
    """A Compare result (analysis.experiments.encodings) of ``curves``: title -> (L+1,)."""
    def model(title, values):
        values = np.array(values)
        return SimpleNamespace(title=title, kind=title.split()[0], rows=[None] * len(values),
                               curve=lambda metric: values)
    return SimpleNamespace(floor=1.2e-5, weights="random", tokens=["the", "cat", "sat"],
                           order=[1, 0, 2], models=[model(*item) for item in curves.items()])


def test_an_encoding_equal_to_another_shows_and_is_named(qtbot):
    """Under a causal mask NoPE and RoPE gave the same values at most layers and the NoPE
    line lay hidden under RoPE's."""
    import pyqtgraph as pg
    figure = alone(ExperimentFigure(), qtbot, (900, 600))
    figure.show_compare(compared({"none (NoPE)": [0.0, 0.12, 0.16, 0.22, 0.21],
                                  "sinusoidal (Vaswani 2017)": [0.07, 0.11, 0.14, 0.19, 0.3],
                                  "RoPE (Su 2021)": [0.0, 0.12, 0.16, 0.22, 0.25]}),
                        "hidden_equivariance")
    labels = [label.text for _, label in figure.legend.items]
    assert labels == ["none (NoPE)", "sinusoidal (Vaswani 2017)", "RoPE (Su 2021)"], labels
    assert "none and RoPE coincide at layers in–3" in figure.note.text()
    pens = [item.opts["pen"] for item in figure.plot.items
            if isinstance(item, pg.PlotCurveItem)]
    none, sinusoidal, rope = pens
    assert rope.style() == QtCore.Qt.PenStyle.DashLine
    assert none.style() == sinusoidal.style() == QtCore.Qt.PenStyle.SolidLine
    assert none.widthF() > rope.widthF() + 2 and sinusoidal.widthF() == rope.widthF()
    apart = {"none (NoPE)": [0.0, 0.1, 0.2], "RoPE (Su 2021)": [0.0, 0.3, 0.4]}
    figure.show_compare(compared(apart), "hidden_equivariance")
    assert "none and RoPE coincide at layer in." in figure.note.text()
    pens = [item.opts["pen"] for item in figure.plot.items
            if isinstance(item, pg.PlotCurveItem)]
    solid = QtCore.Qt.PenStyle.SolidLine
    assert {(pen.style(), pen.widthF()) for pen in pens} == {(solid, 2.0)}


@pytest.mark.parametrize("text", ["the cat sat on the mat", "a cat sat on my mat"])
def test_the_swap_map_marks_pairs_of_identical_tokens(qtbot, text):
    """"the"(0) ↔ "the"(4) showed a large change although the swap leaves the input
    as it was: the cell is outlined, the note and the hover text say why."""
    from PySide6 import QtWidgets

    from posviz.gui.experiments.swaps import IDENTICAL_NOTE
    words = text.split()
    change = np.full((6, 6), 0.1)
    np.fill_diagonal(change, 0.0)
    pairs = swap_map(words, change)
    figure = alone(ExperimentFigure(), qtbot, (900, 600))
    figure.show_pairs(pairs)
    outlined = [item.path() for item in figure.plot.items
                if type(item) is QtWidgets.QGraphicsPathItem]     # not a FillBetweenItem
    hovered = []
    figure.hovered.connect(hovered.append)

    def hover(i, j):
        figure._mouse_moved(figure.plot.vb.mapViewToScene(QtCore.QPointF(j + 0.5, i + 0.5)))
        return hovered[-1]
    if words[0] == words[4]:
        assert outlined and all(path.contains(QtCore.QPointF(4.5, 0.5)) and    # (x, y)
                                path.contains(QtCore.QPointF(0.5, 4.5)) and
                                not path.contains(QtCore.QPointF(2.5, 0.5))
                                for path in outlined)
        assert figure.note.text().endswith("\n" + IDENTICAL_NOTE)
        assert hover(0, 4).startswith("'the'(0) ↔ 'the'(4)")
        assert "identical tokens: the input does not change" in hover(4, 0)
    else:
        assert not outlined and "identical" not in figure.note.text()
    assert "identical" not in hover(1, 2) and hover(1, 2).startswith("'cat'(1) ↔ 'sat'(2)")
    figure.show_sweep(SimpleNamespace(
        bands={"pooled_change": SimpleNamespace(median=np.full(3, 0.1), p10=np.full(3, 0.1),
                                                p90=np.full(3, 0.1))},
        floor=1e-5, kind="random", runs=2, texts=("a",)), "pooled_change")
    assert not any(type(item) is QtWidgets.QGraphicsPathItem for item in figure.plot.items)
    assert figure.canvas.toolTip() == ""


@pytest.mark.parametrize("width", [560, 700, 1200])
def test_the_sweep_floor_label_starts_inside_the_plot(qtbot, width):
    """Centred at 5 % of a narrow sweep, "noise floor" began over the left axis."""
    import pyqtgraph as pg
    median = np.array([0.0, 0.0, 0.03, 0.1, 0.16])
    band = SimpleNamespace(median=median, p10=median * 0.8, p90=median * 1.2)
    result = SimpleNamespace(bands={"pooled_change": band}, floor=2.2e-14, kind="random",
                             runs=6, texts=("a b c",))
    figure = alone(ExperimentFigure(), qtbot, (width, 300))
    figure.show_sweep(result, "pooled_change")
    figure.grab()
    label = next(item for item in figure.plot.items if isinstance(item, pg.InfiniteLine)).label
    view = figure.plot.vb.sceneBoundingRect()
    shown = label.mapRectToScene(label.boundingRect())
    assert view.left() < shown.left() and shown.right() < view.right(), (shown, view)


def test_legend_entries_stay_short_and_inside_a_narrow_figure(qtbot):
    """Four curves on one line at 1024 × 700: two columns of long entries (each naming
    its partners) ran past the figure's right edge and widened the plot with them; the
    entries name their encodings, the note the curves that are one line."""
    figure = alone(ExperimentFigure(), qtbot, (760, 420))
    same = [0.0, 0.12, 0.16, 0.22, 0.21]
    figure.show_compare(compared({"none (NoPE)": same, "sinusoidal (Vaswani 2017)":
                                  [0.07, 0.11, 0.14, 0.19, 0.21], "RoPE (Su 2021)": same,
                                  "ALiBi (Press 2022)": same}), "hidden_equivariance")
    qtbot.wait(50)
    labels = [label.text for _, label in figure.legend.items]
    assert labels == ["none (NoPE)", "sinusoidal (Vaswani 2017)", "RoPE (Su 2021)",
                      "ALiBi (Press 2022)"], labels
    assert ("none, RoPE and ALiBi coincide at layers in–3; none, sinusoidal, RoPE and "
            "ALiBi coincide at layer 4") in figure.note.text(), figure.note.text()
    right = figure.legend.sceneBoundingRect().right()
    assert right <= figure.canvas.width(), (right, figure.canvas.width())
    assert figure.plot.sceneBoundingRect().right() <= figure.canvas.width()


@pytest.mark.parametrize("height", [120, 150, 200, 420, 900])
def test_a_long_log_axis_labels_even_decades_that_keep_apart(qtbot, height):
    """Sinha 2022 (trained) at 1024 px labelled its right-hand axis 10⁰, 10⁻², 10⁻⁴,
    10⁻⁵, 10⁻⁷, 10⁻⁹, 10⁻¹⁰, 10⁻¹² (pyqtgraph's every-5th decade, then its every decade
    thinned from the bottom): labels every k-th decade, evenly, none touching, at every
    height."""
    import math

    import pyqtgraph as pg

    from posviz.gui.plots.log_ticks import one_notation
    widget = pg.PlotWidget()
    on_screen(qtbot, widget, 400, height)
    plot = widget.getPlotItem()
    plot.setLogMode(y=True)
    axis = plot.getAxis("left")
    one_notation(axis)
    plot.setYRange(-12.5, 0.1, padding=0)
    widget.grab()
    low, high = axis.range
    labelled = []
    for spacing, values in axis.tickValues(low, high, axis.height()):
        labelled += [v for v, text in zip(values, axis.tickStrings(values, 1.0, spacing))
                     if text]
    labelled = sorted(labelled)
    steps = {round(b - a, 6) for a, b in zip(labelled, labelled[1:])}
    assert len(labelled) >= 3 and len(steps) == 1, labelled          # even decades
    assert all(float(v).is_integer() for v in labelled), labelled
    room = axis.height() / (high - low) * steps.pop()
    font = QtGui.QFontMetricsF(axis.style.get("tickFont") or axis.font())
    assert room >= font.height() * 0.8 + 2, (room, labelled)        # apart
    if height >= 420:
        assert labelled == [float(v) for v in range(-12, 1)] or math.isclose(
            labelled[1] - labelled[0], 1), labelled                  # every decade when room


@pytest.mark.parametrize("room", [30, 45, 60, 90, 200])
def test_a_category_name_wider_than_its_column_is_shortened_never_hyphenated(qtbot, room):
    """Sinha 2022 (trained) at 1024 px: "trained sinusoidal (absolute)" wrapped at spaces
    kept "sinusoidal" wider than its column, touching the next model's name; split with
    hyphens ("sinusoi-" over "dal") it read as two words. Every line is within the
    column, each word whole or shortened with a "." where it stands, in order."""
    from posviz.gui.plots.axis_titles import fit_words, whole_words
    metrics = QtGui.QFontMetricsF(QtGui.QFont())
    name = "trained sinusoidal (absolute)"
    lines = fit_words(name, metrics, room).split("\n")
    assert all(metrics.horizontalAdvance(line) <= room for line in lines), lines
    assert not any(line.endswith("-") for line in lines), lines
    words = " ".join(lines).split()
    assert len(words) == len(name.split())
    for word, whole in zip(words, name.split()):
        assert word == whole or (word.endswith(".") and whole.startswith(word[:-1])
                                 and len(word) > 3), (word, whole)
    assert whole_words(name, metrics, room) == (words == name.split())


def test_many_tiny_changes_are_counted_in_the_note_not_named(qtbot):
    """A causal swap in a 701-token text changed 340 tokens by 4e-8 to 1e-7: the note
    named each, and its lines pushed the plot to 35 pixels."""
    from posviz.gui.plots.token_change import NAMED_STUBS
    change = np.r_[0.4, np.full(3 * NAMED_STUBS, 5e-8), 0.2]
    figure = token_change(qtbot, tuple(change), tuple(f"t{i}" for i in range(len(change))))
    note = figure.note.text()
    assert note.startswith(f"{3 * NAMED_STUBS} tokens (5e-08 to 5e-08; each in the table)"), note
    assert "t1 (" not in note
