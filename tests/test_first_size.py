"""A first start's window takes most of a large screen (a 1920 × 1080 screen's was
1440 × 900, its plots cramped) and stays inside a small one (1024 × 700)."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")


@pytest.mark.parametrize("screen, size", [((1920, 1080), (1728, 972)),
                                          ((1024, 700), (983, 658))])
def test_a_first_window_is_sized_to_its_screen(qtbot, monkeypatch, screen, size):
    from PySide6.QtCore import QRect
    from PySide6.QtGui import QScreen

    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    monkeypatch.setattr(QScreen, "availableGeometry", lambda self: QRect(0, 0, *screen))
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    assert w.size().toTuple() == size
