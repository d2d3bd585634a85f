"""The times the window tells: the whole evaluation's time left on the status line, a
check's before it starts and while it runs, each against a made-up clock."""
from __future__ import annotations

import numpy as np
import pytest

from posviz.models import reached


def test_the_window_s_evaluation_plans_all_its_forwards():
    """A new text's evaluation runs the original order, its noise floor (RoPE) and the
    new order: each forward is told as the nth of that many planned, so the time left
    is theirs in all."""
    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    from posviz.views.evaluated import evaluated
    backend = BuiltinBackend(ModelConfig(pe="rope", layers=2, heads=2, d_model=16))
    session = Session(backend, "the cat sat on the mat")
    session.reverse()
    engine = Engine(backend)
    planned = engine.forwards(session.seq, session.order, session.positions)
    told = []
    with reached.listening(lambda now: told.append((now.nth, now.planned))):
        evaluated(engine, session.seq, session.order, session.positions)
    assert planned == 3
    assert sorted(set(told)) == [(1, 3), (2, 3), (3, 3)], told


def _status(qtbot):
    from PySide6.QtWidgets import QLabel

    from posviz.gui.status import StatusLine
    label = QLabel()
    qtbot.addWidget(label)
    line = StatusLine(label)
    line._since = 0.0
    return line


def test_the_status_line_tells_the_time_left_of_all_the_forwards_planned(qtbot,
                                                                           monkeypatch):
    """SmolLM2's three forwards of a new text said "about 2 s left in it" in each: the
    line tells the time left of the whole evaluation. Forward 1 of 3 has spent 8 s
    on half its layers: 8 s more of it, then 16 s for each of the two after."""
    line = _status(qtbot)
    now = reached.Reached(layer=16, layers=30, forward=7, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=3)
    monkeypatch.setattr(reached, "latest", lambda: now)
    said = line._layer()
    assert said == ": layer 16 of 30 (forward 1 of 3), about 40 s left", said
    assert "in it" not in said


def test_a_lone_forward_tells_its_own_time_left(qtbot, monkeypatch):
    """One forward planned (a reorder: the original order is kept): its time left."""
    line = _status(qtbot)
    now = reached.Reached(layer=3, layers=4, forward=2, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=1)
    monkeypatch.setattr(reached, "latest", lambda: now)
    assert line._layer() == ": layer 3 of 4, about 8 s left"
