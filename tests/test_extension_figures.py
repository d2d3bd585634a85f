"""The context-extension lab's figures (gui.experiments.extension), drawn from a stored
result: a trimmed `posviz extend --json` of the shipped checkpoints (seed 0)."""
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6 import QtGui  # noqa: E402

from posviz.cli.extend import draw  # noqa: E402
from posviz.gui.experiments.extension import extension_metrics  # noqa: E402
from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402
from test_training import cli  # noqa: E402
from conftest import on_screen  # noqa: E402

STORED = json.loads((Path(__file__).parent / "data" / "extension-small.json").read_text())


@pytest.fixture
def figure(qtbot):
    shown = on_screen(qtbot, ExperimentFigure(), 900, 600)
    return shown


def test_perplexity_and_retrieval_draw_the_result_s_numbers_per_length(figure):
    for metric in ("perplexity", "retrieval"):
        figure.show_extension(STORED, metric)
        assert figure.coords == {"length": [128, 256, 512, 1024]}
        for name, row in STORED["methods"].items():
            expected = [row[metric][str(n)] for n in STORED["lengths"]]
            assert np.array_equal(figure.data[name], expected)
        text = figure.heading.text() + figure.note.text()
        assert "4 layers, width 64" in text and "causal" in text and "seed 0" in text
        assert "trained at 128 tokens" in text and "held-out KJV text" in text
    assert np.array_equal(figure.data["yarn_se"], [STORED["methods"]["yarn"]["retrieval_se"]
                                                   [str(n)] for n in STORED["lengths"]])
    # the lengths on a log-2 axis: 128 to 1024 evenly spaced, labelled by length
    ticks = figure.plot.getAxis("bottom")._tickLevels[0]
    assert [label for _, label in ticks] == ["128", "256", "512", "1024"]
    assert np.allclose(np.diff([x for x, _ in ticks]), 1.0)


def test_attention_at_the_longest_length_shows_rope_s_mass_gone_far(figure):
    figure.show_extension(STORED, "attention")
    rope = STORED["methods"]["rope"]["attention"]["1024"]
    assert np.array_equal(figure.data["rope"], rope)
    assert figure.coords["distance"] == STORED["distance_bins"]
    assert figure.data["rope"][-1] == pytest.approx(0.468, abs=1e-3)   # 512-1023 back
    assert "at 1024 tokens" in figure.heading.text()
    figure.show_extension(STORED, "attention at 256")       # only the bins that reach
    assert figure.coords["distance"] == STORED["distance_bins"][:9]
    assert np.array_equal(figure.data["alibi"], STORED["methods"]["alibi"]["attention"]["256"])
    assert [m for m, _ in extension_metrics(STORED)] == [
        "perplexity", "retrieval", "attention", "attention at 512", "attention at 256",
        "attention at 128"]
    with pytest.raises(ValueError):
        figure.show_extension(STORED, "attention at 300")


def test_out_writes_each_figure_at_the_asked_width_with_provenance(tmp_path):
    written = draw(STORED, tmp_path, ["png", "svg"], 1200)
    assert [p.name for p in written] == [
        f"extension-{m}.{f}" for m in ("perplexity", "retrieval", "attention")
        for f in ("png", "svg")]
    image = QtGui.QImage(str(tmp_path / "extension-attention.png"))
    assert image.width() == 1200
    assert image.text("experiment") == "extend" and image.text("metric") == "attention"
    assert image.text("seed") == "0" and image.text("ran_on") == STORED["ran_on"]
    assert b"<svg" in (tmp_path / "extension-perplexity.svg").read_bytes()


def test_the_command_writes_the_figures_of_its_run(tmp_path, monkeypatch):
    from posviz.analysis.experiments import extension
    ran = []

    def stand_in(folder, factors, **kwargs):
        ran.append(factors)
        return stored_extension()
    monkeypatch.setattr(extension, "extend", stand_in)
    status, out, err = cli("extend", "--quiet", "--out", str(tmp_path), "--width", "800")
    assert status == 0 and ran == [(1, 2, 4, 8)] and "held-out perplexity" in out
    assert "trained at 128 tokens, seed 0" in out.splitlines()[0]
    assert "extension-perplexity.png" in err
    image = QtGui.QImage(str(tmp_path / "extension-retrieval.png"))
    assert image.width() == 800
    assert image.text("weights") == "trained"        # the record every output writes
    assert image.text("posviz") and image.text("experiment") == "extend"
    status, _, err = cli("extend", "--out", str(tmp_path), "--format", "gif")
    assert status == 2 and ran == [(1, 2, 4, 8)]               # refused before the run


def stored_extension():
    from posviz.analysis.experiments.extension import Extension
    return Extension(STORED["train_length"], tuple(STORED["lengths"]), STORED["tokens"],
                     tuple(STORED["distance_bins"]), STORED["methods"], STORED["ran_on"],
                     STORED["seed"])


def test_the_window_runs_the_lab_with_progress_and_shows_each_figure(qtbot, monkeypatch,
                                                                     tmp_path):
    from posviz.analysis.experiments import extension
    from posviz.gui.experiments.tab import ExperimentsTab
    steps, said = [], []

    def stand_in(folder, factors, should_stop, progress, say):
        from posviz.analysis.experiments.stage import Stage
        assert folder is None and factors == (1, 2, 4, 8) and not should_stop()
        for method in (1, 2):                     # 2 methods (of 8) at 4 lengths each
            say(Stage(f"stand-in {4 * method - 3}", method, 8, steps=(1, 2, 4, 8)))
            for done in range(1, 5):
                progress(done, 4)
        return stored_extension()
    monkeypatch.setattr(extension, "extend", stand_in)
    tab = on_screen(qtbot, ExperimentsTab(), 1000, 600)
    tab._relay.progressed.connect(lambda done, total: steps.append((done, total)))
    tab._relay.said.connect(said.append)
    try:
        tab.what.setCurrentIndex(tab.what.findData("extend"))
        assert tab.metric_box.isVisible() and not tab.weights.isVisible()
        assert tab.metric_box.currentData() == "perplexity"
        with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
            tab.run()
        qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
        # each method a stage counting its lengths
        assert said == ["method 1 of 8, stand-in 1", "method 2 of 8, stand-in 5"]
        # each stage's first and last count relayed, those between at most every 50 ms
        # (runtime.experiments.every_so_often: a signal a run froze the window)
        starts = [k for k, step in enumerate(steps) if step == (1, 4)]
        assert len(starts) == 2 and steps[-1] == steps[starts[1] - 1] == (4, 4), steps
        for stage in (steps[:starts[1]], steps[starts[1]:]):
            assert [done for done, _ in stage] == sorted(set(d for d, _ in stage)), steps
        shown = tab.figure.displayed()
        assert np.array_equal(shown["rope"], [STORED["methods"]["rope"]["perplexity"][str(n)]
                                              for n in STORED["lengths"]])
        # the Show box now offers attention at each length the lab ran
        tab.metric_box.setCurrentIndex(tab.metric_box.findData("attention at 512"))
        assert np.array_equal(tab.figure.displayed()["alibi"],
                              STORED["methods"]["alibi"]["attention"]["512"])
        assert "at 512 tokens" in tab.figure.heading.text()
        facts = tab.provenance()
        assert facts["experiment"] == "extend" and facts["seed"] == "0"
        assert facts["ran_on"] == STORED["ran_on"]
        image = QtGui.QImage(str(tab.export(tmp_path / "lab.png", "png")))
        assert image.text("experiment") == "extend" and image.width() > 0
        tab.what.setCurrentIndex(tab.what.findData("sweep"))    # the metrics come back
        assert tab.metric_box.findData("attention") < 0 and tab.is_current() is False
        assert "context-extension lab run before" in tab.status.text()
    finally:
        tab.shutdown()


def test_the_window_draws_each_checkpoint_s_order_use(qtbot, monkeypatch):
    from posviz.analysis.experiments import order_use
    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.models.training.order_use import OrderUse
    uses = {kind: OrderUse(400, 128, True, 40.0, {"all_but_last": 40.0 * ratio,
                                                  "all_but_last_two": 40.0 * kept})
            for kind, ratio, kept in (("none", 1.69, 1.29), ("rope", 3.06, 1.56))}

    def stand_in(should_stop, say, progress=None):
        assert not should_stop()
        say("none: 400 windows")
        return order_use.ZooOrderUse(uses, 0, "two stand-in checkpoints")
    monkeypatch.setattr(order_use, "zoo_order_use", stand_in)
    tab = ExperimentsTab()
    qtbot.addWidget(tab)
    tab.show()
    try:
        tab.what.setCurrentIndex(tab.what.findData("order"))
        assert not tab.metric_box.isVisible() and not tab.weights.isVisible()
        with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
            tab.run()
        qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
        shown = tab.figure.displayed()
        assert np.allclose(shown["order_use"], [1.69, 3.06])
        assert np.allclose(shown["order_use_last_two_kept"], [1.29, 1.56])
        assert tab.figure.coords == {"encoding": ["none", "rope"]}
        assert "seed 0" in tab.figure.heading.text() and "400 held-out windows" in \
            tab.figure.note.text()
        assert tab.provenance()["ran_on"] == "two stand-in checkpoints"
    finally:
        tab.shutdown()


@pytest.mark.parametrize("width", [720, 900])
def test_the_last_distance_bin_is_labelled_on_a_small_screen(qtbot, figure, width):
    """At 1024 × 700 the figure is about 720 pixels wide: the last bin's label
    ("512-1023") passed the axis's end and was hidden, though the export showed it."""
    figure.resize(width, 500)
    figure.show_extension(STORED, "attention")
    figure.grab()
    axis = figure.plot.getAxis("bottom")
    image = QtGui.QImage(10, 10, QtGui.QImage.Format.Format_ARGB32)
    with QtGui.QPainter(image) as painter:
        labels = axis.generateDrawSpecs(painter)[2]                # (rect, flags, text)
    assert [text for _, _, text in labels] == list(figure.coords["distance"]), labels
    scene = figure.canvas.sceneRect()
    for rect, _, _ in labels:
        assert axis.mapRectToScene(rect).right() <= scene.right()    # whole in the figure


def _hover_at(figure, series, i):
    """What the figure says with the mouse on ``series``'s point ``i``."""
    from PySide6 import QtCore
    figure._mouse_moved(figure.plot.vb.mapViewToScene(
        QtCore.QPointF(float(series.x[i]), float(series.y[i]))))
    return figure.hover.text


def test_hover_names_the_lab_s_own_x_quantity_not_a_layer(figure):
    # a log-2 length axis: the point at 1024 tokens sits at x = 10, never "layer 10"
    figure.show_extension(STORED, "perplexity")
    figure.plot.vb.setRange(xRange=(6.5, 10.5), padding=0)   # a whole point apart
    rope = next(s for s in figure._series if s.name == "RoPE as trained")
    value = STORED["methods"]["rope"]["perplexity"]["1024"]
    assert _hover_at(figure, rope, 3) == f"RoPE as trained, 1,024 tokens: {value:.3g}"
    figure.show_extension(STORED, "retrieval")
    said = _hover_at(figure, figure._series[0], 0)
    assert "128 tokens" in said and "layer" not in said and "input" not in said
    figure.show_extension(STORED, "attention")
    said = [_hover_at(figure, figure._series[0], i) for i in (1, 10)]
    assert "keys 1 token back" in said[0] and "keys 512-1023 tokens back" in said[1]


def test_hover_names_the_encoding_of_an_order_use_point(figure):
    from posviz.analysis.experiments.order_use import ZooOrderUse
    from posviz.gui.experiments.extension import draw_order_use
    from posviz.models.training.order_use import OrderUse
    uses = {kind: OrderUse(400, 128, True, 40.0, {"all_but_last": 40.0 * ratio,
                                                  "all_but_last_two": 40.0 * kept})
            for kind, ratio, kept in (("none", 1.69, 1.29), ("rope", 3.06, 1.56))}
    draw_order_use(figure, ZooOrderUse(uses, 0, "two stand-in checkpoints"))
    said = _hover_at(figure, figure._series[0], 1)
    assert said == "every token before the last shuffled, rope: 3.06"


@pytest.mark.parametrize("width", [700, 1040, 1370])
def test_the_note_is_whole_and_wraps_inside_its_figure(qtbot, figure, width):
    """At 1920 × 1080 the note's last sentence, "…, 32768 predictions a length", ended at
    the figure's edge without a full stop and read as cut: it ends with one, each line
    drawn fits the note's width, and the lines drawn are the whole note."""
    figure.resize(width, 600)
    figure.show_extension(STORED, "perplexity")
    qtbot.wait(20)
    note = figure.note
    room = note.contentsRect().width()
    assert room <= figure.width()
    assert all(note.fontMetrics().horizontalAdvance(line) <= room
               for line in note.shown_lines()), note.shown_lines()
    assert " ".join(note.shown_text().split()) == " ".join(note.text().split())
    assert note.text().rstrip().endswith("predictions at each length.")


def test_the_order_use_s_axis_label_is_whole_in_a_short_plot(qtbot):
    """At 1024 × 700 the window's plot was too short for its y label: "shuffled /
    in-order per…" (whole in the export); a shorter label says it whole."""
    from posviz.analysis.experiments.order_use import ZooOrderUse
    from posviz.gui.experiments.extension import draw_order_use
    from posviz.models.training.order_use import OrderUse
    uses = {kind: OrderUse(400, 128, True, 40.0, {"all_but_last": 40.0 * ratio,
                                                  "all_but_last_two": 40.0 * kept})
            for kind, ratio, kept in (("none", 1.69, 1.29), ("rope", 3.06, 1.56))}
    figure = on_screen(qtbot, ExperimentFigure(), 760, 330)
    draw_order_use(figure, ZooOrderUse(uses, 0, "two stand-in checkpoints"))
    figure._settle()
    axis = figure.plot.getAxis("left")
    assert axis.labelText.startswith("shuffled / in") and "…" not in axis.labelText, \
        axis.labelText
    assert axis.label.boundingRect().width() <= axis.geometry().height() + 1


def test_the_order_use_s_note_is_whole_in_three_lines_at_1024(qtbot):
    """At 1024 × 700 (a figure about 760 pixels wide) the note's line of what it ran on
    ended "held-out KJ…" (whole only on a click): it fits the three lines a note has."""
    from posviz.analysis.experiments.order_use import ZooOrderUse
    from posviz.gui.experiments.extension import draw_order_use
    from posviz.gui.plots.one_line import FEW_LINES
    from posviz.models.training.order_use import OrderUse
    uses = {kind: OrderUse(400, 128, True, 40.0, {"all_but_last": 40.0 * 1.7,
                                                  "all_but_last_two": 40.0 * 1.3})
            for kind in ("none", "sinusoidal", "learned", "rope", "alibi", "t5")}
    ran_on = ("the shipped trained checkpoints: the built-in model (4 layers, width 64), "
              "causal, trained at 128 tokens, held-out KJV text")   # as order_use says
    figure = on_screen(qtbot, ExperimentFigure(), 760, 430)
    draw_order_use(figure, ZooOrderUse(uses, 0, ran_on))
    figure._settle()
    note = figure.note
    note.set_room(FEW_LINES)
    assert not note.elided(), note.shown_lines()
    # every character drawn (a line may break after a hyphen: "held-" / "out")
    assert "".join(note.shown_text().split()) == "".join(note.text().split())
    assert "seed 0" in figure.heading.text()
