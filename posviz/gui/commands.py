"""Undo commands. Each one calls the Session's public methods, nothing else.

A drag or a typed edit has already changed the session when its command is pushed
(QUndoStack.push calls redo at once). That first redo needs no special case: setting the
session to the state it already holds changes nothing and tells nothing.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QUndoCommand


class OrderCommand(QUndoCommand):
    """Any reorder (a whole drag, shuffle, reverse, ...): before order -> after order."""

    def __init__(self, session, before, after, text: str = "Reorder"):
        super().__init__(text)
        self.session = session
        self.before = np.array(before, dtype=np.int64)   # (n,)
        self.after = np.array(after, dtype=np.int64)     # (n,)

    def redo(self) -> None:
        self.session.set_order(self.after)

    def undo(self) -> None:
        self.session.set_order(self.before)


class TextCommand(QUndoCommand):
    """A new text; undo brings back the old text and the order it was shown in."""

    def __init__(self, session, before_text: str, before_order, after_text: str):
        super().__init__("Edit text")
        self.session = session
        self.before_text, self.after_text = before_text, after_text
        self.before_order = np.array(before_order, dtype=np.int64)   # (n_before,)

    def redo(self) -> None:
        # truncate=True replays a text that was cut to fit, and changes nothing otherwise.
        self.session.set_text(self.after_text, truncate=True)

    def undo(self) -> None:
        self.session.set_text(self.before_text, truncate=True)
        if len(self.before_order) == len(self.session.seq):
            self.session.set_order(self.before_order)
