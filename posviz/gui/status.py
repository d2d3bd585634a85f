"""The window's status line: what the last evaluation took, "computing…" when one takes
a while, errors, and what an opened document says until the next edit."""
from __future__ import annotations

from PySide6.QtCore import QObject, QSize, Qt, QTimer
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy

ERROR_STYLE = "color: #c62828;"
COMPUTING_AFTER_MS = 150          # an evaluation slower than this says "computing…"


class ElidedLabel(QLabel):
    """One line of the status bar: its text elided at the right to the width it gets,
    whole in its tooltip when cut (a long line ran off a 1024-pixel window). ``keeps``:
    it asks for its text's width (the hover's value) and gives way only past that; else
    it takes what is left (the status line's stretch)."""

    def __init__(self, text: str = "", keeps: bool = False):
        super().__init__(text)
        self.setSizePolicy(QSizePolicy.Policy.Preferred if keeps else
                           QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        return QSize(20, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """What is painted: the text, elided to the width."""
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideRight,
                                             max(self.contentsRect().width(), 0))

    def paintEvent(self, event) -> None:
        shown = self.shown_text()
        tip = self.text() if shown != self.text() else ""
        if tip != self.toolTip():
            self.setToolTip(tip)
        with QPainter(self) as painter:               # ended even if a call raises
            painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
            painter.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft
                                                      | Qt.AlignmentFlag.AlignVCenter), shown)


class StatusLine(QObject):
    """Says things on ``label``; remembers the last evaluation's line (``settled``) to
    show again once an error or a load's message no longer applies."""

    def __init__(self, label: QLabel, parent: QObject | None = None):
        super().__init__(parent)
        self.label = label
        self.settled = ""         # the last evaluation's line
        self.notice = ""          # what the opened document says (a model stood in)
        self.remark = ""          # what an edit undid, before the evaluations' lines
        self._remarked = False    # the remark was shown: the next edit ends it
        # "computing…" only for an evaluation that takes a while: during a drag it would
        # flash at every slot (and re-lay the status bar out twice per reorder).
        self.computing = QTimer(self, singleShot=True, interval=COMPUTING_AFTER_MS,
                                timeout=lambda: self.say("computing…"))

    def say(self, text: str, error: bool = False) -> None:
        self.label.setText(text)
        style = ERROR_STYLE if error else ""
        if self.label.styleSheet() != style:     # a style sheet re-polishes the label
            self.label.setStyleSheet(style)

    def is_error(self) -> bool:
        return self.label.styleSheet() == ERROR_STYLE

    def evaluated(self, text: str) -> None:
        """An evaluation was shown: its line, unless a notice stands."""
        self.computing.stop()
        self.settled = f"{self.remark} · {text}" if self.remark else text
        self._remarked = bool(self.remark)
        self.say(self.notice or self.settled, error=bool(self.notice))

    def failed(self, text: str) -> None:
        self.computing.stop()
        self.say(text, error=True)

    def settle(self) -> None:
        """Back to the last evaluation's line."""
        self.say(self.settled)

    def edited(self) -> None:
        """An edit went through: an error about an earlier, refused one no longer
        applies, nor a remark shown about it."""
        if self._remarked:
            self.remark, self._remarked = "", False
        if self.is_error():
            self.settle()
