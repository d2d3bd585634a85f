"""The mosaic: every layer × head of the attention maps as one clickable image."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from . import colorbars, mosaic_fit, style
from .attention import _quote
from .base import Figure
from .hover import wrapped
from .mosaic_fit import OUTLINE_PX, PAD
from .mosaic_modes import BAR_LABELS, MOSAIC_MODES, mosaic_look
from .tabs import ATTENTION
from .workarounds import HeatmapImage
from posviz.document.spec import Selection
from posviz.views.mosaic import (MOSAIC_GAP, MosaicLook, block_labels, label_step, mosaic_grid,
                                 wrap_image)
from posviz.views.pooling import MOSAIC_DATA


class _TileImage(HeatmapImage):
    """The mosaic image; a left click reports the pixel it hit."""

    def __init__(self, on_click):
        super().__init__()
        self._on_click = on_click

    def mouseClickEvent(self, ev):
        if ev.button() == QtCore.Qt.MouseButton.LeftButton:
            ev.accept()
            self._on_click(ev.pos())
        else:
            super().mouseClickEvent(ev)


LABEL_MARGIN = 4        # screen pixels between a later block's layer label and a tile
STRETCH = 2.0           # a cell on screen at most this many times as tall as wide (or
                        # wide as tall), so the tiles fill their panel; a file's are square
OWN_SIZE = (960, 720)   # pixels: a file's mosaic at most, narrower or shorter by the
                        # view's spare side (whatever the window's size)


class MosaicFigure(Figure):
    """Every layer × head as one image (one ImageItem for all tiles: cheap to paint).

    A tile is (n, n) pixels, or, for n > MOSAIC_TILE, (m, m) pooled blocks of
    ``block`` x ``block`` cells (see views.mosaic); ``data`` holds exactly what is
    painted, and query / key index the blocks then. It draws ``shown.views.mosaic``
    as the compute worker coloured it; a Shown without one leaves a message.
    """

    name = "attention_mosaic"
    title = "All layers and heads"
    shows_order = True
    tab = ATTENTION
    row = 1
    dims = ("layer", "head", "query", "key")
    guide = ("every layer × head at once (rows: layers, columns: heads), showing the "
             "difference maps, or the original or reordered maps. Click a tile to select "
             "that layer and head.")
    gap = MOSAIC_GAP                          # transparent pixels between tiles, at least

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "layer", "head")
        self.plot.invertY(True)          # cells shaped by _anchor: square in a file
        self.plot.hideButtons()
        self.image = _TileImage(self._clicked)
        self.plot.addItem(self.image)
        self.outline = QtWidgets.QGraphicsRectItem()
        self.outline.setPen(style.cosmetic_pen("#ff7f0e", OUTLINE_PX))
        self.outline.setZValue(10)
        self.plot.addItem(self.outline)
        self.heading.setToolTip(wrapped(
            "Layers run down (wrapped into side-by-side columns of layers when there are "
            "many), heads across; click a tile to select its layer and head"))
        # The image arrives coloured (see views.mosaic.Mosaic): the bar shows the same
        # map and levels, and is not linked to the image.
        self.look = mosaic_look(Selection())
        self.bar = colorbars.color_bar(self.look.levels, style.DIVERGING, BAR_LABELS["difference"])
        self.canvas.addItem(self.bar, row=0, col=1)
        colorbars.align_bar(self.bar, self.plot)
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        self.plot.vb.sigResized.connect(self._relayout)
        self.canvas.sigDeviceRangeChanged.connect(self._relayout)     # a held plot's room
        # the outline lies a fixed number of screen pixels out: again at every zoom
        self.plot.vb.sigTransformChanged.connect(lambda *_: self._outline(*self._selected))
        self._grid = None                     # the MosaicGrid on screen (views.mosaic)
        self._mosaic = None                   # the views.mosaic.Mosaic drawn
        self._labels: list = []               # layer labels of the blocks after the first
        self._steps = None                    # (grid, (k, j)): every k-th layer, j-th head
        self._selected, self.block = (1, 0), 1    # the outlined tile (layer 1..L, head);
                                                  # tokens per pixel of a tile, a side
        self.mode = self.look.mode
        self.tokens: tuple[str, ...] = ()
        self._drawn = None                    # the views.shown.Shown drawn, for a file
        self._twin = None                     # drawn_alone's figure, while it stays
        self.alone = False                    # is drawn_alone's figure: draws itself
        self.stretch = STRETCH                # a cell's longer side over its shorter, at most

    def _set_look(self, look: MosaicLook) -> None:
        """Colour the bar for the mosaic's mode and levels."""
        if look == self.look:
            return
        self.look, self.mode = look, look.mode
        name = style.DIVERGING if look.mode == "difference" else style.SEQUENTIAL
        self.bar.setColorMap(style.colormap(name))
        self.bar.setLevels(look.levels)
        colorbars.set_bar_label(self.bar, BAR_LABELS[look.mode])

    # -- geometry -------------------------------------------------------------------
    @property
    def grid(self):
        """The views.mosaic.MosaicGrid on screen (None before a mosaic)."""
        return self._grid

    def tile_origin(self, layer: int, head: int) -> tuple[int, int]:
        """(x, y) of the top-left pixel of a tile, in image (= view) coordinates."""
        return self._grid.origin(layer - 1, head)

    def tile_center(self, layer: int, head: int) -> QtCore.QPointF:
        (x, y), n = self.tile_origin(layer, head), self._grid.tile
        return QtCore.QPointF(x + n / 2, y + n / 2)

    def tile_at(self, x: float, y: float):
        """View coordinates -> (layer 1..L, head, query, key), or None over a gap
        (query and key count pooled blocks when ``block`` > 1)."""
        if self._grid is None:
            return None
        hit = self._grid.at(x, y)
        return None if hit is None else (hit[0] + 1, *hit[1:])

    def _aspect(self) -> float:
        width, height = mosaic_fit.room(self)        # not the view, held to the tiles
        return width / height if width > 20 and height > 20 else 1.5

    def _relayout(self, *_) -> None:
        """Lay the tiles out for the view's shape (a deep model wraps its layers into
        blocks side by side), then label every k-th layer and head so labels never
        overlap."""
        mosaic = self._mosaic
        if mosaic is None:
            return
        L, h, n, _ = mosaic.tiles.shape                                       # (L, h, m, m)
        grid = mosaic_grid(L, h, n, self._aspect(), self.gap)
        for _ in range(3):      # the labels' and gaps' room sets the scale, the scale theirs
            room, gap = self._label_room(grid), mosaic_fit.gap_room(self, grid)
            if (grid.columns == 1 or room <= grid.block_gap) and gap <= grid.gap:
                break
            grid = mosaic_grid(L, h, n, self._aspect(), max(gap, grid.gap),
                               least_block_gap=room if grid.columns > 1 else 0)
        if grid != self._grid:
            self._grid = grid
            self._anchor()
            self._paint()
            self._outline(*self._selected)
        else:
            self._anchor()
        self._label()

    def _anchor(self) -> None:
        """Show the tiles whole (square cells, a margin of PAD of the mosaic around
        them) against the view's top left, next to the layer labels, the view held to
        them (mosaic_fit): the colour bar beside the tiles, the spare room past it."""
        grid, view = self._grid, self.plot.vb
        if grid is None or view.width() < 2 or view.height() < 2:
            return
        width, height = grid.width * (1 + 2 * PAD), grid.height * (1 + 2 * PAD)
        mosaic_fit.hold(self, width, height)
        scale = min(view.width() / width, view.height() / height)      # pixels per cell
        across, down = (min(room / cells, scale * self.stretch)        # at most stretched
                        for room, cells in ((view.width(), width), (view.height(), height)))
        left, top = -PAD * grid.width, -PAD * grid.height
        self.plot.setRange(xRange=(left, left + view.width() / across),
                           yRange=(top, top + view.height() / down), padding=0)

    def _label_room(self, grid) -> int:
        """Image pixels between two blocks that hold the widest layer label with
        LABEL_MARGIN screen pixels on each side, at the scale ``grid`` is shown."""
        axis = self.plot.getAxis("left")
        metrics = QtGui.QFontMetricsF(axis.style.get("tickFont") or axis.font())
        view = self.plot.vb
        scale = min(view.width() / grid.width, view.height() / grid.height) / (1 + 2 * PAD)
        if scale <= 0:
            return 0
        return int(np.ceil((metrics.horizontalAdvance(str(grid.layers)) + 2 * LABEL_MARGIN)
                           / scale))

    def _paint(self) -> None:
        mosaic, grid = self._mosaic, self._grid
        self.image.set_coloured(wrap_image(mosaic.image, grid),
                                wrap_image(mosaic.argb, grid, fill=0),
                                mosaic.look.levels, mosaic.look.table)

    def label_spacing(self) -> tuple[float, float]:
        """Pixels from one layer's row to the next, and from one head to the next."""
        per_pixel_x, per_pixel_y = self.plot.vb.viewPixelSize()
        band = self._grid.tile + self._grid.gap
        return band / max(per_pixel_y, 1e-9), band / max(per_pixel_x, 1e-9)

    def _label(self) -> None:
        grid = self._grid
        axis = self.plot.getAxis("left")
        metrics = QtGui.QFontMetricsF(axis.style.get("tickFont") or axis.font())
        rows, across = self.label_spacing()
        steps = (label_step(rows, metrics.height()),
                 label_step(across, metrics.horizontalAdvance(str(grid.heads - 1)) + 6))
        key = (grid, steps)
        if key == self._steps:
            return
        self._steps = key
        k, j = steps
        band = grid.tile + grid.gap
        centre = grid.tile / 2
        axis.setTicks([[(r * band + centre, str(r + 1))
                        for r in range(min(grid.per_column, grid.layers)) if r % k == 0], []])
        self.plot.getAxis("bottom").setTicks(
            [[(grid.block_x(c) + head * band + centre, str(head))
              for c in range(grid.columns) for head in range(grid.heads) if head % j == 0],
             []])
        for item in self._labels:
            self.plot.removeItem(item)
        self._labels = []
        for c in range(1, grid.columns):          # the blocks after the first: their
            for r in range(0, grid.per_column, k):  # labels in the gap on their left
                layer = c * grid.per_column + r
                if layer >= grid.layers:
                    break
                item = pg.TextItem(str(layer + 1), color=style.FOREGROUND,
                                   anchor=(0.5, 0.5))
                item.setFont(axis.style.get("tickFont") or axis.font())
                # centred in the gap: clear of the tiles on both sides
                item.setPos(grid.block_x(c) - grid.block_gap / 2, r * band + centre)
                self.plot.addItem(item)
                self._labels.append(item)

    def layer_labels(self) -> list[tuple[int, float, float]]:
        """(layer 1..L, x, y) of every layer label, in pixels of the canvas: the left
        axis's for the first block, then the other blocks'."""
        out = []
        vb = self.plot.vb
        for value, text in self.plot.getAxis("left")._tickLevels[0]:
            p = self.canvas.mapFromScene(vb.mapViewToScene(QtCore.QPointF(0, value)))
            out.append((int(text), p.x(), p.y()))
        for item in self._labels:
            p = self.canvas.mapFromScene(vb.mapViewToScene(item.pos()))
            out.append((int(item.toPlainText()), p.x(), p.y()))
        return out

    def spare(self) -> tuple[float, float]:
        """Pixels of the room (mosaic_fit.room) left empty across and down by the tiles
        (square cells, their margin): a file of the mosaic does without them."""
        grid = self._grid
        if grid is None or min(mosaic_fit.room(self)) < 2:
            return 0.0, 0.0
        return mosaic_fit.spare(self, grid.width * (1 + 2 * PAD), grid.height * (1 + 2 * PAD))

    def drawn_alone(self) -> "MosaicFigure":
        """The mosaic at its own size, for a file: a twin of OWN_SIZE made as narrow (or
        as short) as its tiles need, so they fill it and "head" is centred under them
        (the screen keeps a wide figure's spare width at the right); kept until the next
        drawing."""
        if self._twin is None:
            from .own_size import lay_out_without_spare
            self._twin = MosaicFigure()
            self._twin.alone, self._twin.stretch = True, 1.0      # square cells
            self.destroyed.connect(self._twin.deleteLater)   # a window of its own: not a child
            self._twin.update_from(self._drawn, *self._selected)
            lay_out_without_spare(self._twin, self._twin.spare, *OWN_SIZE)
        self._twin.caption = self.caption
        return self._twin

    def export_size(self) -> QtCore.QSize:
        return super().export_size() if self._mosaic is None or self.alone else \
            self.drawn_alone().export_size()

    def export(self, path, width=None, dpi=None, provenance=None, scale=None):
        if self._mosaic is None or self.alone or str(path).lower().endswith(".csv"):
            return super().export(path, width, dpi, provenance, scale)
        return Figure.export(self.drawn_alone(), path, width, dpi, provenance, scale)

    # -- content --------------------------------------------------------------------
    def update_from(self, shown, layer: int, head: int) -> None:
        mosaic = shown.views.mosaic
        self._selected, self._drawn = (layer, head), shown
        if self._twin is not None:            # a file draws this drawing afresh
            self._twin.deleteLater()
            self._twin = None
        if mosaic is None:
            self._grid, self._mosaic, self.data, self.labels, self.coords = None, None, {}, {}, {}
            self._steps = None
            self.show_message("The mosaic is being prepared.")
            return
        self.show_canvas()
        self._set_look(mosaic.look)
        tiles, self.block = mosaic.tiles, mosaic.block
        # a difference past ±r takes an end's colour: its bar says so (≤ −r, ≥ r)
        self.bar.set_clips(tiles if self.mode == "difference" else tiles[:0])
        L, h, n, _ = tiles.shape                                              # (L, h, m, m)
        same_shape = self._mosaic is not None and self._mosaic.tiles.shape == tiles.shape
        self._mosaic = mosaic
        if same_shape:
            self._paint()
        else:
            self._grid = None
            self._relayout()
        self.data = {MOSAIC_DATA[self.mode]: tiles}
        self.tokens = shown.evaluation.reference.tokens
        names = block_labels(self.tokens, self.block)
        self.labels = {"query": names, "key": names}
        self.coords = {"layer": list(range(1, L + 1))}
        if self.block > 1:      # a block's coordinate: the index of its first token
            starts = list(range(0, len(self.tokens), self.block))
            self.coords.update(query=starts, key=starts)
        pooled = (f" — each pixel: the largest |value| of {self.block}×{self.block} "
                  "tokens" if self.block > 1 else "")
        self.set_title(f"All layers × heads: {MOSAIC_MODES[self.mode]}{pooled}")
        self._outline(layer, head)

    def chrome(self) -> list:
        return [self.outline]           # the selection is the window's, not the figure's

    def follow(self, selection) -> None:
        self._outline(selection.layer, selection.head)

    def _outline(self, layer: int, head: int) -> None:
        """Outline the tile of layer 1..L, head 0..h-1 just outside its edges: its pen
        (OUTLINE_PX screen pixels) centred OUTLINE_PX / 2 + 1 screen pixels out, so it
        covers none of the tile's rows and columns (a margin in pixels of the tile
        would be several screen pixels wide for a short text)."""
        self._selected = (layer, head)
        if self._grid is None:
            return
        x, y = self.tile_origin(layer, head)
        n = self._grid.tile
        pixel = self.plot.vb.viewPixelSize()                # a screen pixel, in view units
        dx, dy = ((OUTLINE_PX / 2 + 1) * abs(p) for p in pixel)
        self.outline.setRect(QtCore.QRectF(x - dx, y - dy, n + 2 * dx, n + 2 * dy))

    def _clicked(self, pos) -> None:
        hit = self.tile_at(pos.x(), pos.y())
        if hit is not None:
            self.picked.emit(hit[0], hit[1])

    def _mouse_moved(self, scene_pos) -> None:
        if self._grid is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return self.hover.clear()
        point = self.plot.vb.mapSceneToView(scene_pos)
        hit = self.tile_at(point.x(), point.y())
        if hit is None:
            return self.hover.clear()
        layer, head, q, k = hit
        value = float(next(iter(self.data.values()))[layer - 1, head, q, k])
        names = self.labels["query"]
        largest = "largest |value| " if self.block > 1 else ""
        text = (f"layer {layer} head {head}: query {_quote(names[q])} -> key "
                f"{_quote(names[k])} {self.mode} {largest}= {value:.3f}")
        self.hover.show(text)

