"""The swap map's cells of identical tokens: grey and outlined, off the colour scale,
named in the note and on hover. Swapping two equal tokens leaves the input as it was;
their value (equivariance against the original's rows permuted) is how much the two
slots' outputs differ in one run, another quantity than a swap's effect: it is in the
tooltip and the CSV, not in the colours. The rows and columns of pinned tokens ([CLS],
[SEP]: they cannot move) were not run: crossed out in light grey, blank in the CSV,
named in the note and on hover, never "0 change"."""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtGui, QtWidgets  # before pyqtgraph, so it binds PySide6

from ..plots import colorbars, style
from ..plots.wheel import frame
from ..plots.workarounds import HeatmapImage
from posviz.analysis.experiments.sweep import identical_pairs

QUOTED = 60             # characters of a text a swap map's title quotes

IDENTICAL_NOTE = ("Pairs of identical tokens (grey, outlined): the input does not change; "
                  "their value, how much the two slots' outputs differ in one run, is not "
                  "a swap's effect and is off the colour scale (its value: the figure's "
                  "CSV, or a hover on screen).")
GREY = (205, 205, 205)  # under an identical pair's cell, which the map leaves blank
IDENTICAL_HOVER = ("identical tokens: the input does not change; this is how much the two "
                   "slots' outputs differ")
NOT_RUN = (240, 240, 240)   # under a pinned token's cells: no swap ran there
CROSS = "#8c8c8c"           # the line crossing each such cell
INSET = 0.1             # of a cell: neighbouring outlines stay apart


def off_the_scale(change: np.ndarray, cells: np.ndarray) -> np.ndarray:
    """The map's values (n, n) with ``cells`` blank (NaN: the image leaves them clear)."""
    shown = np.asarray(change, float).copy()
    shown[cells] = np.nan
    return shown


def outline_cells(plot: pg.PlotItem, cells: np.ndarray) -> list[QtWidgets.QGraphicsItem]:
    """Grey under the map's ``cells`` (n, n) bool, [row i, column j] at x = j, y = i
    (blank in its image), outlined by a black line under a white dashed one, seen on
    every colour of the map."""
    path, whole = QtGui.QPainterPath(), QtGui.QPainterPath()
    for i, j in zip(*np.nonzero(cells)):
        path.addRect(QtCore.QRectF(j + INSET, i + INSET, 1 - 2 * INSET, 1 - 2 * INSET))
        whole.addRect(QtCore.QRectF(float(j), float(i), 1.0, 1.0))
    grey = QtWidgets.QGraphicsPathItem(whole)
    grey.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
    grey.setBrush(QtGui.QColor(*GREY))
    grey.setZValue(-1)                               # under the image
    plot.addItem(grey)
    items = [grey]
    for colour, width, dash in (("k", 3.0, QtCore.Qt.PenStyle.SolidLine),
                                ("w", 1.5, QtCore.Qt.PenStyle.DashLine)):
        item = QtWidgets.QGraphicsPathItem(path)
        item.setPen(style.cosmetic_pen(colour, width, dash))
        item.setZValue(5)
        plot.addItem(item)
        items.append(item)
    return items


def pinned_cells(pairs) -> np.ndarray:
    """(n, n) bool: the cells of a token that cannot move (a special token the model's
    tokenizer adds), whose swaps were not run (analysis.experiments.sweep.SwapMap.ran)."""
    return ~pairs.ran


def pinned_note(pairs) -> str:
    """The note's line on pinned tokens, or "" when every token can move."""
    names = list(dict.fromkeys(t for t, m in zip(pairs.tokens, pairs.movable) if not m))
    if not names:
        return ""
    return (f"{', '.join(names)} cannot move: their rows and columns were not run "
            "(light grey, crossed; blank in the CSV), not 0 change.")


def cross_cells(plot: pg.PlotItem, cells: np.ndarray) -> list[QtWidgets.QGraphicsItem]:
    """Light grey under the map's ``cells`` (n, n) bool (blank in its image), each
    crossed by a diagonal line: not run, unlike any colour of the map."""
    whole, lines = QtGui.QPainterPath(), QtGui.QPainterPath()
    for i, j in zip(*np.nonzero(cells)):
        whole.addRect(QtCore.QRectF(float(j), float(i), 1.0, 1.0))
        lines.moveTo(j + INSET, i + 1 - INSET)
        lines.lineTo(j + 1 - INSET, i + INSET)
    grey = QtWidgets.QGraphicsPathItem(whole)
    grey.setPen(QtGui.QPen(QtCore.Qt.PenStyle.NoPen))
    grey.setBrush(QtGui.QColor(*NOT_RUN))
    grey.setZValue(-1)                               # under the image
    cross = QtWidgets.QGraphicsPathItem(lines)
    cross.setPen(style.cosmetic_pen(CROSS, 1.0))
    cross.setZValue(4)
    for item in (grey, cross):
        plot.addItem(item)
    return [grey, cross]


def hover_text(pairs, i: int, j: int) -> str:
    """What the swap map's cell (token i, swapped with j) holds, in words."""
    tokens = pairs.tokens
    if pinned_cells(pairs)[i, j]:
        return (f"{tokens[i]!r}({i}) ↔ {tokens[j]!r}({j}): not run (a token that "
                "cannot move)")
    text = (f"{tokens[i]!r}({i}) ↔ {tokens[j]!r}({j}): relative change "
            f"{pairs.change[i, j]:.3g}")
    return f"{text} ({IDENTICAL_HOVER})" if i != j and tokens[i] == tokens[j] else text


def which_text(texts, index: int, quote: str = "“”") -> str:
    """Which of a sweep's ``texts`` a swap map is: "text 2 of 9: “…”" (quoted shortly
    for a title; whole, unquoted, with ``quote=""``)."""
    text = texts[index]
    if quote and len(text) > QUOTED:
        text = text[:QUOTED - 1] + "…"
    return f"text {index + 1} of {len(texts)}: {quote[:1]}{text}{quote[1:]}"


def draw_pairs(figure, pairs, which: str = "") -> None:
    """A swap sweep's map of all pairs (analysis.experiments.sweep.SwapMap) on
    ``figure`` (an ExperimentFigure) of the text ``which`` (which_text): token i swapped
    with token j, identical pairs off the colour scale, the colour bar level with the
    map."""
    n = len(pairs.tokens)
    # token axes: labels turned or thinned (with their index) so that none touch
    figure._reset("token", "swapped with", log=False, tokens=True)
    pinned = pinned_cells(pairs)                                       # (n, n)
    identical = identical_pairs(pairs.tokens) & ~pinned                # (n, n)
    # exported enlarged, unsmoothed: a 5 x 5 map was embedded in an SVG as 5 x 5 pixels,
    # which librsvg smeared into a gradient
    image = HeatmapImage()
    image.setImage(off_the_scale(pairs.change, identical | pinned))       # (rows i, cols j)
    figure.plot.addItem(image)
    # the colours span the swaps that change the input (identical pairs: outlined)
    differing = pairs.change[~(identical | pinned)]
    largest = float(differing.max()) if differing.size else 0.0
    top = largest or 1.0
    new = figure._map_bar is None
    if new:
        figure._map_bar = colorbars.color_bar((0.0, top), style.SEQUENTIAL,
                                            "relative change")
    figure.bar = figure._map_bar
    figure.bar.setLevels((0.0, top))
    figure.bar.setImageItem(image)
    figure.canvas.addItem(figure.bar, row=0, col=1)
    if new:                              # its strip level with the map, not the axes
        colorbars.align_bar(figure.bar, figure.plot)
    figure.plot.getViewBox().invertY(True)
    for side in ("left", "bottom"):
        figure.plot.getAxis(side).set_tokens(pairs.tokens)
    frame(figure.plot, (0, n), (0, n))
    if identical.any():
        outline_cells(figure.plot, identical)
    if pinned.any():
        cross_cells(figure.plot, pinned)
    figure._pairs = pairs
    keep_square(figure)                          # square cells (were ~56 x 17 at 1024)
    most = int(np.argmax(pairs.sensitivity))
    figure.set_title(f"Swap sensitivity at layer {pairs.layer}"
                     + (f", {escape(which, quote=False)}" if which else "")
                     + f": change when tokens i and j swap (max {largest:.2e})")
    sensitive = (f"Most sensitive token: {pairs.tokens[most]!r} (mean "
                 f"{pairs.sensitivity[most]:.2e} over its partners holding another "
                 f"token)." if pairs.sensitivity[most] > 0 else
                 "No swap of two different tokens moves this layer's output.")
    figure.set_note(f"Brighter: the layer's output moves more. {sensitive}"
                  + (f"\n{IDENTICAL_NOTE}" if identical.any() else "")
                  + (f"\n{pinned_note(pairs)}" if pinned.any() else ""))
    figure.data = {"change": off_the_scale(pairs.change, pinned)}      # not run: blank
    figure.dims = ("token", "partner")
    figure.coords = {}
    figure.labels = {"token": list(pairs.tokens), "partner": list(pairs.tokens)}


WIDEST = 16777215           # Qt's "no maximum"


def keep_square(figure) -> None:
    """The map's plot no wider than its view is tall, so each cell is square; the
    axes keep to the map (a locked aspect widened the view's range beside it)."""
    view, plot = figure.plot.getViewBox(), figure.plot

    def fit() -> None:
        if figure._pairs is None:                   # another drawing since: let go
            return
        axes = plot.geometry().width() - view.width()
        wanted = min(max(view.height() + axes, 120.0), figure.canvas.width() - 120.0)
        grid = figure.canvas.ci.layout               # its column: the bar stays beside it
        if abs(grid.columnMaximumWidth(0) - wanted) > 0.5:
            grid.setColumnMinimumWidth(0, wanted)
            grid.setColumnMaximumWidth(0, wanted)
    if getattr(figure, "_squared", None) is None:
        figure._squared = fit
        view.sigResized.connect(lambda *_: figure._squared())
    figure._squared = fit
    fit()


def let_go_square(figure) -> None:
    """Undo keep_square: the next drawing takes the plot's whole width."""
    grid = figure.canvas.ci.layout
    if grid.columnMaximumWidth(0) < WIDEST:
        grid.setColumnMinimumWidth(0, 0)
        grid.setColumnMaximumWidth(0, WIDEST)


def map_at(pairs, layer):
    """``pairs`` at ``layer`` when it kept every layer's map, else as measured."""
    if layer is None or pairs.layers is None or layer == pairs.layer:
        return pairs
    return pairs.at(min(max(layer, 0), len(pairs.layers) - 1))


def map_choosers(tab, row) -> None:
    """The swap map's text and layer choosers (``tab.map_text``, ``tab.map_layer``),
    put on ``row``: a sweep of several texts showed only text 1's map, at the last
    layer, with no way to see another (the API's figure("swap map", text=i) only)."""
    tab.map_text = QtWidgets.QSpinBox(minimum=1, maximum=1)
    tab.map_text.setToolTip("Which text's swap map to show (the sweep ran every text)")
    tab.map_layer = QtWidgets.QSpinBox(minimum=0, maximum=0)
    tab.map_layer.setToolTip("At which layer (0: the input, then the output of each "
                             "block; no new run needed)")
    for label, widget in (("Text", tab.map_text), ("Layer", tab.map_layer)):
        caption = QtWidgets.QLabel(label)
        caption.setBuddy(widget)
        row.addWidget(caption)
        row.addWidget(widget)
        tab._labelled[widget] = caption
        widget.valueChanged.connect(tab._redraw)
        widget.hide()
        caption.hide()
    for box in (tab.what, tab.kind):        # once the tab has taken the new choice
        box.currentIndexChanged.connect(
            lambda *_: QtCore.QTimer.singleShot(0, lambda: sync_map_choosers(tab)))


def sync_map_choosers(tab) -> None:
    """Show the choosers while a sweep's swap map is shown, their ranges the result's,
    and hand their choice to the figure (``map_text`` from 0, ``map_layer``)."""
    result = tab.result if tab.what.currentData() == "sweep" and tab.job is not None \
        and tab.job.what == "sweep" else None
    pairs = getattr(result, "pairs", None) or ()
    shown = bool(pairs) and tab.metric_box.currentData() == "swap map"
    layers = pairs[0].layers if pairs else None
    for widget, visible in ((tab.map_text, shown and len(pairs) > 1),
                            (tab.map_layer, shown and layers is not None)):
        widget.setVisible(visible)
        tab._labelled[widget].setVisible(visible)
    if not shown:
        return
    with QtCore.QSignalBlocker(tab.map_text), QtCore.QSignalBlocker(tab.map_layer):
        tab.map_text.setMaximum(len(pairs))
        if layers is not None:
            tab.map_layer.setMaximum(len(layers) - 1)
        if getattr(tab, "_map_of", None) is not result:    # its first text, at its layer
            tab._map_of = result
            tab.map_text.setValue(1)
            tab.map_layer.setValue(pairs[0].layer)
    tab.figure.map_text = tab.map_text.value() - 1
    tab.figure.map_layer = tab.map_layer.value() if layers is not None else None
