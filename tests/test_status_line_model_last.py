"""At 1024 × 700 the window's status line, while a long text computed, ended "… 1 s ·
built-in on 30…": cut in the middle of the model's words. What runs and how far stay
whole; the model's words, the least of the line, go whole first (its token count, then
its name), never cut."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

LAYER = (": layer 2 of 4 (forward 1 of 2), about 7 s left in all, then the original "
         "order's maps are pooled")
ORDERS = "the original order, then the new one"
MODEL = " · built-in on 3000 tokens"


@pytest.mark.parametrize("width", [1024, 1366, 1600])
def test_the_computing_line_drops_the_model_whole_before_cutting_how_far(
        qtbot, window, monkeypatch, width):
    from PySide6 import QtWidgets

    from posviz.gui import status
    window.resize(width, 700)
    QtWidgets.QApplication.processEvents()
    line, label = window.status, window.state_label
    monkeypatch.setattr(line, "_running", lambda: (ORDERS, MODEL))
    monkeypatch.setattr(line, "_layer", lambda: LAYER)
    monkeypatch.setattr(status, "clock", lambda: line._since + 1.2)
    line._tick()
    shown, whole = label.shown_text(), f"computing {ORDERS}{LAYER}… 1 s"
    assert label.text() == whole + MODEL
    room = label.contentsRect().width()
    assert label.fontMetrics().horizontalAdvance(shown) <= room
    # the longest of: all of it, the model's name without its tokens, none of it
    fits = [text for text in (whole + MODEL, whole + " · built-in", whole)
            if label.fontMetrics().horizontalAdvance(text) <= room]
    assert fits and shown == fits[0], (shown, room)
    assert "…" not in shown.removeprefix(f"computing {ORDERS}{LAYER}…")
    line._stop()
