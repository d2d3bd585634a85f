"""The bridge between the Session (GUI thread) and the computation (worker threads).

The scheduling itself is Qt-free (``core.scheduler``): one evaluation worker where the
newest request wins and a stale result is never delivered, and a second worker that
builds or loads models while the current one stays usable. This adapter owns both,
turns session events into requests, and carries each outcome to the GUI thread (a
queued Qt signal), where it is checked once more: a newer request may have been made
while the outcome travelled.

Importing this module costs nothing heavy: the plots' modules, torch and the core's
computing modules are imported on the worker during ``start()``, after the window is on
screen, and the first evaluation is computed there right after the session is built.
The window builds its plots panel meanwhile, when ``plotsImported`` says it can (while
torch's libraries load without Python's lock), and its model panel on ``ready``.
(The caller imports core.config and core.document, which import neither.)
"""
from __future__ import annotations

import importlib
import threading
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..boot import TRIM_FROM, before_torch, note_activity, trim_heap
from ..errors import PosvizInputError, one_line
from ..runtime.jobs import (EvaluationJob, EvaluationRunner, LoadJob, StartJob, ViewsJob,
                            load_model)
from ..runtime.scheduler import Outcome, Scheduler

TRIM_AFTER_MS = 1000            # quiet time before freed memory goes back to the system

if TYPE_CHECKING:               # the core's modules import torch: only on the worker
    from ..document.spec import ModelSpec
    from ..models.config import Positions
    from ..views.mosaic import MosaicLook


def _label(spec: ModelSpec) -> str:
    return spec.label or ("built-in transformer" if spec.is_builtin else spec.source)


def _load_failure(job: LoadJob, error: BaseException) -> str:
    if isinstance(error, ValueError):       # PosvizInputError and friends
        return one_line(error)
    return f"could not load {_label(job.spec)}: {one_line(error)}"


class _Bridge(QObject):
    """Signals emitted on worker threads; Qt queues them to the GUI thread. Parentless,
    so a worker that finishes after the window is gone still has someone to tell."""

    computed = Signal(object)                       # Outcome of a Start/Evaluation/ViewsJob
    loaded = Signal(object)                         # Outcome of a LoadJob
    plotsImported = Signal()                        # the plots' modules are imported
    progress = Signal(object, str, object, object)  # load token, step, done, total


class Controller(QObject):
    """Owns the Session and the workers; widgets read ``session`` and watch the signals."""

    ready = Signal()                    # the session exists (core imported)
    plotsImported = Signal()            # at start: the plots can be built (torch follows)
    computing = Signal()
    evaluated = Signal(object, float)   # the newest views.Shown, milliseconds
    evaluationFailed = Signal(str)
    modelLoading = Signal(str)          # label
    modelProgress = Signal(str)         # a step of a load
    modelCount = Signal(str, int, int)  # a counted step: step, done, total (tensors)
    modelLoaded = Signal(object)        # the ModelSpec now running
    modelFailed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.session = None
        self.last_shown = None
        self.last_ms = 0.0
        self.loading = False
        self.device = "cpu"             # where pretrained models run ("auto" picks)
        self._look: Callable[[], MosaicLook | None] = lambda: None
        self._painted = 0               # generation of last_shown
        self._newest = None             # the job of the newest request
        self._load_token = None         # the load whose progress is shown
        self._trimming = threading.Lock()
        self._trim_tokens = 0           # the length of the evaluation shown last
        self._trim_timer = QTimer(self, singleShot=True, interval=TRIM_AFTER_MS)
        self._trim_timer.timeout.connect(self._trim_heap)
        self._bridge = _Bridge()
        self._bridge.computed.connect(self._on_computed)
        self._bridge.loaded.connect(self._on_loaded)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.plotsImported.connect(self.plotsImported)
        self._runner = EvaluationRunner()   # used on the compute worker only
        self._compute = Scheduler(self._run, self._bridge.computed.emit,
                                  name="posviz-compute")
        self._loader = Scheduler(load_model, self._bridge.loaded.emit, name="posviz-load",
                                 describe=_load_failure, detach=True)

    # -- start-up ---------------------------------------------------------------------
    def start(self, text: str, spec: ModelSpec, positions: Positions,
              order: str = "reverse") -> None:
        """Import the rest of the core and build the session on the worker; ``ready``
        follows. ``spec`` and ``positions`` must be valid (a model that fails to load
        falls back to the built-in one, and ``modelFailed`` says why)."""
        self._submit(StartJob(text, spec, positions, order, device=self.device))

    def _submit(self, job) -> None:
        self._newest = job
        self._compute.submit(job)

    def _run(self, job, should_stop):
        """On the compute worker."""
        if isinstance(job, StartJob):
            self._prepare_start()
        return self._runner(job, should_stop)

    def _prepare_start(self) -> None:
        """On the compute worker, before the session is built: the plots' modules, then
        torch. The window builds its plots panel as soon as it hears ``plotsImported``,
        while torch's libraries load here without Python's lock (the only part of
        start-up that two cores can do side by side)."""
        try:
            importlib.import_module(".plots", __package__)
        except Exception:
            pass        # the window tells the user when it builds the panel
        else:
            self._bridge.plotsImported.emit()
        before_torch()
        try:
            import torch  # noqa: F401
        except Exception:
            pass        # the runner meets the same error and tells it

    def set_look(self, provider: Callable[[], MosaicLook | None]) -> None:
        """How the next mosaic is coloured: called on the GUI thread at each request."""
        self._look = provider

    def watch_look(self, panel) -> None:
        """Colour the mosaic as ``panel`` (a PlotsPanel) asks: its ``look`` for every
        request, and views prepared again whenever it tells ``lookChanged``."""
        self.set_look(panel.look)
        panel.lookChanged.connect(self.restyle)

    # -- evaluation -------------------------------------------------------------------
    def _on_session_event(self, event) -> None:
        if isinstance(event, self._computing_events):
            self.request()

    def request(self) -> None:
        """Ask for the current session's evaluation; supersedes any pending request."""
        s = self.session
        if s is None or self._compute.closed:
            return
        job = EvaluationJob(s.backend, s.seq, s.order.copy(), s.positions, self._look())
        note_activity()                 # no full garbage collection in the middle of a drag
        self.computing.emit()
        self._submit(job)

    def restyle(self) -> None:
        """Ask for the views of the evaluation shown again, in the current look (the
        mosaic's mode or difference range changed); supersedes any pending request, and
        the result arrives through ``evaluated`` like any other. While an evaluation is
        still on its way, that is asked again in the new look instead."""
        s, shown = self.session, self.last_shown
        if s is None or self._compute.closed:
            return
        if shown is None or (not self.generation_painted()
                             and not isinstance(self._newest, ViewsJob)):
            self.request()
            return
        look = self._look()
        mosaic = getattr(shown.views, "mosaic", None)
        if self.generation_painted() and look == (mosaic.look if mosaic else None):
            return                      # shown in that look already
        self.computing.emit()
        self._submit(ViewsJob(shown.evaluation, look, mosaic, shown.model))

    def generation_painted(self) -> bool:
        """Is the last result shown the answer to the newest request?"""
        return self._painted == self._compute.generation

    @Slot(object)
    def _on_computed(self, outcome: Outcome) -> None:
        if not self._compute.is_current(outcome.generation):
            return                      # stale: a newer request is on its way
        if isinstance(outcome.job, StartJob):
            self._on_started(outcome)
        elif outcome.failed:
            self.evaluationFailed.emit(outcome.message)
        else:
            self._on_evaluated(outcome)

    def _on_started(self, outcome: Outcome) -> None:
        if outcome.failed:
            self.evaluationFailed.emit(f"could not start the model: {outcome.message}")
            return
        from ..document.events import COMPUTING_EVENTS  # imported on the worker by now
        self._computing_events = COMPUTING_EVENTS
        self.session = outcome.result.session
        self.session.subscribe(self._on_session_event)
        self.ready.emit()               # the window builds its panels and sets the look
        self.request()                  # the evaluation is mostly done already
        if outcome.result.problem:
            self.modelFailed.emit(outcome.result.problem)

    def _on_evaluated(self, outcome: Outcome) -> None:
        shown, ms = outcome.result.shown, outcome.result.ms
        self.last_shown, self.last_ms, self._painted = shown, ms, outcome.generation
        self.evaluated.emit(shown, ms)
        # The result shown before is gone now (workaround "malloc-trim")
        self._trim_heap_soon(len(shown.evaluation.order))

    def _trim_heap_soon(self, n_tokens: int) -> None:
        """Give freed heap pages back once no evaluation has been shown for
        TRIM_AFTER_MS: during a drag the next evaluation reuses them. (Trimming after
        each one made the next page-fault its activations afresh: thread CPU of an
        evaluation at n = 512, built-in 20 -> 32 ms, MiniLM 211 -> 231 ms.)"""
        if n_tokens >= TRIM_FROM:
            self._trim_tokens = n_tokens
            self._trim_timer.start()                # again: the quiet time starts now

    def _trim_heap(self) -> None:
        """trim_heap off the GUI thread (it takes milliseconds), one at a time."""
        n_tokens = self._trim_tokens
        if self._trimming.acquire(blocking=False):

            def trim():
                try:
                    trim_heap(n_tokens)
                finally:
                    self._trimming.release()
            threading.Thread(target=trim, name="posviz-trim", daemon=True).start()

    # -- models -----------------------------------------------------------------------
    def load(self, spec: ModelSpec) -> None:
        """Build or load ``spec``'s model off the GUI thread; the current one stays in
        use until it is ready. Then the session runs it (ModelChanged) and
        ``modelLoaded`` follows; a newer load or ``cancel_load`` discards this one."""
        if self._loader.closed:
            return
        self.loading = True
        self._load_token = token = object()
        self.modelLoading.emit(_label(spec))
        n = len(self.session.seq) if self.session is not None else 0
        tell = (lambda step, done=None, total=None:
                self._bridge.progress.emit(token, step, done, total))
        self._loader.submit(LoadJob(spec, tell, n_tokens=n, device=self.device))

    def cancel_load(self) -> None:
        """Forget the model being loaded, at once: its result is discarded.

        A pretrained load stops before its next tensor and frees what it read (a
        built-in model being built, or a .bin checkpoint that torch reads in one call,
        finishes on its own thread and is thrown away). The next load does not wait.
        """
        self._loader.cancel()
        self._load_token = None
        self.loading = False

    @Slot(object)
    def _on_loaded(self, outcome: Outcome) -> None:
        if not self._loader.is_current(outcome.generation):
            return
        self.loading = False
        self._load_token = None
        if outcome.failed:
            self.modelFailed.emit(outcome.message)
            return
        spec, backend = outcome.job.spec, outcome.result
        try:
            self._set_model(spec, backend)      # ModelChanged -> request()
        except ValueError as error:             # the text does not fit the new model
            self.modelFailed.emit(one_line(error))
            return
        self.modelLoaded.emit(spec)

    def _set_model(self, spec: ModelSpec, backend) -> None:
        if self.session is None:
            raise PosvizInputError("the session is not ready yet")
        self.session.set_model(spec, backend)

    @Slot(object, str, object, object)
    def _on_progress(self, token, step: str, done, total) -> None:
        if token is not self._load_token:
            return
        if done is None or not total:
            self.modelProgress.emit(step)
        else:
            self.modelCount.emit(step, int(done), int(total))

    def shutdown(self) -> None:
        """Stop both workers: the evaluation at its next layer; a load is abandoned."""
        self._load_token = None
        self._trim_timer.stop()
        self._compute.shutdown()
        self._loader.shutdown()
