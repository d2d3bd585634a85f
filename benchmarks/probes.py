"""Qt-only instruments for the benchmark: paint probes, an event-loop stall meter, waits.

Nothing here imports numpy, torch or posviz, so the start-up probe can load it before
the application without adding to what it measures.
"""
from __future__ import annotations

import time

from PySide6.QtCore import QEvent, QEventLoop, QObject, Qt, QTimer, Signal


def now() -> float:
    """Seconds on the system-wide monotonic clock (comparable across processes)."""
    return time.monotonic()


class PaintProbe(QObject):
    """Watches widgets for paint events; ``allPainted`` fires once every armed one painted.

    ``arm(widgets)`` starts a new round: from then on the first Paint of each widget is
    recorded, and when the last of them has painted, ``last_paint`` holds its time.
    """

    allPainted = Signal()

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._waiting: set = set()
        self._watched: set = set()
        self.last_paint: float | None = None
        self.paints = 0                         # paints of watched widgets this round
        self.armed = 0                          # widgets this round waits for

    def arm(self, widgets) -> None:
        self._waiting = set()
        self.last_paint = None
        self.paints = 0
        self.armed = len(widgets)
        for widget in widgets:
            if widget not in self._watched:
                widget.installEventFilter(self)
                self._watched.add(widget)
            self._waiting.add(widget)
        if not self._waiting:
            self.last_paint = now()
            QTimer.singleShot(0, self.allPainted.emit)

    @property
    def pending(self) -> int:
        return len(self._waiting)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Paint and obj in self._waiting:
            # The paint itself runs after this filter returns: time it when it ends.
            self._waiting.discard(obj)
            self.paints += 1
            if not self._waiting:
                QTimer.singleShot(0, self._finish)
        return False

    def _finish(self) -> None:
        self.last_paint = now()
        self.allPainted.emit()


class StallMeter(QObject):
    """A 5 ms precise timer on the GUI thread; the longest gap between its ticks, minus
    the interval, is the longest time the event loop could not serve the user."""

    def __init__(self, interval_ms: int = 5, parent: QObject | None = None):
        super().__init__(parent)
        self.interval = interval_ms / 1000
        self._timer = QTimer(self)
        self._timer.setTimerType(Qt.PreciseTimer)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._tick)
        self._last: float | None = None
        self.lateness: list[float] = []         # seconds each tick came after it was due

    def start(self) -> None:
        self.lateness = []
        self._last = now()
        self._timer.start()

    def stop(self) -> None:
        self._timer.stop()
        self._tick()

    def _tick(self) -> None:
        t = now()
        if self._last is not None:
            self.lateness.append(max(t - self._last - self.interval, 0.0))
        self._last = t

    @property
    def worst(self) -> float:
        return max(self.lateness, default=0.0)


def wait_for(signal, timeout_s: float, condition=None) -> bool:
    """Run the event loop until ``signal`` fires (and ``condition()`` holds, if given) or
    the timeout passes; True if it fired in time."""
    if condition is not None and condition():
        return True
    loop = QEventLoop()
    fired = [False]

    def on_signal(*_):
        if condition is None or condition():
            fired[0] = True
            loop.quit()

    signal.connect(on_signal)
    timer = QTimer()
    timer.setSingleShot(True)
    timer.timeout.connect(loop.quit)
    timer.start(int(timeout_s * 1000))
    try:
        loop.exec()
    finally:
        timer.stop()
        signal.disconnect(on_signal)
    return fired[0]


def spin(seconds: float) -> None:
    """Run the event loop for a while (let animations and queued paints settle)."""
    loop = QEventLoop()
    QTimer.singleShot(int(seconds * 1000), loop.quit)
    loop.exec()


def visible_canvases(panel) -> list:
    """The viewports of the plots panel's figures that are on screen now."""
    found = []
    for figure in panel.current_figures().values():
        canvas = getattr(figure, "canvas", None)
        # The viewport's region (the view's own excludes its opaque viewport: always
        # empty), at least half of it: a view repaints only its changed part, and a
        # strip of margin at the window's edge may hold none
        viewport = canvas.viewport() if canvas is not None else None
        if viewport is not None and viewport.isVisible() and _area(
                viewport.visibleRegion().boundingRect()) >= _area(viewport.rect()) / 2:
            found.append(viewport)
    return found


def _area(rect) -> int:
    return max(0, rect.width()) * max(0, rect.height())
