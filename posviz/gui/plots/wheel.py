"""The mouse wheel over a figure scrolls the page; Ctrl with the wheel zooms the plot,
within a few times the data's frame, and a double click shows the whole frame again.

A plain wheel over a plot zoomed it (in the scrolling plots and Experiments pages, a
scroll of the page zoomed the plot under the mouse to 10^±300)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets

ZOOM_OUT = 4.0          # a zoomed-out view spans at most this many times the frame


class _PageWheel(QtCore.QObject):
    """Hands a wheel event without Ctrl past the canvas to the scroll area holding it."""

    def eventFilter(self, watched, event) -> bool:
        if (event.type() != QtCore.QEvent.Type.Wheel
                or event.modifiers() & QtCore.Qt.KeyboardModifier.ControlModifier):
            return False
        event.ignore()
        area = self.parent().parentWidget()            # the canvas's own parents
        while area is not None and not isinstance(area, QtWidgets.QAbstractScrollArea):
            area = area.parentWidget()
        if area is not None:
            QtWidgets.QApplication.sendEvent(area.viewport(), event)
        return True


def zoom_with_ctrl(canvas) -> None:
    """Make the wheel over ``canvas`` (a pyqtgraph GraphicsView) scroll what holds it,
    and zoom only with Ctrl held."""
    canvas.page_wheel = _PageWheel(canvas)          # kept: its Python override must live
    canvas.viewport().installEventFilter(canvas.page_wheel)


def frame(plot, x_range, y_range, padding: float = 0.0) -> None:
    """Show ``x_range`` × ``y_range`` (view coordinates: log10 on a log axis) in
    ``plot``; a zoom or pan stays within ZOOM_OUT times that frame, and a double click
    on the plot shows the frame again. A reorder keeps a zoom the user made; new data
    with another frame replaces it."""
    view = plot.getViewBox()
    (x0, x1), (y0, y1) = map(float, x_range), map(float, y_range)
    width, height = (x1 - x0) or 1.0, (y1 - y0) or 1.0
    view.setLimits(xMin=x0 - ZOOM_OUT * width / 2, xMax=x1 + ZOOM_OUT * width / 2,
                   yMin=y0 - ZOOM_OUT * height / 2, yMax=y1 + ZOOM_OUT * height / 2,
                   maxXRange=ZOOM_OUT * width, maxYRange=ZOOM_OUT * height)
    plot.setRange(xRange=(x0, x1), yRange=(y0, y1), padding=padding)
    if getattr(view, "frame", None) is None:
        plot.scene().sigMouseClicked.connect(lambda event: _double_clicked(view, event))
    view.frame = ((x0, x1), (y0, y1), padding)


def _double_clicked(view, event) -> None:
    if event.double() and view.sceneBoundingRect().contains(event.scenePos()):
        x_range, y_range, padding = view.frame
        view.setRange(xRange=x_range, yRange=y_range, padding=padding)
