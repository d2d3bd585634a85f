"""The jobs the application runs on its workers, as typed values, and what runs them.

``StartJob`` builds the session, ``EvaluationJob`` evaluates one order and prepares the
views, ``ViewsJob`` prepares the views of an evaluation again in another look (the
mosaic's mode or colours changed), all on the compute ``scheduler.Scheduler``;
``LoadJob`` builds or loads a model on a second one. Importing this module imports
neither torch nor numpy: the runners import the core when they run, on the worker (the
annotations name the core's types for readers and type checkers only).
"""
from __future__ import annotations

import time
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from ..errors import one_line

if TYPE_CHECKING:               # these import numpy or torch: never at import time
    import numpy as np

    from ..analysis.engine import Evaluation
    from ..document.session import Session
    from ..document.spec import ModelSpec
    from ..models.backend import Backend, TokenSequence
    from ..models.config import Positions
    from ..views.mosaic import MosaicLook
    from ..views.shown import Shown, Views

__all__ = ["EvaluationJob", "EvaluationRunner", "Evaluated", "LoadJob", "StartJob",
           "Started", "ViewsJob", "load_model"]

ShouldStop = Callable[[], bool]
# What start-up does, in order, each told to the window (its first seconds said nothing
# but "Loading model…" for 6-20 s): the window's first two, then StartJob's.
START_STEPS = ("importing the plots' modules", "importing torch", "building the model",
               "computing the first view")


def start_step(step: str, how_far: str = "") -> str:
    """"Starting: importing torch (step 2 of 4)…"; ``how_far`` after the step's words
    (": layer 3 of 4 (forward 1 of 2), 4 s so far")."""
    return (f"Starting: {step}{how_far} (step {START_STEPS.index(step) + 1} of "
            f"{len(START_STEPS)})…")


@dataclass(frozen=True, eq=False)
class StartJob:
    """Build the session (imports torch and the core on the worker). The caller hands
    a valid spec and positions (the window falls back to the defaults when the remembered
    ones no longer validate); a model that fails to load falls back to the built-in one."""

    text: str
    spec: ModelSpec
    positions: Positions
    order: str = "reverse"              # "reverse": start reversed; else the original order
    progress: Callable[[str], None] | None = None
    device: str = "cpu"                 # where a pretrained model runs ("auto" picks)
    told: Callable[[str], None] | None = None   # each START_STEPS step as it begins
    online: bool = False                # may a hub model be downloaded? (then by a LoadJob
                                        # once the window is ready, not here)
    evaluate: bool = True               # False: built, not computed (it would not fit)


@dataclass(frozen=True, eq=False)
class EvaluationJob:
    """Evaluate one order of a session's tokens and prepare what the plots show."""

    backend: Backend
    seq: TokenSequence
    order: np.ndarray                   # (n,) int, a copy of the session's
    positions: Positions
    look: MosaicLook | None = None      # None: no mosaic
    keep: tuple[int, int] | None = None  # (layer 0..L-1, head) on screen: kept when the
                                        #   maps are too large to keep whole


@dataclass(frozen=True, eq=False)
class ViewsJob:
    """Prepare the views of an evaluation already made, in another look: the user chose
    another mosaic mode or difference range. Of ``views``, the ones shown, the mosaic is
    recoloured when only its levels changed (its tiles stay) and the other figures are
    kept: ``evaluation`` may then be one kept for the screen (Evaluation.for_screen)."""

    evaluation: Evaluation
    look: MosaicLook | None
    views: Views | None = None
    model: object = None        # the shown views.model.ModelViews, kept as they are


@dataclass(frozen=True, eq=False)
class LoadJob:
    """Build the built-in model or load a pretrained one for ``spec``."""

    spec: ModelSpec
    progress: Callable[..., None] | None = None    # told each step of a load, and with
                                      # (step, done, total) how far a counted one is
    n_tokens: int = 0                 # the text's length now: the model must fit
    device: str = "cpu"               # where a pretrained model runs ("auto" picks)
    online: bool = False              # may a hub model be downloaded?
    ask_above: int | None = None      # bytes a download may take without asking (None:
                                      # any; above it hf.LargeDownload says how much)
    check_memory: bool = True         # False: loaded although it may not fit (asked for)


@dataclass(frozen=True)
class Started:
    session: Session
    problem: str | None = None          # why the asked-for model is not the one running
    later: ModelSpec | None = None      # a hub model to download and load once the window
                                        # is ready (with progress and Cancel)


@dataclass(frozen=True)
class Evaluated:
    shown: Shown
    ms: float                           # evaluation and views, milliseconds


def load_model(job: LoadJob, should_stop: ShouldStop | None = None) -> Backend:
    """The backend for ``job.spec`` (ModelSpec.load), telling its progress."""
    return job.spec.load(job.progress, device=job.device, should_stop=should_stop,
                         n_tokens=job.n_tokens, online=job.online, ask_above=job.ask_above,
                         check_memory=job.check_memory)


class EvaluationRunner:
    """Runs StartJobs, EvaluationJobs and ViewsJobs on the compute worker (one thread
    only).

    Keeps an Engine for the newest backend (its reference run cached). The first
    evaluation is computed at start, right after the session is built, while the GUI
    builds its panels; the first EvaluationJob for that same state takes it and only
    adds the views (which need the GUI's look).
    """

    def __init__(self):
        self._engine = None
        self._early = None              # (state, Evaluation, tiles, ms) made at start

    def __call__(self, job, should_stop: ShouldStop | None = None):
        if isinstance(job, StartJob):
            return self.start(job)
        if isinstance(job, EvaluationJob):
            return self.evaluate(job, should_stop)
        if isinstance(job, ViewsJob):
            return self.restyle(job, should_stop)
        raise TypeError(f"no runner for {type(job).__name__}")

    def engine(self, backend):
        if self._engine is None or self._engine.backend is not backend:
            from ..analysis.engine import Engine
            self._engine = Engine(backend)
        return self._engine

    def start(self, job: StartJob) -> Started:
        from ..document.session import DEFAULT_TEXT
        from ..document.spec import ModelSpec
        from ..models.hf.cache import NotCached

        spec, positions = job.spec, job.positions
        problem = later = None
        tell = job.told or (lambda step: None)
        tell(START_STEPS[2])
        try:
            # held: the built-in model only shows the text, it computes nothing yet
            backend = load_model(LoadJob(spec, job.progress, device=job.device,
                                         check_memory=job.evaluate))
        except (ImportError, TypeError, ValueError) as error:  # PosvizInputError and friends
            if isinstance(error, NotCached) and job.online:
                later = spec            # downloaded where the window shows its progress
            elif not spec.is_builtin:   # (a built-in one that cannot be built falls back
                problem = one_line(error)   # silently, as an invalid remembered one does)
            spec = ModelSpec.builtin()
            backend = load_model(LoadJob(spec))
        try:
            session = _new_session(backend, job.text or DEFAULT_TEXT, positions, spec)
            session.set_text(session.text, truncate=True)
        except ValueError:
            session = _new_session(backend, DEFAULT_TEXT, positions, spec)
        if job.order == "reverse":
            session.reverse()           # no listeners yet: nobody to notify
        self._early = None
        if not job.evaluate:
            return Started(session, problem, later)
        try:
            tell(START_STEPS[3])
            start = time.perf_counter()
            mode = session.selection.mosaic     # its pooling and views: the next job's
            with after_forwards(self.engine(backend), backend, session.seq, session.order,
                                session.positions, mode is not None):
                ev, tiles = self._evaluate(backend, session.seq, session.order,
                                           session.positions, mode=mode)
            state = (backend, session.seq, tuple(int(i) for i in session.order),
                     session.positions)
            self._early = (state, ev, tiles, 1000 * (time.perf_counter() - start))
        except Exception:               # the first EvaluationJob tells what is wrong
            self._early = None
        return Started(session, problem, later)

    def _evaluate(self, backend, seq, order, positions, should_stop=None, keep=None,
                  mode: str | None = None):
        """The Evaluation and its mosaic's tiles of ``mode`` (None: no mosaic), pooled as
        the comparison passes (views.evaluated)."""
        from ..views.evaluated import evaluated
        return evaluated(self.engine(backend), seq, order, positions, should_stop, keep,
                         mode)

    def _in_look(self, ev, tiles, look, should_stop=None):
        """(ev, tiles) whose tiles hold ``look``'s mode (views.evaluated.in_mode)."""
        from ..views.evaluated import in_mode
        return in_mode(self.engine(ev.backend), ev, tiles,
                       None if look is None else look.mode, should_stop)

    def evaluate(self, job: EvaluationJob, should_stop: ShouldStop | None = None) -> Evaluated:
        from ..views import shown as views
        from ..views.model import model_views

        start = time.perf_counter()
        early, self._early = self._early, None
        mode = None if job.look is None else job.look.mode
        made = early is not None and _same_state(early, job)     # at start, for this
        if made:
            ev, tiles, earlier_ms = early[1:]
            ev, tiles = self._in_look(ev, tiles, job.look, should_stop)
        del early
        with nullcontext() if made else after_forwards(
                self.engine(job.backend), job.backend, job.seq, job.order, job.positions,
                job.look is not None):
            if not made:
                ev, tiles = self._evaluate(job.backend, job.seq, job.order, job.positions,
                                           should_stop, job.keep, mode)
                earlier_ms = 0.0
            if should_stop is not None and should_stop():   # superseded: no views
                from ..errors import Cancelled
                raise Cancelled("superseded by a newer request")
            shown = views.Shown(ev.for_screen(),
                                views.build_views(ev, job.look, tiles, head=job.keep),
                                model_views(job.backend, ev))
        return Evaluated(shown, earlier_ms + 1000 * (time.perf_counter() - start))

    def restyle(self, job: ViewsJob, should_stop: ShouldStop | None = None) -> Evaluated:
        from ..views import shown as views

        start = time.perf_counter()
        before = job.views
        ev, tiles = self._in_look(job.evaluation, None if before is None else before.tiles,
                                  job.look, should_stop)
        keep = None if ev.kept is None else ev.kept[:2]      # the head a long input kept
        if before is not None and ev is job.evaluation:
            made = views.in_look(before, ev, job.look, tiles, keep)
        else:                                   # made afresh, or the order ran again
            made = views.build_views(ev, job.look, tiles,
                                     None if before is None else before.mosaic, keep)
        return Evaluated(views.Shown(ev.for_screen(), made, job.model),
                         1000 * (time.perf_counter() - start))


@contextmanager
def after_forwards(engine, backend, seq, order, positions, mosaic: bool):
    """While inside, the time left told of the forwards of ``order`` and of each step
    after them holds the steps after them as expected (runtime.after_left; the
    original's maps pooled for a ``mosaic``); their seconds teach the next evaluation's
    expectation once it is done."""
    import numpy as np

    from ..models import after, reached
    from ..models.maps import KEEP_ALL
    from . import after_left
    from .stage_times import StageTimes

    n, facts = len(seq), backend.facts()
    cells = facts.layers * facts.heads * n * n                       # L·h·n²
    identity = bool(np.array_equal(order, np.arange(n)))
    new_text = engine.forwards(seq, order, positions) > (not identity)
    steps = after_left.steps_after(identity, 4 * cells <= KEEP_ALL, new_text, mosaic)
    times = StageTimes()
    expected = after_left.expected(steps, cells, times, facts.model)
    with after.expecting(expected) as took, reached.afterwards(sum(expected.values())):
        yield
    after_left.learn(took, cells, times, facts.model)


def _same_state(early, job: EvaluationJob) -> bool:
    """Was the evaluation computed at start for the state this job asks about?"""
    backend, seq, order, positions = early[0]
    return (backend is job.backend and seq == job.seq and positions == job.positions
            and order == tuple(int(i) for i in job.order))


def _new_session(backend: Backend, text: str, positions: Positions,
                 spec: ModelSpec) -> Session:
    from ..document.session import Session
    return Session(backend, text, positions, spec=spec)
