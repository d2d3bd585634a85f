"""The jobs the application runs on its workers, as typed values, and what runs them.

``StartJob`` builds the session, ``EvaluationJob`` evaluates one order and prepares the
views, both on the compute ``scheduler.Scheduler``; ``LoadJob`` builds or loads a model
on a second one. Importing this module imports neither torch nor numpy: the runners
import the core when they run, on the worker.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from .errors import PosvizInputError
from .scheduler import one_line

if TYPE_CHECKING:
    from .document import ModelSpec

__all__ = ["EvaluationJob", "EvaluationRunner", "Evaluated", "LoadJob", "StartJob",
           "Started", "load_model"]

ShouldStop = Callable[[], bool]


@dataclass(frozen=True, eq=False)
class StartJob:
    """Build the session (imports torch and the core on the worker)."""

    text: str
    spec: Any                           # ModelSpec, or its to_dict() form (see _start_spec)
    positions: Any                      # config.Positions, or (mode, offset)
    order: str = "reverse"              # "reverse": start reversed; else the original order
    progress: Callable[[str], None] | None = None


@dataclass(frozen=True, eq=False)
class EvaluationJob:
    """Evaluate one order of a session's tokens and prepare what the plots show."""

    backend: Any                        # backend.Backend
    seq: Any                            # backend.TokenSequence
    order: Any                          # (n,) int array, a copy of the session's
    positions: Any                      # config.Positions
    look: Any = None                    # views.MosaicLook, or None


@dataclass(frozen=True, eq=False)
class LoadJob:
    """Build the built-in model or load a pretrained one for ``spec``."""

    spec: ModelSpec
    progress: Callable[[str], None] | None = None    # told each step of a load


@dataclass(frozen=True)
class Started:
    session: Any                        # session.Session
    problem: str | None = None          # why the asked-for model is not the one running


@dataclass(frozen=True)
class Evaluated:
    shown: Any                          # views.Shown
    ms: float                           # evaluation and views, milliseconds


def load_model(job: LoadJob, should_stop: ShouldStop | None = None):
    """The backend for ``job.spec``.

    Nothing stops a load once it runs (torch reads the weights in one call): a
    superseded one runs to its end and its result is dropped; ``should_stop()`` only
    keeps its progress from being told.
    """
    spec = job.spec
    if spec.is_builtin:
        from .backend import BuiltinBackend
        return BuiltinBackend(spec.config)
    try:
        from . import hf
    except ImportError:
        raise PosvizInputError("real models are not available in this installation") from None

    def progress(step: str) -> None:
        if job.progress is not None and not (should_stop is not None and should_stop()):
            job.progress(step)
    return hf.load_backend(spec.source, progress=progress)


class EvaluationRunner:
    """Runs StartJobs and EvaluationJobs on the compute worker (one thread only).

    Keeps an Engine for the newest backend (its reference run cached). The first
    evaluation is computed at start, right after the session is built, while the GUI
    builds its panels; the first EvaluationJob for that same state takes it and only
    adds the views (which need the GUI's look).
    """

    def __init__(self):
        self._engine = None
        self._early = None              # (state, Evaluation, ms) computed at start

    def __call__(self, job, should_stop: ShouldStop | None = None):
        if isinstance(job, StartJob):
            return self.start(job)
        if isinstance(job, EvaluationJob):
            return self.evaluate(job, should_stop)
        raise TypeError(f"no runner for {type(job).__name__}")

    def engine(self, backend):
        if self._engine is None or self._engine.backend is not backend:
            from .engine import Engine
            self._engine = Engine(backend)
        return self._engine

    def start(self, job: StartJob) -> Started:
        from .session import DEFAULT_TEXT

        spec, positions = _start_spec(job.spec), _start_positions(job.positions)
        problem = None
        try:
            backend = load_model(LoadJob(spec, job.progress))
        except (ImportError, TypeError, ValueError) as error:  # PosvizInputError and friends
            if not spec.is_builtin:     # (a remembered built-in config that no longer
                problem = one_line(error)   # validates falls back silently, as always)
            spec = _start_spec(None)
            backend = load_model(LoadJob(spec))
        try:
            session = _new_session(backend, job.text or DEFAULT_TEXT, positions, spec)
            session.set_text(session.text, truncate=True)
        except ValueError:
            session = _new_session(backend, DEFAULT_TEXT, positions, spec)
        if job.order == "reverse":
            session.reverse()           # no listeners yet: nobody to notify
        try:
            start = time.perf_counter()
            ev = self.engine(backend).evaluate(session.seq, session.order, session.positions)
            state = (backend, session.seq, tuple(int(i) for i in session.order),
                     session.positions)
            self._early = (state, ev, 1000 * (time.perf_counter() - start))
        except Exception:               # the first EvaluationJob tells what is wrong
            self._early = None
        return Started(session, problem)

    def evaluate(self, job: EvaluationJob, should_stop: ShouldStop | None = None) -> Evaluated:
        from . import views

        start = time.perf_counter()
        early, self._early = self._early, None
        if early is not None and _same_state(early, job):
            ev, earlier_ms = early[1], early[2]
        else:
            ev = self.engine(job.backend).evaluate(job.seq, job.order, job.positions,
                                                   should_stop)
            earlier_ms = 0.0
        del early
        shown = views.Shown(ev, views.build_views(ev, job.look, should_stop))
        return Evaluated(shown, earlier_ms + 1000 * (time.perf_counter() - start))


def _same_state(early, job: EvaluationJob) -> bool:
    """Was the evaluation computed at start for the state this job asks about?"""
    backend, seq, order, positions = early[0]
    return (backend is job.backend and seq == job.seq and positions == job.positions
            and order == tuple(int(i) for i in job.order))


def _start_spec(value) -> "ModelSpec":
    """A ModelSpec from a spec, its ``to_dict()`` form or a bare built-in config dict (as
    settings keep them), so the GUI need not import the core to start; the default
    built-in model for None. A config that does not validate fails when it is built."""
    from .config import ModelConfig
    from .document import ModelSpec

    if value is None or isinstance(value, ModelSpec):
        return value or ModelSpec.builtin()
    value = dict(value)
    if value.get("kind") == "pretrained":
        return ModelSpec.pretrained(str(value.get("source", "")), str(value.get("label", "")))
    config = value.get("config", {}) if value.get("kind") == "builtin" else value
    try:
        return ModelSpec.builtin(ModelConfig(**config))
    except TypeError:                   # fields of another version
        return ModelSpec.builtin()


def _start_positions(value):
    """Positions from Positions or (mode, offset); the default ones if they do not validate."""
    from .config import Positions

    try:
        positions = value if isinstance(value, Positions) else Positions(*value)
        return positions.validate()
    except (TypeError, ValueError):
        return Positions()


def _new_session(backend, text: str, positions, spec: ModelSpec):
    from .session import Session
    return Session(backend, text, positions, spec=spec)
