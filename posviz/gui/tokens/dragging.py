"""How the token strip answers the mouse and the keys: a press selects a chip (Ctrl or
Shift+click a second, for Swap), a drag past the middle of a neighbour asks for a move
(``moveRequested``), the release ends the drag as one step (``dragFinished``), Escape
cancels it (``dragCancelled``); the arrow keys move the selection."""
from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtWidgets import QApplication, QScrollArea

from .strip_layout import ROW_SPACING


class Dragging:
    """The part of strip.TokenStrip that handles its mouse and keys (``_press``: the
    point, original index and grab offset of a press; ``_dragging``, ``_before``: the
    order when the drag began)."""

    def _reading_key(self, point: QPointF) -> tuple[int, float]:
        """(row, x) of a point, to compare positions in reading order."""
        row = 0
        for row, (top, bottom) in enumerate(self._rows):
            if point.y() < bottom + ROW_SPACING / 2:
                break
        return row, point.x()

    def _target_slot(self, slot: int, point: QPointF) -> int:
        """Where the dragged chip belongs: past the middle of a neighbour, it moves."""
        key = self._reading_key(point)
        target = slot
        while (target + 1 < len(self.order) and self.movable[target + 1]
               and key > self._reading_key(self._rects[target + 1].center())):
            target += 1
        while (target - 1 >= 0 and self.movable[target - 1]
               and key < self._reading_key(self._rects[target - 1].center())):
            target -= 1
        return target

    # -- mouse ------------------------------------------------------------------------
    def mousePressEvent(self, event) -> None:
        if event.button() != Qt.LeftButton:
            return super().mousePressEvent(event)
        self.setFocus(Qt.MouseFocusReason)
        point = event.position()
        slot = self.slot_at(point)
        if slot is None:
            if self.selected:
                self.select_slots([])
            return
        index = self.order[slot]
        if event.modifiers() & (Qt.ControlModifier | Qt.ShiftModifier):
            if index in self.selected:
                self.selected.remove(index)
            else:
                self.selected = (self.selected + [index])[-2:]
        else:
            self.selected = [index]
        self.update()
        self.selectionChanged.emit()
        if self.movable[slot]:
            self._press = (point, index, point - self._rects[slot].topLeft())

    def mouseMoveEvent(self, event) -> None:
        point = event.position()
        if self._press is None:
            self._hover_at(point)
            return
        start, index, _ = self._press
        if not self._dragging:
            if (point - start).manhattanLength() < QApplication.startDragDistance():
                return
            self._dragging = True
            self._before = list(self.order)
            self.setCursor(Qt.ClosedHandCursor)
        self._drag_point = point
        slot = self.slot_of(index)
        target = self._target_slot(slot, point)
        if target != slot:
            self.moveRequested.emit(slot, target)    # the window calls set_order back
            self.hoverMessage.emit(f"moving “{self.tokens[index]}” (original index {index}) "
                                   f"to slot {target}")
        self._autoscroll(point)
        self.update()

    def mouseReleaseEvent(self, event) -> None:
        if event.button() != Qt.LeftButton or self._press is None:
            return super().mouseReleaseEvent(event)
        dragging, index = self._dragging, self._press[1]
        # where the chip was last drawn, read while the grab offset is still known (read
        # after it, the chip's centre stood in for it and the repaint missed its edge)
        ghost = self._ghost_rect(index) if dragging else None
        self._press, self._dragging = None, False
        self.unsetCursor()
        if dragging:
            self._shown[index] = ghost.topLeft()
            self.update(self._ghost_area(ghost))              # the lifted chip and shadow
            self.update(self._ghost_area(self._rects[self.slot_of(index)]))   # its place
            self._relayout(animate=True)
            if not self.sliding():      # many chips jump: this one too, from where it was
                self._shown[index] = self._rects[self.slot_of(index)].topLeft()   # let go
            self.dragFinished.emit(self._before)   # back where it began too: the drag is over
        self._before = None
        self._hover_at(event.position())

    def _hover_at(self, point: QPointF) -> None:
        slot = self.slot_at(point)
        if slot is None:
            self.hoverMessage.emit("")
            return
        index = self.order[slot]
        kind = " (special token: it keeps its place)" if self.pinned[index] else ""
        self.hoverMessage.emit(f"“{self.tokens[index]}”: original index {index}, "
                               f"now at slot {slot}{kind}")

    def tell_moved(self, index: int) -> None:
        """Name the chip a key moved (original ``index``) and where it went: the chip
        under the mouse is now its displaced neighbour, not the one that moved."""
        self.hoverMessage.emit(f"moved “{self.tokens[index]}” (original index {index}) "
                               f"to slot {self.slot_of(index)}")

    def _grab_offset(self, index: int) -> QPointF:
        return self._press[2] if self._press else QPointF(self._sizes[index].width() / 2,
                                                           self._sizes[index].height() / 2)

    def _autoscroll(self, point: QPointF) -> None:
        parent = self.parentWidget()
        while parent is not None and not isinstance(parent, QScrollArea):
            parent = parent.parentWidget()
        if parent is not None:
            parent.ensureVisible(int(point.x()), int(point.y()), 10, 24)

    def leaveEvent(self, event) -> None:
        self.hoverMessage.emit("")
        super().leaveEvent(event)

    # -- keyboard ---------------------------------------------------------------------
    def keyPressEvent(self, event) -> None:
        key = event.key()
        if key == Qt.Key_Escape and self._dragging:
            before = self._before
            self._press, self._dragging, self._before = None, False, None
            self.unsetCursor()
            self.dragCancelled.emit(before)
            return
        if key in (Qt.Key_Left, Qt.Key_Right) and not event.modifiers() & Qt.AltModifier \
                and self.order:
            step = -1 if key == Qt.Key_Left else 1
            slot = self.selected_slots()[-1] + step if self.selected else 0
            self.select_slots([min(max(slot, 0), len(self.order) - 1)])
            return
        super().keyPressEvent(event)

    def movable_step(self, step: int) -> tuple[int, int] | None:
        """(src, dst) to move the selected chip one slot left (-1) or right (+1), if it can."""
        if len(self.selected) != 1:
            return None
        src = self.slot_of(self.selected[0])
        dst = src + step
        if not 0 <= dst < len(self.order) or not (self.movable[src] and self.movable[dst]):
            return None
        return src, dst
