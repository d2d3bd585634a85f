"""What a figure's export draws beyond the figure as laid out on screen: a caption line
under the heading naming what it was drawn from (the model, its weights, encoding and
mask, the text and the order: the window says these elsewhere, a slide only on the
image), and the note whole where the screen elides it (an export has no tooltip).

The caption is set by the panel that writes the file (``Figure.caption``) and drawn in a
band of its own: the heading above it, the rest of the figure below, nothing moved."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from . import style

CAPTION_GAP = 2                  # pixels between the heading and the caption
WRAP = int(QtCore.Qt.TextFlag.TextWordWrap)


def whole_note(figure) -> QtCore.QRect | None:
    """Where an export writes the note whole, wrapped, when the screen shows it elided:
    its box in the figure as laid out, from the note's top down; else None."""
    note = figure.note
    if not (figure.note_one_line and note.elided() and not note.isHidden()):
        return None
    margins = note.contentsMargins()
    box = note.geometry().adjusted(margins.left(), margins.top(), -margins.right(), 0)
    box.setHeight(note.fontMetrics().boundingRect(
        QtCore.QRect(0, 0, box.width(), 1 << 20), WRAP, note.text()).height())
    return box


def _caption_box(figure) -> QtCore.QRect | None:
    """The caption's box in the export, under the heading (None without a caption)."""
    if not figure.caption:
        return None
    margins = figure.heading.contentsMargins()
    width = figure.width() - margins.left() - margins.right()
    height = QtGui.QFontMetrics(style.text_font()).boundingRect(
        QtCore.QRect(0, 0, width, 1 << 20), WRAP, figure.caption).height()
    top = figure.heading.geometry().bottom() + 1 + CAPTION_GAP
    return QtCore.QRect(margins.left(), top, width, height)


def caption_height(figure) -> int:
    """Pixels the caption's band adds to the figure's height in an export (0: none)."""
    box = _caption_box(figure)
    return 0 if box is None else box.height() + CAPTION_GAP


def export_size(figure) -> QtCore.QSize:
    """The figure's size in an export: as on screen, taller by its caption's band and
    by the lines of a note the screen shows elided."""
    box = whole_note(figure)
    height = figure.height() if box is None else max(
        figure.height(), box.bottom() + 1 + figure.note.contentsMargins().bottom())
    return QtCore.QSize(figure.width(), height + caption_height(figure))


def render(figure, painter: QtGui.QPainter) -> None:
    """Paint ``figure`` (its exporting state on) as an export holds it: the heading,
    the caption under it, the rest of the figure below, and the note whole where the
    screen elides it, on opaque white throughout (the widgets paint no background: the
    bands of the heading and the note were transparent in an SVG)."""
    painter.fillRect(QtCore.QRect(QtCore.QPoint(), figure.export_size()), QtGui.QColor("white"))
    note, caption = whole_note(figure), _caption_box(figure)
    flags = QtWidgets.QWidget.RenderFlag.DrawChildren
    figure.note.blank = note is not None
    try:
        if caption is None:
            figure.render(painter, QtCore.QPoint(), QtGui.QRegion(), flags)
        else:
            split, width = caption.top() - CAPTION_GAP, figure.width()
            figure.render(painter, QtCore.QPoint(), QtGui.QRegion(0, 0, width, split), flags)
            figure.render(painter, QtCore.QPoint(0, split + caption_height(figure)),
                          QtGui.QRegion(0, split, width, figure.height() - split), flags)
    finally:
        figure.note.blank = False
    painter.save()
    if caption is not None:
        painter.setPen(QtGui.QColor(style.NOTE_COLOUR))
        painter.setFont(style.text_font())
        painter.drawText(caption, WRAP, figure.caption)
    if note is not None:
        painter.setPen(figure.note.palette().color(QtGui.QPalette.ColorRole.WindowText))
        painter.setFont(figure.note.font())
        painter.drawText(note.translated(0, caption_height(figure)), WRAP, figure.note.text())
    painter.restore()
