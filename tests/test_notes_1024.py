"""At 1024 × 700 an experiment's note is whole on screen, wrapped at words: a user saw
the one-line notes end in "…" there, the part cut the conclusion (the position probe's
verdict, the sweep's noise floor, the swap map's most sensitive token). (The symmetry
plot's note keeps one line at 1024 × 700, the reading in fewer words: three lines left
its plot area 94 px tall, below test_gui_sizes' 120.)"""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from posviz.gui.experiments.tab import SWAP_MAP  # noqa: E402
from posviz.gui.plots.one_line import MOST_LINES  # noqa: E402

pytestmark = pytest.mark.usefixtures("collect_between_tests")


@pytest.fixture
def small(qtbot):
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    qtbot.waitExposed(w)
    with w.controller.force_sync():
        with qtbot.waitSignal(w.controller.evaluated, timeout=30_000):
            w.start(last=False)
    yield w
    if w.experiments is not None:
        w.experiments.shutdown()


def shown_on_screen(qtbot, note) -> str:
    """The note's painted lines as one paragraph, once the figure gave it its lines;
    they are painted in full (the label is as tall as they are)."""
    qtbot.waitUntil(lambda: note.isVisible() and note.width() > 100)
    qtbot.wait(50)
    assert len(note.shown_lines()) <= MOST_LINES
    qtbot.waitUntil(lambda: note.height() >= len(note.shown_lines())
                    * note.fontMetrics().lineSpacing())
    return " ".join(note.shown_text().split())


def whole_on_screen(qtbot, note) -> None:
    shown = shown_on_screen(qtbot, note)
    assert not note.elided() and "…" not in shown, (shown, note.text())
    assert shown == " ".join(note.text().split())


def run(qtbot, tab):
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())


@pytest.mark.parametrize("what", ["probe", "sweep", "swap map"])
def test_an_experiment_s_note_is_whole_at_1024(qtbot, small, what):
    tab = small.experiments
    small.plots.tabs.setCurrentWidget(tab)
    if what == "probe":
        tab.what.setCurrentIndex(tab.what.findData("probe"))
    else:
        tab.what.setCurrentIndex(tab.what.findData("sweep"))
        tab.kind.setCurrentIndex(tab.kind.findData("random" if what == "sweep" else "swap"))
    run(qtbot, tab)
    if what == "swap map":
        tab.metric_box.setCurrentIndex(tab.metric_box.findData(SWAP_MAP))
    note = tab.figure.note
    assert len(note.text()) > 90, note.text()       # longer than one line at 1024
    whole_on_screen(qtbot, note)


def test_the_symmetry_note_is_whole_words_at_1024_and_whole_in_its_tooltip_and_export(
        qtbot, small, tmp_path):
    """At 1024 × 700 the symmetry plot's note was one line cut at the right ("The
    hidden states stop being equivariant at the input to bl…"): the line it has holds
    the reading in fewer words, whole; the tooltip and an export hold the whole note."""
    from PySide6 import QtGui
    small.session.move(0, 5)                          # a reorder: a note to read
    qtbot.waitUntil(lambda: "equivariant" in small.plots.figures()["symmetry"].note.text(),
                    timeout=30_000)
    figure = small.plots.figures()["symmetry"]
    note = figure.note
    shown = shown_on_screen(qtbot, note)
    assert len(note.shown_lines()) == 1 and note.elided(), (shown, note.text())
    assert "…" not in shown and shown.endswith("."), shown
    assert shown in note.shorts
    assert " ".join(note.text().split()) in " ".join(
        QtGui.QTextDocumentFragment.fromHtml(note.toolTip()).toPlainText().split())
    from posviz.gui.plots.captions import whole_note
    assert whole_note(figure) is not None                 # the export writes it whole
    assert figure.export_size().height() > figure.height()
