"""Undo commands. Each one calls the Session's public methods, nothing else.

A drag or a typed edit has already changed the session when its command is pushed, so
those commands skip their first redo (QUndoStack.push calls redo at once).
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QUndoCommand


class _Applied(QUndoCommand):
    """A command whose effect may already be in the session when it is pushed."""

    def __init__(self, text: str, applied: bool):
        super().__init__(text)
        self._skip_redo = applied

    def redo(self) -> None:
        if self._skip_redo:
            self._skip_redo = False
            return
        self.apply()

    def apply(self) -> None:
        raise NotImplementedError


class OrderCommand(_Applied):
    """Any reorder (a whole drag, shuffle, reverse, ...): before order -> after order."""

    def __init__(self, session, before, after, text: str = "Reorder", applied: bool = True):
        super().__init__(text, applied)
        self.session = session
        self.before = np.array(before, dtype=np.int64)   # (n,)
        self.after = np.array(after, dtype=np.int64)     # (n,)

    def apply(self) -> None:
        self.session.set_order(self.after)

    def undo(self) -> None:
        self.session.set_order(self.before)


class TextCommand(_Applied):
    """A new text; undo brings back the old text and the order it was shown in."""

    def __init__(self, session, before_text: str, before_order, after_text: str,
                 applied: bool = True):
        super().__init__("Edit text", applied)
        self.session = session
        self.before_text, self.after_text = before_text, after_text
        self.before_order = np.array(before_order, dtype=np.int64)   # (n_before,)

    def apply(self) -> None:
        # truncate=True replays a text that was cut to fit, and changes nothing otherwise.
        self.session.set_text(self.after_text, truncate=True)

    def undo(self) -> None:
        self.session.set_text(self.before_text, truncate=True)
        if len(self.before_order) == len(self.session.seq):
            self.session.set_order(self.before_order)
