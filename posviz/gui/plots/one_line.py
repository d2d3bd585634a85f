"""A figure's note: one elided line until a click shows it whole (another folds it)."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets


class OneLineLabel(QtWidgets.QLabel):
    """A label that keeps its whole text (``text()``; the figure puts it in the tooltip)
    and, while ``one_line`` (at first), paints one line of it elided at the right to its
    width (its text never asks the layout for width); otherwise it wraps as a QLabel
    does. A click switches between the two; the user's choice stays for later notes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.one_line = True
        self.blank = False          # paints nothing (an export writes the text itself)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored,
                           QtWidgets.QSizePolicy.Policy.Preferred)
        self.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)

    def mousePressEvent(self, event) -> None:
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        self.set_one_line(not self.one_line)
        event.accept()

    def set_one_line(self, one_line: bool) -> None:
        if one_line != self.one_line:
            self.one_line = one_line
            self.setWordWrap(not one_line)
            self.updateGeometry()
            self.update()

    def minimumSizeHint(self) -> QtCore.QSize:
        if not self.one_line:
            return super().minimumSizeHint()
        margins = self.contentsMargins()
        return QtCore.QSize(20, self.fontMetrics().height() + margins.top() + margins.bottom())

    def sizeHint(self) -> QtCore.QSize:
        return super().sizeHint() if not self.one_line else self.minimumSizeHint()

    def heightForWidth(self, width: int) -> int:
        return super().heightForWidth(width) if not self.one_line else -1

    def hasHeightForWidth(self) -> bool:
        return not self.one_line and super().hasHeightForWidth()

    def shown_text(self) -> str:
        """What is painted while on one line: the text, its lines joined by " — ", elided
        to the width (a line break would paint a second line over the first)."""
        text = " — ".join(line for line in self.text().splitlines() if line.strip())
        return self.fontMetrics().elidedText(text, QtCore.Qt.TextElideMode.ElideRight,
                                             max(self.contentsRect().width(), 0))

    def paintEvent(self, event) -> None:
        if self.blank:
            return
        if not self.one_line:
            return super().paintEvent(event)
        painter = QtGui.QPainter(self)
        painter.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
        painter.setFont(self.font())
        painter.drawText(self.contentsRect(), int(QtCore.Qt.AlignmentFlag.AlignLeft
                                                  | QtCore.Qt.AlignmentFlag.AlignVCenter),
                         self.shown_text())
