"""The Experiments tab: runs on the worker, draws the band, cancels, exports."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from posviz.analysis.experiments.sweep import sweep  # noqa: E402
from posviz.gui.experiments.tab import SWAP_MAP, ExperimentsTab  # noqa: E402
from conftest import on_screen  # noqa: E402


@pytest.fixture
def tab(qtbot):
    widget = on_screen(qtbot, ExperimentsTab(), 1000, 600)
    yield widget
    widget.shutdown()


def run(qtbot, tab):
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())


def test_a_sweep_draws_the_band_of_the_core_result(qtbot, tab):
    tab.kind.setCurrentIndex(tab.kind.findData("random"))
    tab.count.setValue(6)
    tab.seed.setValue(2)
    run(qtbot, tab)
    job = tab.job
    from posviz.analysis.engine import Engine
    from posviz.models.builtin.backend import BuiltinBackend
    expected = sweep(Engine(BuiltinBackend(job.spec.config)), job.texts, "random", 6, 2)
    shown = tab.figure.displayed()
    assert np.allclose(shown["hidden_equivariance_median"],
                       expected.bands["hidden_equivariance"].median)
    assert "random sweep, 6 runs" in tab.figure.heading.text()
    # its thread ends with it: no torch threads of it stay beside the compute worker's
    import threading
    qtbot.waitUntil(lambda: not any(t.name == "posviz-experiment"
                                    for t in threading.enumerate()), timeout=10_000)


def test_the_swap_map_and_its_csv(qtbot, tab, tmp_path):
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    run(qtbot, tab)
    tab.metric_box.setCurrentIndex(tab.metric_box.findData(SWAP_MAP))
    change = tab.figure.displayed()["change"]
    assert np.array_equal(change, change.T) and np.all(np.diag(change) == 0)
    path = tab.export(tmp_path / "swap.csv", "csv")
    text = path.read_text()
    assert "# experiment: sweep" in text and "# kind: swap" in text
    assert tab.export(tmp_path / "swap.png", "png").stat().st_size > 1000
    from posviz.document.provenance import read_xmp
    pdf = tab.export(tmp_path / "swap.pdf", "pdf").read_bytes()
    assert pdf.startswith(b"%PDF-") and read_xmp(pdf)["kind"] == "swap"


def test_a_paper_check_and_a_bad_texts_choice(qtbot, tab):
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("alibi-slopes"))
    run(qtbot, tab)
    assert "holds here" in tab.figure.heading.text()
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    tab.texts.setCurrentIndex(tab.texts.findData("current"))    # one text: refused inline
    tab.run()
    assert "holds texts out" in tab.status.text() and not tab.cancel_button.isEnabled()


def test_a_paper_check_s_note_takes_the_lines_the_plot_spares_as_every_note(qtbot, tab):
    """Chi's note opened whole (four lines) in a tall figure, where the plots' notes
    beside it were one line: now every note is shown whole, its lines kept apart, where
    the plot keeps its readable height, and a click folds it to one line."""
    from PySide6.QtCore import Qt
    from PySide6.QtTest import QTest

    from posviz.gui.plots.one_line import MOST_LINES, READABLE_PLOT
    tab.resize(1100, 800)
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("chi2023"))
    run(qtbot, tab)
    note = tab.figure.note
    assert tab.figure.height() >= 400 and note.text().count("\n") >= 3
    lines = [line for line in note.text().splitlines() if line.strip()]
    assert not note.one_line and not note.elided()
    assert note.shown_lines()[0] == lines[0] and len(note.shown_lines()) <= MOST_LINES
    qtbot.waitUntil(lambda: note.height() >= len(lines) * note.fontMetrics().height())
    assert tab.figure.canvas.height() >= READABLE_PLOT
    QTest.mouseClick(note, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: note.height() < 2 * note.fontMetrics().height())
    assert note.one_line and note.shown_text().endswith("…")
    QTest.mouseClick(note, Qt.MouseButton.LeftButton)
    assert not note.one_line


def test_the_probe_starts_on_generated_texts_and_reads_the_position(qtbot, tab):
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    assert tab.texts.currentData() == "generated"      # not the current text, refused
    run(qtbot, tab)
    assert tab.result.generated and not tab.result.too_few
    assert tab.result.layers[0].r2 > 0.9 or tab.job.spec.config.pe == "none"
    assert "too few" not in tab.status.text()
    tab.what.setCurrentIndex(tab.what.findData("sweep"))      # a sweep: not generated
    assert tab.texts.currentData() == "current"


def test_cancel_stops_and_keeps_what_was_shown(qtbot, tab):
    tab.count.setValue(100_000)
    tab.run()
    qtbot.waitUntil(lambda: tab.progress.maximum() > 0, timeout=30_000)
    tab.cancel()
    assert "cancelled" in tab.status.text() and tab.progress.isHidden()
    assert tab.result is None


def test_the_window_puts_the_experiments_tab_last_and_idles_the_controls(qtbot, window):
    panel = window.plots
    titles = [panel.tabs.tabText(i) for i in range(panel.tabs.count())]
    assert titles[-1] == "Experiments"
    assert panel.tabs.widget(panel.tabs.count() - 1) is window.experiments
    panel.tabs.setCurrentIndex(panel.tabs.count() - 1)
    assert panel._visible() == []
    # the layer, head, mosaic and range choose what the other tabs show: idle here
    controls = (panel.layer_box, panel.head_box, panel.mosaic_box, panel.range_box)
    assert not any(box.isEnabled() for box in controls)
    panel.tabs.setCurrentIndex(0)
    assert all(box.isEnabled() for box in controls)


def test_a_probe_over_the_example_sentences(qtbot, tab):
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    tab.texts.setCurrentIndex(tab.texts.findData("examples"))
    assert tab.features.isVisible() and not tab.kind.isVisible()
    run(qtbot, tab)
    shown = tab.figure.displayed()
    layers = tab.result.layers
    assert np.allclose(shown["mae"], [row.mae for row in layers])
    assert np.allclose(shown["chance_mae"], [row.chance_mae for row in layers])
    assert "Position probe" in tab.figure.heading.text()
    assert tab.result.too_few and "too few samples" in tab.status.text()   # 9 short texts
    # the note says what the plotted errors show, with the caveat where it bears
    assert tab.result.verdict in tab.figure.note.text()
    below = (shown["mae"] < shown["chance_mae"]).sum()
    assert ("At no layer" in tab.figure.note.text()) == (below == 0)
    assert ("too few texts" in tab.figure.note.text()) == (below < len(layers))


def test_a_job_on_a_loaded_model_lends_the_window_s_backend(tab, monkeypatch):
    from types import SimpleNamespace

    from posviz.document.spec import ModelSpec
    from posviz.models.config import Positions
    loaded = object()
    session = SimpleNamespace(spec=ModelSpec.pretrained("some/model"), backend=loaded,
                              text="a b c d", positions=Positions())
    monkeypatch.setattr(tab, "_session", lambda: session)
    assert tab.make_job().backend is loaded           # its twin runs: nothing loaded again
    session.spec = ModelSpec()                        # the built-in model is rebuilt
    assert tab.make_job().backend is None


def test_the_paper_list_shows_titles_from_the_one_catalogue(tab):
    from posviz.analysis.experiments.papers import CATALOGUE
    shown = [(tab.paper.itemData(k), tab.paper.itemText(k)) for k in range(tab.paper.count())]
    assert shown == [(p.name, p.title) for p in CATALOGUE]
    assert tab.paper.itemText(0).startswith("Haviv et al. 2022 — ")


def test_copy_plot_puts_the_experiment_plot_on_the_clipboard(qtbot, window):
    from PySide6 import QtGui, QtWidgets

    from posviz.gui.plots.exporting import COPY_ACTION
    clipboard = QtWidgets.QApplication.clipboard()
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("alibi-slopes"))
    run(qtbot, tab)
    clipboard.clear()
    window.copy_plot_action.trigger()                       # Edit › Copy plot, Ctrl+C
    image = clipboard.image()
    # the figure at its own size, as a file holds it, whatever its size in the window
    assert not image.isNull() and image.size() == tab.figure.drawn_alone().render_image(
        ).size() != tab.figure.render_image().size()
    assert "Copied the experiment plot" in tab.status.text()
    clipboard.clear()
    tab.figure.findChild(QtGui.QAction, COPY_ACTION).trigger()     # the plot's own menu
    assert not clipboard.image().isNull()


def test_each_experiment_checks_only_its_own_controls(qtbot, tab):
    tab.what.setCurrentIndex(tab.what.findData("probe"))         # texts: generated
    tab.what.setCurrentIndex(tab.what.findData("paper"))         # has no texts
    tab.paper.setCurrentIndex(tab.paper.findData("alibi-slopes"))
    run(qtbot, tab)
    assert "holds here" in tab.figure.heading.text() and "done in" in tab.status.text()
    tab.what.setCurrentIndex(tab.what.findData("sweep"))
    tab.texts.setCurrentIndex(tab.texts.findData("generated"))   # refused for a sweep
    tab.run()
    assert "generated texts are for the probe" in tab.status.text()
    tab.what.setCurrentIndex(tab.what.findData("compare"))       # said of the sweep: gone
    assert "generated" not in tab.status.text()


def _session(text="the cat sat on the mat", spec=None):
    from types import SimpleNamespace

    from posviz.document.spec import ModelSpec
    from posviz.models.config import Positions
    from posviz.models.backend import TokenSequence
    words = tuple(text.split())
    return SimpleNamespace(spec=spec or ModelSpec(), backend=None, text=text,
                           positions=Positions(), order=range(len(words)),
                           seq=TokenSequence(words, words, (False,) * len(words)))


def test_a_result_of_other_inputs_is_dimmed_and_says_so(qtbot, tab, monkeypatch):
    from posviz.document.spec import ModelSpec
    session = _session()
    monkeypatch.setattr(tab, "_session", lambda: session)
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    run(qtbot, tab)
    assert not tab.figure.is_stale() and not tab.stale
    session.text = "a b c d"                                     # the window's text changes
    tab.refresh_stale()
    assert tab.stale and tab.figure.is_stale()
    assert "computed for the previous text" in tab.status.text()
    session.text = "the cat sat on the mat"                      # back: current again
    tab.refresh_stale()
    assert not tab.stale and not tab.figure.is_stale()
    assert "done in" in tab.status.text()
    session.spec = ModelSpec.pretrained("some/model")            # another model loaded
    tab.refresh_stale()
    assert tab.stale and "previous model" in tab.status.text()
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))       # and the sweep's kind
    assert tab.stale and "previous model and kind" in tab.status.text()
    session.spec = ModelSpec()
    tab.refresh_stale()
    assert tab.stale and "previous kind:" in tab.status.text()
    tab.seed.setValue(3)                # a swap sweep reads no seed: not named
    assert "previous kind:" in tab.status.text()
    tab.seed.setValue(0)
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    assert not tab.stale
    tab.what.setCurrentIndex(tab.what.findData("paper"))         # another experiment
    assert tab.stale and "sweep run before" in tab.status.text()
    assert "done in" not in tab.status.text()


def test_a_dimmed_result_names_every_change_the_model_s_by_its_option(qtbot, tab,
                                                                      monkeypatch):
    """Text and encoding changed since the sweep: the line named "model"; and a
    comparison, which runs its own encodings, was dimmed by the window's."""
    from posviz.document.spec import ModelSpec
    from posviz.models.config import ModelConfig
    session = _session(spec=ModelSpec.builtin(ModelConfig()))
    monkeypatch.setattr(tab, "_session", lambda: session)
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    session.text = "a b c d"
    session.spec = ModelSpec.builtin(ModelConfig(pe="rope"))
    tab.refresh_stale()
    assert "computed for the previous encoding and text:" in tab.status.text()
    assert tab.figure.stale_line.endswith("before the encoding and text changed")
    session.spec = ModelSpec.builtin(ModelConfig(pe="rope", mask="causal", layers=2))
    tab.refresh_stale()
    assert tab.figure.stale_line.endswith("before the layers, encoding, mask and text "
                                          "changed"), tab.figure.stale_line
    session.text, session.spec = "the cat sat on the mat", ModelSpec.builtin(ModelConfig())
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    run(qtbot, tab)
    session.spec = ModelSpec.builtin(ModelConfig(pe="rope"))      # not what it compares
    tab.refresh_stale()
    assert not tab.stale and not tab.figure.is_stale()
    session.spec = ModelSpec.builtin(ModelConfig(pe="rope", mask="causal"))
    tab.refresh_stale()
    assert tab.figure.stale_line.endswith("before the mask changed"), tab.figure.stale_line


def test_the_window_marks_the_result_stale_when_its_text_changes(qtbot, window):
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    assert not tab.stale
    window.text_edit.setText("a b c d")
    window.apply_text()
    qtbot.waitUntil(lambda: tab.stale, timeout=10_000)
    assert "previous text" in tab.status.text()


def test_compare_draws_an_exact_zero_inside_the_floor_band(qtbot, tab, tmp_path):
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    assert tab.chosen_encodings()[0] == "none"
    run(qtbot, tab)
    import pyqtgraph as pg
    none = tab.result.models[0].curve("hidden_equivariance")
    assert np.all(none[~np.isnan(none)] == 0)                    # no positions: exactly 0
    dots = [i for i in tab.figure.plot.items if isinstance(i, pg.ScatterPlotItem)][0]
    bottom = tab.figure.plot.getViewBox().viewRange()[1][0]
    floor = np.log10(tab.result.floor)
    _, y = dots.getData()
    # on the row marked 0, whole markers above the view's bottom, under the floor
    assert np.all(y == tab.figure.plot.getAxis("left").zero_row) and np.all(y < floor)
    assert np.all(y > bottom + 0.25)
    assert "exactly 0 is drawn on the row marked 0" in tab.figure.note.text()
    assert b"<svg" in tab.export(tmp_path / "compare.svg", "svg").read_bytes()
    assert "none, sinusoidal, RoPE" in tab.encodings.toolTip()
    assert tab.encodings.width() >= tab.encodings.sizeHint().width()


def test_the_show_box_names_what_is_plotted(qtbot, tab):
    """After a swap map, Compare drew its encodings' curves while Show still said "swap
    map (all pairs)": Show offers the map only for a swap sweep and names the metric
    drawn."""
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    run(qtbot, tab)
    tab.metric_box.setCurrentIndex(tab.metric_box.findData(SWAP_MAP))
    assert "Swap sensitivity" in tab.figure.heading.text()
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    assert tab.metric_box.findData(SWAP_MAP) < 0
    run(qtbot, tab)
    shown = tab.metric_box.currentData()
    heading = tab.figure.heading.text().removeprefix("<b>")
    assert shown != SWAP_MAP and heading.startswith(f"{shown.replace('_', ' ')}: 3 enc"), (
        shown, heading)
    assert tab.metric_box.currentText() == shown.replace("_", " ")
    tab.metric_box.setCurrentIndex(tab.metric_box.count() - 1)      # another metric: drawn
    last = tab.metric_box.currentData()
    assert tab.figure.heading.text().removeprefix("<b>").startswith(last.replace("_", " "))


def test_the_show_choice_and_its_plot_outlast_a_look_at_another_experiment(qtbot, tab):
    """Sweep (swap) with the swap map shown, then Position probe, then Sweep again: Show
    fell back to "pooled change" and the dimmed plot under the probe's controls was the
    pooled change, not the map that had been on screen."""
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    run(qtbot, tab)
    tab.metric_box.setCurrentIndex(tab.metric_box.findData(SWAP_MAP))
    assert "Swap sensitivity" in tab.figure.heading.text()
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    assert "Swap sensitivity" in tab.figure.heading.text()        # dimmed, as it was
    tab.what.setCurrentIndex(tab.what.findData("sweep"))
    assert tab.metric_box.currentData() == SWAP_MAP
    assert "Swap sensitivity" in tab.figure.heading.text()
    tab.kind.setCurrentIndex(tab.kind.findData("random"))           # no map to choose
    assert tab.metric_box.findData(SWAP_MAP) < 0


def test_the_encodings_checklist_stays_open_while_several_are_ticked(qtbot, tab):
    from PySide6 import QtCore
    from PySide6.QtTest import QTest
    menu = tab.encodings.menu()
    menu.popup(tab.mapToGlobal(QtCore.QPoint(10, 10)))
    qtbot.waitExposed(menu)
    before = tab.chosen_encodings()
    clicked = [a for a in menu.actions() if a.data() not in before][:2]
    for action in clicked:
        QTest.mouseClick(menu, QtCore.Qt.MouseButton.LeftButton,
                         pos=menu.actionGeometry(action).center())
        assert menu.isVisible()                               # a plain QMenu closed here
    assert set(tab.chosen_encodings()) == set(before) | {a.data() for a in clicked}
    from posviz.gui.experiments.checklist import named
    assert all(named(a.data()) in tab.encodings.text() for a in clicked)
    QTest.keyClick(menu, QtCore.Qt.Key.Key_Escape)
    assert not menu.isVisible()


def darkest(path) -> int:
    from PySide6 import QtGui
    image = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    pixels = np.frombuffer(image.constBits(), np.uint8, image.sizeInBytes())
    return int(pixels.min())


def test_an_export_of_a_stale_sweep_says_what_it_was_computed_for(qtbot, tab, tmp_path,
                                                                   monkeypatch):
    """Dimmed on screen after the text changed, the export came out faded grey, with no
    word of it, and its metadata said "texts: 1" but neither the text nor posviz's
    version."""
    from types import SimpleNamespace

    from PySide6 import QtGui

    from posviz.document.session import DEFAULT_TEXT
    from posviz.document.spec import ModelSpec
    from posviz.models.config import Positions
    from posviz.version import __version__
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    fresh = tab.export(tmp_path / "fresh.png", "png")
    monkeypatch.setattr(tab, "_session", lambda: SimpleNamespace(
        spec=ModelSpec(), backend=None, text="a scenario's other text",
        positions=Positions()))
    tab.refresh_stale()
    assert tab.figure.is_stale() and "previous text" in tab.status.text()
    heading = tab.figure.heading.text()
    assert f"Computed for the text “{DEFAULT_TEXT[:20]}" in heading
    assert "before the text changed" in heading
    stale = tab.export(tmp_path / "stale.png", "png", 300)
    assert darkest(stale) == darkest(fresh) < 60               # black text, not faded grey
    image = QtGui.QImage(str(stale))
    assert image.text("text") == DEFAULT_TEXT and image.text("posviz") == __version__
    assert "NoPE" in image.text("model") or "mask" in image.text("model")
    assert "before the text changed" in image.text("stale")
    assert image.text("kind") == "reverse" and not image.text("count")   # not read
    from posviz.gui.experiments.jobs import computed_for
    paper = tab.job.__class__("paper", paper="alibi-slopes")
    assert computed_for(paper, ["paper"]) == "Computed before the paper changed"
    assert computed_for(paper, ["experiment"], "sweep") == (
        "Computed for the paper check; run the sweep to replace it")
    assert "Computed for" not in QtGui.QImage(str(fresh)).text("stale")
    assert tab.figure.veil.isVisible()                        # dimmed on screen still


def test_the_probe_greys_out_the_current_text_and_says_why(tab):
    """The probe offered "The current text" and refused it in red after Run."""
    from PySide6 import QtCore
    index = tab.texts.findData("current")
    item = tab.texts.model().item(index)
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    assert not item.isEnabled() and "needs several" in tab.texts.itemText(index)
    tip = tab.texts.itemData(index, QtCore.Qt.ItemDataRole.ToolTipRole)
    assert "scores on others it held out" in tip
    tab.what.setCurrentIndex(tab.what.findData("sweep"))        # a sweep runs on it
    assert item.isEnabled() and tab.texts.itemText(index) == "The current text"
    assert tab.texts.currentData() == "current"


def test_the_encodings_ticked_are_there_at_the_next_opening(qtbot, tmp_path):
    """Compare started again from none, sinusoidal and RoPE at every opening."""
    from PySide6.QtCore import QSettings
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    first = ExperimentsTab(settings=settings)
    qtbot.addWidget(first)
    assert first.chosen_encodings() == ("none", "sinusoidal", "rope")
    for action in first.encodings.menu().actions():
        action.setChecked(action.data() in ("alibi", "t5", "none"))
    chosen = first.chosen_encodings()
    assert set(chosen) == {"alibi", "t5", "none"}
    first.shutdown()
    settings.sync()
    again = ExperimentsTab(settings=QSettings(str(tmp_path / "settings.ini"),
                                              QSettings.Format.IniFormat))
    qtbot.addWidget(again)
    assert again.chosen_encodings() == chosen
    assert again.encodings.text() == "none, ALiBi, T5 relative bias"      # as ticked
    again.shutdown()


def test_a_failed_run_s_message_goes_once_its_inputs_change(qtbot, tab):
    """"no trained checkpoint for none, bidirectional, …" stayed after the weights were
    set back to random, until the next Run; a refusal before the run goes the same way."""
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    tab.weights.setCurrentIndex(tab.weights.findData("trained"))
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: not tab.cancel_button.isEnabled())
    assert "no trained checkpoint for none, bidirectional" in tab.status.text()
    assert tab.status.property("error")
    tab.count.setValue(5)                        # a sweep's control: Compare reads none
    assert "no trained checkpoint" in tab.status.text()
    tab.weights.setCurrentIndex(tab.weights.findData("random"))
    assert tab.status.text() == "" and not tab.status.property("error")
    for action in tab.encodings.menu().actions():
        action.setChecked(action.data() == "none")
    tab.run()
    assert "at least two encodings" in tab.status.text()
    tab.encodings.menu().actions()[1].setChecked(True)
    assert tab.status.text() == ""


def test_a_papers_title_does_not_make_a_small_window_scroll_sideways(qtbot, tab):
    """At 1024 pixels the plots page, less its vertical scroll bar, was a pixel narrower
    than the paper box's longest title and scrolled sideways: the box may elide a title
    where room is short, and shows it whole where there is room."""
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    for i in range(tab.paper.count()):
        tab.paper.setCurrentIndex(i)
        qtbot.wait(1)
        assert tab.minimumSizeHint().width() <= 700, tab.paper.currentText()
        assert tab.paper.width() >= tab.paper.sizeHint().width()       # 1000 px: whole


def test_a_refusal_says_what_to_set_and_the_status_bar_stops_saying_it_runs(qtbot, tab):
    """Compare with trained weights and Mask bidirectional listed the checkpoints but
    not what to do, and the status bar kept "Running the comparison..." after it."""
    told = []
    tab.told.connect(told.append)
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    tab.weights.setCurrentIndex(tab.weights.findData("trained"))
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: not tab.cancel_button.isEnabled())
    text = tab.status.text()
    assert text.startswith("trained checkpoints are causal: set Mask to causal"), text
    assert "no trained checkpoint for none, bidirectional" in text
    assert told[0].startswith("Running the comparison")
    assert "Running" not in told[-1] and "Did not run" in told[-1]


def test_a_swap_sweep_s_map_of_each_text_at_each_layer(qtbot, tab):
    """A swap sweep of several texts showed only text 1's map, at the last layer, with
    no control to choose another: a text and a layer chooser show the map of that text
    at that layer, drawn with square cells."""
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    from dataclasses import replace
    texts = ("the cat sat on the mat", "a dog ran to an old house today",
             "positions break the symmetry of attention")
    made = tab.make_job
    tab.make_job = lambda: replace(made(), texts=texts)      # three short texts
    run(qtbot, tab)
    tab.metric_box.setCurrentIndex(tab.metric_box.findData(SWAP_MAP))
    assert tab.map_text.isVisibleTo(tab) and tab.map_layer.isVisibleTo(tab)
    assert tab.map_text.maximum() == 3
    last = tab.result.pairs[0].layer
    assert tab.map_layer.value() == last and tab.map_layer.maximum() == last
    tab.map_text.setValue(2)
    tab.map_layer.setValue(1)
    pairs = tab.result.pairs[1]
    from posviz.analysis.engine import Engine
    from posviz.models.builtin.backend import BuiltinBackend
    expected = sweep(Engine(BuiltinBackend(tab.job.spec.config)), texts, "swap",
                     layer=1).pairs[1]
    shown = tab.figure.displayed()["change"]
    assert shown.shape == (len(pairs.tokens),) * 2
    assert np.allclose(shown, expected.change, equal_nan=True)
    assert not np.allclose(shown, pairs.change)               # not the last layer's
    assert "layer 1, text 2 of 3" in tab.figure.heading.text()
    view = tab.figure.plot.getViewBox()

    def square() -> bool:                                     # once laid out
        (x0, x1), (y0, y1) = view.viewRange()
        cell_w = view.width() / (x1 - x0)
        cell_h = view.height() / (y1 - y0)
        return abs(cell_w - cell_h) < 0.02 * max(cell_w, cell_h)
    qtbot.waitUntil(square)                                   # square cells
    tab.kind.setCurrentIndex(tab.kind.findData("random"))
    qtbot.waitUntil(lambda: not tab.map_text.isVisibleTo(tab))


def _ink_top(image, rect) -> int:
    """The first row of ``rect`` (in ``image``) with dark pixels: where its text starts."""
    array = np.array([[image.pixelColor(x, y).lightness()
                       for x in range(rect.left(), rect.right())]
                      for y in range(rect.top(), rect.bottom())])
    return rect.top() + int(np.argmax((array < 128).any(axis=1)))


@pytest.mark.parametrize("width", [1024, 1920])
def test_the_two_words_beside_run_stand_on_one_line(qtbot, width):
    """"takes about 71 s here ..." and "done in 71.4 s" beside Run: the first centred in
    the two-line row, the second on its first line, ~6 px apart; they share a line."""
    from PySide6.QtCore import QRect, QSettings
    tab = on_screen(qtbot, ExperimentsTab(settings=QSettings()), width, 600)
    tab.settings.setValue("experiments/took/paper/press2022/trained", "71.0 5.9")
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("press2022"))
    tab.weights.setCurrentIndex(tab.weights.findData("trained"))
    assert tab.takes.isVisible() and tab.takes.text().startswith("takes about 71 s")
    tab._say("done in 71.4 s")
    qtbot.wait(50)
    image = tab.grab().toImage()
    tops = [_ink_top(image, QRect(w.mapTo(tab, w.rect().topLeft()), w.size()))
            for w in (tab.takes, tab.status)]
    assert abs(tops[0] - tops[1]) <= 1, tops
    tab.shutdown()


def test_an_export_after_the_experiment_changed_tells_no_control(qtbot, tab, tmp_path):
    """An order-use PDF exported while the Paper check was chosen carried "run the
    paper check to replace it": a word for the window's controls in a file."""
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    assert "run the paper check to replace it" in tab.figure.heading.text()   # on screen
    alone = tab.figure.drawn_alone()
    assert "sweep" in alone.heading.text() and "Computed" not in alone.heading.text()
    svg = tab.export(tmp_path / "sweep.svg", "svg").read_text()
    assert "reverse sweep" in svg and "replace" not in svg and "Computed" not in svg


def test_a_refusal_with_a_pretrained_model_in_the_panel_says_to_choose_the_built_in_first():
    """With MiniLM in the Model panel, Compare runs the built-in model's defaults; its
    refusal said "set Mask to causal" where the panel showed MiniLM and no Mask."""
    import types

    from posviz.document.spec import ModelSpec
    from posviz.errors import PosvizInputError
    from posviz.gui.experiments.controls import what_to_set
    from posviz.models.training.checkpoint import find
    spec = ModelSpec()
    with pytest.raises(PosvizInputError) as refused:
        find("trained", spec.config)
    message = str(refused.value)
    in_panel = types.SimpleNamespace(spec=spec, instead="")
    assert what_to_set(message, in_panel).startswith(
        "trained checkpoints are causal: set Mask to causal")
    replaced = types.SimpleNamespace(spec=spec, instead="all-MiniLM-L6-v2")
    said = what_to_set(message, replaced)
    assert said.startswith("trained checkpoints are causal: choose Built-in transformer "
                           "as the Model panel's Source, then set Mask to causal"), said
    assert said.endswith(f"({message})")
    from posviz.gui.model_panel.source_box import BUILTIN_ITEM, SOURCE   # the panel's words
    assert f"choose {BUILTIN_ITEM} as the Model panel's {SOURCE}," in said
