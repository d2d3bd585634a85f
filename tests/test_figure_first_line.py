"""A figure drawn from Python in a fresh kernel tells its drawing before Qt is imported
and before Qt's application is made (its first line came 2.1-3.9 s after the call at
load 7-11), and ``r.figure(name).save(path)`` is one wait: its hold counted from the
figure's making. Never timed: the hold is set, or the figure's making placed in time."""
from __future__ import annotations

import time

import pytest

import posviz
from posviz.api import drawing
from posviz.runtime import held_lines

TEXT = "the cat sat on the mat"


@pytest.fixture
def at_once(monkeypatch):
    monkeypatch.setattr(held_lines, "HOLD_S", 0.0)


def test_a_figure_tells_qt_s_import_as_its_first_part(at_once, monkeypatch, capsys):
    report = posviz.load(layers=1).compare(TEXT)
    capsys.readouterr()
    monkeypatch.setattr(drawing, "qt_loaded", lambda: False)    # a fresh kernel's
    report.figure("attention")
    assert capsys.readouterr().err.startswith(
        "posviz: importing Qt to draw figure attention\n")
    from posviz.models.reached import short     # told again whole, with its seconds
    assert short("importing Qt to draw figure attention_mosaic") == \
        "importing Qt to draw figure attention_mosaic"
    result = posviz.load(layers=1).sweep(TEXT, count=3)
    capsys.readouterr()
    result.figure()
    assert capsys.readouterr().err.startswith("posviz: importing Qt to draw figure ")


def test_qt_s_import_is_silent_when_asked_or_done(at_once, monkeypatch, capsys):
    report = posviz.load(layers=1, progress=False).compare(TEXT)
    monkeypatch.setattr(drawing, "qt_loaded", lambda: False)
    report.figure("attention")
    monkeypatch.setattr(drawing, "qt_loaded", lambda: True)
    posviz.load(layers=1).compare(TEXT).figure("attention")
    assert "importing Qt" not in capsys.readouterr().err


def test_a_figure_drawn_as_it_is_made_holds_its_lines_from_its_making(capsys):
    """HOLD_S (1 s) already passed since the figure's making began, drawn at once:
    its first line told at once; drawn later, held anew."""
    now = time.monotonic()
    telling = drawing.figure_telling(None, "attention", 10, made=(now - 5.0, now))
    with telling(None) as told:
        told.say("first line")
        assert capsys.readouterr().err == "posviz: first line\n"
    telling = drawing.figure_telling(None, "attention", 10, made=(now - 60, now - 50))
    with telling(None) as told:
        told.say("first line")
        assert capsys.readouterr().err == ""
    telling = drawing.figure_telling(None, "attention", 10, made=(now - 5.0, now))
    with telling(None):
        pass
    with telling(None) as told:         # its second drawing: a wait of its own
        told.say("again")
        assert capsys.readouterr().err == ""


def test_the_drawing_is_told_before_qt_s_application_is_made(monkeypatch):
    """The views' line comes before ``application()`` (QApplication's making: a
    thread of the drawing tells it again while it lasts)."""
    from posviz.gui.plots import headless, own_size
    report = posviz.load(layers=1, progress=False).compare(TEXT)
    order = []
    monkeypatch.setattr(own_size, "tell", lambda name, part: order.append(part))
    real = headless.application
    monkeypatch.setattr(headless, "application", lambda: (order.append("app"), real())[1])
    headless.drawn_panel(report.session, report.evaluation)
    assert order[:2] == ["the views of the runs", "app"], order
