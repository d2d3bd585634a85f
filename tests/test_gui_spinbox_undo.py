"""Ctrl+Z and Ctrl+Shift+Z undo and redo the session's last step while a number field
(the layer, the head, a model setting) has the keyboard focus, as they do elsewhere."""
from __future__ import annotations

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

TIMEOUT = 30_000


def test_undo_and_redo_reach_the_session_from_a_spin_box(qtbot, window):
    session = window.controller.session
    before = session.order.tolist()
    window.reverse_action.trigger()
    after = session.order.tolist()
    assert after != before
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)     # window shortcuts need an active window
    box = window.plots.layer_box
    box.setFocus()
    QTest.keyClick(box, Qt.Key_Z, Qt.ControlModifier)
    assert session.order.tolist() == before
    field = window.model_panel.field("layers")          # a model setting's number field
    field.setFocus()
    QTest.keyClick(field, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert np.array_equal(session.order, after)
