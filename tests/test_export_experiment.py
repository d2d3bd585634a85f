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


def test_the_export_tells_each_file_and_the_time_left(window, tmp_path, monkeypatch):
    """File › Export figures names each figure laid out and each file written, with the
    time left at the pace measured ("estimating" before any), each step weighed by its
    work: counted alike, an 800-token attention CSV (1.1-2.2 s) and a curve's PNG
    (0.03 s) told a time left that grew as it went (1 s at 4 of 28 files, 3 s at 17).
    Here on a made-up clock each step takes three times its declared work, and the
    window's tab stays as it was."""
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
            now[0] += 3 * (lay[step] if step < len(lay) else
                           (files + [export_dialog.PICTURE_S] * 9)[step - len(lay)])
        progress.setLabelText = told
        return progress
    monkeypatch.setattr(export_dialog, "_progress", recorded)
    written = export_dialog.export_to(window, str(tmp_path), ["png", "svg"], None, True,
                                      now=lambda: now[0])
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
