"""The Experiments tab's status: one line while a run goes on (its progress wrapped to
three or four lines at 1024 pixels, moving the figure down and the page's scroll bar in
and out each second), its stage's words elided so that how far it is and the time left
stay whole; an error in as many lines as it needs (it stays until the inputs change)."""
from __future__ import annotations

from PySide6.QtCore import Qt

from ..status import ElidedLabel


class ProgressLine(ElidedLabel):
    """One line, its text elided to the width, whole in its tooltip; ``kept``: the end
    of the text (how far, the time left) painted whole, the words before it elided. A
    wrapped label only while it says an error (``say(..., wrap=True)``)."""

    def __init__(self):
        super().__init__()
        self.kept = ""

    def say(self, text: str, kept: str = "", wrap: bool = False) -> None:
        """Show ``text``, whose end ``kept`` is never elided; wrapped when ``wrap``."""
        kept = kept if text.endswith(kept) else ""
        while kept and len(kept) < len(text) and text[-len(kept) - 1] in " :;,":
            kept = text[-len(kept) - 1:]            # "stage…: 7 of 40 done", not "…7"
        self.kept = kept
        if wrap != self.wordWrap():
            self.setWordWrap(wrap)
            self.updateGeometry()
        self.setText(text)
        self.update()

    def shown_text(self) -> str:
        """What is painted: the words before ``kept`` elided to leave it room, else
        (no room for it) the whole text elided at the right."""
        text, kept, metrics = self.text(), self.kept, self.fontMetrics()
        room = max(self.contentsRect().width(), 0)
        if metrics.horizontalAdvance(text) <= room or not kept:
            return metrics.elidedText(text, self.elide, room)
        head_room = room - metrics.horizontalAdvance(kept)
        head = text[:len(text) - len(kept)]
        if head_room < metrics.horizontalAdvance("…") + 8:
            return metrics.elidedText(kept.lstrip(" :,;"), self.elide, room)
        return metrics.elidedText(head, Qt.TextElideMode.ElideRight, head_room) + kept

    def heightForWidth(self, width: int) -> int:
        return super().heightForWidth(width) if self.wordWrap() else -1

    def paintEvent(self, event) -> None:
        if self.wordWrap():                         # an error: whole, as QLabel lays it out
            self.setToolTip("")
            return super(ElidedLabel, self).paintEvent(event)
        return super().paintEvent(event)
