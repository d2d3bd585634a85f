"""File › Export figures writes the Experiments tab's plot beside the main figures when
its result is of the session's current inputs, with the provenance its own export
writes; a dimmed (stale) result is left out."""
from __future__ import annotations

import re

import pytest
from PySide6 import QtGui
from test_experiments_gui import run

from posviz.version import __version__

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def test_a_current_experiment_is_exported_with_the_figures(qtbot, window, tmp_path):
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    assert tab.is_current()
    written = window.export_to(str(tmp_path / "now"), ["png"], None, csv=True)
    names = {path.name for path in written}
    # the name its own export offers (a teacher's run found "experiment.png" here)
    assert {"sweep-reverse-hidden.png", "sweep-reverse-hidden.csv",
            "symmetry.png"} <= names, names
    own = tab.export(tmp_path / "own", "png")
    image, alone = (QtGui.QImage(str(p)) for p in (tmp_path / "now/sweep-reverse-hidden.png",
                                                    own))
    assert image.text("posviz") == __version__ and image.text("kind") == "reverse"
    assert image.text("text") == window.session.text
    assert {k: image.text(k) for k in alone.textKeys()} == {
        k: alone.text(k) for k in alone.textKeys()}
    assert f"Exported {len(written)} files" in window.state_label.text()
    window.text_edit.setText("another text for the figures")
    window.apply_text()
    qtbot.waitUntil(lambda: tab.stale, timeout=30_000)
    written = window.export_to(str(tmp_path / "later"), ["png"], None, csv=False)
    assert written and not any(p.name.startswith(("experiment", "sweep"))
                               for p in written)
    tab.what.setCurrentIndex(tab.what.findData("order"))   # a second experiment, one folder
    run(qtbot, tab)
    more = {p.name for p in window.export_to(str(tmp_path / "now"), ["png"], None, csv=False)}
    assert "order-use.png" in more and (tmp_path / "now/sweep-reverse-hidden.png").is_file()


def test_a_figure_s_file_is_offered_under_what_it_shows(qtbot, tmp_path, monkeypatch):
    """The figure's menu offered "experiment.png" for every experiment: the name the
    command line writes it under (extension-METRIC, compare), else the experiment and
    what it shows; in the folder last exported to."""
    from pathlib import Path
    from types import SimpleNamespace

    from PySide6 import QtCore

    from posviz.gui.experiments.jobs import file_name
    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.gui.plots.exporting import FOLDER_KEY
    from posviz.runtime.experiments import ExperimentJob
    assert file_name(ExperimentJob("extend"), "perplexity") == "extension-perplexity"
    assert file_name(ExperimentJob("extend"), "attention@512") == "extension-attention-512"
    assert file_name(ExperimentJob("sweep", kind="swap"),
                     "hidden_equivariance") == "sweep-swap-hidden"
    assert file_name(ExperimentJob("sweep", kind="swap"), "swap map") == "sweep-swap-map"
    assert file_name(ExperimentJob("sweep"), "last_token_change") == "sweep-random-last-token"
    assert file_name(ExperimentJob("compare"), "pooled_change") == "compare"
    assert file_name(ExperimentJob("paper", paper="press2022"), None) == "paper-press2022"
    assert file_name(ExperimentJob("probe"), None) == "position-probe"
    assert file_name(ExperimentJob("order"), None) == "order-use"
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.IniFormat)
    settings.setValue(FOLDER_KEY, str(tmp_path))
    tab = ExperimentsTab(settings=settings)
    qtbot.addWidget(tab)
    offered = []
    from posviz.gui.plots import exporting
    monkeypatch.setattr(exporting, "save_file_name", (
        lambda parent, caption, start, filters: offered.append(Path(start)) or ""))
    tab._export("experiment", "svg")
    assert offered[-1] == tmp_path / "experiment.svg"              # nothing run yet
    tab.metric_box.setCurrentIndex(tab.metric_box.findData("pooled_change"))
    tab.job = ExperimentJob("sweep", kind="reverse")
    tab.result = SimpleNamespace(bands={"pooled_change": None})     # a sweep's, shown
    tab._export("experiment", "svg")
    assert offered[-1] == tmp_path / "sweep-reverse-pooled.svg"


def test_an_experiment_figure_s_export_says_it_writes_under_a_busy_cursor(
        qtbot, tmp_path, monkeypatch):
    """The Experiments figure's own export drew a 300-dpi PNG for seconds with no word and
    no busy cursor, as the Attention tab's did (a user's run): it says "Writing…", then what
    it wrote."""
    from PySide6 import QtCore, QtWidgets

    from posviz.gui.experiments.tab import ExperimentsTab
    from posviz.gui.plots import exporting
    settings = QtCore.QSettings(str(tmp_path / "settings.ini"), QtCore.QSettings.IniFormat)
    tab = ExperimentsTab(settings=settings)
    qtbot.addWidget(tab)
    said, cursors = [], []
    tab.told.connect(said.append)
    target = tmp_path / "experiment.svg"
    monkeypatch.setattr(exporting, "save_file_name", lambda *a: str(target))
    draw = tab.export

    def drawing(*args):
        cursor = QtWidgets.QApplication.overrideCursor()
        cursors.append(None if cursor is None else cursor.shape())
        return draw(*args)
    monkeypatch.setattr(tab, "export", drawing)
    tab._export("experiment", "svg")
    assert target.is_file()
    assert cursors == [QtCore.Qt.CursorShape.WaitCursor]
    assert said == ["Writing experiment.svg…", f"Wrote {target}"]


def _export_paced(window, tmp_path, monkeypatch, laying: float, writing: float):
    """File › Export figures on a made-up clock where each figure's laying out takes
    ``laying`` times its declared work and each file ``writing`` times its own: the
    dialog's labels in order, the tabs shown at each, each step's declared work (laid
    out, then files) and the files written."""
    from posviz.gui import export_dialog
    now, labels, tabs, lay, files = [100.0], [], [], [], []
    for name, into in (("laying_work", lay), ("file_work", files)):
        def weighed(*args, work=getattr(export_dialog, name), into=into):
            into.append(work(*args))
            return into[-1]
        monkeypatch.setattr(export_dialog, name, weighed)
    window.plots.tabs.setCurrentIndex(1)
    made = export_dialog._progress

    def recorded(parent):
        progress = made(parent)
        labels.append(progress.labelText())
        set_label = progress.setLabelText

        def told(text: str) -> None:
            set_label(text)
            labels.append(text)
            tabs.append(window.plots.tabs.currentIndex())
            step = len(labels) - 2                          # the step now starting
            now[0] += laying * lay[step] if step < len(lay) else writing * (
                files + [export_dialog.PICTURE_S] * 9)[step - len(lay)]
        progress.setLabelText = told
        return progress
    monkeypatch.setattr(export_dialog, "_progress", recorded)
    written = export_dialog.export_to(window, str(tmp_path), ["png", "svg"], None, True,
                                      now=lambda: now[0])
    return labels, tabs, lay, files, written


def test_the_export_tells_each_file_and_the_time_left(window, tmp_path, monkeypatch):
    """File › Export figures names each figure laid out and each file written, with the
    time left at the pace measured ("estimating" before any), each step weighed by its
    work: counted alike, an 800-token attention CSV (1.1-2.2 s) and a curve's PNG
    (0.03 s) told a time left that grew as it went (1 s at 4 of 28 files, 3 s at 17).
    Here on a made-up clock each step takes three times its declared work, and the
    window's tab stays as it was."""
    from posviz.gui import export_dialog
    labels, tabs, lay, files, written = _export_paced(window, tmp_path, monkeypatch, 3, 3)
    total = len(written)
    assert labels[0] == "Laying the figures out at their own size; estimating the time left…"
    figures = sorted({path.stem for path in written if path.stem != "sweep-reverse-hidden"})
    laid = labels[1:1 + len(figures)]
    assert total >= 6 and len(labels) == 1 + len(figures) + total
    assert len(lay) == len(figures) and len(files) == 3 * len(figures)   # png, svg, csv
    assert len(set(files)) > 2                  # not alike: a CSV by its values
    assert sorted(re.fullmatch(r"Laying (\w+) out at its own size \(\d+ of \d+\)(; "
                               r"estimating the time left|, about \d+ s left)…",
                               label)[1] for label in laid) == figures
    assert [label.split("(")[1].split(")")[0] for label in laid] == [
        f"{k} of {len(figures)}" for k in range(1, len(figures) + 1)]
    assert laid[0].endswith("estimating the time left…")        # nothing measured yet
    writing = labels[1 + len(figures):]
    assert [label.split(" (")[0] for label in writing] == [
        f"Writing {path.name}" for path in written]
    work = lay + files + [export_dialog.PICTURE_S] * (total - len(files))
    told = []
    for step, label in enumerate(labels[2:], start=1):
        seconds = re.search(r", about (\d+) s left…$", label)
        assert seconds is not None, label                         # a pace from the first
        truth = 3 * sum(work[step:])
        told.append(int(seconds[1]))
        if truth >= 2:                                  # past "about 1 s", whole seconds
            assert truth / 1.5 <= told[-1] <= truth * 1.5, (label, truth)
    assert told == sorted(told, reverse=True)                     # falls steadily
    assert set(tabs) == {1}


def test_laid_out_faster_than_planned_the_writing_is_not_told_at_that_pace(
        window, tmp_path, monkeypatch):
    """The laying out told "about 1 s left" with 11 s to go: laid out faster than
    planned, its pace timed the files too. While the figures are laid out, the files'
    seconds are at least as measured here (file_work)."""
    from posviz.gui import export_dialog
    labels, _, lay, files, written = _export_paced(window, tmp_path, monkeypatch, 0.2, 1)
    writing = sum(files) + export_dialog.PICTURE_S * (len(written) - len(files))
    told = []
    for step, label in enumerate(labels[2:1 + len(lay)], start=1):
        seconds = re.search(r", about (\d+) s left…$", label)
        assert seconds is not None, label
        truth = 0.2 * sum(lay[step:]) + writing
        told.append(int(seconds[1]))
        assert truth / 1.5 <= told[-1] <= max(truth * 1.5, 1), (label, truth)
    assert told and writing > 1.5, (told, writing)       # more than "about 1 s"


def _export_told(window, tmp_path, monkeypatch, cancel: bool = False):
    """File › Export figures with tables told every 8 rows, on a clock that moves a
    second at each word of the dialog: its (label, bar value, bar maximum) in order
    and the files written. ``cancel``: Cancel pressed at the first table's words."""
    from posviz.document import files
    from posviz.gui import export_dialog
    monkeypatch.setattr(files, "ROWS_BETWEEN_STOPS", 8)
    now, shown, made = [0.0], [], export_dialog._progress

    def recorded(parent):
        progress = made(parent)
        set_label = progress.setLabelText

        def told(text: str) -> None:
            set_label(text)
            now[0] += 1.0
            shown.append((text, progress.value(), progress.maximum()))
            if cancel and "so far" in text:
                progress.cancel()
        progress.setLabelText = told
        return progress
    monkeypatch.setattr(export_dialog, "_progress", recorded)
    written = export_dialog.export_to(window, str(tmp_path), ["png"], None, True,
                                      now=lambda: now[0])
    return shown, written


def test_a_long_table_tells_its_size_and_moves_the_bar_and_time_left(
        window, tmp_path, monkeypatch):
    """A table written tells its bytes so far and moves the bar within its file, with
    a time left (SmolLM2's 68 MB mosaic table stood 9 s on "7 %, about 12 s left")."""
    shown, written = _export_told(window, tmp_path, monkeypatch)
    tables = [(text, value, top) for text, value, top in shown if "so far" in text]
    assert tables, [text for text, _, _ in shown]
    starts = {text.split(" (")[0]: value for text, value, _ in shown if "so far" not in text}
    for text, value, top in tables:
        match = re.fullmatch(r"Writing (\w+\.csv) \((\d+) of (\d+), (\d+) (kB|MB) so far\), "
                             r"about \d[\w ]* left…", text)
        assert match, text
        assert value >= starts[f"Writing {match[1]}"]         # on from its file's start
        assert (tmp_path / match[1]).is_file()                # each was written whole
    sizes = [int(re.search(r"(\d+) kB", t)[1]) for t, _, _ in tables if " kB " in t]
    first = tables[0][0].split(" (")[0]
    same = [(int(re.search(r"(\d+) kB", t)[1]), v) for t, v, _ in tables
            if t.startswith(first) and " kB " in t]
    assert sizes and same == sorted(same) and len(set(same)) > 1      # it grows
    assert len({value for _, value in same}) > 1                      # the bar moves
    assert len({t.split("), ")[1] for t, _, _ in tables if t.startswith(first)}) > 1


def test_one_bar_for_the_whole_export_never_goes_back(window, tmp_path, monkeypatch):
    """File › Export figures: the laying out's bar at 88 % fell to 27 % as the writing
    began, each stage a bar of its own. One bar for both, by their steps' work, that
    only moves on; and a time left never told as "about 0 s"."""
    shown, written = _export_told(window, tmp_path, monkeypatch)
    shares = [value / top for _, value, top in shown if top > 0]
    laid = [text for text, _, top in shown if text.startswith("Laying ") and top > 0]
    assert written and laid and len(shares) > len(laid) + 1, shown
    assert shares == sorted(shares) and 0 < shares[-1] <= 1, shares
    assert not [text for text, _, _ in shown if "about 0 s" in text]


def test_cancel_stops_a_long_table_mid_write(window, tmp_path, monkeypatch):
    """Cancel pressed while a table is written stops it: no file of it, no part left,
    and the status line says the export was cancelled."""
    shown, written = _export_told(window, tmp_path, monkeypatch, cancel=True)
    stopped = next(text for text, _, _ in shown if "so far" in text).split(" (")[0]
    table = stopped.removeprefix("Writing ")
    assert not (tmp_path / table).exists()
    assert not [p.name for p in tmp_path.iterdir() if "writing" in p.name]
    assert table not in {path.name for path in written}
    # the files whole before it are counted ("after 0 files" was said with five there)
    files = [p for p in tmp_path.iterdir() if p.suffix in (".png", ".svg", ".pdf", ".csv")]
    assert files and {p.name for p in files} == {path.name for path in written}
    assert f"Export cancelled after {len(files)} files" in window.state_label.text()
