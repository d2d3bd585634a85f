"""The mosaic's tiles stay apart on screen at every size: a 700-token text's 4 × 4
mosaic at a 1024 × 700 window's share showed fewer screen rows than image rows, and the
one-pixel gaps between layers and heads were dropped (the tiles ran together)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6 import QtCore, QtGui  # noqa: E402
from test_plots_legibility import evaluate  # noqa: E402

from posviz.document.spec import Selection  # noqa: E402
from posviz.gui.plots import PlotsPanel, mosaic_look  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402
from conftest import on_screen  # noqa: E402

WORDS = "the cat sat on a mat while dogs ran across green fields under blue sky".split()
LONG = " ".join(WORDS[(i * 7) % len(WORDS)] for i in range(700))
APART = {QtGui.QColor(name).rgb() & 0xFFFFFF for name in ("white", "#ff7f0e")}
# the background, or the selected tile's outline (which lies in the gap beside it)


@pytest.fixture(scope="module")
def long_evaluation():
    return evaluate(LONG, layers=4, heads=4, d_model=16)


def on_canvas(figure, x: float, y: float) -> QtCore.QPointF:
    """View coordinates -> pixels of the figure's canvas."""
    view = figure.plot.vb
    return figure.canvas.mapFromScene(view.mapViewToScene(QtCore.QPointF(x, y)))


def separated(image: QtGui.QImage, lines, spans) -> bool:
    """Some line of ``lines`` (pixels: rows, or columns when ``spans`` are rows) is
    background (or outline) all along ``spans``, which are (start, end) pixel ranges."""
    for line in lines:
        if all(image.pixel(*(p, line) if horizontal else (line, p)) & 0xFFFFFF in APART
               for horizontal, (start, end) in spans for p in range(start, end)):
            return True
    return False


def tile_box(figure, layer: int, head: int):
    """(left, top, right, bottom) canvas pixels of a tile (layer 1..L)."""
    x, y = figure.tile_origin(layer, head)
    n = figure.grid.tile
    a, b = on_canvas(figure, x, y), on_canvas(figure, x + n, y + n)
    return a.x(), a.y(), b.x(), b.y()


@pytest.mark.parametrize("size", [(760, 640), (1000, 700), (1400, 820)])
def test_tiles_of_a_long_text_stay_apart(qtbot, long_evaluation, size):
    """Between each two layers and each two heads a line of background runs the tiles'
    whole length, in the original maps' colours (no white in viridis)."""
    panel = on_screen(qtbot, PlotsPanel(), *size)
    look = mosaic_look(Selection(mosaic="original"))
    panel.show_evaluation(Shown(long_evaluation, build_views(long_evaluation, look)))
    figure = panel.figures()["attention_mosaic"]
    qtbot.wait(50)
    image = figure.canvas.grab().toImage()
    grid = figure.grid
    if size[0] < 1000:
        assert figure.label_spacing()[0] < grid.tile + grid.gap   # fewer screen rows
    for layer in range(1, grid.layers):
        for head in range(grid.heads):
            left, _, right, bottom = tile_box(figure, layer, head)
            _, top, _, _ = tile_box(figure, layer + 1, head)
            rows = range(int(bottom) - 1, int(top) + 2)
            span = [(True, (int(left) + 2, int(right) - 2))]
            assert separated(image, rows, span), (size, layer, head)
    for layer in range(1, grid.layers + 1):
        for head in range(grid.heads - 1):
            _, top, right, bottom = tile_box(figure, layer, head)
            left = tile_box(figure, layer, head + 1)[0]
            columns = range(int(right) - 1, int(left) + 2)
            span = [(False, (int(top) + 2, int(bottom) - 2))]
            assert separated(image, columns, span), (size, layer, head)


@pytest.mark.parametrize("size", [(760, 640), (1000, 700), (1400, 820)])
def test_no_cell_at_a_tiles_edge_is_hidden(qtbot, long_evaluation, size):
    """Whatever keeps the tiles apart covers no cell: every screen pixel inside a tile
    (a pixel in from its rounded box), its edge rows and columns too (key column 0 is where attention sinks show),
    shows a map colour, not the background (viridis has no white)."""
    panel = on_screen(qtbot, PlotsPanel(), *size)
    look = mosaic_look(Selection(mosaic="original"))
    panel.show_evaluation(Shown(long_evaluation, build_views(long_evaluation, look)))
    figure = panel.figures()["attention_mosaic"]
    qtbot.wait(50)
    image = figure.canvas.grab().toImage()
    grid, covered = figure.grid, []
    for layer in range(1, grid.layers + 1):    # the selected tile's outline lies in gaps
        for head in range(grid.heads):
            left, top, right, bottom = tile_box(figure, layer, head)
            columns = range(left + 1, right - 1)      # the box is rounded to pixels
            rows = range(top + 1, bottom - 1)
            edges = [(x, y) for x in (columns[0], columns[-1]) for y in rows]
            edges += [(x, y) for y in (rows[0], rows[-1]) for x in columns]
            covered += [(layer, head, x, y) for x, y in edges
                        if image.pixel(x, y) & 0xFFFFFF in APART]
    assert not covered, (size, len(covered), covered[:5])
