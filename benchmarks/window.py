"""The real main window, shown offscreen and driven through its session, for the
benchmark (``run.py``, which sets up the environment and ``sys.path`` before importing
this: offscreen Qt, one BLAS thread, no model fetched, ``benchmarks/`` and the project
importable). Qt, numpy and posviz are imported only when a window is opened.
"""
from __future__ import annotations

import os
import tempfile
import time

WAIT_S = 60                        # give up on one evaluation after this long
# a laptop's window, whatever the offscreen screen (800 x 800): every plot of the
# Attention tab on screen, so that each reorder waits for all of them to paint
SIZE = (1440, 900)
WORDS = ("the cat sat on a mat because it was warm and the dog ran to an old house "
         "while rain fell over green hills near the small town by the river").split()


def text_of(backend, n: int) -> str:
    """A text of exactly n tokens (special tokens included) for ``backend``."""
    words = n
    for _ in range(20):
        text = " ".join(WORDS[i % len(WORDS)] for i in range(words))
        got = len(backend.tokenize(text))
        if got == n:
            return text
        words += n - got
    raise RuntimeError(f"could not make a text of {n} tokens")


class _OnWorker:
    """A measurement for the window's compute worker (Window.on_worker)."""

    def __init__(self, measure):
        self.measure, self.result = measure, None


class Window:
    """The real MainWindow, shown offscreen, driven through its session."""

    def __init__(self):
        from probes import PaintProbe, spin, wait_for
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from posviz import boot

        self.app = QApplication.instance() or QApplication(["posviz-bench"])
        boot.window(self.app)                 # as posviz.gui.app.main does
        from posviz.gui.window import MainWindow
        self._settings_file = tempfile.NamedTemporaryFile(suffix=".ini", delete=False)
        self.settings = QSettings(self._settings_file.name, QSettings.IniFormat)
        self.window = MainWindow(self.settings)
        self.window.resize(*SIZE)
        self.window.show()
        self.window.start()
        self.controller = self.window.controller
        if not wait_for(self.controller.evaluated, WAIT_S):
            raise RuntimeError("the window never showed a first evaluation")
        self.probe = PaintProbe()
        self.shown = None                 # (time, worker ms) of the newest order's evaluation
        self.last_change = None           # time of the last change to the session
        self.session.subscribe(self._changed)
        self.controller.evaluated.connect(self._evaluated)
        self._measure_on_the_worker()
        spin(0.3)

    def _measure_on_the_worker(self) -> None:
        """Let on_worker run measurements on the compute worker's thread, telling the
        controller nothing of them (they end as Cancelled: nothing is delivered)."""
        from posviz.errors import Cancelled

        compute = self.controller._compute
        run = compute._run

        def run_or_measure(job, should_stop):
            if not isinstance(job, _OnWorker):
                return run(job, should_stop)
            job.result = job.measure()
            raise Cancelled("a measurement: nothing to show")
        compute._run = run_or_measure

    def on_worker(self, measure):
        """measure() run on the window's compute worker, its result returned; call it
        while the window is idle (it supersedes any evaluation on its way).

        torch's OpenMP threads belong to the thread that runs torch. Run on this (GUI)
        thread as well, there would be two sets of them on two cores: libgomp then stops
        spinning between parallel regions and every small operation, the window's too,
        waits for its threads to wake (the built-in forward at n = 16: 1.2-1.6 ms before
        the window opened, 5.2-7.1 ms after). A user's window runs torch on its compute
        worker alone, and so do the measurements here."""
        from posviz.errors import Cancelled

        job = _OnWorker(measure)
        try:
            self.controller._compute.submit(job).result(WAIT_S)
        except Cancelled:
            pass
        return job.result

    @property
    def session(self):
        return self.controller.session

    def load_minilm(self) -> None:
        self.load("minilm")

    def load(self, name: str) -> None:
        """Load a bundled model ("minilm", "smollm2") and wait for its first evaluation.
        The text is made short first: MiniLM's 512 positions cannot hold 512 words."""
        from probes import spin, wait_for

        self.set_length(16)
        done = []
        from posviz.document.spec import ModelSpec

        self.controller.modelLoaded.connect(lambda spec: done.append(spec))
        self.controller.modelFailed.connect(lambda message: done.append(message))
        self.controller.load(ModelSpec.pretrained(name))
        if not wait_for(self.controller.evaluated, 4 * WAIT_S,
                        lambda: done and self.session.backend.name != "built-in"):
            raise RuntimeError(f"{name} did not load: {done}")
        spin(0.3)

    def set_length(self, n: int) -> int:
        """Give the session a text of exactly n tokens (special tokens included)."""
        from probes import spin, wait_for

        self.session.set_text(text_of(self.session.backend, n))
        if not wait_for(self.controller.evaluated, WAIT_S,
                        lambda: len(self.controller.last_shown.evaluation.order) == n):
            raise RuntimeError(f"no evaluation for n = {n}")
        spin(0.3)
        return len(self.session.seq)

    def _changed(self, event) -> None:
        self.shown, self.last_change = None, time.monotonic()

    def _evaluated(self, shown, ms: float) -> None:
        """The window has just shown an evaluation (its slot ran first): if it is the
        newest order's, note the time and wait for the visible plots to paint."""
        import numpy as np
        from probes import visible_canvases

        if np.array_equal(shown.evaluation.order, self.session.order):
            self.shown = (time.monotonic(), ms)
            self.probe.arm(visible_canvases(self.window.plots))

    def wait_painted(self) -> None:
        """Until the newest order's evaluation is shown and its visible plots painted."""
        from probes import wait_for

        if not wait_for(self.probe.allPainted, WAIT_S,
                        lambda: self.shown is not None and self.probe.pending == 0
                        and self.probe.last_paint is not None):
            raise RuntimeError("the newest order was never shown and painted")

    def reorder_painted(self, rng) -> tuple[float, float, float]:
        """One random reorder; seconds to shown and to painted, and the worker's ms."""
        import numpy as np

        before = self.session.order.copy()
        start = time.monotonic()
        self.session.shuffle(rng)
        while np.array_equal(before, self.session.order):   # a shuffle may change nothing
            self.session.shuffle(rng)
        self.wait_painted()
        shown, worker_ms = self.shown
        return shown - start, self.probe.last_paint - start, worker_ms

    def close(self) -> None:
        self.window.close()
        os.unlink(self._settings_file.name)
        self.window.files.autosave_path().unlink(missing_ok=True)   # its autosaved session
