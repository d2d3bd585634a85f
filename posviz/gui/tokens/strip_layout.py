"""Where the token strip's chips sit: wrapped into rows, laid out again only from the
row before the first slot whose chip changed to the first row past the last one that starts
where it did; and which slots a region or a point can touch.

A drag at 4,096 tokens laid out and visited every chip at each move and each paint,
in Python, on the GUI thread.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF

MARGIN, SPACING, ROW_SPACING = 8.0, 6.0, 8.0


@dataclass
class Layout:
    """Chips in rows: per slot its rect, per row (top, bottom) and its first slot."""

    order: list[int]
    width: float
    rects: list[QRectF]
    rows: list[tuple[float, float]]
    row_starts: list[int]
    changed: range              # the slots whose rects were computed afresh


def wrap(sizes, order: list[int], width: float, old: Layout | None = None) -> Layout:
    """The layout of chips ``sizes[index]`` (QSize) in ``order`` within ``width``,
    reusing ``old``'s rows before the first changed slot and after the last."""
    n = len(order)
    first = 0
    if old is not None and old.width == width and len(old.order) == n:
        first = next((s for s in range(n) if order[s] != old.order[s]), n)
        last = next((s for s in range(n - 1, -1, -1) if order[s] != old.order[s]), -1)
    if old is None or first == 0 or old.width != width or len(old.order) != n:
        old, row, last = None, 0, n
    else:
        # the row before the one holding ``first``: a changed chip may fit at its end
        row = max(0, bisect_right(old.row_starts, first) - 2)
    rects = [] if old is None else old.rects[:old.row_starts[row]]
    rows = [] if old is None else old.rows[:row]
    starts = [] if old is None else old.row_starts[:row]
    y = MARGIN if old is None else old.rows[row][0]
    x, row_h, slot = MARGIN, 0.0, len(rects)
    begin = slot
    starts.append(slot)
    while slot < n:
        size = sizes[order[slot]]
        if x > MARGIN and x + size.width() > width - MARGIN:
            rows.append((y, y + row_h))
            x, y, row_h = MARGIN, y + row_h + ROW_SPACING, 0.0
            if old is not None and slot > last:             # the same row as before?
                at = bisect_left(old.row_starts, slot)
                if at < len(old.row_starts) and old.row_starts[at] == slot and \
                        old.rows[at][0] == y:
                    return Layout(list(order), width, rects + old.rects[slot:],
                                  rows + old.rows[at:], starts + old.row_starts[at:],
                                  range(begin, slot))
            starts.append(slot)
        rects.append(QRectF(x, y, size.width(), size.height()))
        x += size.width() + SPACING
        row_h = max(row_h, size.height())
        slot += 1
    if n:
        rows.append((y, y + row_h))
    else:
        starts.pop()
    return Layout(list(order), width, rects, rows, starts, range(begin, n))


def slots_between(layout: Layout, top: float, bottom: float) -> range:
    """The slots of the rows that reach into top..bottom (widget coordinates)."""
    first = bisect_right([r[1] for r in layout.rows], top)
    last = bisect_right([r[0] for r in layout.rows], bottom)   # rows [first, last) overlap
    if first >= last:
        return range(0)
    end = layout.row_starts[last] if last < len(layout.row_starts) else len(layout.rects)
    return range(layout.row_starts[first], end)


def kept_inside(point: QPointF, size, bounds) -> QRectF:
    """A chip of ``size`` at ``point``, moved to lie inside a widget of size ``bounds``:
    the chip dragged past the strip's left edge was cut there."""
    x = min(max(point.x(), 0.0), max(bounds.width() - size.width(), 0.0))
    y = min(max(point.y(), 0.0), max(bounds.height() - size.height(), 0.0))
    return QRectF(x, y, size.width(), size.height())
