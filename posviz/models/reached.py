"""How far the forward on its way has got: the block a Recorder (models.hooks) has
entered, read by the window's status line while it waits and told to the command
line's and the API's listeners (api.steps.layer_ticks). A pretrained model's forward
took 20-50 s on a busy machine; its status said only how long it had waited."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Reached:
    """Block ``layer`` (1-based) of ``layers`` entered at ``at`` by forward number
    ``forward`` of this process, which entered its first block at ``began``; ``run``
    names the forward when its caller did (``named``), as the noise floor's run."""

    layer: int
    layers: int
    forward: int
    at: float
    began: float
    run: str = ""

    def seconds_left(self) -> float | None:
        """This forward's time left at the pace of its blocks so far (None before one
        block has passed)."""
        if self.layer < 2 or self.at <= self.began:
            return None
        return (self.at - self.began) / (self.layer - 1) * (self.layers - self.layer + 1)


_lock = threading.Lock()
_latest: Reached | None = None
_forwards = 0
_listeners: list[Callable[[Reached], None]] = []
_named = threading.local()              # .run: the name of the forward on this thread
clock = time.monotonic                  # (a test's own clock)


def reach(layer: int, layers: int) -> None:
    """A forward enters block ``layer`` (0-based) of ``layers``: block 0 starts a new one."""
    global _latest, _forwards
    now = clock()
    with _lock:
        if layer == 0 or _latest is None:
            _forwards += 1
        began = now if layer == 0 or _latest is None else _latest.began
        _latest = Reached(layer + 1, layers, _forwards, now, began,
                          getattr(_named, "run", ""))
        told, listeners = _latest, list(_listeners)
    for listener in listeners:          # on the forward's thread
        listener(told)


@contextmanager
def named(run: str):
    """While inside, the forwards on this thread are ``run`` ("the original order at
    shifted positions, for the noise floor"), as their listeners read them."""
    before = getattr(_named, "run", "")
    _named.run = run
    try:
        yield
    finally:
        _named.run = before


@contextmanager
def listening(listener: Callable[[Reached], None]):
    """While inside, ``listener(Reached)`` each time a forward enters a block."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def latest() -> Reached | None:
    return _latest
