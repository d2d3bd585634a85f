"""The token strip: one chip per token, reordered by dragging with the mouse.

The strip only shows an order and asks for changes: it never rearranges itself. While a
chip is dragged, each time the pointer passes the middle of a neighbouring chip the strip
emits ``moveRequested(src, dst)``; the window turns that into ``session.move(src, dst)``
and hands the new order back through ``set_order``, so the plots follow the drag live
and the other chips slide aside. On release ``dragFinished(before_order)`` lets the
window record the whole drag as one undo step. Which slots may change at all is the
session's rule (``Session.movable_slots``), handed in with the tokens.

Press / move / release are handled by the strip itself (dragging.py; no QDrag), so a drag can be driven by QTest
offscreen and can preview live; the dragged chip stays inside the strip.

Painting stays cheap while the model computes on the other core: each chip is drawn
once into a cached pixmap, a slide repaints only the area of the chips that move, and
a reorder that moves many chips at once (shuffle, reverse) jumps instead of sliding.
"""
from __future__ import annotations

from PySide6.QtCore import QPointF, QRectF, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QCursor, QFont, QPainter, QPen, QPixmap, QRegion
from PySide6.QtWidgets import QSizePolicy, QWidget

from .chips import COLORS, chip_size, draw_chip
from .dragging import Dragging
from .strip_layout import MARGIN, ROW_SPACING, SPACING, kept_inside, slots_between, wrap
from posviz.models.backend import CONTINUES
from posviz.models.formats.pieces import REST

ANIMATE_UP_TO = 256           # chips; beyond this they jump instead of sliding
ANIMATE_MOVED_UP_TO = 16      # a reorder moving more chips than this jumps (shuffle)


class TokenStrip(Dragging, QWidget):
    """Chips for ``tokens[order]``, wrapped into rows; drag one to reorder."""

    moveRequested = Signal(int, int)      # slot src -> slot dst, during a drag or a key move
    dragFinished = Signal(object)         # the order before the drag (np.ndarray)
    dragCancelled = Signal(object)        # Escape during a drag: the order to go back to
    selectionChanged = Signal()
    hoverMessage = Signal(str)
    heightChanged = Signal(int)           # the rows need this many pixels

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setFocusPolicy(Qt.StrongFocus)
        self.setMouseTracking(True)
        self.setSizePolicy(QSizePolicy.Expanding, QSizePolicy.Fixed)
        self.setToolTip("Drag a chip to reorder the tokens; the plots follow as you drag.\n"
                        "Click to select, Ctrl+click to select a second chip for Swap.\n"
                        "The small number is each token's original index.\n"
                        f"{CONTINUES}: a piece inside a word. {REST}: only the rest of "
                        "the character on the chip before.\n"
                        "Grey chips are special tokens: they keep their places.\n"
                        "The red bar under a chip: how much that token's output changed "
                        "at the last layer (log scale, from rounding to 100 %).")
        self.setAccessibleName("token strip")
        self._font = QFont(self.font())
        self._font.setPointSizeF(self._font.pointSizeF() * 1.1)
        self._badge_font = QFont(self.font())
        self._badge_font.setPointSizeF(self.font().pointSizeF() * 0.75)
        self.tokens: list[str] = []
        self.pinned: list[bool] = []         # per original index: drawn as special
        self.movable: list[bool] = []        # per slot: may a reorder change it
        self.order: list[int] = []           # order[slot] = original index
        self.selected: list[int] = []        # original indices, in click order
        self._sizes: list[QSize] = []        # per original index
        self._rects: list[QRectF] = []       # per slot: where the layout puts it
        self._rows: list[tuple[float, float]] = []   # (top, bottom) of each row
        self._layout = None                  # strip_layout.Layout of _rects and _rows
        self._shown: dict[int, QPointF] = {}  # original index -> drawn top-left (animated)
        self._press = None                   # (point, original index, grab offset)
        self._dragging = False
        self._drag_point = QPointF()
        self._before = None
        self._animation = QTimer(self, interval=15, timeout=self._step_animation)
        self._change: list[float] | None = None     # per original index, 0..1 (bar length)
        self._pixmaps: dict[tuple, QPixmap] = {}    # chip look -> its picture

    # -- content ----------------------------------------------------------------------
    def set_tokens(self, tokens, pinned, order, movable) -> None:
        """New tokens (a new text or model): forget selection and any drag.

        ``movable`` (n,) bool per slot comes from the session: the slots a drag or a
        key move may change (a special token's slot is not one of them)."""
        self.tokens, self.pinned = list(tokens), [bool(p) for p in pinned]
        self.movable = [bool(m) for m in movable]
        self.order = [int(i) for i in order]
        self.selected = []
        self._change = None
        self._press, self._dragging = None, False
        self._sizes = [chip_size(token, i, self._font, self._badge_font)
                       for i, token in enumerate(self.tokens)]
        self._shown = {}
        self._pixmaps.clear()
        self._layout = None                  # chips of other sizes: laid out afresh
        self._relayout(animate=False)
        self.selectionChanged.emit()

    def set_change(self, change) -> None:
        """(n,) values in 0..1 per original token (how much its output changed), drawn as a
        bar under each chip, or None to draw none."""
        self._change = None if change is None else [float(v) for v in change]
        self.update()

    def change(self) -> list[float] | None:
        """The bar lengths drawn under the chips, per original token."""
        return None if self._change is None else list(self._change)

    def set_order(self, order) -> None:
        """Show a new order (the session changed); chips slide to their new slots,
        unless many move at once (then they jump: sliding them all would only cost
        time while the model recomputes)."""
        order = [int(i) for i in order]
        moved = sum(a != b for a, b in zip(order, self.order)) if len(order) == len(
            self.order) else len(order)
        self.order = order
        self._relayout(animate=moved <= ANIMATE_MOVED_UP_TO or self._dragging)
        if self.underMouse() and self._press is None:     # e.g. moved by Alt+Right:
            self._hover_at(QPointF(self.mapFromGlobal(QCursor.pos())))  # the slot changed

    def sliding(self) -> bool:
        """Are chips on their way to new slots (drawn where they were until the first
        step, 15 ms on)?"""
        return self._animation.isActive()

    def slot_of(self, index: int) -> int:
        return self.order.index(index)

    def chip_rect(self, slot: int) -> QRectF:
        """Where the chip in ``slot`` sits (widget coordinates), ignoring any animation."""
        return QRectF(self._rects[slot])

    def selected_slots(self) -> list[int]:
        return [self.slot_of(i) for i in self.selected]

    def select_slots(self, slots) -> None:
        self.selected = [self.order[s] for s in slots]
        self.update()
        self.selectionChanged.emit()

    # -- layout -----------------------------------------------------------------------
    def _relayout(self, animate: bool) -> None:
        self._layout = wrap(self._sizes, self.order, max(self.width(), 200), self._layout)
        self._rects, self._rows = self._layout.rects, self._layout.rows
        height = int((self._rows[-1][1] if self._rows else 30) + MARGIN)
        if self.minimumHeight() != height:
            self.setMinimumHeight(height)
            self.setMaximumHeight(height)
            self.heightChanged.emit(height)
        few = len(self.order) <= ANIMATE_UP_TO     # many: chips jump, only moved ones
        animate = animate and few and self.isVisible()
        placed = not animate            # a chip put at its place at once
        for slot in range(len(self.order)) if few else self._layout.changed:
            index = self.order[slot]
            if not animate or index not in self._shown:
                self._shown[index] = self._rects[slot].topLeft()
                placed = True
        if animate:
            self._animation.start()     # its steps paint: until the first, nothing moved
        if placed:
            self.update()

    def _step_animation(self) -> None:
        moving = False
        dirty = QRegion()                    # where moving chips were and now are
        for slot, index in enumerate(self.order):
            target, now = self._rects[slot].topLeft(), self._shown[index]
            if now == target:
                continue
            delta = target - now
            if abs(delta.x()) + abs(delta.y()) < 0.6:
                self._shown[index] = target
            else:
                self._shown[index] = now + delta * 0.35
                moving = True
            size = self._rects[slot].size()
            for corner in (now, self._shown[index]):
                dirty += self._ghost_area(QRectF(corner, size))
        if not moving:
            self._animation.stop()
        if self._dragging:
            self.update()                    # the lifted chip and its place follow too
        elif not dirty.isEmpty():
            self.update(dirty)

    def resizeEvent(self, event) -> None:
        if event.oldSize().width() != event.size().width():
            self._relayout(animate=False)
        super().resizeEvent(event)

    def sizeHint(self) -> QSize:
        return QSize(600, self.minimumHeight() or 40)

    # -- hit testing ------------------------------------------------------------------
    def slot_at(self, point: QPointF) -> int | None:
        if self._layout is None:
            return None
        for slot in slots_between(self._layout, point.y() - ROW_SPACING,
                                  point.y() + ROW_SPACING):
            rect = self._rects[slot]
            if rect.adjusted(-SPACING / 2, -ROW_SPACING / 2, SPACING / 2,
                             ROW_SPACING / 2).contains(point):
                return slot
        return None

    # -- painting ---------------------------------------------------------------------
    def paintEvent(self, event) -> None:
        with QPainter(self) as painter:               # ended even if a call raises
            self._paint(painter, event)

    def _paint(self, painter: QPainter, event) -> None:
        painter.setRenderHint(QPainter.Antialiasing)
        clip = event.region()
        bounds = event.rect()                  # rows outside it are skipped cheaply
        top, bottom = bounds.top() - 1, bounds.bottom() + 1
        dragged = self._press[1] if self._dragging else None
        many = len(self.order) > ANIMATE_UP_TO and self._layout is not None
        for slot in slots_between(self._layout, top, bottom) if many else range(len(self.order)):
            index = self.order[slot]
            at = self._shown[index]
            size = self._sizes[index]
            if index == dragged or at.y() > bottom or at.y() + size.height() < top:
                continue
            rect = QRectF(at.x(), at.y(), size.width(), size.height())
            if clip.intersects(rect.toAlignedRect()):
                self._paint_chip(painter, rect, index, slot)
        if dragged is not None:
            slot = self.slot_of(dragged)
            # the chip's future place, then the chip itself under the pointer
            painter.setPen(QPen(COLORS["chip_border"], 1.2, Qt.DashLine))
            painter.setBrush(Qt.NoBrush)
            painter.drawRoundedRect(self._rects[slot].adjusted(1, 1, -1, -1), 7, 7)
            rect = self._ghost_rect(dragged)
            painter.setPen(Qt.NoPen)
            painter.setBrush(COLORS["shadow"])
            painter.drawRoundedRect(rect.translated(2, 3), 7, 7)
            self._paint_chip(painter, rect, dragged, slot, lifted=True)

    def _ghost_rect(self, index: int) -> QRectF:
        """Where the dragged chip is drawn: under the pointer, kept inside the strip."""
        return kept_inside(self._drag_point - self._grab_offset(index), self._sizes[index],
                           self.size())

    @staticmethod
    def _ghost_area(rect: QRectF):
        """The pixels a chip at ``rect`` may touch, with its shadow (2, 3 down-right) and
        the anti-aliased edges of both."""
        return rect.adjusted(-2, -2, 4, 5).toAlignedRect()

    def _paint_chip(self, painter: QPainter, rect: QRectF, index: int, slot: int,
                    lifted: bool = False) -> None:
        """Draw a chip from its cached picture (drawn once per look)."""
        moved, selected = index != slot, index in self.selected
        key = (index, moved, selected, lifted)
        pixmap = self._pixmaps.get(key)
        if pixmap is None:
            ratio = self.devicePixelRatioF()
            size = self._sizes[index]
            pixmap = QPixmap(round(size.width() * ratio), round(size.height() * ratio))
            pixmap.setDevicePixelRatio(ratio)
            pixmap.fill(Qt.transparent)
            with QPainter(pixmap) as chip:
                chip.setRenderHint(QPainter.Antialiasing)
                self._draw_chip(chip, QRectF(0, 0, size.width(), size.height()), index,
                                slot, lifted)
            self._pixmaps[key] = pixmap
        painter.drawPixmap(rect.topLeft(), pixmap)
        if self._change is not None and index < len(self._change) and self._change[index] > 0:
            bar = QRectF(rect.left() + 5, rect.bottom() - 4,
                         (rect.width() - 10) * min(self._change[index], 1.0), 2.5)
            painter.fillRect(bar, COLORS["change"])

    def _draw_chip(self, painter: QPainter, rect: QRectF, index: int, slot: int,
                   lifted: bool = False) -> None:
        """The chip itself (its change bar is drawn over the cached picture)."""
        draw_chip(painter, rect, self.tokens[index], index, (self._font, self._badge_font),
                  pinned=self.pinned[index], moved=index != slot,
                  selected=index in self.selected, lifted=lifted)
