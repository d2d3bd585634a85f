"""What a reader of the figures needs: every label there, nothing clipped, titles that
say what is shown."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtGui  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import PlotsPanel, mosaic_look, style  # noqa: E402
from posviz.gui.plots.token_axis import TokenAxis  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402
from conftest import on_screen  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"


def evaluate(text=TEXT, **config):
    session = Session(BuiltinBackend(ModelConfig(**config)), text)
    session.reverse()
    return Engine(session.backend).evaluate(session.seq, session.order, session.positions)


def show(panel, ev):
    """Show ``ev`` as the compute worker hands it over, with its views."""
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(panel.selection()))))


@pytest.fixture
def panel(qtbot):
    widget = PlotsPanel()
    qtbot.addWidget(widget)
    widget.resize(1100, 760)          # the plots' share of a 1440 x 900 window
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def painted(figure) -> None:
    """Paint the figure now (axes lay their labels out while painting)."""
    figure.grab()


def test_every_key_label_shows_at_ten_tokens(panel):
    show(panel, evaluate())
    figure = panel.figures()["attention"]
    painted(figure)
    for heatmap in (figure.original, figure.aligned, figure.difference):
        axis = heatmap.plot.getAxis("bottom")
        assert axis.labelled == list(range(10)), axis.labelled
        assert axis.rotated                  # "because" is wider than a cell
    assert figure.queries.axis.labelled == list(range(10))   # the queries, named once


def test_turned_labels_do_not_overlap_and_thin_out_for_long_text(panel):
    words = (TEXT + " ") * 12                                     # 120 tokens
    show(panel, evaluate(words.strip()))
    axis = panel.figures()["attention"].original.plot.getAxis("bottom")
    painted(panel.figures()["attention"])
    labelled = axis.labelled
    assert 1 < len(labelled) < 120
    step = labelled[1] - labelled[0]
    assert np.all(np.diff(labelled) == step)
    cell = axis.geometry().width() / 120                          # pixels per token
    line = QtGui.QFontMetricsF(axis.font()).height()
    assert step * cell >= line                                    # no two labels touch
    assert (step - 1) * cell < line * 1.05                        # and no needless gaps


def test_upright_labels_when_they_fit(panel):
    show(panel, evaluate("a b c d"))
    figure = panel.figures()["attention"]
    painted(figure)
    axis = figure.original.plot.getAxis("bottom")
    assert not axis.rotated and axis.labelled == [0, 1, 2, 3]


@pytest.mark.parametrize("width", [1100, 800])
def test_symmetry_legend_fits_its_figure(panel, qtbot, width):
    panel.resize(width, 760)
    show(panel, evaluate())
    figure = panel.figures()["symmetry"]
    qtbot.waitUntil(lambda: figure.canvas.ci.layout.isActivated() and
                    figure.legend.layout.isActivated(), timeout=2000)  # laid out anew
    painted(figure)
    legend = figure.legend
    assert len(legend.items) == 5            # the four metrics and the median token
    room = figure.canvas.viewport().width()
    assert style.legend_width(legend, legend.columnCount) <= room
    # the plot and its legend lie inside the visible canvas
    assert figure.canvas.ci.boundingRect().width() <= room + 1
    assert legend.sceneBoundingRect().right() <= room + 1


def test_fit_legend_uses_two_columns_only_when_they_fit(panel):
    show(panel, evaluate())
    legend = panel.figures()["symmetry"].legend
    two = style.legend_width(legend, 2)
    assert style.fit_legend(legend, two + 100) == 2 and legend.columnCount == 2
    assert style.fit_legend(legend, two - 1) == 1 and legend.columnCount == 1


def test_symmetry_note_reads_the_causal_leak(panel):
    """NoPE + causal, the final token kept last: by theory the final slot is unchanged at
    the input and after block 1 (it sees the same set of tokens) and changes from layer 2
    (the tokens before it saw different prefixes)."""
    session = Session(BuiltinBackend(ModelConfig(pe="none", mask="causal")), TEXT)
    session.move(0, 3)                                   # 'the' to slot 3; 'warm' stays last
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    c = ev.comparison
    assert (c.last_token_change[:2] <= c.floor).all() and (c.last_token_change[2:] > c.floor).all()
    show(panel, ev)
    note = panel.figures()["symmetry"].note.text()
    assert "from layer 1 on" in note                     # hidden states: the mask leaks
    assert "unchanged up to layer 1 and changes from layer 2 on" in note


def test_symmetry_note_for_an_equivariant_model(panel):
    show(panel, evaluate(pe="none"))                     # bidirectional NoPE, reversed
    note = panel.figures()["symmetry"].note.text()
    assert note.startswith("The hidden states are equivariant at every layer.")
    assert "another token" in note                       # reversed: 'the' is now last


def test_profile_axis_spans_only_visible_keys_when_causal(panel):
    show(panel, evaluate(pe="alibi", mask="causal"))
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["relative_profile"]
    low, high = figure.plot.vb.viewRange()[0]
    distances = figure.coords["distance"]
    assert low < min(distances) + 1 and high < 1         # keys ahead are masked: not shown
    show(panel, evaluate(pe="alibi"))
    panel.tabs.setCurrentIndex(2)
    assert figure.plot.vb.viewRange()[0][1] > max(figure.coords["distance"]) - 1


def test_default_window_size_fits_a_small_screen_and_fills_most_of_a_large_one():
    """A 1920 x 1080 screen's first window was 1440 x 900, its symmetry plot ~200 px
    tall for ten decades: a large screen's first window takes 90 % of its available
    area (at most 2200 x 1400); a small one's stays inside it."""
    from PySide6.QtCore import QRect

    from posviz.gui.window_size import default_size

    assert default_size(None).toTuple() == (1440, 900)
    small = default_size(QRect(0, 0, 1280, 800))
    assert small.width() <= 1280 and small.height() <= 800
    assert default_size(QRect(0, 0, 1024, 700)).toTuple() == (983, 658)
    assert default_size(QRect(0, 0, 1600, 1000)).toTuple() == (1440, 900)
    assert default_size(QRect(0, 0, 1920, 1080)).toTuple() == (1728, 972)
    assert default_size(QRect(0, 0, 1920, 1050)).toTuple() == (1728, 945)   # a panel
    assert default_size(QRect(0, 0, 2560, 1440)).toTuple() == (2200, 1296)
    assert default_size(QRect(0, 0, 3840, 2160)).toTuple() == (2200, 1400)


def test_thinned_labels_carry_their_index(panel):
    show(panel, evaluate(((TEXT + " ") * 12).strip()))
    figure = panel.figures()["attention"]
    painted(figure)
    axis = figure.original.plot.getAxis("bottom")
    cell = axis.labelled[1]
    assert axis.cell_label(cell) == f"{cell} {(TEXT.split() * 12)[cell]}"
    show(panel, evaluate())
    painted(figure)
    assert axis.cell_label(2) == "sat"                   # all shown: the token alone


def test_thinned_numbered_labels_are_not_numbered_twice(panel):
    """Positions and dimensions label their cells with their own index: a thinned
    label is that index once ("5", never "5 5")."""
    show(panel, evaluate(pe="sinusoidal", d_model=256))
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["encoding"]
    painted(figure)
    axis = figure.map.plot.getAxis("bottom")                 # 256 dimensions
    assert len(axis.labelled) < 256                          # thinned
    cell = axis.labelled[1]
    assert axis.cell_label(cell) == str(cell)


def test_a_token_axis_takes_the_room_its_labels_need(qtbot):
    """Turned labels make the bottom axis deeper (as deep as the longest label is
    wide); upright ones again shallower; the labels follow the text."""
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 760)
    panel.show()
    figure = panel.figures()["attention"]
    axis = figure.original.plot.getAxis("bottom")
    def laid_out():                     # painted, laid out for the room asked, painted
        painted(figure)
        qtbot.wait(50)
        painted(figure)
        return axis.height()

    show(panel, evaluate("extraordinarily lengthy vocabulary " * 4))
    turned = laid_out()
    assert axis.rotated
    show(panel, evaluate("a dog ran"))
    upright = laid_out()
    assert axis.tokens == ["a", "dog", "ran"] and axis.labelled == [0, 1, 2]
    assert not axis.rotated and upright < turned - 20, (upright, turned)
    assert not TokenAxis("left").draws_labels


@pytest.mark.parametrize("name", ["symmetry", "branch_norms", "token_change",
                                  "relative_profile"])
def test_axis_labels_fit_a_small_figure(panel, qtbot, name):
    """At 450 x 300 pixels no axis label runs past its axis (a rotated left label
    longer than the plot is high is cut at the figure's edges): a shorter one is
    shown, and the full one again when there is room."""
    show(panel, evaluate(pe="alibi"))
    figure = panel.figures()[name]
    panel.tabs.setCurrentIndex(next(i for i in range(panel.tabs.count())
                                     if panel.tabs.widget(i).isAncestorOf(figure)))
    figure.setParent(None)
    qtbot.addWidget(figure)
    for size, whole in (((450, 300), False), ((900, 700), True)):
        figure.resize(*size)
        figure.show()
        qtbot.waitExposed(figure)
        painted(figure)
        for side in ("left", "bottom"):
            axis = figure.plot.getAxis(side)
            room = (axis.geometry().height() if side == "left"
                    else axis.geometry().width())
            text = QtGui.QTextDocument()
            text.setHtml(axis.label.toHtml())
            text.setDefaultFont(axis.label.font())
            text.setDocumentMargin(0)       # its glyphs: the margins are blank
            assert axis.label.isVisible() and axis.labelText, (name, side)
            assert text.idealWidth() <= room, (name, side, axis.labelText, room)
        if whole and name == "symmetry":
            assert figure.plot.getAxis("left").labelText == "relative change (ratio, log scale)"


@pytest.mark.parametrize("spare", [2, -2])
def test_the_whole_title_is_taken_when_its_glyphs_fit(qtbot, spare):
    """A dimmed sweep at 1024 x 700 took "change (ratio, log)" on a 201-pixel axis that
    holds "relative change (ratio, log scale)" (198 pixels of glyphs): the blank margins
    of the label's document and 6 pixels more were counted as text (pyqtgraph writes
    the title with a space after it)."""
    import pyqtgraph as pg
    canvas = pg.GraphicsLayoutWidget()
    qtbot.addWidget(canvas)
    plot = canvas.addPlot()
    style.style_plot(plot, "", "relative change (log)", "layer",
                     short_left=("change (log)", "change (ratio)"))
    axis = plot.getAxis("left")
    whole = axis._fit_labels[0]
    glyphs = QtGui.QFontMetricsF(axis.label.font()).horizontalAdvance(whole + " ")
    canvas.resize(400, 300)
    canvas.show()
    qtbot.waitExposed(canvas)
    for _ in range(3):        # the axis's length follows the canvas's height
        canvas.resize(400, canvas.height() + round(glyphs + spare - axis.geometry().height()))
        qtbot.waitUntil(lambda: abs(axis.geometry().height() - glyphs - spare) < 1)
    assert (axis.labelText == whole) == (spare > 0), (axis.labelText, glyphs, spare)


def _alone(panel, qtbot, name, size):
    """The figure ``name`` out of its tab at ``size``, shown and painted."""
    figure = panel.figures()[name]
    figure.setParent(None)
    qtbot.addWidget(figure)
    figure.resize(*size)
    figure.show()
    qtbot.waitExposed(figure)
    painted(figure)
    return figure


@pytest.mark.parametrize("size", [(550, 330), (600, 450), (900, 700)])
def test_noise_floor_label_ends_inside_the_plot(panel, qtbot, size):
    """The floor's label is never cut at the plot's right edge: the whole one where it
    fits (a wide plot), else its short form."""
    show(panel, evaluate())
    figure = _alone(panel, qtbot, "symmetry", size)
    label = figure.floor_line.label
    view = figure.plot.vb.sceneBoundingRect()
    right = label.mapRectToScene(label.boundingRect()).right()
    assert right <= view.right(), (label.format, right, view.right())
    from posviz.gui.plots.layers import FLOOR_LABELS, FLOOR_SHORT
    assert label.format in (FLOOR_SHORT, *FLOOR_LABELS.values())
    if size[0] >= 900:
        assert label.format != FLOOR_SHORT


def test_an_exported_note_is_whole(panel, qtbot, tmp_path):
    """A short figure elides its note on screen (whole in the tooltip); its exports,
    which have no tooltip, write the whole sentence, wrapped."""
    show(panel, evaluate())
    figure = _alone(panel, qtbot, "symmetry", (550, 330))
    text = figure.note.text()
    assert figure.note.elided() and figure.note.shown_text() != text  # elided on screen
    svg = figure.export_svg(tmp_path / "symmetry.svg").read_text(encoding="utf-8")
    words = " ".join(re.findall(r">([^<]*)</text>", svg)).split()
    assert " ".join(words).endswith(" ".join(text.split()[-4:])), words[-8:]
    assert "…" not in svg
    assert figure.note.elided()                       # as on screen again


@pytest.mark.parametrize("width", [420, 560, 700, 1100])
def test_a_short_map_title_keeps_its_meaning(panel, qtbot, width):
    """The middle map is the reordered one aligned back: a shortened title still says
    so (never a bare "reordered" beside "reordered − original"), and ends in the map."""
    show(panel, evaluate())
    figure = _alone(panel, qtbot, "attention", (width, 330))
    plot = figure.aligned.plot
    title = plot.titleLabel.text
    assert "aligned" in title, title
    width_needed = QtGui.QFontMetrics(style.text_font(style.TITLE_PT)).horizontalAdvance(title)
    assert width_needed <= plot.vb.width() or title == "aligned", (title, plot.vb.width())


def _notation(label: str) -> str:
    return "power" if any(c in label for c in "⁰¹²³⁴⁵⁶⁷⁸⁹") else "decimal"


@pytest.mark.parametrize("size", [(550, 330), (900, 700)])
def test_a_log_axis_writes_its_ticks_in_one_notation(panel, qtbot, size):
    """The symmetry plot spans 10⁻⁸ to 10: every tick label a power of ten, not
    pyqtgraph's 10¹, 1, 0.1, ..., 0.0001, 10⁻⁵; a narrow span in decimals only."""
    from posviz.gui.plots.log_ticks import log_tick_strings
    show(panel, evaluate())
    figure = _alone(panel, qtbot, "symmetry", size)
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    levels = axis.tickValues(low, high, axis.height())
    labels = [label for spacing, values in levels
              for label in axis.tickStrings(values, axis.scale, spacing)
              if label and label != "0"]                  # blank: no room; 0: the zero row
    assert len(labels) >= 3 and len({_notation(label) for label in labels}) == 1, labels
    assert log_tick_strings([1, 0, -1, -2, -5]) == ["10¹", "10⁰", "10⁻¹", "10⁻²", "10⁻⁵"]
    assert log_tick_strings([1, 0, -1, -3]) == ["10", "1", "0.1", "0.001"]
    assert log_tick_strings([np.log10(2e-5)]) == ["2·10⁻⁵"]


@pytest.mark.parametrize("pe", ["alibi", "none"])
def test_an_exact_zero_sits_on_its_own_row_marked_0(panel, qtbot, pe):
    """Exact zeros were drawn at a tenth of the floor (1e-6) on an axis going down to
    1e-7, so they read as a measured 10⁻⁶: they sit on the bottom row, whose tick says
    0, more than a decade under every nonzero point, and the floor's label says so."""
    from posviz.gui.plots.layers import FLOOR_LABELS, SymmetryFigure
    ev = evaluate(pe=pe)
    show(panel, ev)
    figure = _alone(panel, qtbot, "symmetry", (900, 700))
    symmetry = panel.figures()["symmetry"].data
    zeros = [m for m in figure.curves if np.any(symmetry[m] == 0)]
    assert zeros, "the case must hold exact zeros"
    drawn = {m: np.asarray(c.getData()[1]) for m, c in figure.curves.items()}
    row = min(np.nanmin(y) for y in drawn.values())
    for m, y in drawn.items():
        exact = symmetry[m] == 0
        assert y[exact] == pytest.approx(np.full(exact.sum(), row), abs=1e-5)
        assert np.all(y[~exact & (symmetry[m] > 0)] > row + 1), m     # a decade above
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    assert low < row - 0.1                                      # the markers whole
    labels = {round(v, 6): text for spacing, values in axis.tickValues(low, high,
                                                                        axis.height())
              for v, text in zip(values, axis.tickStrings(values, 1.0, spacing))}
    assert labels[round(row, 6)] == "0"
    assert not any(row < v < row + 1 and text for v, text in labels.items())
    assert "row marked 0" in FLOOR_LABELS["aligned"]
    assert "marked 0" in SymmetryFigure(None).heading.toolTip()


@pytest.mark.parametrize("change, factor", [((2e-4, 1.5e-4, 5e-5, 1e-4), "×10⁻⁴"),
                                            ((0.3, 0.02, 0.11, 0.0), "")])
def test_the_token_change_axis_writes_its_ticks_in_one_notation(qtbot, change, factor):
    """SmolLM2's changes (about 1e-4) were labelled 0.0002, 0.00015, 0.0001, 5e-05: one
    notation, decimals of a common power of ten that the axis label names."""
    from types import SimpleNamespace

    from posviz.gui.plots.token_change import TokenChangeFigure
    figure = on_screen(qtbot, TokenChangeFigure(), 700, 400)
    comparison = SimpleNamespace(token_change=np.array([change]), floor=1.2e-7)
    ev = SimpleNamespace(comparison=comparison,
                         reference=SimpleNamespace(tokens=("a", "b", "c", "d")))
    figure.update_from(SimpleNamespace(evaluation=ev), 0, 0)
    painted(figure)
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    unit = {"×10⁻⁴": 1e-4, "": 1.0}[factor]
    ticks = [(v, label) for spacing, values in axis.tickValues(low, high, axis.height())
             for v, label in zip(values, axis.tickStrings(values, 1.0, spacing))]
    assert len(ticks) >= 3
    for value, label in ticks:
        assert re.fullmatch(r"\d+(\.\d+)?", label), ticks        # decimals only
        assert float(label) * unit == pytest.approx(value, abs=1e-3 * unit), (value, label)
    assert high >= max(change)
    assert axis.labelText.endswith(f", {factor})" if factor else "(ratio)"), axis.labelText
