"""The bridge between the Session (GUI thread) and the computation (worker threads).

The scheduling itself is Qt-free (``runtime.scheduler``): one evaluation worker where the
newest request wins and a stale result is never delivered, and a second worker that
builds or loads models while the current one stays usable. This adapter owns both,
turns session events into requests, and carries each outcome to the GUI thread (a
queued Qt signal), where it is checked once more: a newer request may have been made
while the outcome travelled.

Importing this module costs nothing heavy: the plots' modules (``import_plots``, the
window's), torch and the core's computing modules are imported on the worker during
``start()``, after the window is on screen, and the first evaluation is computed there.
The window builds its plots panel meanwhile, when ``plotsImported`` says it can (while
torch's libraries load without Python's lock), and its model panel on ``ready``.
(The caller imports models.config and document.spec, which import neither.)
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable

from PySide6.QtCore import QObject, QTimer, Signal, Slot

from ..boot import before_torch, note_activity
from ..errors import PosvizInputError, one_line
from ..runtime.jobs import (START_STEPS, EvaluationJob, EvaluationRunner, LoadJob, StartJob,
                            ViewsJob, load_model)
from ..runtime.scheduler import Outcome, Scheduler
from .heap_trim import HeapTrim
from .settings import downloads_allowed
from .status import StartSteps

ASK_ABOVE_BYTES = 500 * 10**6   # a larger download of a hub model is asked for first

if TYPE_CHECKING:               # the core's modules import torch: only on the worker
    from ..document.spec import ModelSpec, Selection
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
    starting = Signal(str)                          # a start-up step begins (START_STEPS)
    progress = Signal(object, str, object, object)  # load token, step, done, total


class Controller(QObject):
    """Owns the Session and the workers; widgets read ``session`` and watch the signals."""

    ready = Signal()                    # the session exists (core imported)
    plotsImported = Signal()            # at start: the plots can be built (torch follows)
    startStep = Signal(str)             # "Starting: importing torch (step 2 of 4)…"
    computing = Signal()
    evaluated = Signal(object, float)   # the newest views.shown.Shown, milliseconds
    evaluationFailed = Signal(str)
    modelLoading = Signal(str)          # label
    modelProgress = Signal(str)         # a step of a load
    modelCount = Signal(str, object, object)  # a counted step: step, done, total
                                        # (tensors, or bytes of a download: beyond int32)
    modelLoaded = Signal(object)        # the ModelSpec now running
    modelFailed = Signal(str)
    loadCancelled = Signal()            # the user gave up the model being loaded
    downloadAsked = Signal(object, str)  # a ModelSpec, and what its download would take

    def __init__(self, parent: QObject | None = None,
                 import_plots: Callable[[], None] = lambda: None):
        super().__init__(parent)
        self._import_plots = import_plots   # on the worker at start: the window's plots
        self.session = None
        self.last_shown = None
        self.last_ms = 0.0
        self.loading = False
        self.device = "cpu"             # where pretrained models run ("auto" picks)
        self.online = True              # False: --offline (no download in this run)
        self.held = False               # the session is shown, not computed (it would not fit)
        self._look_of: Callable[[Selection], MosaicLook | None] = lambda selection: None
        self.restyled = False           # last_shown is a new look of the evaluation before
        self._painted = 0               # generation of last_shown
        self._newest = None             # the job of the newest request
        self._load_token = None         # the load whose progress is shown
        self._start_later = None        # the pretrained model a start loads once ready
                                        # (then, as it loads: it and the order shown)
        self._heap = HeapTrim(self)
        # a session edit's request waits for the event loop's next turn (queued while active)
        self._request_timer = QTimer(self, singleShot=True, interval=0)
        self._request_timer.timeout.connect(lambda: self.request(announce=False))
        self._bridge = _Bridge()
        self._bridge.computed.connect(self._on_computed)
        self._bridge.loaded.connect(self._on_loaded)
        self._bridge.progress.connect(self._on_progress)
        self._bridge.plotsImported.connect(self.plotsImported)
        self.start_steps = StartSteps(self.startStep.emit)
        self._bridge.starting.connect(self.start_steps.step)
        self._runner = EvaluationRunner()   # used on the compute worker only
        self._compute = Scheduler(self._run, self._bridge.computed.emit, name="posviz-compute")
        self._loader = Scheduler(load_model, self._bridge.loaded.emit, name="posviz-load",
                                 describe=_load_failure, detach=True)

    # -- start-up ---------------------------------------------------------------------
    def start(self, text: str, spec: ModelSpec, positions: Positions,
              order: str = "reverse", held: bool = False, builtin=None) -> None:
        """Import the rest of the core and build the session on the worker; ``ready``
        follows. ``spec`` and ``positions`` must be valid. A pretrained ``spec`` loads
        once the session runs the built-in model (``builtin``, default: the defaults), as
        ``load`` does it (its steps shown, Cancel keeping the built-in model; one that
        fails to load is told by ``modelFailed``). ``held``: the session is built and
        shown but nothing is computed until ``held`` is False."""
        from ..document.spec import ModelSpec
        self.held = held
        self._start_later = None if spec.is_builtin or held else spec
        if self._start_later is not None:   # a load of 30 s with no bar or Cancel otherwise
            spec = builtin or ModelSpec.builtin()
        self._submit(StartJob(text, spec, positions, order, device=self.device,
                              online=self.downloads_on(), evaluate=not held,
                              told=self._bridge.starting.emit))

    @contextmanager
    def force_sync(self):
        """While inside, each evaluation and load runs on the GUI thread and is told
        before the call that asked for it returns (Scheduler.force_sync): for tests
        that wait only for a result."""
        with self._compute.force_sync(), self._loader.force_sync():
            yield self

    def downloads_on(self) -> bool:
        """May a hub model be downloaded now? Not with --offline, the model panel's
        setting turned off, or HF_HUB_OFFLINE=1."""
        from ..models.hf.cache import network_allowed
        return self.online and downloads_allowed() and network_allowed()

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
        self._bridge.starting.emit(START_STEPS[0])
        try:
            self._import_plots()
        except Exception:
            pass        # the window tells the user when it builds the panel
        else:
            self._bridge.plotsImported.emit()
        self._bridge.starting.emit(START_STEPS[1])
        before_torch()
        try:
            import torch  # noqa: F401
        except Exception:
            pass        # the runner meets the same error and tells it

    def set_look(self, look_of: Callable[[Selection], MosaicLook | None]) -> None:
        """How the mosaic is coloured for a view Selection (the plots' mosaic_look): each
        request colours it for the session's selection, and a selection in another look
        has the views prepared again (``restyle``)."""
        self._look_of = look_of

    def _look(self) -> MosaicLook | None:
        return self._look_of(self.session.selection)

    # -- evaluation -------------------------------------------------------------------
    def _on_session_event(self, event) -> None:
        from ..document.events import COMPUTING_EVENTS, SelectionChanged
        if isinstance(event, COMPUTING_EVENTS):
            # asked once the widgets have shown the edit (the strip painted while the worker
            # computed took its cores: benchmarks/README.md); the veil and status hear it
            if not (self._request_timer.isActive() or self._compute.closed or self.held):
                self.computing.emit()   # (said once: the request does not say it again)
                self._request_timer.start()
        elif isinstance(event, SelectionChanged):
            self.restyle()

    def request(self, announce: bool = True) -> None:
        """Ask for the current session's evaluation; supersedes any pending request.
        ``announce``: emit ``computing``."""
        s = self.session
        if s is None or self._compute.closed or self.held:
            return
        selection = s.selection
        job = EvaluationJob(s.backend, s.seq, s.order.copy(), s.positions, self._look(),
                            keep=(selection.layer - 1, selection.head))
        note_activity()                 # no full garbage collection in the middle of a drag
        if announce:
            self.computing.emit()
        self._submit(job)

    def restyle(self) -> None:
        """Ask for the views of the evaluation shown again when the session's selection
        is in another look than the one asked for last (the mosaic's mode or difference
        range changed); supersedes any pending request, and the result arrives through
        ``evaluated`` like any other. While an evaluation is still on its way, that is
        asked again in the new look instead."""
        s, shown = self.session, self.last_shown
        if s is None or self._compute.closed or self.held or self._request_timer.isActive():
            return                      # (a queued request asks in the look of its turn)
        if shown is not None and not self._has_head(shown.evaluation):
            self.request()              # a long input kept another head's maps: run again
            return
        look = self._look()
        if look == getattr(self._newest, "look", None):
            return                      # shown, or on its way, in that look already
        if shown is None or (not self.generation_painted()
                             and not isinstance(self._newest, ViewsJob)):
            self.request()
            return
        self.computing.emit()
        self._submit(ViewsJob(shown.evaluation, look, shown.views, shown.model))

    def _has_head(self, ev) -> bool:
        """Does the evaluation hold the maps of the selected layer and head (all of a
        run's when small enough; else the one kept: Engine.evaluate's keep)?"""
        selection = self.session.selection
        if ev.comparison.attention_aligned is not None:
            return True
        return ev.kept is not None and ev.kept[:2] == (selection.layer - 1, selection.head)

    def generation_painted(self) -> bool:
        """Is the last result shown the answer to the newest request, none queued?"""
        return not self._request_timer.isActive() and self._painted == self._compute.generation

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
        self.start_steps.finished()     # started or not: its steps are told no more
        if outcome.failed:
            self.evaluationFailed.emit(f"could not start the model: {outcome.message}")
            return
        self.session = outcome.result.session
        self.session.subscribe(self._on_session_event)
        self.ready.emit()               # the window builds its panels and sets the look
        self.request()                  # the evaluation is mostly done already
        later, self._start_later = outcome.result.later or self._start_later, None
        if outcome.result.problem:
            self.modelFailed.emit(outcome.result.problem)
        elif later:                     # loaded (downloaded) while the built-in runs
            reversed_ = outcome.job.order == "reverse"      # shown so, its tokens too
            self._start_later = (later, tuple(self.session.order)) if reversed_ else None
            self.load(later)

    def _on_evaluated(self, outcome: Outcome) -> None:
        shown, ms = outcome.result.shown, outcome.result.ms
        self.last_shown, self.last_ms, self._painted = shown, ms, outcome.generation
        self.restyled = isinstance(outcome.job, ViewsJob)
        self.evaluated.emit(shown, ms)
        # the result shown before is gone now: its freed pages go back once the window
        # is quiet (workaround "malloc-trim")
        self._heap.soon(len(shown.evaluation.order))

    # -- models -----------------------------------------------------------------------
    def load(self, spec: ModelSpec, confirmed: bool = False,
             check_memory: bool = True) -> None:
        """Build or load ``spec``'s model off the GUI thread; the current one stays in
        use until it is ready. Then the session runs it (ModelChanged) and
        ``modelLoaded`` follows; a newer load or ``cancel_load`` discards this one. A
        hub model's download above ASK_ABOVE_BYTES is not started but asked for
        (``downloadAsked``) unless ``confirmed``; the memory check is skipped when not
        ``check_memory`` (the user asked for the model anyway)."""
        if self._loader.closed:
            return
        self.loading = True
        self._load_token = token = object()
        self.modelLoading.emit(_label(spec))
        n = len(self.session.seq) if self.session is not None else 0
        tell = (lambda step, done=None, total=None:
                self._bridge.progress.emit(token, step, done, total))
        self._loader.submit(LoadJob(spec, tell, n_tokens=n, device=self.device,
                                    online=self.downloads_on(),
                                    ask_above=None if confirmed else ASK_ABOVE_BYTES,
                                    check_memory=check_memory))

    def load_confirmed(self, spec: ModelSpec) -> None:
        """Load ``spec``, downloading it whatever its size: the user said yes."""
        self.load(spec, confirmed=True)

    def cancel_load(self) -> None:
        """Forget the model being loaded, at once: its result is discarded.

        A pretrained load stops before its next tensor and frees what it read (a
        built-in model being built, or a .bin checkpoint that torch reads in one call,
        finishes on its own thread and is thrown away). The next load does not wait.
        """
        self._loader.cancel()
        self._load_token = None
        self.loading = False
        self.loadCancelled.emit()

    @Slot(object)
    def _on_loaded(self, outcome: Outcome) -> None:
        if not self._loader.is_current(outcome.generation):
            return
        self.loading = False
        self._load_token = None
        start, self._start_later = self._start_later, None
        instead = "" if start is None else ": the built-in model runs instead"   # at start
        if outcome.failed:
            from ..models.hf.hub import LargeDownload
            if isinstance(outcome.error, LargeDownload):
                self.downloadAsked.emit(outcome.job.spec, one_line(outcome.error))
            else:
                self.modelFailed.emit(outcome.message + instead)
            return
        spec, backend = outcome.job.spec, outcome.result
        try:        # ModelChanged -> request(); the start's model reversed as the start
            if self.session is None:            # showed it, unless reordered since
                raise PosvizInputError("the session is not ready yet")
            self.session.set_model(spec, backend, start == (spec, tuple(self.session.order)))
        except ValueError as error:             # the text does not fit the new model
            self.modelFailed.emit(one_line(error) + instead)
            return
        self.modelLoaded.emit(spec)

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
        self._heap.stop()
        self._request_timer.stop()
        self._compute.shutdown()
        self._loader.shutdown()
