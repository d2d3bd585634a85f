"""A swap map of a text with special tokens ([CLS] … [SEP], which cannot move): their
rows and columns were not run and are drawn so, not as "0 change" — blank on the colour
scale, light grey and crossed in the window and in files, blank in the CSV, named in
the note and on hover."""
import csv
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

pytest.importorskip("PySide6")

from PySide6 import QtCore, QtGui  # noqa: E402

from posviz.analysis.experiments.sweep import SwapMap  # noqa: E402
from posviz.gui.experiments.figure import ExperimentFigure  # noqa: E402
from posviz.gui.experiments.swaps import NOT_RUN  # noqa: E402
from conftest import on_screen  # noqa: E402

TOKENS = ("[CLS]", "the", "cat", "sat", "down", "[SEP]")


def swap_map() -> SwapMap:
    movable = np.array([False, True, True, True, True, False])
    n = len(TOKENS)
    change = np.full((n, n), 0.2) + 0.1 * np.arange(n)[:, None] * np.arange(n)[None, :]
    change = (change + change.T) / 2                                        # (n, n)
    change[~(movable[:, None] & movable[None, :])] = 0.0    # as the sweep leaves them
    np.fill_diagonal(change, 0.0)
    return SwapMap("the cat sat down", TOKENS, 2, change, movable)


@pytest.fixture
def figure(qtbot):
    figure = on_screen(qtbot, ExperimentFigure(), 900, 640)
    figure.show_pairs(swap_map())
    figure.grab()
    return figure


def test_pinned_tokens_cells_are_off_the_colour_scale_and_said(figure, tmp_path):
    pairs = figure._pairs
    image = next(item for item in figure.plot.items if hasattr(item, "image")
                 and getattr(item, "image", None) is not None)
    shown = image.image.T                                           # (n, n) [i, j]
    for i, j in ((0, 2), (2, 0), (5, 3), (0, 5), (0, 0)):
        assert np.isnan(shown[i, j]), (i, j, shown[i, j])
        assert np.isnan(figure.data["change"][i, j])
    assert shown[1, 2] == pytest.approx(pairs.change[1, 2])
    assert "[CLS], [SEP] cannot move" in figure.note.text()
    assert "not run" in figure.note.text()
    hovered = []
    figure.hovered.connect(hovered.append)
    figure._mouse_moved(figure.plot.vb.mapViewToScene(QtCore.QPointF(2.5, 0.5)))
    assert "not run" in hovered[-1] and hovered[-1].startswith("'[CLS]'(0) ↔ 'cat'(2)")
    figure._mouse_moved(figure.plot.vb.mapViewToScene(QtCore.QPointF(2.5, 1.5)))
    assert "not run" not in hovered[-1]
    path = figure.export_csv(tmp_path / "map.csv")
    rows = [row for row in csv.reader(open(path, encoding="utf-8"))
            if row and not row[0].startswith("#")]
    header, rows = rows[0], rows[1:]
    by_pair = {(row[1], row[3]): row[-1] for row in rows}
    assert by_pair[("[CLS]", "cat")] == "" and by_pair[("cat", "[SEP]")] == ""
    assert float(by_pair[("the", "cat")]) == pytest.approx(pairs.change[1, 2])


def test_a_file_shows_pinned_cells_grey_not_as_zero(figure, tmp_path):
    """In the PNG the cell [CLS] ↔ cat is the not-run grey, away from its cross line;
    the cell the ↔ cat is a colour of the map."""
    path = figure.export(tmp_path / "map.png")
    twin = figure.drawn_alone()
    picture = QtGui.QImage(str(path))

    def pixel(x: float, y: float) -> tuple[int, int, int]:
        scene = twin.plot.vb.mapViewToScene(QtCore.QPointF(x, y))
        at = twin.canvas.mapTo(twin, twin.canvas.mapFromScene(scene))
        colour = picture.pixelColor(at)
        return colour.red(), colour.green(), colour.blue()
    assert pixel(2.25, 0.25) == NOT_RUN
    assert pixel(0.25, 5.25) == NOT_RUN
    assert pixel(2.25, 1.25) != NOT_RUN

