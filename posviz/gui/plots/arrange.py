"""A tab's figures laid out: in rows, side by side, with splitters between them; and,
on a tab laid out by content, only the figures that plot something."""
from __future__ import annotations

from contextlib import contextmanager

from PySide6 import QtCore, QtWidgets

from .base import Figure


def show_by_content(figures: list[Figure]) -> None:
    """Show only the figures that plot something (the model's encoding has it), or the
    first one's message when none does (no positional encoding at all). Only a change
    is applied: a figure shown by its tab is left to it (shown in its turn)."""
    plotting = [figure.stack.currentWidget() is not figure.message for figure in figures]
    for k, figure in enumerate(figures):
        hide = not (plotting[k] or (not any(plotting) and k == 0))
        if hide != hidden_by_content(figure):
            figure.hidden_by_content = hide
            figure.setHidden(hide)
    for row in {figure.parentWidget() for figure in figures}:   # a row of hidden figures
        if isinstance(row, QtWidgets.QSplitter) and isinstance(row.parentWidget(),
                                                               QtWidgets.QSplitter):
            hide = all(hidden_by_content(figure) for figure in figures
                       if figure.parentWidget() is row)
            if hide != hidden_by_content(row):
                row.hidden_by_content = hide
                row.setHidden(hide)


def hidden_by_content(widget: QtWidgets.QWidget) -> bool:
    return getattr(widget, "hidden_by_content", False)


def plots_nothing(figure: Figure) -> bool:
    """A figure showing only a message in place of a plot (no numbers behind it)."""
    return figure.stack.currentWidget() is figure.message and not figure.data


@contextmanager
def shown_while(figure: Figure, drawn: bool = True):
    """A figure hidden for lack of content shown (with its row) while it is drawn into
    a file, its splitters sharing their room evenly meanwhile: a pane shown again keeps
    the size 0 it had while hidden, and would be written one pixel high."""
    hidden = [w for w in (figure, figure.parentWidget()) if drawn and hidden_by_content(w)]
    splitters = [(w.parentWidget(), w.parentWidget().sizes()) for w in hidden
                 if isinstance(w.parentWidget(), QtWidgets.QSplitter)]
    for widget in hidden:
        widget.setHidden(False)
    QtWidgets.QApplication.sendPostedEvents()         # the splitters take the shown panes in
    for splitter, _ in splitters:
        splitter.setSizes([1 << 12] * splitter.count())     # scaled to the room there is
    try:
        yield
    finally:
        for widget in hidden:
            widget.setHidden(hidden_by_content(widget))     # unless drawn with content now
        for splitter, sizes in splitters:
            splitter.setSizes(sizes)


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
