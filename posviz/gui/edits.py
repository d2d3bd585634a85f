"""The window's edits: each widget edit becomes Session calls and one undo step.

A mixin of MainWindow (it uses the window's session, text field, strip, undo stack and
status line), kept apart so the window's file holds its layout and its observation of
the session, and this one the way back.
"""
from __future__ import annotations

from .commands import edit_order, edit_positions, edit_text, order_step


class WindowEdits:
    """Widgets -> session: text, drags, toolbar reorders, positions; undo bookkeeping."""

    def apply_text(self, truncate: bool = False) -> None:
        """Turn the text field into tokens (one undo step); bad text is told inline."""
        from ..errors import PosvizInputError

        self._text_timer.stop()
        s = self.session
        if s is None:
            return
        text = self.text_edit.text()
        if text == s.text and not truncate:
            self._show_text_error("")
            return
        self._record_drag()
        try:
            step = edit_text(s, text, truncate=truncate)
        except PosvizInputError as error:
            self._show_text_error(str(error), can_truncate=self._too_long(text))
            return
        self._show_text_error("")
        self._push(step)

    def _too_long(self, text: str) -> bool:
        room = self.session.room()
        try:
            return room is not None and len(self.session.backend.tokenize(text)) > room
        except ValueError:
            return False

    def _show_text_error(self, message: str, can_truncate: bool = False) -> None:
        self.text_error.setText(message)
        self.text_error.setVisible(bool(message))
        self.hint.setVisible(not message and not self._short())
        self.truncate_button.setVisible(can_truncate)
        self.text_edit.setStyleSheet("QLineEdit { border: 1px solid #c62828; }"
                                     if message else "")

    def use_example(self, sentence: str) -> None:
        self.text_edit.setText(sentence)
        self.apply_text()

    # A drag changes the session at every slot it passes and becomes one undo step when
    # the mouse is let go. Until then undo and redo wait (they would undo a step from
    # under the drag); any other edit that arrives meanwhile (a typed text, a position,
    # a toolbar reorder, a new model) first records the drag so far as a step of its own.
    _drag_from = None                 # (n,) the order before the drag (or its last record)

    def _live_move(self, src: int, dst: int) -> None:
        from ..errors import PosvizInputError
        if self._drag_from is None:
            self._drag_from = self.session.order.copy()
            self._hold_undo()
        try:
            self.session.move(src, dst)
        except PosvizInputError as error:
            self._state(str(error), error=True)

    def _drag_finished(self, before) -> None:
        """The whole drag, however many slots it passed, is one undo step."""
        token = self.session.tokens[self.strip.selected[0]] if self.strip.selected else "token"
        self._record_drag(f"Drag “{token}”", ends=True)

    def _drag_cancelled(self, before) -> None:
        if self._drag_from is not None:       # back to where the drag (or its record) began
            self.session.set_order(self._drag_from)
        self._forget_drag()

    def _record_drag(self, label: str = "Drag", ends: bool = False) -> None:
        """Push the drag under way so far as one step; it goes on unless ``ends``."""
        if self._drag_from is None:
            return
        before, self._drag_from = self._drag_from, None
        self._push(order_step(self.session, before, label))
        if not ends:
            self._drag_from = self.session.order.copy()
        self._hold_undo()

    def _forget_drag(self) -> None:
        self._drag_from = None
        self._hold_undo()

    def _hold_undo(self) -> None:
        """Undo and redo wait while a drag is under way."""
        dragging = self._drag_from is not None
        self.undo_action.setEnabled(not dragging and self.undo_stack.canUndo())
        self.redo_action.setEnabled(not dragging and self.undo_stack.canRedo())

    def _push(self, step) -> None:
        """Record an edit already made as one undo step (its first redo does nothing)."""
        if step is not None:
            self.undo_stack.push(step)
            if self._drag_from is not None:     # a drag goes on from the step's result
                self._drag_from = self.session.order.copy()
            self._hold_undo()

    def _push_order(self, before, label: str) -> None:
        self._push(order_step(self.session, before, label))

    def reorder(self, label: str, method: str) -> None:
        """Shuffle / reverse / rotate / reset as one undo step."""
        self._record_drag()
        self._push(edit_order(self.session, method, label=label))

    def swap_selected(self) -> None:
        slots = self.strip.selected_slots()
        if len(slots) != 2:
            return
        from ..errors import PosvizInputError
        self._record_drag()
        try:
            self._push(edit_order(self.session, "swap", *slots, label="Swap"))
        except PosvizInputError as error:
            self._state(str(error), error=True)

    def move_selected(self, step: int) -> None:
        move = self.strip.movable_step(step)
        if move is None:
            return
        self._record_drag()
        self._push(edit_order(self.session, "move", *move, label="Move chip"))

    def _positions_edited(self, positions) -> None:
        from ..errors import PosvizInputError
        self._record_drag()
        try:        # an undo step too: undoing a text edit made before it undoes it first
            self._push(edit_positions(self.session, positions))
        except PosvizInputError as error:
            self.model_panel.show_positions_error(str(error))
