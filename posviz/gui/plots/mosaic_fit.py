"""The mosaic's plot held to its tiles: the view as wide and as tall as the tiles need at
the largest scale the canvas allows, so the colour bar stands next to the cells (a wide
window left ~400 px of empty view between them) and the spare room lies beyond the bar
and below the tiles."""
from __future__ import annotations

import numpy as np
from PySide6 import QtCore

OUTLINE_PX = 3      # the selected tile's outline, screen pixels wide, 1 to 4 pixels out
GAP_PX = OUTLINE_PX + 2     # screen pixels between two tiles, at least: the outline
                            # clear of the next tile (the gap widens in image pixels)
PAD = 0.02          # the view's margin around the tiles, a fraction of the mosaic
FAR = 1e6           # pixels: "no bound" for a plot's maximum size before a mosaic


def gap_room(figure, grid) -> int:
    """Image pixels between two tiles that make GAP_PX screen pixels at the scale ``grid``
    is shown: the transparent gap itself keeps the tiles apart, and nothing drawn over
    the image covers a cell (below one screen pixel per image pixel Qt drops image rows,
    a one-pixel gap among them)."""
    shown = scale(figure, grid.width * (1 + 2 * PAD), grid.height * (1 + 2 * PAD))
    least = figure.gap
    return least if shown <= 0 else max(least, int(np.ceil(GAP_PX / shown)))


def room(figure) -> tuple[float, float]:
    """Pixels across and down ``figure``'s (a MosaicFigure) view could take: its canvas
    less the colour bar, the plot's axes and the layout's margins and spacing, whatever
    the view is held to now."""
    plot, bar, layout = figure.plot, figure.bar, figure.canvas.ci.layout
    left, top, right, bottom = layout.getContentsMargins()
    area = figure.canvas.viewport().rect()       # the layout shrinks to a held plot
    spacing = max(layout.horizontalSpacing(), 0)
    across = (area.width() - left - right - bar.width() - spacing
              - (plot.width() - plot.vb.width()))
    down = area.height() - top - bottom - (plot.height() - plot.vb.height())
    return max(across, 0.0), max(down, 0.0)


def scale(figure, width: float, height: float) -> float:
    """Pixels per cell that show ``width`` × ``height`` cells whole in the room."""
    across, down = room(figure)
    return min(across / width, down / height) if width > 0 and height > 0 else 0.0


def scales(figure, width: float, height: float) -> tuple[float, float]:
    """Pixels per cell across and down that fill the room with ``width`` × ``height``
    cells, a cell at most ``figure.stretch`` times as tall as wide or as wide as tall
    (a 6 × 12 mosaic at 1024 × 700 filled the top half of its panel with square cells)."""
    across, down = room(figure)
    k = scale(figure, width, height)
    if k <= 0:
        return 0.0, 0.0
    most = k * max(getattr(figure, "stretch", 1.0), 1.0)
    return min(across / width, most), min(down / height, most)


def spare(figure, width: float, height: float) -> tuple[float, float]:
    """Pixels of the room the tiles (``width`` × ``height`` cells) leave empty across
    and down: what a file of the mosaic does without (own_size.lay_out_without_spare)."""
    across, down = room(figure)
    kx, ky = scales(figure, width, height)
    return across - width * kx, down - height * ky


def hold(figure, width: float, height: float) -> None:
    """Bound ``figure``'s plot to a view of ``width`` × ``height`` cells at the
    room's scale (no bound when there is nothing to show)."""
    plot = figure.plot
    kx, ky = scales(figure, width, height)
    if kx <= 0:
        bound = QtCore.QSizeF(FAR, FAR)
    else:
        bound = QtCore.QSizeF(plot.width() - plot.vb.width() + width * kx + 1,
                              plot.height() - plot.vb.height() + height * ky + 1)
    now = plot.maximumSize()
    if abs(now.width() - bound.width()) > 0.5 or abs(now.height() - bound.height()) > 0.5:
        plot.setMaximumSize(bound)
        # the layout was clamped to the old bound: the canvas lays it out anew only when
        # its own size changes
        figure.canvas.ci.setGeometry(QtCore.QRectF(figure.canvas.viewport().rect()))
        # the axes move: repaint the canvas whole, not only the items' new places (a
        # bare "head" axis of the earlier layout stayed under MiniLM's mosaic, a user's run)
        figure.canvas.viewport().update()
