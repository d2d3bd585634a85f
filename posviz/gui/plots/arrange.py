"""A tab's figures laid out: in rows, side by side, with splitters between them; and,
on a tab laid out by content, only the figures that plot something."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

from .base import Figure


def show_by_content(figures: list[Figure]) -> None:
    """Show only the figures that plot something (the model's encoding has it), or the
    first one's message when none does (no positional encoding at all)."""
    plotting = [figure.stack.currentWidget() is not figure.message for figure in figures]
    for k, figure in enumerate(figures):
        figure.setVisible(plotting[k] or (not any(plotting) and k == 0))
    for row in {figure.parentWidget() for figure in figures}:   # a row of hidden figures
        if isinstance(row, QtWidgets.QSplitter) and isinstance(row.parentWidget(),
                                                               QtWidgets.QSplitter):
            row.setVisible(any(not figure.isHidden() for figure in figures
                               if figure.parentWidget() is row))


def arrange(figures: list[Figure], even: bool) -> QtWidgets.QWidget:
    """A tab's figures in their rows: the figures of a row side by side, the rows one
    under the other (splitters between them); ``even``: sharing the room evenly."""
    rows: dict[int, list[Figure]] = {}
    for figure in figures:
        rows.setdefault(figure.row, []).append(figure)
    lines = [_split(QtCore.Qt.Orientation.Horizontal, row, even) if len(row) > 1 else row[0]
             for _, row in sorted(rows.items())]
    return _split(QtCore.Qt.Orientation.Vertical, lines, even) if len(lines) > 1 else lines[0]


def _split(orientation, widgets, even: bool) -> QtWidgets.QSplitter:
    splitter = QtWidgets.QSplitter(orientation)
    splitter.setChildrenCollapsible(False)
    for index, widget in enumerate(widgets):
        splitter.addWidget(widget)
        if even:
            splitter.setStretchFactor(index, 1)
    return splitter
