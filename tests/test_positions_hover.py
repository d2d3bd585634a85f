"""The Positions tab's plots name the value under the mouse like every other plot: the
table's position, dimension and value, the cosine of two positions, a profile's head,
Δ and value, each read back from the figure's own data."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402
from test_positions_layout import shown_for  # noqa: E402

from posviz.gui.plots.positions import EncodingFigure, SimilarityFigure  # noqa: E402
from posviz.gui.plots.profile import RelativeProfileFigure  # noqa: E402


def alone(figure, qtbot, pe: str):
    qtbot.addWidget(figure)
    figure.resize(700, 450)
    figure.show()
    qtbot.waitExposed(figure)
    figure.update_from(shown_for(pe), 1, 0)
    figure.grab()
    said = []
    figure.hovered.connect(said.append)
    return figure, said


def move(figure, plot, x: float, y: float) -> None:
    scene = plot.vb.mapViewToScene(QtCore.QPointF(x, y))
    figure.canvas.scene().sigMouseMoved.emit(scene)


def test_the_encoding_table_names_position_dimension_and_value(qtbot):
    figure, said = alone(EncodingFigure(), qtbot, "sinusoidal")
    table = figure.data["encoding"]                                         # (n, d)
    move(figure, figure.map.plot, 5.5, 2.5)                 # column 5, row 2
    assert said[-1] == f"position {figure.coords['position'][2]}, dimension 5: " \
                       f"{table[2, 5]:.3g}"
    assert figure.canvas.toolTip() == said[-1]
    QtWidgets.QApplication.sendEvent(figure.canvas, QtCore.QEvent(QtCore.QEvent.Type.Leave))
    assert said[-1] == "" and figure.canvas.toolTip() == ""


def test_the_cosine_map_names_both_positions(qtbot):
    figure, said = alone(SimilarityFigure(), qtbot, "learned")
    cosine = figure.data["cosine"]
    ids = figure.coords["position"]
    move(figure, figure.map.plot, 1.5, 3.5)
    assert said[-1] == f"cosine of positions {ids[3]} and {ids[1]}: {cosine[3, 1]:.3g}"


@pytest.mark.parametrize("pe", ["alibi", "rope"])
def test_the_profile_names_head_distance_and_value(qtbot, pe):
    figure, said = alone(RelativeProfileFigure(), qtbot, pe)
    values = figure.data["value"]                                           # (h, D)
    distances = np.asarray(figure.coords["distance"])
    j = int(np.flatnonzero(distances == -3)[0])
    move(figure, figure.plot, -3, values[0, j])
    name, value = said[-1].rsplit(": ", 1)
    assert name.endswith(", Δ = −3"), said[-1]
    which = figure.coords["head"].index(name.split(", Δ")[0])
    assert float(value) == pytest.approx(values[which, j], rel=1e-3)
