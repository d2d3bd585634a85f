"""The Experiments figure draws each result on a clean plot: only its own items, in a
range that holds all of its data, however the plot was reached."""
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PySide6")

import pyqtgraph as pg  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402
from posviz.gui.plots.log_ticks import ZERO_MARGIN  # noqa: E402
from conftest import on_screen  # noqa: E402
from posviz.analysis.experiments.sweep import SwapMap  # noqa: E402


def swap_map(tokens, change):
    """A swap sweep's map at layer 2 of ``tokens``, every token movable."""
    return SwapMap("", tuple(tokens), 2, change, np.ones(len(tokens), bool))


LAYERS = 5                      # rows: in, 1..4


def probe_rows(mae, chance):
    return [{"layer": k, "mae": m, "chance_mae": c, "r2": 0.5}
            for k, (m, c) in enumerate(zip(mae, chance))]


def sweep_result(floor=1.2e-5):
    median = np.array([np.nan, 0.003, 0.03, 0.1, 0.16])
    band = SimpleNamespace(median=median, p10=median * 0.8, p90=median * 1.2)
    return SimpleNamespace(bands={"pooled_change": band}, floor=floor, kind="random",
                           runs=6, texts=("a b c",))


def pairs(n=10):
    change = np.abs(np.subtract.outer(np.arange(n), np.arange(n))) * 1e-3
    return swap_map([f"t{k}" for k in range(n)], change)


def haviv(chance):
    return SimpleNamespace(
        name="haviv2022", weights="random", holds=True, citation="c", reports="r",
        measures="m", ran_on="the built-in model", tests="t", values={"causal": probe_rows([2.0, 1.5, 1.2, 1.1, 1.0], chance),
                              "bidirectional": probe_rows([3.0] * 5, chance)})


@pytest.fixture
def figure(qtbot):
    widget = on_screen(qtbot, ExperimentFigure(), 900, 600)
    return widget


def legend_labels(figure):
    return sorted(label.text for _, label in figure.legend.items)


def drawn_points(figure):
    """(x, y) of every curve and dot on the plot."""
    xs, ys = [], []
    for item in figure.plot.items:
        if isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
            x, y = item.getData()
            xs.append(np.asarray(x, float))
            ys.append(np.asarray(y, float))
    return np.concatenate(xs), np.concatenate(ys)


def assert_in_view(figure):
    (x0, x1), (y0, y1) = figure.plot.viewRange()
    x, y = drawn_points(figure)
    x, y = x[np.isfinite(y)], y[np.isfinite(y)]
    assert x0 <= x.min() and x.max() <= x1, (x0, x1, x.min(), x.max())
    assert y0 <= y.min() and y.max() <= y1, (y0, y1, y.min(), y.max())
    # and the view is about the data, not a previous drawing's range
    assert x1 - x0 < 2 * (x.max() - x.min() + 1)


def test_a_paper_check_after_a_probe_draws_only_its_own_curves(figure):
    chance = [2.5] * LAYERS
    figure.show_probe(probe_rows([2.6] * LAYERS, chance), "probe")
    figure.show_paper(haviv(chance))
    assert legend_labels(figure) == ["bidirectional", "causal",
                                     "chance (the mean), the same for both"]
    curves = [i for i in figure.plot.items if isinstance(i, pg.PlotCurveItem)]
    assert len(curves) == 3
    assert_in_view(figure)


def test_masks_with_different_chance_lines_each_draw_theirs(figure):
    check = haviv([2.5] * LAYERS)
    check.values["bidirectional"] = probe_rows([3.0] * LAYERS, [2.7] * LAYERS)
    figure.show_paper(check)
    assert legend_labels(figure) == ["bidirectional", "bidirectional chance (the mean)",
                                     "causal", "causal chance (the mean)"]


def test_the_probe_plot_holds_errors_above_chance(figure):
    """RoPE, causal: errors 3.44 to 3.72 over a chance of 3.1 were cut at 3.4."""
    figure.show_probe(probe_rows([3.44, 3.5, 3.6, 3.7, 3.72], [3.1] * LAYERS), "probe")
    assert_in_view(figure)
    assert figure.plot.viewRange()[1][1] >= 3.72


@pytest.mark.parametrize("before", ["pairs", "probe", "alibi", "none"])
def test_a_sweep_after_any_other_drawing_has_its_own_axes(figure, before):
    if before == "pairs":
        figure.show_pairs(pairs())
    elif before == "probe":
        figure.show_probe(probe_rows([30.0] * LAYERS, [20.0] * LAYERS), "probe")
    elif before == "alibi":
        figure.show_paper(SimpleNamespace(
            name="alibi-slopes", weights="random", holds=True, citation="", reports="",
            measures="", ran_on="", tests="", values={"paper": [0.5, 0.25], "measured": [0.5, 0.25]}))
    figure.plot.getViewBox().scaleBy((1e3, 1e3))       # a zoom the user left behind
    figure.show_sweep(sweep_result(), "pooled_change")
    assert figure.plot.getAxis("left").logMode and not figure.plot.getViewBox().yInverted()
    assert figure.bar is None
    (x0, x1), (y0, y1) = figure.plot.viewRange()
    assert (x0, x1) == pytest.approx((-0.16, 4.16), abs=0.01)
    # the zero row a decade under 1.2e-6, and room for its markers under it
    assert y0 == pytest.approx(-7 - ZERO_MARGIN) and y1 == pytest.approx(1.0)
    floor = [i for i in figure.plot.items if isinstance(i, pg.InfiniteLine)]
    assert [line.value() for line in floor] == pytest.approx([np.log10(1.2e-5)])
    assert_in_view(figure)


def test_a_probe_after_a_sweep_is_linear_again(figure):
    figure.show_sweep(sweep_result(), "pooled_change")
    figure.show_probe(probe_rows([2.0] * LAYERS, [2.5] * LAYERS), "probe")
    assert not figure.plot.getAxis("left").logMode
    assert not [i for i in figure.plot.items if isinstance(i, pg.InfiniteLine)]
    assert_in_view(figure)


def test_the_swap_map_after_a_sweep_spans_its_tokens(figure):
    figure.show_sweep(sweep_result(), "pooled_change")
    figure.show_pairs(pairs(10))
    (x0, x1), (y0, y1) = figure.plot.viewRange()
    assert (x0, x1, y0, y1) == (0, 10, 0, 10)
    assert not figure.plot.getAxis("left").logMode and legend_labels(figure) == []


def test_compared_encodings_on_the_original_order_say_nothing_moved(figure):
    """On the original order every curve lay at 0 with no word why; the Attention tab
    says it (views.shown.symmetry_note), and so does the comparison, in the same words
    and in its note's first line (a short window shows one), with no word of a control."""
    from posviz.analysis.experiments.encodings import compare_encodings
    from posviz.analysis.predictions import COMPARE_HINT
    from posviz.models.config import ModelConfig
    from posviz.views.shown import symmetry_note

    config = ModelConfig(layers=2, heads=2, d_model=16, mask="causal")
    result = compare_encodings(config, ("none", "rope"), "random", "a b c d e f",
                               order=list(range(6)))
    figure.show_compare(result, "hidden_equivariance")
    said = symmetry_note(None, np.arange(6)).removesuffix(COMPARE_HINT).strip()
    assert figure.note.text().startswith(said) and COMPARE_HINT not in figure.note.text()
    assert "the original order" in figure.heading.text()
    moved = compare_encodings(config, ("none", "rope"), "random", "a b c d e f",
                              order=[1, 0, 2, 3, 4, 5])
    figure.show_compare(moved, "hidden_equivariance")
    assert said not in figure.note.text() and "one reorder" in figure.heading.text()


def test_compared_encodings_stay_apart_when_their_curves_meet(figure):
    """NoPE and RoPE give almost the same curve under a causal mask: each encoding has
    its own marker, so a curve drawn under another still shows, and the log axis is
    labelled at decades in short labels (they ran into the axis title)."""
    from posviz.analysis.experiments.encodings import compare_encodings
    from posviz.models.config import ModelConfig

    result = compare_encodings(ModelConfig(layers=2, heads=2, d_model=16, mask="causal"),
                               ("none", "sinusoidal", "rope"), "random",
                               "a b c d e f", order=[1, 0, 2, 3, 4, 5])
    figure.show_compare(result, "hidden_equivariance")
    dots = [item for item in figure.plot.items if isinstance(item, pg.ScatterPlotItem)]
    shapes = {(item.opts["symbol"], item.opts["size"]) for item in dots}
    assert len(dots) == 3 and len({s for s, _ in shapes}) == 3 and len(shapes) == 3
    titles = sorted(m.title for m in result.models)
    assert [label.split(" — ")[0] for label in legend_labels(figure)] == titles
    assert_one_notation(figure)
    assert_in_view(figure)


def compared(values: dict):
    """A comparison of encodings (kind -> (title, per-layer values)) on one reorder."""
    from posviz.analysis.experiments.encodings import EncodingComparison, EncodingCurves
    from posviz.models.config import Positions
    models = tuple(EncodingCurves(kind, title, tuple({"hidden_equivariance": v} for v in row),
                                  1e-6, "random weights (seed 0)")
                   for kind, (title, row) in values.items())
    return EncodingComparison("a b c", {}, ("a", "b", "c"), (1, 0, 2), Positions(), "random",
                              models)


def result_titles(result):
    return [(model.title, model.kind) for model in result.models]


def test_curves_equal_to_the_stated_tolerance_are_named_the_same_at_every_size(figure,
                                                                                qtbot):
    """NoPE under RoPE in a causal comparison: two lines looked like one and a curve
    seemed missing. Curves within 0.1% of each other are named in the note (the
    tolerance stated, a property of the numbers: "a pixel here" gave 3.8% and 13.6% for
    one result at two window sizes); 2.3% apart is two curves; the legend names
    encodings only."""
    result = compared({"none": ("none (NoPE)", [0.0, 0.1186, 0.2, 0.3]),
                       "rope": ("RoPE (Su 2021)", [0.0, 0.11865, 0.2001, 0.3]),
                       "sinusoidal": ("sinusoidal", [0.5, 1, 2, 3]),
                       "alibi": ("ALiBi (Press 2022)", [0.0, 0.1214, 0.204, 0.306])})
    notes = []
    for height in (700, 380):
        figure.resize(900, height)
        qtbot.wait(50)
        figure.show_compare(result, "hidden_equivariance")
        notes.append(figure.note.text())
    assert notes[0] == notes[1]
    assert notes[0].endswith("\nEqual to 0.1% (relative), so drawn as one line with nested "
                             "markers; dashed on a wider line where one runs on another: "
                             "none, RoPE and ALiBi coincide at layer in; none and RoPE "
                             "coincide at layers 1–3."), notes[0]
    assert legend_labels(figure) == sorted(title for title, _ in result_titles(result))
    pens = [i.opts["pen"] for i in figure.plot.items if isinstance(i, pg.PlotCurveItem)]
    assert pens[1].style() == QtCore.Qt.PenStyle.DashLine          # RoPE, on NoPE
    assert pens[0].widthF() > pens[2].widthF()                     # NoPE wider, under it
    assert pens[3].style() == QtCore.Qt.PenStyle.SolidLine         # ALiBi: apart
    twin = figure.drawn_alone()                                    # what a file holds
    assert twin.note.text() == notes[0] and legend_labels(twin) == legend_labels(figure)


def tick_labels(figure) -> list[str]:
    """The left axis's labels as drawn at its present size and range."""
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    return [label for spacing, values in axis.tickValues(low, high, axis.height())
            for label in axis.tickStrings(values, axis.scale, spacing)]


def assert_one_notation(figure):
    """The log axis in the notation of every other log axis (plots.log_ticks): all shown
    powers of ten or all decimals, never 10, 1, 0.1, 10⁻² mixed."""
    from posviz.gui.plots.log_ticks import log_tick_strings
    axis = figure.plot.getAxis("left")
    labels = tick_labels(figure)
    # a blank one: left out, no room; "0": the row of exact zeros (log_ticks.zero_row)
    shown = [label for label in labels if label and label != "0"]
    powers = {any(c in label for c in "⁰¹²³⁴⁵⁶⁷⁸⁹") for label in shown}
    assert len(shown) >= 3 and len(powers) == 1, labels
    low, high = figure.plot.vb.viewRange()[1]
    majors = axis.tickValues(low, high, axis.height())[0][1]
    expected = ["0" if v == axis.zero_row else label
                for v, label in zip(majors, log_tick_strings(majors))]
    assert labels[:len(majors)] == expected, labels


@pytest.mark.parametrize("floor", [1.2e-5, 2.2e-14])
def test_the_sweep_axis_labels_decades_as_every_log_axis_does(figure, floor):
    figure.show_sweep(sweep_result(floor), "pooled_change")
    assert_one_notation(figure)


def test_a_sweep_draws_an_exact_zero_on_the_row_marked_0(figure):
    """A layer whose median change is exactly 0 (an equivariant layer run the fast way)
    was drawn on the axis's bottom edge, half cut, unexplained, and then at 1e-6 on an
    axis that said 10⁻⁶: it sits on a row of its own labelled 0 (as in the symmetry
    plot), inside the grey band, markers whole, with its own legend entry."""
    result = sweep_result()
    band = result.bands["pooled_change"]
    band.median[1] = band.p10[1] = band.p90[1] = 0.0
    band.p10[2] = 0.0
    figure.show_sweep(result, "pooled_change")
    (_, _), (y0, y1) = figure.plot.viewRange()
    _, y = drawn_points(figure)
    y = y[np.isfinite(y)]
    row = y.min()
    assert row < np.log10(result.floor) - 1 and row > y0 + 0.2, (row, y0)
    assert (y[y > row] > np.log10(1.2e-6) - 1e-9).all()        # only zeros on the row
    axis = figure.plot.getAxis("left")
    labels = {value: label for spacing, values in axis.tickValues(y0, y1, axis.height())
              for value, label in zip(values, axis.tickStrings(values, axis.scale, spacing))}
    assert labels.get(row) == "0", labels
    assert "median 0 (exact), on the row marked 0" in legend_labels(figure)
    assert "exactly 0 is drawn on the row marked 0" in figure.note.text()
    assert_in_view(figure)


def test_a_log_drawing_after_a_sweep_has_no_row_marked_0(figure):
    """The ALiBi slopes (a log axis, no exact zeros) after a sweep: no decade of theirs
    may be labelled 0."""
    figure.show_sweep(sweep_result(), "pooled_change")
    assert figure.plot.getAxis("left").zero_row is not None
    figure.show_paper(SimpleNamespace(
        name="alibi-slopes", weights="random", holds=True, citation="", reports="",
        measures="", ran_on="", tests="", values={"paper": [0.5, 0.25], "measured": [0.5, 0.25]}))
    assert figure.plot.getAxis("left").logMode
    assert figure.plot.getAxis("left").zero_row is None and "0" not in tick_labels(figure)


def test_a_note_of_several_lines_on_one_line_joins_them(figure):
    """A note folded to one elided line (a click): Compare's two lines ("Reorder: ..."
    and the explanation) were painted over each other; unfolded, they stay apart."""
    from posviz.analysis.experiments.encodings import compare_encodings
    from posviz.models.config import ModelConfig
    figure.resize(700, 300)
    result = compare_encodings(ModelConfig(layers=2, heads=2, d_model=16), ("none", "rope"),
                               "random", "a b c d", order=[1, 0, 2, 3])
    figure.show_compare(result, "hidden_equivariance")
    assert not figure.note.one_line and figure.note.shown_lines()[0] == "Reorder: b a c d"
    figure.note.set_one_line(True)
    assert "\n" in figure.note.text() and figure.note.one_line
    shown = figure.note.shown_text()
    assert "\n" not in shown and shown.startswith("Reorder: b a c d — Each curve"), shown


def paper(name, values, weights="trained"):
    return SimpleNamespace(name=name, weights=weights, holds=True, citation="c",
                           reports="r", measures="m", ran_on="x", tests="t", values=values)


ALIBI = paper("alibi-slopes", {"paper": [2.0 ** -(h + 1) for h in range(8)],
                               "measured": [2.0 ** -(h + 1) for h in range(8)]})
PRESS = paper("press2022", {
    "train_length": 32, "lengths": [32, 64, 128], "tokens": 100, "unigram_perplexity": 377.0,
    "perplexity": {"sinusoidal": {"32": 64.0, "64": 90.0, "128": 116.0},
                   "alibi": {"32": 66.0, "64": 66.5, "128": 67.0}}})


def drawn_labels(figure) -> list[tuple[float, str]]:
    """(log10 value, label) of every left tick as pyqtgraph draws it: each level's
    strings at the axis's SI scale times its scale, a value labelled once."""
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    seen, drawn = set(), []
    for spacing, values in axis.tickValues(low, high, axis.height()):
        strings = axis.tickStrings(values, axis.autoSIPrefixScale * axis.scale, spacing)
        for value, label in zip(values, strings):
            if round(value, 9) not in seen:
                seen.add(round(value, 9))
                drawn.append((value, label))
    return drawn


def test_a_paper_after_a_log_range_under_one_labels_its_own_values(figure):
    """After the slopes (a log axis under 1) the perplexities 64 to 377 were labelled
    6·10⁴ to 4·10⁵: a scale pyqtgraph set for the slopes stayed on the axis."""
    figure.show_paper(ALIBI)
    figure.show_paper(PRESS)
    low, high = figure.plot.vb.viewRange()[1]
    assert low < np.log10(64) and np.log10(377) < high
    for value, label in drawn_labels(figure):
        if label:
            assert float(label) == pytest.approx(10 ** value, rel=0.05), (value, label)
    assert {"100", "200", "300"} <= {label for _, label in drawn_labels(figure)}


@pytest.mark.parametrize("height", [300, 600])
def test_log_tick_labels_never_touch(figure, height):
    """The slopes' minor labels 0.09, 0.08, 0.07 ... were drawn over each other."""
    from PySide6 import QtGui
    figure.resize(700, height)
    figure.show_paper(ALIBI)
    axis = figure.plot.getAxis("left")
    low, high = figure.plot.vb.viewRange()[1]
    size = QtGui.QFontMetricsF(axis.style["tickFont"]).height() * 0.8
    shown = sorted((value - low) / (high - low) * axis.height()
                   for value, label in drawn_labels(figure) if label)
    assert len(shown) >= 3
    assert np.diff(shown).min() >= size, np.diff(shown)
    labels = {label for _, label in drawn_labels(figure)}
    assert {"0.01", "0.1"} <= labels


@pytest.mark.parametrize("size", [(700, 330), (700, 500), (1200, 700)])
def test_the_swap_map_s_bar_is_level_with_it_and_its_labels_never_touch(figure, qtbot,
                                                                        size):
    """At 1024×700 the bar was about 37 px taller than the map and "5 mat" touched
    "6 because" under it."""
    from PySide6 import QtGui
    change = pairs().change
    words = "the cat sat on the mat because it was warm".split()
    figure.show_sweep(sweep_result(), "pooled_change")
    figure.resize(*size)
    figure.show_pairs(swap_map(words, change))

    def level():            # once the layout has settled (the labels' room is set on paint)
        strip, data = figure.bar.vb.sceneBoundingRect(), figure.plot.vb.sceneBoundingRect()
        return abs(strip.top() - data.top()) <= 1 and abs(strip.bottom() - data.bottom()) <= 1
    qtbot.waitUntil(level, timeout=3000)
    data = figure.plot.vb.sceneBoundingRect()
    axis = figure.plot.getAxis("bottom")
    metrics = QtGui.QFontMetricsF(axis.style["tickFont"])
    (x0, x1), _ = figure.plot.viewRange()
    pixels = data.width() / (x1 - x0)
    shown = [(cell + 0.5) * pixels for cell in axis.labelled]
    sizes = [metrics.height() if axis.rotated else metrics.horizontalAdvance(
        axis.cell_label(cell)) for cell in axis.labelled]
    assert len(shown) >= 2
    for k in range(1, len(shown)):
        assert shown[k] - shown[k - 1] >= (sizes[k] + sizes[k - 1]) / 2 + 2, axis.labelled
    assert figure.plot.getAxis("left").labelled
    figure.show_sweep(sweep_result(), "pooled_change")           # number axes again
    qtbot.wait(50)
    assert_one_notation(figure)


def test_a_swap_map_of_zeros_names_no_most_sensitive_token(figure):
    """Without positions and a bidirectional mask every swap gives 0: the note said
    "Most sensitive token: 'the' (mean 0.00e+00 ...)"."""
    tokens = "the cat sat on the mat".split()
    zero = np.zeros((6, 6))
    figure.show_pairs(swap_map(tokens, zero))
    assert "Most sensitive" not in figure.note.text()
    assert "No swap of two different tokens moves" in figure.note.text()


def test_the_swap_maps_colours_span_the_swaps_that_change_the_input(figure):
    """The two "the" (identical: the input does not change) are the largest cell; the
    colour bar ends at the largest swap of different tokens instead."""
    tokens = "the cat sat on the mat".split()
    change = np.full((6, 6), 0.1)
    np.fill_diagonal(change, 0.0)
    change[0, 4] = change[4, 0] = 0.6
    change[1, 2] = change[2, 1] = 0.3
    figure.show_pairs(swap_map(tokens, change))
    assert figure.bar.levels() == pytest.approx((0.0, 0.3))
    assert "max 3.00e-01" in figure.heading.text()


def test_beside_a_linear_probe_the_verdicts_probes_name_their_squared_coordinates(figure):
    """The legend read "causal probe error" beside "linear causal probe error", while
    the first is the quadratic probe that decides the verdict; it is named as the
    probe's Features control names it."""
    check = haviv([2.5] * LAYERS)
    check.values["linear"] = {"causal": probe_rows([2.4] * LAYERS, [2.5] * LAYERS)}
    figure.show_paper(check)
    labels = legend_labels(figure)
    assert "causal (linear + squared coordinates)" in labels
    assert not any("with squares" in label for label in labels)     # read as markers
    assert "causal (linear)" in labels
    assert "causal" not in labels


def test_the_paper_check_draws_all_four_probes_it_ran(figure):
    """Haviv 2022 ran four probes (quadratic and linear, causal and bidirectional) and
    its progress said so, but the bidirectional linear probe was not drawn."""
    check = haviv([2.5] * LAYERS)
    check.values["linear"] = {"causal": probe_rows([2.4] * LAYERS, [2.5] * LAYERS),
                              "bidirectional": probe_rows([2.9] * LAYERS, [2.5] * LAYERS)}
    figure.show_paper(check)
    labels = legend_labels(figure)
    assert sum("chance" not in label for label in labels) == 4
    assert "bidirectional (linear)" in labels
    assert figure.data["bidirectional_linear_mae"] == pytest.approx([2.9] * LAYERS)


def test_a_sweep_whose_runs_agree_lists_no_band(figure):
    """NoPE, bidirectional: every run is exactly 0, no band is drawn, and the legend
    listed "p10 to p90 of the runs" all the same."""
    result = sweep_result()
    band = result.bands["pooled_change"]
    band.p10[:] = band.median[:] = band.p90[:] = 0.0
    figure.show_sweep(result, "pooled_change")
    assert "p10 to p90 of the runs" not in legend_labels(figure)
    figure.show_sweep(sweep_result(), "pooled_change")
    assert "p10 to p90 of the runs" in legend_labels(figure)


def test_the_probe_note_says_what_the_plotted_errors_show(figure):
    """NoPE, causal: every error above chance, and the note said "Lower error than
    chance: position can be read off the layer"."""
    figure.show_probe(probe_rows([3.2, 3.3, 3.25, 3.4, 3.57], [3.15] * LAYERS), "probe")
    note = figure.note.text()
    shown = figure.displayed()
    assert (shown["mae"] > shown["chance_mae"]).all()
    assert "At no layer is the error below chance" in note and "no better than" in note
    figure.show_probe(probe_rows([3.2, 2.0, 2.5, 3.4, 3.5], [3.15] * LAYERS), "probe")
    assert "below chance at layers 1–2 only" in figure.note.text()


def test_a_short_probe_note_shows_what_the_errors_show_first(figure):
    figure.resize(700, 330)
    from posviz.gui.plots.one_line import FEW_LINES
    figure.show_probe(probe_rows([3.2, 3.3, 3.25, 3.4, 3.57], [3.15] * LAYERS), "probe")
    assert 1 < len(figure.note.shown_lines()) <= FEW_LINES
    assert figure.note.shown_text().startswith("At no layer is the error below chance")


def test_a_sweep_of_one_run_says_what_its_line_is(qtbot):
    """A reverse sweep of one text is one run: its note spoke of a median over all runs
    and a shaded 10th to 90th percentile that is not there."""
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    median = np.array([0.0, 0.003, 0.03])
    one = SimpleNamespace(bands={"pooled_change": SimpleNamespace(
        median=median, p10=median, p90=median)}, floor=1.2e-5, kind="reverse", runs=1,
        texts=("a b c",))
    figure.show_sweep(one, "pooled_change")
    note = figure.note.text()
    assert "one run" in note and "median" not in note and "percentile" not in note
    labels = [label.text for _, label in figure.legend.items]
    assert "the run" in labels and not any("median" in t or "p10" in t for t in labels)
    figure.show_sweep(sweep_result(), "pooled_change")            # six runs: as before
    assert "the median over all runs" in figure.note.text()


def test_a_sweep_s_band_is_seen_on_its_log_axis_however_thin(qtbot):
    """The p10 to p90 band of a real sweep (±10 % about 0.3: 0.09 of the axis's eight
    decades, three pixels at 1024 × 700) lay hidden under the median: its edges drawn
    opaque, its legend saying how thin it is; filled in log space between edges inside
    the view, a quantile of 0 on the zero row and one missing taking the median's
    place (a NaN in an edge broke the fill's path)."""
    figure = on_screen(qtbot, ExperimentFigure(), 760, 420)
    median = np.array([np.nan, 0.30, 0.32, 0.33, 0.35])
    band = SimpleNamespace(median=median, p10=np.array([np.nan, 0.0, np.nan, 0.30, 0.32]),
                           p90=median * 1.1)
    figure.show_sweep(SimpleNamespace(bands={"pooled_change": band}, floor=1.2e-5,
                                      kind="random", runs=20, texts=("a b c",)),
                      "pooled_change")
    fill = next(i for i in figure.plot.items if isinstance(i, pg.FillBetweenItem))
    (x0, x1), (y0, y1) = figure.plot.viewRange()
    box = fill.path().boundingRect()
    assert np.isfinite([box.left(), box.top(), box.right(), box.bottom()]).all(), box
    assert x0 <= box.left() < box.right() <= x1 and y0 <= box.top() < box.bottom() <= y1
    assert box.top() == pytest.approx(-7.0)                     # p10 = 0: the zero row
    for edge in (fill.curves[0], fill.curves[1]):
        assert edge.opts["pen"].color().alpha() >= 180          # seen beside the median
        assert edge in figure.plot.items
    labels = [label.text for _, label in figure.legend.items]
    assert any(text.startswith("p10 to p90") for text in labels), labels
    figure.show_sweep(SimpleNamespace(bands={"pooled_change": SimpleNamespace(
        median=median, p10=median * 0.9, p90=median * 1.1)}, floor=1.2e-5, kind="random",
        runs=20, texts=("a b c",)), "pooled_change")
    labels = [label.text for _, label in figure.legend.items]
    assert any("thin as the line" in text for text in labels), labels


def test_a_probe_at_chance_and_the_chance_line_both_show(figure):
    """Haviv 2022's bidirectional (linear) probe at 1.01 × chance lay wholly under the
    grey dashed chance line: its legend entry had no curve to be seen; drawn under the
    errors instead, the chance line hid under the curves at chance."""
    chance = [2.5] * LAYERS
    check = haviv(chance)
    check.values["bidirectional"] = probe_rows([1.002 * c for c in chance], chance)
    figure.show_paper(check)
    figure._settle()
    lines = [i for i in figure.plot.items if isinstance(i, pg.PlotCurveItem)]
    solid = [i for i in lines if i.opts["pen"].style() == QtCore.Qt.PenStyle.SolidLine]
    at_chance = next(i for i in solid if np.allclose(i.getData()[1], 2.505))
    grey = next(i for i in lines if i not in solid).opts["pen"].color()
    image = figure.canvas.grab().toImage()

    def seen(colour) -> float:
        """The share of points along the curve, off its corners, of ``colour``."""
        hits = []
        for x in np.linspace(0.3, LAYERS - 1.3, 120):
            point = figure.plot.vb.mapViewToScene(QtCore.QPointF(x, 2.505))
            pixel = figure.canvas.mapFromScene(point)
            ratio = figure.canvas.devicePixelRatioF()
            got = image.pixelColor(round(pixel.x() * ratio), round(pixel.y() * ratio))
            hits.append(abs(got.red() - colour.red()) + abs(got.green() - colour.green())
                        + abs(got.blue() - colour.blue()) < 60)
        return float(np.mean(hits))

    assert seen(at_chance.opts["pen"].color()) > 0.4          # the curve, between dashes
    assert seen(grey) > 0.2                                   # the chance line, over it
