"""The token strip paints from cached chip pictures exactly what drawing each chip
would, and slides chips only for reorders that move a few of them."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402

from posviz.gui.tokens.strip import ANIMATE_MOVED_UP_TO, TokenStrip  # noqa: E402
from conftest import on_screen  # noqa: E402

WORDS = "the cat sat on the mat because it was warm and the dog ran to an old house".split()


@pytest.fixture
def strip(qtbot):
    widget = on_screen(qtbot, TokenStrip(), 700, 200)
    tokens = WORDS * 2
    widget.set_tokens(tokens, [False] * len(tokens), range(len(tokens)), [True] * len(tokens))
    return widget


def drawn(strip, cached: bool) -> np.ndarray:
    """The strip's chips at rest, through its paint path or drawn one by one."""
    image = QImage(strip.size(), QImage.Format_ARGB32)
    image.fill(QColor("white"))
    painter = QPainter(image)
    painter.setRenderHint(QPainter.Antialiasing)
    for slot, index in enumerate(strip.order):
        rect = strip.chip_rect(slot)
        if cached:
            strip._paint_chip(painter, rect, index, slot)
        else:
            strip._draw_chip(painter, QRectF(rect), index, slot)
            bar = QRectF(rect.left() + 5, rect.bottom() - 4,
                         (rect.width() - 10) * min(strip.change()[index], 1.0), 2.5)
            painter.fillRect(bar, QColor("#c62828"))
    painter.end()
    return np.frombuffer(image.constBits(), np.uint8).reshape(image.height(), -1, 4).astype(int)


def test_cached_chips_look_like_drawn_ones(strip):
    strip.set_change([i / len(strip.tokens) for i in range(len(strip.tokens))])
    strip.select_slots([3])
    strip.set_order([1, 0] + list(range(2, len(strip.tokens))))
    strip._animation.stop()
    strip._shown = {i: strip.chip_rect(s).topLeft() for s, i in enumerate(strip.order)}
    cached, direct = drawn(strip, cached=True), drawn(strip, cached=False)
    gap = np.abs(cached - direct)
    # the same picture; only anti-aliased edges of the text may blend differently
    # through a transparent pixmap (a wrong colour, text or place would differ widely)
    assert (gap > 16).mean() < 0.002 and gap.mean() < 0.1
    strip.grab()                                       # a full paint goes through the cache
    assert len(strip._pixmaps) >= len(strip.tokens)


def test_a_small_move_slides_and_a_shuffle_jumps(strip, qtbot):
    n = len(strip.tokens)
    strip.set_order([1, 0] + list(range(2, n)))        # two chips move: they slide
    assert strip._animation.isActive()
    qtbot.waitUntil(lambda: not strip._animation.isActive(), timeout=3000)
    assert all(strip._shown[i] == strip.chip_rect(s).topLeft()
               for s, i in enumerate(strip.order))
    reversed_order = list(range(n - 1, -1, -1))        # every chip moves: they jump
    assert n > ANIMATE_MOVED_UP_TO
    strip.set_order(reversed_order)
    assert not strip._animation.isActive()
    assert all(strip._shown[i] == strip.chip_rect(s).topLeft()
               for s, i in enumerate(strip.order))


def test_the_strip_moves_only_the_slots_it_is_told_are_movable(qtbot):
    widget = TokenStrip()
    qtbot.addWidget(widget)
    widget.resize(700, 200)
    widget.show()
    widget.set_tokens(["[CLS]", "a", "b", "[SEP]"], [True, False, False, True], range(4),
                      [False, True, True, False])
    widget.select_slots([1])
    assert widget.movable_step(-1) is None and widget.movable_step(1) == (1, 2)
    widget.select_slots([2])
    assert widget.movable_step(1) is None and widget.movable_step(-1) == (2, 1)
    widget.select_slots([0])
    assert widget.movable_step(1) is None


def test_the_strip_says_what_its_marks_mean(strip):
    from posviz.models.backend import CONTINUES
    from posviz.models.formats.pieces import REST
    tip = strip.toolTip()
    assert f"{CONTINUES}: a piece inside a word" in tip
    assert f"{REST}: only the rest of the character on the chip before" in tip


def test_a_chip_dragged_past_the_left_edge_stays_inside_the_strip(strip, qtbot):
    """Grabbed near its right end and dragged to the left edge of a strip of several
    rows, the lifted chip was cut there: it is drawn whole, at the edge."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    drawn, paint = [], strip._paint_chip
    def recorded(painter, rect, index, slot, lifted=False):
        if lifted:
            drawn.append(QRectF(rect))
        paint(painter, rect, index, slot, lifted)
    strip._paint_chip = recorded
    assert len({strip.chip_rect(k).top() for k in range(len(strip.order))}) > 1   # rows
    rect = strip.chip_rect(3)
    grab = QPoint(int(rect.right()) - 3, int(rect.center().y()))
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, grab)
    for x in (grab.x() - 20, 30, 2):
        QTest.mouseMove(strip, QPoint(x, grab.y()))
    strip.repaint()
    assert drawn and drawn[-1].left() >= 0 and drawn[-1].width() == rect.width()
    assert drawn[-1].right() <= strip.width()
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, QPoint(2, grab.y()))


@pytest.mark.parametrize("past_the_end", [True, False])
def test_a_drop_repaints_every_pixel_the_lifted_chip_was_drawn_on(qtbot, past_the_end):
    """Dropped past the last chip (or a short drag of slot 0 past slot 1), the lifted
    chip's right edge stayed painted on the strip: the repaint after the drop took the
    chip's centre for the grab offset and missed its edge. Every pixel the lifted chip
    and its shadow were drawn on is repainted."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtGui import QRegion
    from PySide6.QtTest import QTest
    strip = on_screen(qtbot, TokenStrip(), 740, 60)
    words = "warm was it because mat the on sat cat the".split()
    strip.set_tokens(words, [False] * 10, range(10), [True] * 10)
    drawn, paint = [], strip._paint_chip
    def recorded(painter, rect, index, slot, lifted=False):
        if lifted:
            drawn.append(QRectF(rect))
        paint(painter, rect, index, slot, lifted)
    strip._paint_chip = recorded
    rect = strip.chip_rect(0)
    grab = QPoint(int(rect.left()) + 4, int(rect.center().y()))   # near its left end
    end = strip.chip_rect(9).right() + 60 if past_the_end else strip.chip_rect(1).right() + 8
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, grab)
    x = grab.x()
    while x < end:
        x = min(x + 50, int(end))
        QTest.mouseMove(strip, QPoint(x, grab.y()))
        qtbot.wait(20)
    strip.repaint()
    lifted = drawn[-1]
    repainted, seen = QRegion(), strip.paintEvent
    def painted(event):
        nonlocal repainted
        repainted += event.region()
        seen(event)
    strip.paintEvent = painted
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, QPoint(x, grab.y()))
    qtbot.waitUntil(lambda: not strip.sliding(), timeout=3000)
    qtbot.wait(50)
    shadow = lifted.translated(2, 3)
    for area in (lifted, shadow):
        box = area.toAlignedRect()
        assert QRegion(box).subtracted(repainted).isEmpty(), (box, repainted.boundingRect())


def test_a_chip_dropped_in_a_strip_of_many_chips_sits_in_its_slot(qtbot):
    """With more chips than slide (ANIMATE_UP_TO), a dropped chip stayed where the
    mouse let it go, overlapping its neighbour, until something laid the strip out
    again: the drop's layout placed only the slots whose order changed, and the order
    had changed during the drag. Every chip is painted in its slot, none on another."""
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest
    from posviz.gui.tokens.strip import ANIMATE_UP_TO
    strip = on_screen(qtbot, TokenStrip(), 700, 400)
    words = (WORDS * 20)[:ANIMATE_UP_TO + 44]
    strip.set_tokens(words, [False] * len(words), range(len(words)), [True] * len(words))

    def move(src: int, dst: int) -> None:          # as the window does: the session
        order = list(strip.order)                   # moves, then tells the strip
        order.insert(dst, order.pop(src))
        strip.set_order(order)
    strip.moveRequested.connect(move)
    first = strip.chip_rect(0)
    row_two = next(s for s in range(len(words)) if strip.chip_rect(s).top() > first.bottom())
    target = strip.chip_rect(row_two + 2)
    grab = QPoint(int(first.left()) + 6, int(first.center().y()))
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, grab)
    steps = 6
    for k in range(1, steps + 1):                  # a real hand: several moves
        x = grab.x() + (target.left() + 10 - grab.x()) * k / steps
        y = grab.y() + (target.center().y() - grab.y()) * k / steps
        QTest.mouseMove(strip, QPoint(int(x), int(y)))
        qtbot.wait(20)
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, QPoint(int(x), int(y)))
    qtbot.wait(50)
    assert strip.order[0] != 0                      # it moved
    painted = []
    paint = strip._paint_chip
    strip._paint_chip = lambda painter, rect, index, slot, lifted=False: (
        painted.append((slot, QRectF(rect))), paint(painter, rect, index, slot, lifted))
    strip.repaint()
    assert len(painted) == len(words)
    for slot, rect in painted:
        assert rect == strip.chip_rect(slot), (slot, rect, strip.chip_rect(slot))
    rects = sorted((r for _, r in painted), key=lambda r: (r.top(), r.left()))
    for a, b in zip(rects, rects[1:]):
        assert not a.intersects(b), (a, b)
