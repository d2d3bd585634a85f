"""The window's status line: what the last evaluation took, "computing…" when one takes
a while, errors, and what an opened document says until the next edit."""
from __future__ import annotations

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QLabel

ERROR_STYLE = "color: #c62828;"
COMPUTING_AFTER_MS = 150          # an evaluation slower than this says "computing…"


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
