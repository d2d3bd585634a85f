"""Every figure takes its text and furniture from gui.plots.style: the same tick font
and tick length on every axis, a label on every shown axis and colour bar, colour bars
of one width, legends and headings in the style's sizes; and no axis or colour-bar
label is cut off at a projector's or a laptop's window size."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
import pytest
from PySide6 import QtCore, QtGui, QtWidgets

from posviz.document.spec import ModelSpec
from posviz.gui.plots import colorbars, style, units
from posviz.gui.plots.attention import AttentionFigure, QueryColumn
from posviz.gui.plots.token_axis import TokenAxis
from posviz.models.config import ModelConfig

SIZES = ((1024, 700), (1366, 768))
TIMEOUT = 30_000


def settle(qtbot, window, layers: int | None = None):
    """Wait until the window shows the evaluation of what the session holds (of a
    model with ``layers`` layers, when given)."""
    session = window.controller.session

    def current():
        shown = window.controller.last_shown
        assert shown is not None and shown.evaluation.seq == session.seq
        assert layers is None or shown.evaluation.reference.n_layers == layers
        assert window.controller.generation_painted()
    qtbot.waitUntil(current, timeout=TIMEOUT)


def shown_figures(window):
    """(name, figure) of the current tab's figures that show a plot, not a message."""
    page = window.plots.tabs.currentWidget()
    return [(name, figure) for name, figure in window.plots.figures().items()
            if page.isAncestorOf(figure) and figure.stack.currentWidget() is figure.canvas]


def plot_items(figure):
    items = figure.canvas.ci.items
    plots = [item for item in items if isinstance(item, pg.PlotItem)
             and not isinstance(item, pg.ColorBarItem)]         # a bar is a PlotItem too
    bars = [item for item in items if isinstance(item, pg.ColorBarItem)]
    return plots, bars


def column_axes(figure):
    """Axes standing in a column of their own (the attention maps' queries)."""
    return [item.axis for item in figure.canvas.ci.items
            if isinstance(item, QueryColumn) and item.isVisible()]


def shown_axes(plot):
    return [plot.getAxis(side) for side in ("left", "bottom", "right", "top")
            if plot.getAxis(side).isVisible()]


def scene_rect_of(canvas) -> QtCore.QRectF:
    return canvas.mapToScene(canvas.viewport().rect()).boundingRect()


def label_rect(axis) -> QtCore.QRectF:
    return axis.label.mapRectToScene(axis.label.boundingRect())


def check_figure(name, figure, problems: list) -> None:
    plots, bars = plot_items(figure)
    assert plots, name
    want_font = style.text_font()
    room = scene_rect_of(figure.canvas).adjusted(-1, -1, 1, 1)
    if figure.heading.font().pointSizeF() != style.TITLE_PT:
        problems.append((name, "heading size", figure.heading.font().pointSizeF()))
    axes = [axis for plot in plots for axis in shown_axes(plot)]
    axes += [bar.axis for bar in bars] + column_axes(figure)
    for plot in plots:
        if plot.titleLabel.isVisible() and plot.titleLabel.text:
            if plot.titleLabel.opts.get("size") != f"{style.TITLE_PT:g}pt":
                problems.append((name, "plot title size", plot.titleLabel.opts.get("size")))
    for axis in axes:
        where = (name, axis.orientation)
        if not axis.labelText.strip() or not axis.label.isVisible():
            problems.append((*where, "no label"))
            continue
        if axis.style["tickFont"] != want_font:
            problems.append((*where, "tick font", axis.style["tickFont"].toString()))
        if axis.label.font().pointSizeF() != style.FONT_PT:
            problems.append((*where, "label size", axis.label.font().pointSizeF()))
        if axis.style["tickLength"] != style.TICK_LENGTH:
            problems.append((*where, "tick length", axis.style["tickLength"]))
        rect = label_rect(axis)
        if rect.isEmpty() or not room.contains(rect):
            problems.append((*where, "label clipped", axis.labelText, rect, room))
    areas = [plot.vb.sceneBoundingRect() for plot in plots]
    for bar in bars:
        if bar.layout.columnMaximumWidth(1) != style.BAR_WIDTH:
            problems.append((name, "colour bar width", bar.layout.columnMaximumWidth(1)))
        strip = bar.vb.sceneBoundingRect()        # level with a plot's data area
        if not any(abs(strip.top() - area.top()) <= 1.5
                   and abs(strip.bottom() - area.bottom()) <= 1.5 for area in areas):
            problems.append((name, "colour bar not level with its plot", strip, areas))
    for axis in column_axes(figure):              # the queries' axis: level with the maps
        strip = axis.mapRectToScene(axis.rect())
        if not any(abs(strip.top() - area.top()) <= 1.5
                   and abs(strip.bottom() - area.bottom()) <= 1.5 for area in areas):
            problems.append((name, "query axis not level with its maps", strip, areas))
    legend = getattr(figure, "legend", None)
    if legend is not None and legend.isVisible():
        if legend.opts.get("labelTextSize") != f"{style.FONT_PT:g}pt":
            problems.append((name, "legend size", legend.opts.get("labelTextSize")))


# The unit each axis names, by figure and axis ("bar" for a colour bar; by the model's
# encoding where the quantity depends on it), as a paper's reader needs it.
UNIT_WORDS = {
    ("attention", "bottom"): "token", ("attention", "queries"): "token",
    ("attention", "bar"): "probability",
    ("attention_mosaic", "bar"): "probability",
    ("symmetry", "left"): "ratio",
    ("token_change", "left"): "ratio",
    ("branch_norms", "left"): "L2",
    ("encoding", "left"): "token index", ("encoding", "bottom"): "index",
    ("encoding", "bar"): "dimensionless",
    ("encoding_similarity", "left"): "token index",
    ("encoding_similarity", "bottom"): "token index",
    ("encoding_similarity", "bar"): "dimensionless",
    ("relative_profile", "bottom"): "tokens",
    ("relative_profile", "left"): {"sinusoidal": "dimensionless", "rope": "logits",
                                   "alibi-causal": "logits"},
    ("outputs", "left"): "probability",
}


def unit_problems(name, figure, encoding: str = "sinusoidal") -> list:
    """Each axis of the figure that UNIT_WORDS lists, whose shown label lacks its unit."""
    plots, bars = plot_items(figure)
    labelled = [(axis.orientation, axis) for plot in plots for axis in shown_axes(plot)]
    labelled += [("bar", bar.axis) for bar in bars]
    labelled += [("queries", axis) for axis in column_axes(figure)]
    problems = []
    for where, axis in labelled:
        word = UNIT_WORDS.get((name, where))
        if isinstance(word, dict):
            word = word[encoding]
        if word is not None and f"({word}" not in axis.labelText and \
                f" {word})" not in axis.labelText and f", {word}" not in axis.labelText:
            problems.append((name, where, axis.labelText, word))
    return problems


def in_sight_whole(figure) -> None:
    """Scroll every scroll area holding the figure (its tab's page, under the tab bar,
    and the window's, sideways) to show the whole figure."""
    holder = figure.parentWidget()
    while holder is not None:
        if isinstance(holder, QtWidgets.QScrollArea):
            holder.ensureWidgetVisible(figure, 0, 0)
        holder = holder.parentWidget()


def check_every_tab(qtbot, window, size, problems, seen, layers, encoding="sinusoidal"):
    window.resize(*size)
    for tab in range(window.plots.tabs.count()):
        window.plots.tabs.setCurrentIndex(tab)
        settle(qtbot, window, layers)
        qtbot.wait(0)                   # let the layouts follow the resize and the tab
        QtGui.QGuiApplication.processEvents()
        for name, figure in shown_figures(window):
            seen.add(name)
            # in sight whole: a figure half under the fold titles its half in sight
            # with a shorter form, which may leave its unit out
            in_sight_whole(figure)
            figure._settle()        # painted: its turned token labels take their room
            QtGui.QGuiApplication.processEvents()
            check_figure(name, figure, problems)
            problems += unit_problems(name, figure, encoding)
        for holder in [window.plots_scroll, *window.plots.findChildren(QtWidgets.QScrollArea)]:
            holder.verticalScrollBar().setValue(0)      # back to the top for the next size


@pytest.mark.parametrize("config", [ModelConfig(), ModelConfig(pe="rope", layers=3),
                                    ModelConfig(pe="alibi", mask="causal")],
                         ids=["sinusoidal", "rope", "alibi-causal"])
def test_every_figure_has_the_styles_ticks_labels_and_bars_unclipped(qtbot, window, config,
                                                                     request):
    """... and every axis that measures something names its unit (UNIT_WORDS)."""
    if config != ModelConfig():
        with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
            window.controller.load(ModelSpec.builtin(config))
    encoding = request.node.callspec.id
    problems, seen = [], set()
    for size in SIZES:
        check_every_tab(qtbot, window, size, problems, seen, config.layers, encoding)
    assert not problems, problems
    assert {"attention", "attention_mosaic", "symmetry", "token_change",
            "branch_norms", "relative_profile"} <= seen
    assert {figure for figure, _ in UNIT_WORDS} - {"outputs"} <= seen | {
        "encoding", "encoding_similarity"}


def test_a_label_that_loses_its_unit_is_found(qtbot, monkeypatch):
    """The unit check can fail: with the attention weight's unit gone from the table of
    units, the attention figure's colour bar is reported."""
    figure = AttentionFigure()
    qtbot.addWidget(figure)
    assert unit_problems("attention", figure) == []
    monkeypatch.delitem(units.UNITS, "attention weight")
    monkeypatch.delitem(units.UNITS, "query")
    figure = AttentionFigure()
    qtbot.addWidget(figure)
    found = {(where, label) for _, where, label, _ in unit_problems("attention", figure)}
    assert found == {("bar", "attention weight"), ("queries", "query")}


def test_the_style_is_one_font_and_one_bar_width():
    """The constants the figures share are what the helpers hand out."""
    bar = colorbars.color_bar((0, 1), style.SEQUENTIAL, "attention weight")
    assert bar.layout.columnMaximumWidth(1) == style.BAR_WIDTH
    assert bar.axis.labelText == "attention weight (probability)"
    assert bar.axis.style["tickFont"] == style.text_font()
    for levels in ((-0.3, 0.3), (0.0, 1.0), (-0.05, 0.05), (-1.0, 1.0)):
        bar.setLevels(levels)                 # both ends are numbered, then even steps
        values = [value for value, _ in bar.axis._tickLevels[0]]
        assert np.isclose(values[0], levels[0]) and np.isclose(values[-1], levels[1])
        assert np.allclose(np.diff(values), np.diff(values)[0]) and 3 <= len(values) <= 8
    plot = pg.PlotItem()
    style.style_plot(plot, "a title", "left label", "bottom label")
    for side in ("left", "bottom"):
        assert plot.getAxis(side).style["tickFont"].pointSizeF() == style.FONT_PT


def test_exports_leave_out_the_on_screen_selection_outline(qtbot, window, tmp_path):
    """The mosaic's orange outline marks the selected tile on screen only; an exported
    PNG or SVG shows the tiles alone, and the outline is back on screen after."""
    window.resize(1366, 768)
    mosaic = window.plots.figures()["attention_mosaic"]
    window.plots.tabs.setCurrentIndex(0)
    settle(qtbot, window)
    outline = QtGui.QColor("#ff7f0e").rgb()

    def orange(image: QtGui.QImage) -> int:
        image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
        pixels = np.frombuffer(image.constBits(), np.uint32,
                               image.width() * image.height())
        return int(np.count_nonzero(pixels == np.uint32(outline)))
    assert orange(mosaic.grab().toImage()) > 20          # on screen, it is there
    assert orange(mosaic.render_image()) == 0
    path = window.plots.export_figure("attention_mosaic", tmp_path / "mosaic.svg")
    assert "#ff7f0e" not in path.read_text(encoding="utf-8").lower()
    assert mosaic.outline.isVisible()
    assert orange(mosaic.grab().toImage()) > 20


def test_a_dense_numbered_axis_ticks_only_its_labels(qtbot):
    """At 384 dimensions in a few hundred pixels a tick per cell would be a grey bar:
    the axis ticks its labelled cells only, at a 1-2-5 step."""
    axis = TokenAxis("bottom")
    axis.set_tokens([str(i) for i in range(384)])
    levels = axis.tickValues(0, 384, 400)
    assert len(levels) == 1
    step, values = levels[0]
    assert step in (2, 5, 10, 20, 50, 100) and values[0] == 0.5
    assert np.allclose(np.diff(values), step)
    sparse = axis.tickValues(0, 10, 400)          # wide cells: every cell labelled
    assert len(sparse) == 1 and sparse[0][0] == 1.0
    assert sparse[0][1][:10] == [i + 0.5 for i in range(10)]


@pytest.fixture
def shown():
    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.document.spec import Selection
    from posviz.gui.plots.mosaic_figure import mosaic_look
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.views.shown import Shown, build_views
    session = Session(BuiltinBackend(ModelConfig()), "the cat sat on the mat because it was warm")
    session.reverse()
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    return Shown(ev, build_views(ev, mosaic_look(Selection())))


def test_the_symmetry_plot_keeps_its_height_in_a_short_figure(qtbot, shown):
    """Wide and short (a laptop's half window): the legend sits beside the curves and
    the note takes the few lines it needs (FEW_LINES; it was one line cut before its
    conclusion), whole in its tooltip; a narrow figure stacks the legend
    under the plot; a tall one shows the note whole; a click folds or unfolds it."""
    from posviz.gui.plots.hover import wrapped
    from posviz.gui.plots.layers import SymmetryFigure
    figure = SymmetryFigure()
    qtbot.addWidget(figure)
    figure.show()
    figure.update_from(shown, 1, 0)
    note = figure.note.text()
    assert note and figure.note.toolTip() == wrapped(note)

    def at(width, height):
        figure.resize(width, height)
        qtbot.waitUntil(lambda: figure.size() == QtCore.QSize(width, height))
        QtGui.QGuiApplication.processEvents()
        return figure.canvas.ci.items[figure.legend], figure.plot.vb.height()

    from posviz.gui.plots.one_line import FEW_LINES
    where, beside_height = at(560, 300)
    assert where == [(0, 1)]
    assert 2 <= figure.note.lines_shown() <= FEW_LINES
    assert figure.note.height() >= figure.note.lines_shown() * figure.note.fontMetrics().height()
    where, below_height = at(440, 300)
    assert where == [(1, 0)]
    assert beside_height > below_height + 15       # the legend's rows given to the curves
    where, _ = at(560, 520)
    # tall: the note whole, wrapped, and the plot keeps its readable height
    from posviz.gui.plots.one_line import READABLE_PLOT
    assert not figure.note.one_line and not figure.note.elided()
    assert figure.note.height() >= 2 * figure.note.fontMetrics().height()
    assert figure.canvas.height() >= READABLE_PLOT
    from PySide6.QtTest import QTest
    QTest.mouseClick(figure.note, QtCore.Qt.MouseButton.LeftButton)
    at(560, 521)
    assert figure.note.one_line                    # folded by the reader
    QTest.mouseClick(figure.note, QtCore.Qt.MouseButton.LeftButton)
    at(560, 300)
    assert not figure.note.one_line                # the reader's choice, whatever the size
    assert figure.note.height() >= 2 * figure.note.fontMetrics().height()   # whole, wrapped
    assert figure.note.text() == note


def test_a_long_note_is_whole_where_the_plot_has_room_and_one_line_where_not(qtbot, shown):
    """SmolLM2's note (six sentences) was cut to "... A few tokens sta…" at 1920 pixels
    and after 50 characters at 1024: where the figure is tall the note is shown whole,
    wrapped; as it gets shorter it loses lines, never taking the plot's readable height,
    down to one elided line."""
    from posviz.gui.plots.layers import SymmetryFigure
    from posviz.gui.plots.one_line import FEW_LINES, MOST_LINES, READABLE_PLOT, SMALL_PLOT
    figure = SymmetryFigure()
    qtbot.addWidget(figure)
    figure.show()
    figure.update_from(shown, 1, 0)
    text = " ".join(["The hidden states stop being equivariant from layer 1 on."] * 10)
    figure.set_note(text)

    def at(width, height):
        figure.resize(width, height)
        qtbot.waitUntil(lambda: figure.size() == QtCore.QSize(width, height))
        QtGui.QGuiApplication.processEvents()
        QtGui.QGuiApplication.processEvents()
        legend = figure.legend
        below = (figure.canvas.ci.items[legend] == [(1, 0)]) * legend.layout.preferredHeight()
        return figure.note.lines_shown(), figure.canvas.height() - below

    lines, _ = at(1100, 560)
    assert 2 <= lines <= MOST_LINES and not figure.note.elided()
    assert " ".join(figure.note.shown_lines()) == text                  # whole, wrapped
    assert figure.note.height() >= lines * figure.note.fontMetrics().height()
    seen = set()
    for height in range(560, 250, -10):
        lines, plot = at(1100, height)
        seen.add(lines)
        # a second and third line while the plot keeps SMALL_PLOT, more while READABLE
        assert lines == 1 or plot >= SMALL_PLOT, (height, lines, plot)
        assert lines <= FEW_LINES or plot >= READABLE_PLOT, (height, lines, plot)
    assert FEW_LINES in seen and len(seen) >= 2        # fewer as the room shrinks
    lines, _ = at(400, 330)                            # a narrow figure: the legend below
    assert lines == 1 and figure.note.elided() and figure.note.shown_text().endswith("…")
    from posviz.gui.plots.hover import wrapped
    assert figure.note.toolTip() == wrapped(text)                  # whole in its tooltip


def test_a_hidden_legend_leaves_no_empty_row(qtbot, shown):
    """One curve needs no legend: the plot takes the legend's row."""
    from posviz.gui.plots.profile import RelativeProfileFigure
    figure = RelativeProfileFigure()
    qtbot.addWidget(figure)
    figure.resize(800, 400)
    figure.show()
    figure.update_from(shown, 1, 0)
    QtGui.QGuiApplication.processEvents()
    assert len(figure.data["value"]) == 1 and not figure.legend.isVisible()
    assert figure.legend.geometry().height() == 0
    spacing = figure.canvas.ci.layout.verticalSpacing()
    assert figure.plot.geometry().bottom() >= figure.canvas.height() - 2 * spacing - 10


@pytest.mark.parametrize("height", [160, 300, 700])
def test_a_colour_bar_s_title_keeps_clear_of_its_numbers(qtbot, height):
    """pyqtgraph fixes a colour bar's axis at 45 pixels: with "≤-0.3" among its numbers
    the title "difference (probability)" overlapped them. The title starts right of
    the widest number, at every height."""
    view = pg.GraphicsLayoutWidget()
    qtbot.addWidget(view)
    view.resize(300, height)
    bar = colorbars.color_bar((-0.3, 0.3), "CET-D1", "difference (probability)", "difference")
    view.addItem(bar)
    view.show()
    bar.set_clips(np.array([-1.0, 1.0]))              # "≤-0.3", "≥0.3": the widest
    for _ in range(3):
        view.grab()                                   # painted: the numbers measured
        qtbot.wait(1)
    axis = bar.axis
    image = QtGui.QImage(8, 8, QtGui.QImage.Format.Format_ARGB32)
    with QtGui.QPainter(image) as painter:
        numbers = axis.generateDrawSpecs(painter)[2]
    assert any(text.startswith("≤") for _, _, text in numbers)
    title = axis.label.mapRectToParent(axis.label.boundingRect())
    assert title.left() >= max(rect.right() for rect, _, _ in numbers), height


def test_the_branch_norms_axis_fits_the_data_shown(qtbot, shown):
    """all-MiniLM-L6-v2's norms reach 20.8 and the y axis ran to 50 (the next 1, 2 or 5
    × 10^k), more than half the plot empty; its limit follows the data down again."""
    import dataclasses

    from posviz.gui.plots.layers import BranchNormsFigure
    figure = BranchNormsFigure()
    qtbot.addWidget(figure)
    figure.resize(900, 400)
    figure.show()
    norms = shown.views.branch_norms
    for reach in (20.82, 9.3, 20.82):
        most = max(float(np.nanmax(values)) for values in norms.values())
        scaled = {name: values * (reach / most) for name, values in norms.items()}
        views = dataclasses.replace(shown.views, branch_norms=scaled)
        figure.update_from(dataclasses.replace(shown, views=views), 1, 0)
        QtGui.QGuiApplication.processEvents()
        low, high = figure.plot.viewRange()[1]
        assert low == 0 and reach <= high <= 1.35 * reach, (reach, high)
