"""Axis titles that are never cut: the whole title where the axis holds it, else a
shorter form, measured on the part of the axis in sight.

A figure half under the fold of the scrolled plots shows its side titles on the half in
sight, centred there (a title centred on the whole axis was cut at the fold); an export
draws the whole figure, so it fits and centres them on the whole axis.
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

VERTICAL = ("left", "right")


def fit(axis: pg.AxisItem, labels: tuple[str, ...], colour) -> None:
    """Title ``axis`` with the first of ``labels`` (longest first) that its room holds,
    past the last elided; again whenever its length or the part in sight changes."""
    axis._fit_labels = labels
    fitter = getattr(axis, "_title_fit", None)
    if fitter is None:
        fitter = axis._title_fit = TitleFit(axis, colour)
    fitter.refit()


def choose(labels: tuple[str, ...], room: float, font: QtGui.QFont) -> str:
    """The first of ``labels`` that fits ``room`` pixels, else the last elided: the text
    against the room, not the blank margins around it (they may reach past the axis's
    ends), with the space pyqtgraph writes after it."""
    metrics = QtGui.QFontMetricsF(font)
    room -= metrics.horizontalAdvance(" ")
    chosen = next((text for text in labels if metrics.horizontalAdvance(text) <= room),
                  labels[-1])
    if metrics.horizontalAdvance(chosen) > room:
        chosen = metrics.elidedText(chosen, QtCore.Qt.TextElideMode.ElideRight,
                                    max(room, 0.0))
    return chosen


def part_in_sight(widget: QtWidgets.QWidget) -> QtCore.QRect:
    """The part of ``widget`` (its coordinates) inside every widget holding it: what a
    scroll area does not scroll away."""
    part, child, offset = widget.rect(), widget, QtCore.QPoint()
    while not child.isWindow() and child.parentWidget() is not None:
        offset += child.pos()
        child = child.parentWidget()
        part &= child.rect().translated(-offset)
    return part


def span_in_sight(axis: pg.AxisItem) -> tuple[float, float] | None:
    """(top, bottom) of the part of a side axis in sight, in the axis's coordinates;
    None when all of it is, or none of it, or its figure is not on screen."""
    views = axis.scene().views() if axis.scene() is not None else []
    if not views or not views[0].isVisible():
        return None
    length = axis.geometry().height()
    ends = [views[0].mapFromScene(axis.mapToScene(QtCore.QPointF(0, y))).y()
            for y in (0.0, length)]                         # in the viewport's pixels
    seen = part_in_sight(views[0].viewport())
    top, bottom = max(ends[0], seen.top()), min(ends[1], seen.bottom() + 1)
    if bottom <= top or (top <= ends[0] and bottom >= ends[1]):
        return None
    return top - ends[0], bottom - ends[0]


class TitleFit(pg.GraphicsObject):
    """Keeps one axis's title fitted: at each change of its length, of the scrolling
    that shows it and of its figure's showing. A child of the axis that paints nothing;
    a figure's export turns it to the whole axis (setExportMode, as every item)."""

    def __init__(self, axis: pg.AxisItem, colour):
        super().__init__(axis)
        self.axis, self.colour = axis, colour
        self.whole = False              # an export: the whole axis, whatever is in sight
        self.followed = None            # the scroll area whose scrolling refits
        self.pending = False            # a repaint of the axis's column is on its way
        axis.geometryChanged.connect(self.refit)

    def boundingRect(self) -> QtCore.QRectF:
        return QtCore.QRectF()

    def paint(self, *args) -> None:
        pass

    def setExportMode(self, export, opts=None) -> None:
        super().setExportMode(export, opts)
        self.whole = bool(export)
        self.refit()

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QtCore.QEvent.Type.Show, QtCore.QEvent.Type.Resize):
            self.refit()
        return False

    def _follow(self) -> None:
        """Refit when the scroll area holding the figure scrolls or resizes, or the
        figure is shown (another tab of the same scrolled page)."""
        views = self.axis.scene().views() if self.axis.scene() is not None else []
        holder = views[0].parentWidget() if views else None
        while holder is not None and not isinstance(holder, QtWidgets.QScrollArea):
            holder = holder.parentWidget()
        if holder is None:
            return
        self.followed = holder
        holder.verticalScrollBar().valueChanged.connect(self.refit)
        holder.viewport().installEventFilter(self)
        views[0].installEventFilter(self)

    def refit(self, *_) -> None:
        axis = self.axis
        if axis.label is None or not getattr(axis, "_fit_labels", None):
            return
        vertical = axis.orientation in VERTICAL
        if self.followed is None and vertical:
            self._follow()
        size = axis.geometry()
        span = None if self.whole or not vertical else span_in_sight(axis)
        room = (span[1] - span[0] if span else
                size.height() if vertical else size.width())
        chosen = choose(axis._fit_labels, room, axis.label.font()) if room > 0 \
            else axis._fit_labels[0]
        was = (axis.labelText, axis.label.y(), axis.label.opacity())
        if chosen != axis.labelText or not axis.label.isVisible():
            axis.setLabel(chosen, color=self.colour)
            axis.resizeEvent()      # placed: pyqtgraph does it only on a resize
        # a sliver in sight too short for any form: no title until more scrolls in
        # (transparent: a hidden label would narrow the axis and move the plot)
        axis.label.setOpacity(0.0 if span and chosen not in axis._fit_labels else 1.0)
        if vertical:                # centred on the part in sight, as pyqtgraph on all
            low, high = span or (0.0, size.height())
            y = int((low + high) / 2 + axis.label.boundingRect().width() / 2)
            if axis.label.y() != y:
                axis.label.setY(y)
        if was != (axis.labelText, axis.label.y(), axis.label.opacity()) and not self.whole:
            self._repaint_later()

    def _repaint_later(self) -> None:
        """Repaint the axis's column once the scrolling settles: Qt leaves the old
        pixels of a title moved and made transparent at once, or moved during a scroll."""
        if not self.pending:
            self.pending = True
            QtCore.QTimer.singleShot(0, self, self._repaint)     # none once it is gone

    def _repaint(self) -> None:
        self.pending = False
        axis = self.axis
        if axis.scene() is None:
            return
        area = axis.mapRectToScene(axis.boundingRect() | axis.childrenBoundingRect())
        for view in axis.scene().views():
            view.viewport().update(view.mapFromScene(area).boundingRect().adjusted(
                -2, -2, 2, 2))


def fit_words(name: str, metrics: QtGui.QFontMetricsF, room: float) -> str:
    """``name`` broken at spaces into lines of at most ``room`` pixels; a word wider than
    that is shortened where it stands, ending in "." ("sinus."), never split across lines
    with a hyphen ("sinusoi-" over "dal" read as two words): category names under
    narrow columns ran into their neighbours. whole_words says whether all fit."""
    lines: list[str] = []
    for word in name.split(" "):
        if metrics.horizontalAdvance(word) > room and len(word) > 4:
            word = next((word[:k] + "." for k in range(len(word) - 1, 2, -1)
                         if metrics.horizontalAdvance(word[:k] + ".") <= room),
                        word[:3] + ".")
        if lines and metrics.horizontalAdvance(f"{lines[-1]} {word}") <= room:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return "\n".join(lines)


def whole_words(name: str, metrics: QtGui.QFontMetricsF, room: float) -> bool:
    """Does every word of ``name`` fit in ``room`` pixels (fit_words shortens none)?"""
    return all(metrics.horizontalAdvance(word) <= room for word in name.split(" "))
