"""Undo commands, and the edits that make them. Each command calls the Session's public
methods, nothing else.

A drag or a typed edit has already changed the session when its command is pushed
(QUndoStack.push calls redo at once). That first redo needs no special case: setting the
session to the state it already holds changes nothing and tells nothing.

Every change of the document that a later undo depends on is a command: the text, the
order and the position ids. So the steps undo in the reverse order they were made, each
from exactly the state it left, and none can find a text that no longer fits the
model's positions (an offset raised after a text edit is undone before that edit). Only
a new model is not a step; ``history_fits`` says whether the steps still fit it.

The ``edit_*`` functions change a session and return the command that records the
change (already made), or None when nothing changed; a refused edit raises
PosvizInputError and changes nothing. The window pushes what they return.
"""
from __future__ import annotations

import numpy as np
from PySide6.QtGui import QUndoCommand

POSITIONS_ID = 1          # consecutive offset edits (spin box steps) merge into one step


class OrderCommand(QUndoCommand):
    """Any reorder (a whole drag, shuffle, reverse, ...): before order -> after order."""

    def __init__(self, session, before, after, text: str = "Reorder"):
        super().__init__(text)
        self.session = session
        self.before = np.array(before, dtype=np.int64)   # (n,)
        self.after = np.array(after, dtype=np.int64)     # (n,)
        self.needs = session.positions.offset + len(self.after)   # positions it needs

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
        self.after_length = len(session.seq)       # the new text's tokens, once cut to fit
        self.needs = session.positions.offset + max(len(self.before_order), self.after_length)

    def redo(self) -> None:
        # A text that was cut to fit comes back cut as it was (not to the room a new
        # model may have); truncate=True only guards against a model that holds less.
        self.session.set_text(self.after_text, truncate=True, at_most=self.after_length)

    def undo(self) -> None:
        self.session.set_text(self.before_text, truncate=True,
                              at_most=len(self.before_order))
        if len(self.before_order) == len(self.session.seq):
            self.session.set_order(self.before_order)


class PositionsCommand(QUndoCommand):
    """New position ids (mode or offset): before -> after."""

    def __init__(self, session, before, after):   # Positions
        super().__init__("Change positions")
        self.session = session
        self.before, self.after = before, after
        self.needs = max(before.offset, after.offset) + len(session.seq)

    def redo(self) -> None:
        self.session.set_positions(self.after)

    def undo(self) -> None:
        self.session.set_positions(self.before)

    def id(self) -> int:
        return POSITIONS_ID

    def mergeWith(self, other: QUndoCommand) -> bool:
        """Offset steps in a row are one step (a mode change stays a step of its own)."""
        if not (isinstance(other, PositionsCommand) and other.session is self.session
                and self.before.mode == self.after.mode == other.after.mode):
            return False
        self.after = other.after
        self.needs = max(self.needs, other.needs)
        self.setObsolete(self.after == self.before)     # back where it started: no step
        return True


# -- edits: change the session, return the step that records it ---------------------------
def edit_text(session, text: str, truncate: bool = False) -> TextCommand | None:
    before_text, before_order, before_seq = session.text, session.order.copy(), session.seq
    session.set_text(text, truncate=truncate)
    if session.text == before_text and session.seq == before_seq:
        return None
    return TextCommand(session, before_text, before_order, text)


def edit_order(session, method: str, *args, label: str = "Reorder") -> OrderCommand | None:
    """Call one of the session's reorders (move, swap, shuffle, reverse, ...)."""
    before = session.order.copy()
    getattr(session, method)(*args)
    return order_step(session, before, label)


def order_step(session, before, label: str = "Reorder") -> OrderCommand | None:
    """The step for a reorder already made (a whole drag), or None if it changed nothing."""
    if np.array_equal(before, session.order):
        return None
    return OrderCommand(session, before, session.order, label)


def edit_positions(session, positions) -> PositionsCommand | None:
    before = session.positions
    session.set_positions(positions)
    if session.positions == before:
        return None
    return PositionsCommand(session, before, session.positions)


def history_fits(stack, max_positions: int | None) -> bool:
    """Does every state the stack's steps can bring back fit a model with this many
    positions? (Each state is one a step leaves or restores: a step records the most
    positions those need.)"""
    if max_positions is None:
        return True
    return all(getattr(stack.command(i), "needs", 0) <= max_positions
               for i in range(stack.count()))
