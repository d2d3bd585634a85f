"""A tab's figures in a scroll area of their own, under the tab bar: the window scrolled
the whole panel, so at 1024 × 700 scrolling down to a tab's second row took the tabs
(and the layer and head controls) out of sight."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets


class PageScroll(QtWidgets.QScrollArea):
    """Scrolls its page up and down only; its least width is its page's (and a scroll
    bar's), so a window narrower than that scrolls the whole panel sideways (the window's
    scroll area) rather than cutting the rightmost figure off."""

    def __init__(self, page: QtWidgets.QWidget, parent=None):
        super().__init__(parent)
        self.setWidget(page)
        self.setWidgetResizable(True)
        self.setFrameShape(QtWidgets.QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(QtCore.Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def _least_width(self) -> int:
        return (self.widget().minimumSizeHint().width()
                + self.verticalScrollBar().sizeHint().width())

    def minimumSizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(self._least_width(), super().minimumSizeHint().height())

    def sizeHint(self) -> QtCore.QSize:
        hint = self.widget().sizeHint()
        return QtCore.QSize(max(hint.width(), self._least_width()), hint.height())


def scrolled_page() -> tuple[QtWidgets.QWidget, QtWidgets.QWidget]:
    """(the tab's page, the body inside its PageScroll that holds the figures)."""
    page, body = QtWidgets.QWidget(), QtWidgets.QWidget()
    QtWidgets.QVBoxLayout(body).setContentsMargins(0, 0, 0, 0)
    layout = QtWidgets.QVBoxLayout(page)
    layout.setContentsMargins(0, 0, 0, 0)
    layout.addWidget(PageScroll(body))
    return page, body
