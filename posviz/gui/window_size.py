"""The size of the window at its first start, from the screen's available area."""
from __future__ import annotations

from PySide6.QtCore import QSize

DEFAULT_SIZE = (1440, 900)        # a first start's window, at least (screen allowing)
LARGEST_SIZE = (2200, 1400)       # ... and at most, however large the screen
SCREEN_SHARE = 0.9                # of a large screen's available area: at 1440 x 900
                                  # a 1920 x 1080 screen's symmetry plot was ~200 px tall


def default_size(available=None) -> QSize:
    """A first start's size: SCREEN_SHARE of the screen's available area, no smaller
    than DEFAULT_SIZE nor larger than LARGEST_SIZE; a little less than the screen when
    the screen is smaller than DEFAULT_SIZE. DEFAULT_SIZE without a screen."""
    (width, height), (widest, tallest) = DEFAULT_SIZE, LARGEST_SIZE
    if available is not None and available.width() > 0:
        width = min(max(width, int(available.width() * SCREEN_SHARE)), widest,
                    int(available.width() * 0.96))
        height = min(max(height, int(available.height() * SCREEN_SHARE)), tallest,
                     int(available.height() * 0.94))
    return QSize(width, height)
