"""A real mouse drag: X server (Xvfb), the xcb platform, xdotool moving the pointer.

The window runs in its own process, as a user would start it; it prints its chip
centres once computed and every order it shows. Skipped where Xvfb or xdotool is
missing (CI installs both).
"""
from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time

import pytest
from conftest import xvfb

pytestmark = pytest.mark.xvfb

PROBE = r"""
import json, sys
from PySide6.QtCore import QTimer
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from posviz.gui.settings import make_settings
from posviz.document.events import OrderChanged
from posviz.gui.window import MainWindow
w = MainWindow(make_settings())
w.move(0, 0)
w.resize(1200, 800)
w.show()
def say(**data):
    print(json.dumps(data), flush=True)
def first(shown, ms):
    w.controller.evaluated.disconnect(first)
    ev = shown.evaluation
    strip = w.strip
    centres = []
    for slot in range(len(strip.order)):
        p = strip.mapToGlobal(strip.chip_rect(slot).center().toPoint())
        centres.append([p.x(), p.y()])
    say(event="ready", order=[int(i) for i in ev.order], centres=centres)
w.controller.evaluated.connect(first)
def ready():
    w.session.subscribe(lambda event: isinstance(event, OrderChanged) and
                        say(event="order", order=[int(i) for i in event.after]))
w.controller.ready.connect(ready)
w.strip.dragFinished.connect(lambda before: say(event="dropped", undo=w.undo_stack.count()))
QTimer.singleShot(30, w.start)
QTimer.singleShot(90_000, app.quit)
app.exec()
"""


@pytest.fixture
def display():
    with xvfb("1600x1000", needs=("Xvfb", "xdotool")) as name:
        yield name


def lines(process) -> queue.Queue:
    out: queue.Queue = queue.Queue()

    def pump():
        for line in process.stdout:
            if line.startswith("{"):
                out.put(json.loads(line))
    threading.Thread(target=pump, daemon=True).start()
    return out


def wait_for(events: queue.Queue, kind: str, timeout: float = 60, seen=None) -> dict:
    """The next event of this kind; the events before it are appended to ``seen``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            event = events.get(timeout=0.2)
        except queue.Empty:
            continue
        if event["event"] == kind:
            return event
        if seen is not None:
            seen.append(event)
    raise AssertionError(f"the window did not report {kind!r} in {timeout} s")


def xdotool(env, *commands: str) -> None:
    subprocess.run(["xdotool", *commands], env=env, check=True, timeout=30)


def test_real_mouse_drag_moves_a_chip(display, tmp_path):
    env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
               POSVIZ_SETTINGS=str(tmp_path / "settings.ini"))
    app = subprocess.Popen([sys.executable, "-c", PROBE], env=env, text=True,
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        events = lines(app)
        ready = wait_for(events, "ready")
        before, centres = ready["order"], ready["centres"]
        (x0, y0) = centres[0]
        xdotool(env, "mousemove", "--sync", str(x0), str(y0), "mousedown", "1")
        seen = []
        for k in (1, 2, 3):      # past the middle of each neighbour in turn, as a hand
            (xa, ya), (xb, yb) = centres[k - 1], centres[k]
            steps = []           # would, in small moves; each crossing shows its order
            for j in range(1, 6):
                steps += ["mousemove", "--sync", str(round(xa + (xb + 3 - xa) * j / 5)),
                          str(round(ya + (yb - ya) * j / 5))]
            xdotool(env, *steps)
            seen.append(wait_for(events, "order", timeout=30))
        xdotool(env, "mouseup", "1")
        dropped = wait_for(events, "dropped", timeout=30, seen=seen)
        expected = list(before)
        expected.insert(3, expected.pop(0))
        orders = [event["order"] for event in seen if event["event"] == "order"]
        assert dropped["undo"] == 1                  # the whole drag: one undo step
        assert len(orders) >= 2                      # the order followed the pointer live
        assert orders[-1] == expected
    finally:
        app.kill()
        app.wait(10)
