"""The mouse wheel over a figure scrolls the page; Ctrl with the wheel zooms the plot.

A plain wheel over a plot zoomed it (in the scrolling plots and Experiments pages, a
scroll of the page zoomed the plot under the mouse to 10^±300)."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets


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
