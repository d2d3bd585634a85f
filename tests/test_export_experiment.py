"""File › Export figures writes the Experiments tab's plot beside the main figures when
its result is of the session's current inputs, with the provenance its own export
writes; a dimmed (stale) result is left out."""
from __future__ import annotations

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
    assert {"experiment.png", "experiment.csv", "symmetry.png"} <= names, names
    own = tab.export(tmp_path / "own", "png")
    image, alone = (QtGui.QImage(str(p)) for p in (tmp_path / "now/experiment.png", own))
    assert image.text("posviz") == __version__ and image.text("kind") == "reverse"
    assert image.text("text") == window.session.text
    assert {k: image.text(k) for k in alone.textKeys()} == {
        k: alone.text(k) for k in alone.textKeys()}
    assert f"Exported {len(written)} files" in window.state_label.text()
    window.text_edit.setText("another text for the figures")
    window.apply_text()
    qtbot.waitUntil(lambda: tab.stale, timeout=30_000)
    written = window.export_to(str(tmp_path / "later"), ["png"], None, csv=False)
    assert written and not any(p.name.startswith("experiment") for p in written)
