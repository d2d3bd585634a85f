"""The mosaic's seams: a line of background between each two tiles, SEAM_PX screen
pixels wide whatever the scale. The image's own one-pixel gaps vanish when the view
shows fewer screen pixels than image pixels (a 700-token text's 4 × 4 mosaic at
1024 × 700: Qt scales the image by dropping rows, and the tiles ran together)."""
from __future__ import annotations

from PySide6 import QtGui, QtWidgets

from . import style

SEAM_PX = 2             # screen pixels between two tiles, at least


def seams_item(plot) -> QtWidgets.QGraphicsPathItem:
    """The item drawing the seams in ``plot``, above the image (below the selected
    tile's outline); empty until a grid is given (seams_path)."""
    item = QtWidgets.QGraphicsPathItem()
    item.setPen(style.cosmetic_pen(style.BACKGROUND, SEAM_PX))
    item.setZValue(5)
    plot.addItem(item)
    return item


def seams_path(grid) -> QtGui.QPainterPath:
    """Lines along the middle of the gaps of ``grid`` (views.mosaic.MosaicGrid), in image
    coordinates: between each two layers of a block, and each two heads, as long as the
    tiles beside them; none around the blocks. An empty path for no grid."""
    path = QtGui.QPainterPath()
    if grid is None:
        return path
    band = grid.tile + grid.gap
    for column in range(grid.columns):
        rows = min(grid.per_column, grid.layers - column * grid.per_column)
        if rows <= 0:
            break
        left = grid.block_x(column)
        right, bottom = left + grid.block_width, rows * band - grid.gap
        for row in range(1, rows):
            y = row * band - grid.gap / 2
            path.moveTo(left, y)
            path.lineTo(right, y)
        for head in range(1, grid.heads):
            x = left + head * band - grid.gap / 2
            path.moveTo(x, 0)
            path.lineTo(x, bottom)
    return path
