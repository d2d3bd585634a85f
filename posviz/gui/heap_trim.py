"""Freed heap pages given back to the system once the window goes quiet (workaround
"malloc-trim", boot.trim_heap): not after each evaluation, since during a drag the next
one reuses them."""
from __future__ import annotations

import threading

from PySide6.QtCore import QObject, QTimer

from ..boot import TRIM_FROM, trim_heap

TRIM_AFTER_MS = 1000            # quiet time before freed memory goes back to the system


class HeapTrim(QObject):
    """``soon(n_tokens)`` after each evaluation shown; trim_heap runs once none has been
    shown for TRIM_AFTER_MS (``timer``), off the GUI thread."""

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._trimming = threading.Lock()
        self._tokens = 0                # the length of the evaluation shown last
        self.timer = QTimer(self, singleShot=True, interval=TRIM_AFTER_MS)
        self.timer.timeout.connect(self._trim)

    def soon(self, n_tokens: int) -> None:
        """Give freed heap pages back once no evaluation has been shown for
        TRIM_AFTER_MS: during a drag the next evaluation reuses them."""
        if n_tokens >= TRIM_FROM:
            self._tokens = n_tokens
            self.timer.start()                      # again: the quiet time starts now

    def stop(self) -> None:
        self.timer.stop()

    def _trim(self) -> None:
        """trim_heap off the GUI thread (it takes milliseconds), one at a time."""
        n_tokens = self._tokens
        if self._trimming.acquire(blocking=False):

            def trim():
                try:
                    trim_heap(n_tokens)
                finally:
                    self._trimming.release()
            threading.Thread(target=trim, name="posviz-trim", daemon=True).start()
