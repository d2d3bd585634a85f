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
        page = self.widget()
        if page.sizePolicy().horizontalPolicy() == QtWidgets.QSizePolicy.Policy.Ignored:
            return 0                    # a hidden tab's page widens nothing
        return page.minimumSizeHint().width() + self.verticalScrollBar().sizeHint().width()

    def minimumSizeHint(self) -> QtCore.QSize:
        return QtCore.QSize(self._least_width(), super().minimumSizeHint().height())

    def sizeHint(self) -> QtCore.QSize:
        hint = self.widget().sizeHint()
        return QtCore.QSize(max(hint.width(), self._least_width()), hint.height())


class ScrolledTabs(QtWidgets.QTabWidget):
    """Tabs whose pages each scroll in a PageScroll under the tab bar; ``widget``,
    ``currentWidget``, ``indexOf`` and ``setCurrentWidget`` speak of the pages added."""

    def addTab(self, page: QtWidgets.QWidget, title: str) -> int:
        return super().addTab(PageScroll(page), title)

    def widget(self, index: int) -> QtWidgets.QWidget | None:
        holder = super().widget(index)
        return holder.widget() if isinstance(holder, PageScroll) else holder

    def currentWidget(self) -> QtWidgets.QWidget | None:
        return self.widget(self.currentIndex())

    def indexOf(self, page: QtWidgets.QWidget) -> int:
        return next((k for k in range(self.count()) if self.widget(k) is page), -1)

    def setCurrentWidget(self, page: QtWidgets.QWidget) -> None:
        if (index := self.indexOf(page)) >= 0:
            self.setCurrentIndex(index)
