"""An axis title refitted while the plots page scrolls leaves no stale pixels on screen.

At 1024 × 700, three wheel steps down the plots page left a stray ")" beside "query
(token)": the title moved with each step and the old pixels stayed. Only a real X
server shows it (offscreen, Qt repaints the whole view): the window runs in its own
process under Xvfb, xdotool turns the wheel, and the window compares what the screen
shows with a fresh rendering of itself.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
from test_gui_xvfb import display, lines, wait_for, xdotool  # noqa: F401  (a fixture)

pytestmark = pytest.mark.xvfb

PROBE = r"""
import json, sys
from PySide6.QtCore import QPoint, QSocketNotifier, QTimer
from PySide6.QtGui import QImage
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
w = MainWindow(make_settings())
w.move(0, 0)
w.resize(1440, 900)
w.show()
def say(**data):
    print(json.dumps(data), flush=True)
def first(*_):
    w.controller.evaluated.disconnect(first)
    say(event="ready", window=int(w.winId()))
def scrolled_area():
    from PySide6.QtWidgets import QScrollArea
    widget = w.plots.figures()["attention"]     # the page's own scroll area (the tabs
    while not isinstance(widget, QScrollArea):  # stay above it)
        widget = widget.parentWidget()
    return widget
def where():
    page = scrolled_area().viewport()
    p = page.mapToGlobal(QPoint(page.width() - 3, page.height() // 2))
    say(event="where", at=[p.x(), p.y()], size=[w.width(), w.height()])
def compare():
    fig = w.plots.figures()["attention"]
    canvas, page = fig.canvas, scrolled_area().viewport()
    column = canvas.mapFromScene(fig.queries.sceneBoundingRect()).boundingRect()
    column = column.translated(canvas.viewport().mapTo(w, QPoint(0, 0)))
    column &= page.rect().translated(page.mapTo(w, QPoint(0, 0)))
    shown = w.screen().grabWindow(w.winId()).toImage().convertToFormat(QImage.Format_RGB32)
    fresh = w.grab().toImage().convertToFormat(QImage.Format_RGB32)
    differ = sum(shown.pixel(x, y) != fresh.pixel(x, y)
                 for x in range(column.left(), column.right() + 1)
                 for y in range(column.top(), column.bottom() + 1))
    say(event="compared", differ=differ, area=column.width() * column.height(),
        scrolled=scrolled_area().verticalScrollBar().value())
def command():
    {"where": where, "compare": compare}.get(sys.stdin.readline().strip(), app.quit)()
notifier = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)
notifier.activated.connect(lambda *_: command())
w.controller.evaluated.connect(first)
QTimer.singleShot(30, w.start)
QTimer.singleShot(90_000, app.quit)
app.exec()
"""


def test_scrolling_leaves_no_stale_title_pixels(display, tmp_path):  # noqa: F811
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb", HF_HUB_OFFLINE="1",
               POSVIZ_SETTINGS=str(tmp_path / "settings.ini"))
    app = subprocess.Popen([sys.executable, "-c", PROBE], env=env, text=True,
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
    try:
        events = lines(app)
        window = wait_for(events, "ready")["window"]
        xdotool(env, "windowsize", "--sync", str(window), "1024", "700")
        for _ in range(20):                                 # the resize has arrived
            app.stdin.write("where\n")
            app.stdin.flush()
            place = wait_for(events, "where", timeout=30)
            if place["size"] == [1024, 700]:
                break
        x, y = place["at"]
        xdotool(env, "mousemove", "--sync", str(x), str(y))
        for _ in range(3):                                  # three wheel steps down
            xdotool(env, "click", "5", "sleep", "0.3")
        xdotool(env, "sleep", "1")
        app.stdin.write("compare\n")
        app.stdin.flush()
        compared = wait_for(events, "compared", timeout=30)
        assert compared["scrolled"] > 0 and compared["area"] > 1000, compared
        assert compared["differ"] == 0, compared
    finally:
        app.kill()
        app.wait(10)
