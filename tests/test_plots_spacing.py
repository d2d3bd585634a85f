"""Labels that belong to what they name: a colour bar's title beside its own bar, not
against the next map; the mosaic's layer numbers clear of the tiles beside them."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from test_plots_legibility import evaluate, show  # noqa: E402

from posviz.gui.plots import PlotsPanel  # noqa: E402
from posviz.gui.plots.mosaic_figure import STRETCH  # noqa: E402
from conftest import on_screen  # noqa: E402


@pytest.fixture
def attention(qtbot):
    panel = on_screen(qtbot, PlotsPanel(), 1100, 760)
    show(panel, evaluate())
    return panel, panel.figures()["attention"]


def bar_gaps(figure):
    """(title to its own bar's numbers, title to the map on its right) in pixels."""
    bar, right = figure.attention_bar, figure.difference.plot
    axis, title = bar.axis, bar.axis.label.sceneBoundingRect()
    numbers = (bar.vb.sceneBoundingRect().right() + axis.style["tickTextOffset"][0]
               + axis.textWidth)
    return title.left() - numbers, right.vb.sceneBoundingRect().left() - title.right()


@pytest.mark.parametrize("width", [1100, 760, 560])
def test_a_colour_bar_title_sits_with_its_bar(attention, qtbot, width):
    """"attention weight (probability)" lay flush against the difference map's left
    edge and read as that map's y-axis title."""
    panel, figure = attention
    figure.setParent(None)
    qtbot.addWidget(figure)
    figure.resize(width, 330)
    figure.show()
    qtbot.waitExposed(figure)
    figure.grab()
    own, next_map = bar_gaps(figure)
    assert figure.attention_bar.axis.label.isVisible()
    assert next_map >= 14, (own, next_map)
    assert next_map > 2 * own, (own, next_map)    # nearer its own numbers by far
    figure._settle()                                       # as an export lays it out
    with figure._exporting(None):
        figure.grab()
        assert bar_gaps(figure)[1] >= 14


@pytest.mark.parametrize("size", [(440, 330), (520, 300), (700, 420)])
def test_a_later_blocks_layer_labels_clear_the_tiles_beside_them(qtbot, size):
    """30 layers at 1024 pixels: "16" ... "30" touched the left block's last head."""
    from PySide6 import QtCore, QtGui
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 760)
    panel.show()
    show(panel, evaluate(layers=30, heads=9, d_model=36))
    figure = panel.figures()["attention_mosaic"]
    figure.setParent(None)
    qtbot.addWidget(figure)
    figure.resize(*size)
    figure.show()
    qtbot.waitExposed(figure)
    figure.grab()
    grid, view = figure.grid, figure.plot.vb
    assert grid.columns > 1 and figure._labels
    metrics = QtGui.QFontMetricsF(figure._labels[0].textItem.font())
    for item in figure._labels:
        layer = int(item.toPlainText())
        c = (layer - 1) // grid.per_column
        centre = view.mapViewToScene(item.pos()).x()
        half = metrics.horizontalAdvance(item.toPlainText()) / 2
        left_tiles = view.mapViewToScene(QtCore.QPointF(grid.block_x(c) - grid.block_gap,
                                                        0)).x()
        right_tiles = view.mapViewToScene(QtCore.QPointF(grid.block_x(c), 0)).x()
        assert centre - half - left_tiles >= 3, (layer, centre - half - left_tiles)
        assert right_tiles - (centre + half) >= 3, (layer, right_tiles - centre - half)


@pytest.mark.parametrize("size, layers", [((1500, 420), 4), ((900, 330), 4),
                                          ((1500, 420), 30), ((560, 420), 4)])
def test_the_mosaic_sits_against_its_layer_labels(qtbot, size, layers):
    """A wide figure floated its tiles in the middle, 130 pixels right of the layer
    labels and y axis, blank strips either side: the tiles start next to the axis
    (square), the spare width left blank on their right."""
    from PySide6 import QtCore
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(1100, 760)
    panel.show()
    show(panel, evaluate(layers=layers, heads=4 if layers == 4 else 9,
                         d_model=16 if layers == 4 else 36))
    figure = panel.figures()["attention_mosaic"]
    figure.setParent(None)
    qtbot.addWidget(figure)
    figure.resize(*size)
    figure.show()
    qtbot.waitExposed(figure)
    figure.grab()
    grid, view = figure.grid, figure.plot.vb
    axis = figure.plot.getAxis("left").sceneBoundingRect().right()
    corner = view.mapViewToScene(QtCore.QPointF(0, 0))
    far = view.mapViewToScene(QtCore.QPointF(grid.width, grid.height))
    margin = 0.025 * (far.x() - corner.x()) + 4          # the view's 2 % margin, a pixel
    assert -1 <= corner.x() - axis <= margin, corner.x() - axis      # label to tile gap
    assert corner.y() - view.sceneBoundingRect().top() <= margin
    across, down = (far.x() - corner.x()) / grid.width, (far.y() - corner.y()) / grid.height
    assert max(across, down) <= STRETCH * min(across, down) * 1.01    # cells at most 2:1
    box = view.sceneBoundingRect()
    assert far.x() <= box.right() + 0.5 and far.y() <= box.bottom() + 0.5   # whole


@pytest.mark.parametrize("size, layers", [((1500, 420), 4), ((900, 700), 4),
                                          ((1500, 420), 30)])
def test_an_exported_mosaic_is_filled_by_its_tiles_and_head_centred_under_them(
        qtbot, tmp_path, size, layers):
    """The file of a mosaic laid out wide on screen had ~230 px of empty axis at the
    right of the tiles and "head" centred under the whole width: a file is drawn at its
    own size, as wide (or tall) as the tiles need, the title centred under the heads'
    numbers, with the screen's figure left as it was."""
    from figure_files import picture_size, text_lines
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    panel.resize(*size)
    panel.show()
    show(panel, evaluate(layers=layers, heads=4 if layers == 4 else 9,
                         d_model=16 if layers == 4 else 36))
    figure = panel.figures()["attention_mosaic"]
    on_screen = figure.size()
    path = panel.export_figure("attention_mosaic", tmp_path / "mosaic.svg")
    assert figure.size() == on_screen
    width, height = picture_size(path)
    lines = text_lines(path)[1]
    title = next(line for line in lines if line["text"].strip() == "head")
    heads = [line for line in lines if line["text"].isdigit() and line["y"] > title["y"] - 40
             and line["y"] < title["y"]]
    first = min(heads, key=lambda line: line["left"])
    last = max(heads, key=lambda line: line["right"])
    middle = (first["left"] + first["right"] + last["left"] + last["right"]) / 4
    centre = (title["left"] + title["right"]) / 2
    assert abs(centre - middle) <= 4, (centre, middle, width)   # its trailing space
    assert last["right"] < width
