"""The window's edits: each widget edit becomes Session calls and one undo step.

The window owns one Edits and sends it the text, drags, toolbar reorders and positions;
a refused edit is told through ``textChecked``, ``positionsRefused`` or the status line.
"""
from __future__ import annotations

from PySide6.QtCore import QObject, Signal

from .commands import edit_order, edit_positions, edit_text, history_fits, order_step


def model_remark(event) -> str:
    """What a new model (a ModelChanged) undid: the order, the undo history or both, in
    few words: it heads the evaluation's line, whole in a 1024-pixel window (the model
    is named in the chooser, the title and the facts)."""
    if not event.tokens_changed:
        return "The earlier texts do not fit this model: undo starts here"
    if event.order_reset:
        return "New tokens: back to the original order, undo starts here"
    return "New tokens: undo starts here"


OPENED_TOKENS = 6           # the opened order's first tokens named in its remark
TITLE_CHARS = 40            # a scenario's title in it, at most (its panel shows it whole)


def short_title(title: str) -> str:
    """A scenario's title up to its colon, within TITLE_CHARS: the order after it stays
    readable in a 1024-pixel window's status line."""
    head = title.split(":")[0].strip()
    return head if len(head) <= TITLE_CHARS else head[:TITLE_CHARS - 1] + "…"


def opened_remark(what: str, tokens, order) -> str:
    """What opening a document (a scenario, a file) did, ahead of the evaluation's
    line: its name and the order it shows, e.g. "Opened scenario 'The causal mask
    leaks…': cat, the, sat, …; undo starts here" (a model's remark said "back to the
    original order" while the strip showed the scenario's swap)."""
    shown = [str(tokens[i]) for i in order]
    words = ", ".join(shown[:OPENED_TOKENS]) + (", …" if len(shown) > OPENED_TOKENS else "")
    return f"Opened {what}: {words}; undo starts here"


class Edits(QObject):
    """Widgets -> session: text, drags, toolbar reorders, positions; undo bookkeeping.

    A drag changes the session at every slot it passes and becomes one undo step when
    the mouse is let go. Until then undo and redo wait (they would undo a step from
    under the drag); any other edit that arrives meanwhile (a typed text, a position, a
    toolbar reorder, a new model) first records the drag so far as a step of its own.
    """

    textChecked = Signal(str, bool)     # the text's error ("" when taken), can truncate
    positionsRefused = Signal(str)      # why valid position ids cannot be taken
    undoWaits = Signal(bool)            # a drag is under way: undo and redo wait

    def __init__(self, controller, undo_stack, strip, status, parent=None):
        super().__init__(parent)
        self._controller = controller     # its session, once the core is loaded
        self._stack = undo_stack
        self._strip = strip
        self._status = status
        self._drag_from = None            # (n,) the order before the drag (or its last record)

    @property
    def session(self):
        return self._controller.session

    def apply_text(self, text: str, truncate: bool = False) -> None:
        """Turn ``text`` into tokens (one undo step); bad text is told in textChecked."""
        from ..errors import PosvizInputError

        s = self.session
        if s is None:
            return
        if text == s.text and not truncate:
            self.textChecked.emit("", False)
            return
        self.record_drag()
        try:
            step = edit_text(s, text, truncate=truncate)
        except PosvizInputError as error:
            self.textChecked.emit(str(error), self._too_long(text))
            return
        self.textChecked.emit("", False)
        self._push(step)

    def _too_long(self, text: str) -> bool:
        room = self.session.room()
        try:
            return room is not None and len(self.session.backend.tokenize(text)) > room
        except ValueError:
            return False

    # -- drags ------------------------------------------------------------------------
    def live_move(self, src: int, dst: int) -> None:
        from ..errors import PosvizInputError
        if self._drag_from is None:
            self._drag_from = self.session.order.copy()
            self._hold_undo()
        try:
            self.session.move(src, dst)
        except PosvizInputError as error:
            self._status.say(str(error), error=True)

    def drag_finished(self, before) -> None:
        """The whole drag, however many slots it passed, is one undo step."""
        strip = self._strip
        token = self.session.tokens[strip.selected[0]] if strip.selected else "token"
        self.record_drag(f"Drag “{token}”", ends=True)

    def drag_cancelled(self, before) -> None:
        if self._drag_from is not None:       # back to where the drag (or its record) began
            self.session.set_order(self._drag_from)
        self.forget_drag()

    def record_drag(self, label: str = "Drag", ends: bool = False) -> None:
        """Push the drag under way so far as one step; it goes on unless ``ends``."""
        if self._drag_from is None:
            return
        before, self._drag_from = self._drag_from, None
        self._push(order_step(self.session, before, label))
        if not ends:
            self._drag_from = self.session.order.copy()
        self._hold_undo()

    def forget_drag(self) -> None:
        self._drag_from = None
        self._hold_undo()

    def _hold_undo(self) -> None:
        self.undoWaits.emit(self._drag_from is not None)

    def _push(self, step) -> None:
        """Record an edit already made as one undo step (its first redo does nothing)."""
        if step is not None:
            self._stack.push(step)
            if self._drag_from is not None:     # a drag goes on from the step's result
                self._drag_from = self.session.order.copy()
            self._hold_undo()

    # -- reorders and positions -------------------------------------------------------
    def reorder(self, label: str, method: str) -> None:
        """Shuffle / reverse / rotate / reset as one undo step."""
        self.record_drag()
        self._push(edit_order(self.session, method, label=label))

    def swap_selected(self) -> None:
        slots = self._strip.selected_slots()
        if len(slots) != 2:
            return
        from ..errors import PosvizInputError
        self.record_drag()
        try:
            self._push(edit_order(self.session, "swap", *slots, label="Swap"))
        except PosvizInputError as error:
            self._status.say(str(error), error=True)

    def move_selected(self, step: int) -> None:
        move = self._strip.movable_step(step)
        if move is None:
            return
        self.record_drag()
        index = self.session.order[move[0]]
        self._push(edit_order(self.session, "move", *move, label="Move chip"))
        self._strip.tell_moved(int(index))

    def positions_edited(self, positions) -> None:
        from ..errors import PosvizInputError
        self.record_drag()
        try:        # an undo step too: undoing a text edit made before it undoes it first
            self._push(edit_positions(self.session, positions))
        except PosvizInputError as error:
            self.positionsRefused.emit(str(error))

    # -- the session's own changes ----------------------------------------------------
    def on_session_event(self, event) -> None:
        """A new model ends a drag under way and drops the steps that no longer apply;
        a new text forgets the drag (apply_text recorded it before)."""
        from ..document.events import ModelChanged, TextChanged
        if isinstance(event, ModelChanged):
            self.record_drag(ends=True)        # the strip forgets a drag under way
            if event.tokens_changed or not history_fits(
                    self._stack, self.session.backend.max_positions):
                steps = self._stack.count()
                self._stack.clear()    # its steps belong to the previous tokens, or
                                       # bring back a text the model cannot hold
                if event.order_reset or steps:
                    self._status.remark = model_remark(event)
        elif isinstance(event, TextChanged):
            self.forget_drag()
