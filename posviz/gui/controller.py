"""The bridge between the Session (GUI thread) and the computation (worker threads).

One evaluation worker owns an Engine (reference run cached). Requests coalesce: each
carries a generation number, the worker always takes the newest pending one, and a
result whose generation is no longer the newest is dropped, so a stale result is never
painted. A running evaluation stops between layers as soon as a newer request is
pending (``Engine.evaluate(..., should_stop=...)`` raises ``Cancelled``), so the newest
order never waits for a whole superseded forward. What the plots need beyond the
Evaluation (the mosaic's pooled tiles and their coloured pixels) is prepared on the
worker too.

Models are built or loaded on a second worker, so the current model stays usable while
a new one loads; cancelling discards the result when it arrives.

Importing this module costs nothing heavy: torch and the core are imported on the
worker during ``start()``, after the window is on screen, and the first evaluation is
computed there right after the session is built, while the window builds its panels.
"""
from __future__ import annotations

import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

from PySide6.QtCore import QObject, Signal, Slot

from .collector import note_activity


TRIM_FROM = 256         # tokens: from here on an evaluation holds hundreds of MB


def _find_malloc_trim():
    """glibc's malloc_trim (Linux), which gives freed heap pages back to the system."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):
        return None


_malloc_trim = _find_malloc_trim()


def _one_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0] if text else type(error).__name__


class _Bridge(QObject):
    """Signals emitted on worker threads; Qt queues them to the GUI thread."""

    booted = Signal(object, object)                 # session or None, error message or None
    evaluated = Signal(int, object, float)          # generation, Evaluation, milliseconds
    failed = Signal(int, str)                       # generation, one-line message
    loaded = Signal(int, object, bool)              # load generation, backend, real
    load_failed = Signal(int, str)
    load_progress = Signal(int, str)


class Controller(QObject):
    """Owns the Session and the workers; widgets read ``session`` and watch the signals."""

    ready = Signal()                    # the session exists (core imported)
    sessionChanged = Signal(str)        # forwarded Session notification: text/order/model/positions
    computing = Signal()
    evaluated = Signal(object, float)   # the newest Evaluation, milliseconds
    evaluationFailed = Signal(str)
    modelLoading = Signal(str)          # label
    modelProgress = Signal(str)
    modelLoaded = Signal(str, bool)     # backend name, whether it is a real (pretrained) one
    modelFailed = Signal(str)

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self.session = None
        self.last_evaluation = None
        self.last_ms = 0.0
        self._bridge = _Bridge()
        self._bridge.booted.connect(self._on_booted)
        self._bridge.evaluated.connect(self._on_evaluated)
        self._bridge.failed.connect(self._on_failed)
        self._bridge.loaded.connect(self._on_loaded)
        self._bridge.load_failed.connect(self._on_load_failed)
        self._bridge.load_progress.connect(self._on_load_progress)
        self._compute = ThreadPoolExecutor(1, thread_name_prefix="posviz-compute")
        self._loader = ThreadPoolExecutor(1, thread_name_prefix="posviz-load")
        self._lock = threading.Lock()
        self._pending = None            # newest (generation, backend, seq, order, positions)
        self._generation = 0
        self._painted = 0               # generation of last_evaluation
        self._engine = None             # used on the compute worker only
        self._prepare_mosaic = None     # the worker's plot preparation, imported lazily
        self._load_generation = 0
        self.loading = False

    # -- start-up ---------------------------------------------------------------------
    def start(self, text: str, config: dict | None = None, positions: tuple = ("slot", 0),
              order: str = "reverse") -> None:
        """Import the core and build the session on the worker; ``ready`` follows."""
        self._initial_order = order
        self._compute.submit(self._boot, text, config or {}, positions)

    def _boot(self, text, config, positions) -> None:
        try:
            from ..core.backend import BuiltinBackend
            from ..core.config import ModelConfig, Positions
            from ..core.session import DEFAULT_TEXT, Session

            try:
                cfg = ModelConfig(**config).validate()
            except (TypeError, ValueError):
                cfg = ModelConfig()
            try:
                pos = Positions(*positions).validate()
            except (TypeError, ValueError):
                pos = Positions()
            try:        # the plots' modules (pyqtgraph) too, off the GUI thread, and
                from . import plots  # noqa: F401   before the GUI imports them itself
            except Exception:
                pass    # the window tells the user when it builds the panel
            backend = BuiltinBackend(cfg)
            try:
                session = Session(backend, text or DEFAULT_TEXT, pos)
                session.set_text(session.text, truncate=True)
            except ValueError:
                session = Session(backend, DEFAULT_TEXT, pos)
            if self._initial_order == "reverse":
                session.reverse()       # no listeners yet: nobody to notify
            # The first evaluation is computed here, at once: the GUI builds its panels
            # on ``booted`` meanwhile. It answers generation 1 (see _on_booted).
            with self._lock:
                self._pending = (1, backend, session.seq, session.order.copy(),
                                 session.positions)
            self._bridge.booted.emit(session, None)
        except Exception as error:      # shown in the status line, never as a traceback
            traceback.print_exc()
            self._bridge.booted.emit(None, _one_line(error))
            return
        self._evaluate_newest()

    @Slot(object, object)
    def _on_booted(self, session, error) -> None:
        if session is None:
            self.evaluationFailed.emit(f"could not start the model: {error}")
            return
        self.session = session
        self._generation += 1           # = 1: the worker is already computing it
        session.subscribe(self._on_session_change)
        self.computing.emit()
        self.ready.emit()

    # -- evaluation -------------------------------------------------------------------
    def _on_session_change(self, what: str) -> None:
        self.sessionChanged.emit(what)
        self.request()

    def request(self) -> None:
        """Ask for the current session's evaluation; supersedes any pending request."""
        s = self.session
        if s is None:
            return
        self._generation += 1
        with self._lock:
            self._pending = (self._generation, s.backend, s.seq, s.order.copy(), s.positions)
        note_activity()                 # no full garbage collection in the middle of a drag
        self.computing.emit()
        self._compute.submit(self._evaluate_newest)

    @property
    def generation(self) -> int:
        return self._generation

    def generation_painted(self) -> bool:
        """Is the last evaluation the answer to the newest request?"""
        return self._painted == self._generation

    def _evaluate_newest(self) -> None:
        with self._lock:
            job, self._pending = self._pending, None
        if job is None:                 # an earlier call already took it
            return
        generation, backend, seq, order, positions = job
        from ..core.errors import Cancelled, PosvizInputError
        from ..core.engine import Engine

        try:
            if self._engine is None or self._engine.backend is not backend:
                self._engine = Engine(backend)
            start = time.perf_counter()
            ev = self._engine.evaluate(seq, order, positions, should_stop=self._superseded)
            self._prepare(ev)
            ms = 1000 * (time.perf_counter() - start)
            self._bridge.evaluated.emit(generation, ev, ms)
            del ev                      # the GUI holds it now; the worker keeps nothing
        except Cancelled:               # a newer request is pending: its job runs next
            pass
        except PosvizInputError as error:
            self._bridge.failed.emit(generation, _one_line(error))
        except Exception as error:
            traceback.print_exc()
            self._bridge.failed.emit(generation, f"computation failed: {_one_line(error)}")

    def _superseded(self) -> bool:
        """Is a newer request waiting? (asked by the engine between layers)"""
        return self._pending is not None

    def _prepare(self, ev) -> None:
        """Work the plots would otherwise do on the GUI thread (the mosaic's image)."""
        if self._prepare_mosaic is None:
            try:
                from .plots.attention import prepare_mosaic
            except Exception:           # no plots: nothing to prepare
                prepare_mosaic = False
            self._prepare_mosaic = prepare_mosaic
        if self._prepare_mosaic:
            self._prepare_mosaic(ev, should_stop=self._superseded)

    @Slot(int, object, float)
    def _on_evaluated(self, generation: int, ev, ms: float) -> None:
        if generation != self._generation:
            return                      # stale: a newer request is on its way
        self.last_evaluation, self.last_ms, self._painted = ev, ms, generation
        self.evaluated.emit(ev, ms)
        if _malloc_trim is not None and len(ev.order) >= TRIM_FROM:
            # The evaluation shown before is gone now; glibc keeps its pages unless asked.
            self._loader.submit(_malloc_trim, 0)

    @Slot(int, str)
    def _on_failed(self, generation: int, message: str) -> None:
        if generation == self._generation:
            self.evaluationFailed.emit(message)

    # -- models -----------------------------------------------------------------------
    def use_builtin(self, config) -> None:
        """Build the built-in model for a valid ModelConfig (in the background)."""
        from ..core.backend import BuiltinBackend
        self._load(lambda progress: BuiltinBackend(config), "built-in transformer", False)

    def load_model(self, spec: str, label: str | None = None) -> None:
        """Load a real pretrained model (a folder, a cache name, or 'minilm')."""
        def make(progress):
            try:
                from ..core import hf
            except ImportError:
                from ..core.errors import PosvizInputError
                raise PosvizInputError("real models are not available in this installation")
            return hf.load_backend(spec, progress=progress)
        self._load(make, label or spec, True)

    def _load(self, make, label: str, real: bool) -> None:
        self._load_generation += 1
        generation = self._load_generation
        self.loading = True
        self.modelLoading.emit(label)

        def progress(*args):
            if len(args) == 1 and isinstance(args[0], float) and 0 <= args[0] <= 1:
                text = f"{100 * args[0]:.0f} %"
            else:
                text = " ".join(str(a) for a in args)
            self._bridge.load_progress.emit(generation, text)

        def job():
            try:
                self._bridge.loaded.emit(generation, make(progress), real)
            except ValueError as error:         # PosvizInputError and friends
                self._bridge.load_failed.emit(generation, _one_line(error))
            except Exception as error:
                traceback.print_exc()
                self._bridge.load_failed.emit(generation, f"could not load {label}: "
                                                          f"{_one_line(error)}")
        self._loader.submit(job)

    def cancel_load(self) -> None:
        """Forget the model being loaded; its result is discarded when it arrives."""
        self._load_generation += 1
        self.loading = False

    @Slot(int, object, bool)
    def _on_loaded(self, generation: int, backend, real: bool) -> None:
        if generation != self._load_generation:
            return
        self.loading = False
        try:
            self.session.set_backend(backend)     # notifies "model" -> request()
        except ValueError as error:
            self.modelFailed.emit(_one_line(error))
            return
        self.modelLoaded.emit(backend.name, real)

    @Slot(int, str)
    def _on_load_failed(self, generation: int, message: str) -> None:
        if generation == self._load_generation:
            self.loading = False
            self.modelFailed.emit(message)

    @Slot(int, str)
    def _on_load_progress(self, generation: int, message: str) -> None:
        if generation == self._load_generation:
            self.modelProgress.emit(message)

    def shutdown(self) -> None:
        self._load_generation += 1
        self._compute.shutdown(wait=False, cancel_futures=True)
        self._loader.shutdown(wait=False, cancel_futures=True)
