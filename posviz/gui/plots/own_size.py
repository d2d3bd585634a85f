"""A figure drawn at its own size, off screen, for a file: what an export holds never
depends on the size a figure has in the window (a small window, a panel beside it).

A figure that exports at its own size is drawn afresh into a twin that is laid out but
never put on the screen (Qt.WA_DontShowOnScreen): as wide as its own width and its
scene need, and tall enough for its plot to get its own height under the heading and
above the legend and note, whatever those hold.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from ...errors import raise_held
from . import style

PANEL_SIZE = (1500, 1000)       # pixels: the plots panel a file's figures are laid out in
TALLEST = 600           # pixels: a file of curves at most (alone on its tab, RoPE's relative
                        # profile took the panel: 1500 × 957, its 9-pt text tiny)
TEXT_WIDTH = 900        # pixels: a figure of text alone (the outputs without a head: a
                        # 1500 × 92 strip), its lines wrapped to this width


def off_screen(widget: QtWidgets.QWidget, width: int, height: int) -> None:
    """Lay ``widget`` out at ``width`` × ``height``, painted but never on the screen.
    Qt counts such a shown window as open (QWidgetWindow's treatAsVisible): it must not
    keep the application running once the user closes the last window they see."""
    widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
    widget.setAttribute(QtCore.Qt.WidgetAttribute.WA_QuitOnClose, False)
    widget.resize(width, height)
    widget.show()
    QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)


def scene_width(canvas) -> float:
    """Pixels a pyqtgraph canvas needs across to hold its items at their least widths:
    a narrower canvas lays its scene out wider than itself and cuts it at the right."""
    return canvas.ci.effectiveSizeHint(QtCore.Qt.SizeHint.MinimumSize).width()


def least_size(canvas, plot, legend, plot_height: int) -> tuple[int, int]:
    """(width, height) in pixels that ``canvas`` needs to hold whole the items of
    ``plot``'s row (the plot, a colour bar beside it) and ``legend`` (in one column, as
    style.fit_legend lays out a narrow one), with a view ``plot_height`` tall."""
    layout = canvas.ci.layout
    left, _, right, _ = layout.getContentsMargins()
    least = QtCore.Qt.SizeHint.MinimumSize
    row = [item for item, cells in canvas.ci.items.items()
           if cells and cells[0][0] == 0 and item.isVisible()]
    across = (sum(item.effectiveSizeHint(least).width() for item in row)
              + max(layout.horizontalSpacing(), 0) * (len(row) - 1))
    if legend is not None and legend.isVisible() and legend.items:
        across = max(across, style.legend_width(legend, 1) + 16)
    laid_out = max(canvas.height(), canvas.ci.geometry().height())
    return (round(across + left + right),
            round(laid_out - plot.vb.height() + plot_height))


def hold_whole(figure, plot_height: int) -> None:
    """Keep ``figure`` (an ExperimentFigure) whole on screen: its canvas no narrower than
    its plot and legend need and no shorter than a ``plot_height`` view above its legend,
    the note's lines what the rest leaves, and the figure no shorter than its heading,
    that canvas and a line of its note: a small window scrolls the figure, never cuts it
    nor lays the canvas over the note."""
    from .one_line import fit_note, least_height
    if figure.stack.currentWidget() is figure.canvas:
        figure.fit_legend()         # a drawing's new entries: as many columns as fit
        width, height = least_size(figure.canvas, figure.plot, figure.legend, plot_height)
        if (width, height) != figure.canvas.minimumSize().toTuple():
            figure.canvas.setMinimumSize(width, height)
        fit_note(figure)            # the lines the note may take follow the canvas
        figure._place_labels()
    least = least_height(figure)
    if least != figure.minimumHeight():
        figure.setMinimumHeight(least)


def lay_out_at_own_size(figure, plot, width: int, plot_height: int) -> None:
    """Size ``figure`` (shown off screen) so that ``plot`` (a PlotItem) has a view
    ``plot_height`` pixels tall and nothing of its canvas is cut: at least ``width``
    wide, wider where its scene needs it."""
    off_screen(figure, width, 2 * plot_height)
    for _ in range(4):           # the legend's rows follow the width, the view the height
        figure._settle()
        wide = max(width, round(scene_width(figure.canvas)) + 2)
        tall = figure.height() + round(plot_height - plot.vb.height())
        if (wide, tall) == (figure.width(), figure.height()):
            return
        figure.resize(wide, tall)


def lay_out_without_spare(figure, spare, width: int, height: int) -> None:
    """Lay ``figure`` out off screen at ``width`` × ``height``, then narrower and shorter
    by the pixels ``spare()`` says its plot leaves empty (dx, dy): a plot of locked
    aspect fills its file, the axis titles centred under what it draws."""
    off_screen(figure, width, height)
    for _ in range(4):          # a narrower heading wraps to more lines: again
        figure._settle()
        dx, dy = spare()
        if dx < 1 and dy < 1:
            return
        figure.resize(max(1, round(figure.width() - dx)),
                      max(1, round(figure.height() - dy)))


class HeldView:
    """What a panel drawn for a file reads of the window's session: the text, its
    tokens and the view selection, held as they were when the export began."""

    def __init__(self, session):
        self.text, self.seq = session.text, session.seq
        self.selection = session.selection

    def subscribe(self, listener) -> None:
        """Nothing changes here: the panel is drawn once and written."""

    def select(self, selection) -> None:
        self.selection = selection


def drawn_panel(panel_type, session, shown, facts: dict, settings=None):
    """A ``panel_type`` (PlotsPanel) of PANEL_SIZE, off screen, showing ``shown`` (a
    views.shown.Shown) for ``session`` (its selection; a HeldView for a window's), with
    ``facts`` in every file it writes (PlotsPanel.set_provenance)."""
    panel = panel_type(settings)
    panel.set_session(session)
    panel.set_provenance(facts)
    off_screen(panel, *PANEL_SIZE)
    QtWidgets.QApplication.processEvents()
    panel.show_evaluation(shown)
    QtWidgets.QApplication.processEvents()
    return panel


def map_boxes(figure) -> list:
    """The view boxes of ``figure`` that hold a map (an image of cells)."""
    return [item for item in figure.canvas.scene().items() if isinstance(item, pg.ViewBox)
            and any(isinstance(child, pg.ImageItem) for child in item.addedItems)]


def shows_square_maps(figure) -> bool:
    """Does ``figure`` show maps of square matrices (a position × position or query ×
    key map: its two dimensions alike)?"""
    arrays = [np.shape(value) for value in figure.data.values()]
    return (len(figure.dims) == 2 and bool(map_boxes(figure)) and bool(arrays)
            and all(len(shape) == 2 and shape[0] == shape[1] for shape in arrays))


SQUARE_WITHIN = 0.5     # pixels a square map's width and height may differ by


def square_maps(panel, name: str, tries: int = 8) -> None:
    """Make ``panel`` (a PlotsPanel) as tall as makes the maps of
    figure ``name`` square within SQUARE_WITHIN pixels: its rows share its height."""
    box = map_boxes(panel.laid_out(name))[0]
    for _ in range(tries):
        width, height = box.width(), box.height()
        if abs(width - height) <= SQUARE_WITHIN or height < 1:
            return
        panel.resize(panel.width(), max(1, round(panel.height() + (width - height)
                                                 * panel.height() / height)))
        QtWidgets.QApplication.processEvents()


def bound_for_file(figure) -> None:
    """Hold ``figure`` (shown off screen, in a panel drawn for files) to its file's own
    size: text alone TEXT_WIDTH wide, a plot at most TALLEST pixels tall (maps of
    square matrices are squared instead: square_maps)."""
    from .arrange import plots_nothing
    if plots_nothing(figure):
        return
    if figure.canvas.isHidden() and figure.stack.currentWidget() is not figure.canvas:
        figure.setMaximumWidth(TEXT_WIDTH)
    else:
        figure.setMaximumHeight(TALLEST)
    QtWidgets.QApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)
    QtWidgets.QApplication.processEvents()


_drawing: list = []     # listeners told (name, part) as figure_panel draws (an export's


@contextmanager         # count of its figures: 10-18 s at 3,000 words told nothing)
def counting(told):
    """While inside, ``told(name, part)`` as figure_panel draws a figure (``part`` ""),
    and for a figure of square maps, each part of its drawing ("its own panel",
    "squaring its maps")."""
    _drawing.append(told)
    try:
        yield
    finally:
        _drawing.remove(told)


def tell(name: str, part: str = "") -> None:
    """The listeners of ``counting`` told figure ``name`` ("": all of them) or its ``part``.
    Before a part begins that has made no panel yet (a figure, its own panel, the views
    of the runs, all in one panel; not the squaring of a panel made), a Ctrl+C held
    meanwhile is raised: an export's 9 figures were all drawn first (4.5 s at 4,000
    tokens), fig.save answered once saved (6-7 s): a user's run."""
    if part != "squaring its maps":
        raise_held()
    for told in list(_drawing):
        told(name, part)


def figure_panel(panel, name: str, twin):
    """The panel figure ``name`` is drawn from, at its own size: ``panel`` itself (off
    screen, its figure held to its file's size: bound_for_file), or, for a figure of
    square maps, ``twin()`` (a new panel showing the same) made as tall as makes them
    square (the caller closes it). The one rule ``posviz export``, File › Export, a
    figure's own menu and the Python API's ``figure(name)`` follow."""
    tell(name)
    if not shows_square_maps(panel.laid_out(name)):
        bound_for_file(panel.laid_out(name))
        return panel
    tell(name, "its own panel")
    squared = twin()
    if squared.size() != panel.size():       # as wide as the figures written beside it
        squared.resize(panel.size())
        QtWidgets.QApplication.processEvents()
    tell(name, "squaring its maps")
    square_maps(squared, name)
    return squared
