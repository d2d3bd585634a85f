"""The token strip paints from cached chip pictures exactly what drawing each chip
would, and slides chips only for reorders that move a few of them."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402
from PySide6.QtGui import QColor, QImage, QPainter  # noqa: E402

from posviz.gui.token_strip import ANIMATE_MOVED_UP_TO, TokenStrip  # noqa: E402

WORDS = "the cat sat on the mat because it was warm and the dog ran to an old house".split()


@pytest.fixture
def strip(qtbot):
    widget = TokenStrip()
    qtbot.addWidget(widget)
    widget.resize(700, 200)
    widget.show()
    qtbot.waitExposed(widget)
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
    from posviz.models.pieces import REST
    tip = strip.toolTip()
    assert f"{CONTINUES}: a piece inside a word" in tip
    assert f"{REST}: only the rest of the character on the chip before" in tip
