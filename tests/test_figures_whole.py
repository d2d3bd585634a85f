"""Every figure whole at every window size, and every export of an experiment at the
figure's own size: the real window, offscreen, at a projector's, a laptop's and a
desktop's size, through every tab and every experiment.

On screen no plot area, legend or colour bar lies outside its canvas and no data point
outside its view; each experiment's PNG, SVG and PDF hold every legend entry and the
last layer or head, inside the picture, and are the same size whatever the window's.

One window serves every size; each experiment runs once and is looked at and exported
at each size. The slowest paper checks run on fewer texts, tokens and probe steps than
(the same code, the same drawing).
"""
from __future__ import annotations

import re
import numpy as np
import pytest

pytest.importorskip("PySide6")

import pyqtgraph as pg  # noqa: E402
from figure_files import picture_size, pixels, text_lines  # noqa: E402
from PySide6 import QtGui, QtWidgets  # noqa: E402

SIZES = ((1024, 700), (1366, 768), (1920, 1080))
SLACK = 1.0                    # pixels an item may reach past an edge (rounding)


@pytest.fixture
def quick_papers(monkeypatch):
    """The slow paper checks on fewer texts, tokens and probe steps: minutes become
    seconds (the trained haviv2022 alone fitted its MLP probes for 2 to 5 minutes)."""
    from posviz.analysis.experiments import papers, pretrained, probe, texts, trained
    few = texts.random_texts
    monkeypatch.setattr(papers, "random_texts",
                        lambda count, *args, **kw: few(min(count, 30), *args, **kw))
    monkeypatch.setattr(trained, "PRESS_TOKENS", 1 << 11)
    monkeypatch.setattr(trained, "PROBE_TEXTS", 30)
    monkeypatch.setattr(probe, "MLP_STEPS", 10)
    examples = texts.example_texts
    monkeypatch.setattr(pretrained, "example_texts", lambda: examples()[:2])
    monkeypatch.setattr(pretrained, "BUNDLED_MODELS", ("minilm",))


def experiments():
    """(name, how the tab's controls choose it, what its Show box shows once it ran):
    every experiment, each paper check on each kind of weights it runs on, the swap map
    and the encodings compared."""
    from posviz.analysis.experiments.papers import PRESETS, TRAINED_PRESETS
    from posviz.gui.experiments.jobs import SWAP_MAP

    def choose(what, show=None, **controls):
        def chosen(tab):
            tab.what.setCurrentIndex(tab.what.findData(what))
            for name, value in controls.items():
                box = getattr(tab, name)
                box.setCurrentIndex(box.findData(value))
            if what == "compare":
                for action in tab.encodings.menu().actions():
                    action.setChecked(True)
            if what == "sweep":
                tab.count.setValue(6)
        return chosen, show
    found = [("sweep", choose("sweep", kind="random")),
             ("swap-map", choose("sweep", SWAP_MAP, kind="swap")),
             ("probe", choose("probe", texts="generated")),
             ("compare-random", choose("compare", weights="random")),
             ("compare-trained", choose("compare", weights="trained"))]
    for weights, presets in (("random", PRESETS), ("trained", TRAINED_PRESETS)):
        found += [(f"{paper}-{weights}", choose("paper", paper=paper, weights=weights))
                  for paper in presets]
    return [(name, *chosen) for name, chosen in found]


def settle(qtbot, window) -> None:
    """Let layouts, deferred fits and repaints after a resize run: until the window's
    widgets keep their places and least heights over three waits (two seconds at most:
    on a busy machine a layout passes its size up the page in steps)."""
    def places():
        return [(w.geometry().getRect(), w.minimumHeight())
                for w in window.findChildren(QtWidgets.QWidget) if w.isVisible()]
    kept, before = 0, None
    for _ in range(32):
        qtbot.wait(60)
        now = places()
        kept = kept + 1 if now == before else 0
        if kept == 3:
            return
        before = now


def plots_and_legends(figure) -> list:
    canvas = figure.canvas
    return [item for item in canvas.ci.items if item.isVisible()]


def outside_canvas(figure) -> list[str]:
    """The canvas's items (plots with their axes, legends, colour bars) reaching past
    what the canvas shows."""
    canvas = figure.canvas
    if figure.stack.currentWidget() is not canvas or not canvas.isVisible():
        return []
    shown = canvas.mapToScene(canvas.viewport().rect()).boundingRect()
    shown.adjust(-SLACK, -SLACK, SLACK, SLACK)
    return [f"{type(item).__name__} at {item.sceneBoundingRect().getRect()} outside "
            f"{shown.getRect()}" for item in plots_and_legends(figure)
            if not shown.contains(item.sceneBoundingRect())]


def outside_view(figure) -> list[str]:
    """Data points (of curves and markers) outside the view of their plot."""
    if figure.stack.currentWidget() is not figure.canvas:
        return []
    found = []
    for plot in figure.canvas.ci.items:
        if not isinstance(plot, pg.PlotItem) or isinstance(plot, pg.ColorBarItem):
            continue
        (x0, x1), (y0, y1) = plot.vb.viewRange()
        pad_x, pad_y = 1e-9 * (x1 - x0), 1e-9 * (y1 - y0)
        for item in plot.items:
            if not isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
                continue
            x, y = (np.asarray(v, float) for v in item.getData())
            inside = ((x >= x0 - pad_x) & (x <= x1 + pad_x) & (y >= y0 - pad_y)
                      & (y <= y1 + pad_y))
            if not inside[np.isfinite(x) & np.isfinite(y)].all():
                found.append(f"{type(item).__name__}: {x.tolist()}, {y.tolist()} outside "
                             f"x {x0:.3g}..{x1:.3g}, y {y0:.3g}..{y1:.3g}")
    return found


def note_cut(figure) -> list[str]:
    """The figure's note not whole on the page: its painted lines taller than its box,
    or (scrolled to, as a reader would) part of it hidden, under the canvas and its
    legend or past the end of the page the window scrolls."""
    from PySide6.QtWidgets import QScrollArea
    note = figure.note
    if note.isHidden() or not figure.isVisible():
        return []
    problems = []
    needed = note.heightForWidth(note.width())
    if note.height() < needed:
        problems.append(f"its note is {note.height()} px tall, its lines need {needed}")
    if figure.stack.currentWidget() is figure.canvas:
        canvas = figure.canvas.geometry()
        if canvas.bottom() >= note.geometry().top():
            problems.append(f"the canvas (its legend) reaches y = {canvas.bottom()}, over "
                            f"the note from y = {note.geometry().top()}")
    scroll = figure.parentWidget()
    while scroll is not None and not isinstance(scroll, QScrollArea):
        scroll = scroll.parentWidget()
    if scroll is not None:
        scroll.ensureWidgetVisible(note, 0, 0)
        QtWidgets.QApplication.processEvents()
    seen = note.visibleRegion().boundingRect()
    if seen != note.rect():
        where = ""
        if scroll is not None:
            page, bar = scroll.widget(), scroll.verticalScrollBar()
            where = (f" (at y = {note.mapTo(page, note.rect().topLeft()).y()} of a page "
                     f"{page.height()} px tall, {scroll.viewport().height()} px shown "
                     f"from {bar.value()} of {bar.maximum()})")
        problems.append(f"of its note {note.rect().getRect()} only {seen.getRect()} can "
                        f"be seen, scrolled to{where}")
    return problems


def plain(text: str) -> str:
    document = QtGui.QTextDocument()
    document.setHtml(text)
    return document.toPlainText()


def must_show(figure) -> list[str]:
    """What every export of the figure holds whole: each legend entry and the label of
    the last layer or head."""
    legend = [plain(label.text) for _, label in figure.legend.items] \
        if figure.legend is not None else []
    coords = figure.coords
    last = []
    if "layer" in coords and figure.dims == ("layer",):
        last = [str(max(coords["layer"]))]
    elif "head" in coords:
        last = [str(max(coords["head"]))]
    return legend + last


def cut_in_file(svg, expected: list[str]) -> list[str]:
    """Of ``expected`` strings, those the SVG does not hold as a line of text inside its
    picture."""
    width, height = picture_size(svg)
    inside = [line["text"] for line in text_lines(svg)[1]
              if line["left"] >= -SLACK and line["right"] <= width + SLACK
              and 0 <= line["y"] <= height + SLACK]
    return [text for text in expected if text not in inside]


def same_picture(paths) -> list[str]:
    """The PNG, SVG and PDF: one picture (the PNG as many pixels as the SVG, the PDF the
    same shape)."""
    png, svg, pdf = pixels(paths[0]), picture_size(paths[1]), pixels(paths[2])
    problems = []
    if abs(png[0] - svg[0]) > 1 or abs(png[1] - svg[1]) > 1:
        problems.append(f"PNG {png} is not the SVG's {svg}")
    if abs(pdf[1] / pdf[0] - svg[1] / svg[0]) > 0.01:
        problems.append(f"PDF {pdf} is not of the SVG's shape {svg}")
    return problems


def open_scenario(qtbot, window, name: str) -> None:
    """Open a bundled scenario as Help › Scenarios does: its explanation in a panel
    beside the plots (a tab of the model panel in a narrow window)."""
    from posviz.document.scenarios import scenarios
    from posviz.gui.scenarios import open_scenario as opened
    path, doc = next((p, d) for p, d in scenarios() if p.name == name)
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        opened(window.files, path, doc)
    assert window.scenario_panel is not None and window.scenario_panel.isVisible()


def test_every_figure_is_whole_at_every_size_and_every_export_at_its_own(
        qtbot, window, quick_papers, tmp_path):
    """... with a scenario's explanation open beside the plots, as a new user has it:
    the causal prefix swap (whose model the trained checkpoints share)."""
    tabs, tab = window.plots.tabs, window.experiments
    open_scenario(qtbot, window, "02-causal-prefix-swap.posviz")
    problems: list[str] = []
    for size in SIZES:
        window.resize(*size)
        for index in range(tabs.count()):
            tabs.setCurrentIndex(index)
            settle(qtbot, window)
            page = tabs.currentWidget()
            for name, figure in window.plots.figures().items():
                if page.isAncestorOf(figure) and figure.isVisible():
                    problems += [f"{size} {name}: {p}"
                                 for p in outside_canvas(figure) + outside_view(figure)]
    tabs.setCurrentWidget(tab)
    for name, choose, show in experiments():
        choose(tab)
        with qtbot.waitSignal(tab._relay.finished, timeout=300_000):
            tab.run()
        qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
        if tab.status.property("error"):
            problems.append(f"{name}: {tab.status.text()}")
            continue
        if show is not None:
            tab.metric_box.setCurrentIndex(tab.metric_box.findData(show))
        exported = set()
        for width, height in SIZES:
            window.resize(width, height)
            settle(qtbot, window)
            where = f"{name} at {width}×{height}"
            problems += [f"{where}: {p}" for p in outside_canvas(tab.figure)
                         + outside_view(tab.figure) + note_cut(tab.figure)]

            paths = [tab.export(tmp_path / f"{name}-{width}", fmt)
                     for fmt in ("png", "svg", "pdf")]
            problems += [f"{where}, export: {p}" for p in same_picture(paths)]
            problems += [f"{where}: the SVG cuts {text!r}"
                         for text in cut_in_file(paths[1], must_show(tab.figure))]
            exported.add(tuple(round(v) for v in picture_size(paths[1])))
        if len(exported) > 1:
            problems.append(f"{name}: its exports follow the window: {sorted(exported)}")
    assert not problems, "\n".join(problems)


def test_export_figures_writes_the_same_files_at_every_window_size_and_stays_on_its_tab(
        qtbot, window, tmp_path, monkeypatch):
    """File › Export figures lays the figures out at their own size in a panel of its
    own: the files are the same at 1024 × 700 and 1920 × 1080, the tab in sight never
    changes (it switched through every tab under the user), and a progress dialog names
    each file as it is written (its time left: tests/test_export_experiment.py)."""
    from PySide6.QtWidgets import QProgressDialog
    labels = []
    monkeypatch.setattr(QProgressDialog, "setLabelText",
                        lambda dialog, text: labels.append(text))
    tabs = window.plots.tabs
    tabs.setCurrentIndex(1)
    switched = []
    tabs.currentChanged.connect(switched.append)
    sizes = {}
    for width, height in (SIZES[0], SIZES[-1]):
        window.resize(width, height)
        settle(qtbot, window)
        written = window.export_to(str(tmp_path / f"{width}"), ["png"], None, csv=False)
        assert written
        sizes[width] = {path.name: pixels(path) for path in written}
    assert sizes[SIZES[0][0]] == sizes[SIZES[-1][0]]
    assert switched == [] and tabs.currentIndex() == 1
    count = len(sizes[SIZES[0][0]])
    writing = [text for text in labels if text.startswith("Writing ")][:count]
    assert [text.split(")")[0] + ")" for text in writing] == [
        f"Writing {name} ({k + 1} of {count})" for k, name in enumerate(sizes[SIZES[0][0]])]


@pytest.mark.parametrize("name", ["alibi-slopes-random", "compare-random", "order-use"])
def test_every_line_of_an_experiment_s_note_is_whole_at_every_size(
        qtbot, window, monkeypatch, name):
    """The note under the legend (the ALiBi slopes' and the encodings compared: five
    lines or so; order use's under a legend of two columns) is whole at every size:
    no line under the canvas and its legend, none past the end of the page the window
    scrolls, no plot past its canvas; at 1024 × 700 the page holds the figure without
    scrolling (its plot shorter, the note on fewer lines). Order use reads 20 windows per
    checkpoint here (the same drawing)."""
    from posviz.analysis.experiments import order_use
    measured = order_use.of_checkpoint
    monkeypatch.setattr(order_use, "of_checkpoint",
                        lambda checkpoint, windows, progress=None: measured(
                            checkpoint, 20, progress=progress))
    chosen = dict((found, how) for found, how, _ in experiments())
    chosen["order-use"] = lambda tab: tab.what.setCurrentIndex(tab.what.findData("order"))
    tabs, tab = window.plots.tabs, window.experiments
    tabs.setCurrentWidget(tab)
    chosen[name](tab)
    with qtbot.waitSignal(tab._relay.finished, timeout=300_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
    assert not tab.status.property("error"), tab.status.text()
    problems = []
    for width, height in SIZES + ((1024, 600), (1024, 700)):
        window.resize(width, height)
        settle(qtbot, window)
        problems += [f"{width}×{height}: {p}" for p in note_cut(tab.figure)
                     + outside_canvas(tab.figure)]
        scrolled = window.plots_scroll.verticalScrollBar().maximum()
        if (width, height) == SIZES[0] and name != "order-use" and scrolled:
            problems.append(f"{width}×{height}: the page scrolls {scrolled} px")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("size, layers, heads", [((1500, 900), 4, 4), ((1500, 900), 6, 12),
                                                 ((760, 520), 6, 12), ((760, 520), 4, 4)])
def test_the_mosaic_s_colour_bar_stands_next_to_its_cells(qtbot, size, layers, heads):
    """At 1920 × 1080 the colour bar stood ~400 px right of the last tile (the view
    took the figure's width, the tiles its left part); MiniLM's 6 × 12 tiles at 1024 ×
    700 sat in the top of a view four times their height, the bar as tall as the view.
    The plots panel at a desktop's and a laptop's size: cells at most 2:1, the bar's strip
    next to the tiles and no taller than they are."""
    from conftest import on_screen
    from PySide6 import QtCore
    from test_plots_legibility import evaluate, show

    from posviz.gui.plots import PlotsPanel
    from posviz.gui.plots.mosaic_figure import STRETCH
    panel = on_screen(qtbot, PlotsPanel(), *size)
    show(panel, evaluate(layers=layers, heads=heads, d_model=8 * heads))
    figure = panel.figures()["attention_mosaic"]
    for _ in range(3):               # the plot held to its tiles, the bar aligned to it
        QtWidgets.QApplication.processEvents()
        figure.grab()
    grid, view = figure.grid, figure.plot.vb
    corner = view.mapViewToScene(QtCore.QPointF(0, 0))
    far = view.mapViewToScene(QtCore.QPointF(grid.width, grid.height))
    strip = figure.bar.vb.sceneBoundingRect()
    across, down = (far.x() - corner.x()) / grid.width, (far.y() - corner.y()) / grid.height
    assert max(across, down) <= STRETCH * min(across, down) * 1.01    # cells at most 2:1
    assert 0 <= strip.left() - far.x() <= 30, (far.x(), strip.left())  # the bar beside
    assert strip.height() <= (far.y() - corner.y()) * 1.1 + 4, (strip, far.y() - corner.y())


def test_an_experiment_s_progress_keeps_its_height_the_stage_s_words_and_the_time_left(
        qtbot):
    """At 1024 pixels a probe's progress wrapped to three or four lines, lost its end
    (the time left) and moved the figure down and the page's scroll bar in and out as
    it ran; made one line, it cut the stage's words to a few letters ("metho…: 1 of 4
    done"): two lines of one height, what runs on the first (its first 40 letters at
    least), "… of … done, about … left" whole on the second, the figure where it was
    (the tab at its share of a 1024 × 700 window)."""
    from conftest import on_screen

    from posviz.analysis.experiments.stage import Stage
    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.runtime.time_left import RunClock
    tab = on_screen(qtbot, ExperimentsTab(), 760, 560)
    now = [100.0]
    tab._clock = RunClock(lambda: now[0])
    tab.cancel_button.setEnabled(True)
    tab.progress.show()                                  # as run() does
    tab._stage = "running the context-extension lab"
    tab._progressed(0, 0)
    QtWidgets.QApplication.processEvents()
    before, height = tab.figure.geometry(), tab.status.height()
    heights = []
    for k, stage in enumerate(("method 3 of 8, PI on rope: held-out perplexity at 512 "
                               "tokens (length 2 of 3)", "probe", "fitting the MLP probes "
                               "of absolute position on the held-out texts' hidden states, "
                               "layer by layer, five seeds each")):
        tab._stage_started(Stage(stage, k + 1, 4, None, None))
        heights.append(tab.status.height())
        now[0] += 30
        tab._progressed(69, 120)
        QtWidgets.QApplication.processEvents()
        heights.append(tab.status.height())
        assert tab.figure.geometry() == before, (tab.figure.geometry(), before)
        first, second = tab.status.shown_lines()
        place = f"{k + 1} of 4"                  # the stage's place, said where its words do not
        stage = stage if place in stage else f"stage {place}: {stage}"
        assert first.startswith(stage[:40]), (first, stage)       # what runs, readable
        # the stage's words flow on before how far; how far and the time left whole
        # (the first stage, nothing learned here: not yet a number, said so)
        assert re.search(r"69 of 120 done; (about \d+ (s|min) left|estimating the time "
                         r"left) in all$", second), second
        whole = tab.status.text() if first != stage else ""
        assert tab.status.toolTip() == whole                 # the whole line, on hover
    tab.cancel_button.setEnabled(False)
    tab._say("done in 312.4 s")
    QtWidgets.QApplication.processEvents()
    heights.append(tab.status.height())
    assert heights == [height] * len(heights), (heights, height)
    assert tab.figure.geometry() == before, (tab.figure.geometry(), before)


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)])
def test_a_real_model_s_facts_stay_short_and_a_load_never_scrolls_the_dock_sideways(
        qtbot, window, size):
    """With SmolLM2 loaded its "Weights" wrapped into about 20 lines at 1920 pixels, and
    while a model loaded at 1024 the dock scrolled sideways (the busy bar's least width
    beside Cancel): a long value wraps whole across the table, whole in the tooltip too,
    the facts a few lines a row; the load's bar and line fit the dock."""
    from test_gui_fold import SMOLLM2_FACTS

    from PySide6.QtCore import Qt

    from posviz.gui.model_dock import dock_width
    from posviz.gui.model_panel.facts_table import facts_table, facts_tip
    window.resize(*size)
    window.resizeDocks([window.model_dock], [dock_width(size[0])], Qt.Horizontal)  # fresh
    settle(qtbot, window)
    panel, scroll = window.model_panel, window.model_dock.widget()
    panel.load.started("SmolLM2-135M-Instruct Q4_1, de-quantized (bundled GGUF)")
    panel.load.count("reading tensors", 5, 272)
    settle(qtbot, window)
    assert scroll.horizontalScrollBar().maximum() == 0, (
        panel.minimumSizeHint().width(), scroll.viewport().width())
    panel.load.finished()
    panel.builtin_box.hide()                    # as for a real model (show_spec)
    panel.model_facts.setText(facts_table(SMOLLM2_FACTS))
    panel.model_facts.setToolTip(facts_tip(SMOLLM2_FACTS))
    panel.model_facts.show()
    settle(qtbot, window)
    lines = panel.model_facts.height() / panel.model_facts.fontMetrics().lineSpacing()
    # was 31 to 34; the weights' line whole across the table's width (its middle was
    # cut to "…", read as words lost): 9 of its lines at 1024
    assert lines <= 3 * len(SMOLLM2_FACTS), lines
    assert SMOLLM2_FACTS[-1][1] in panel.model_facts.toolTip()
    assert "Weights" in panel.model_facts.text() and "float32 on cpu" in panel.model_facts.text()


def test_a_figure_s_file_has_its_own_size_text_readable_in_it(tmp_path):
    """RoPE's relative profile, alone on its tab, was written at the panel's 1500 × 957
    with 9-point text; the outputs without a head at 1500 × 92, a strip. ``posviz
    export`` and the Python API (one rule, own_size.figure_panel): the profile no taller
    than a plot's file (own_size.TALLEST, its caption beside), the outputs' text wrapped
    TEXT_WIDTH wide."""
    import posviz
    from posviz import cli
    from posviz.gui.plots import own_size
    small = ["--layers", "2", "--heads", "2", "--d-model", "16"]
    assert cli.main(["export", "--pe", "rope", "--out", str(tmp_path), "--format", "png",
                     "--no-csv", "--quiet", *small]) == 0
    report = posviz.load(pe="rope", layers=2, heads=2, d_model=16).compare(
        "the cat sat on the mat because it was warm")
    for path in (tmp_path / "relative_profile.png",
                 report.figure("relative_profile").save(tmp_path / "api.png")):
        width, height = pixels(path)
        assert height <= own_size.TALLEST + 60 and height / width < 0.45, (width, height)
    for path in (tmp_path / "outputs.png",
                 report.figure("outputs").save(tmp_path / "api-outputs.png")):
        width, height = pixels(path)
        assert width <= own_size.TEXT_WIDTH and height / width > 0.08, (width, height)
