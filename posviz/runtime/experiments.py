"""An experiment as a job for a worker thread: what to run, and running it.

A backend records its forwards through hooks on the one model it holds, so the
experiment never runs the window's backend beside the window's own evaluations: it
builds the built-in model again from its config (the same weights, in milliseconds),
and runs a pretrained model through a twin of the window's backend (its own modules on
the same weight tensors, HFBackend.twin), loading it only when the window has none.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Callable

from ..document.spec import ModelSpec
from ..errors import PosvizInputError
from ..models.config import Positions

WHATS = ("sweep", "probe", "paper", "compare", "extend", "order")


@dataclass(frozen=True)
class ExperimentJob:
    what: str                          # one of WHATS
    spec: ModelSpec = ModelSpec()
    texts: tuple[str, ...] = ()
    positions: Positions = Positions()
    kind: str = "random"               # sweep
    count: int = 32                    # sweep
    seed: int = 0                      # sweep
    features: str = "linear"           # probe
    paper: str = "haviv2022"           # paper
    weights: str | None = None         # paper, compare: "random" or "trained"
    encodings: tuple[str, ...] = ()    # compare: the built-in model's encodings
    order: tuple[int, ...] | None = None   # compare: the reorder (None: reversed)
    backend: object = None             # the window's backend of ``spec``, if loaded
    instead: str = ""                  # compare: the window's pretrained model, not run
    ordered: object = None             # compare: the TokenSequence ``order`` reorders
                                       #   (None: the compared models' own tokens)
    factors: tuple[int, ...] = (1, 2, 4, 8)    # extend: the lengths, in training lengths

    def describe(self) -> dict:
        """What produced the result, for an export's provenance."""
        facts = {"experiment": self.what, "model": self.spec.name}
        if self.what == "sweep":
            from ..analysis.experiments.runs import sweep_settings
            facts.update(sweep_settings(self.kind, self.count, self.seed),
                         texts=len(self.texts))
        elif self.what == "probe":
            facts.update(features=self.features, texts=len(self.texts) or "generated")
        elif self.what == "compare":
            facts.update(encodings=",".join(self.encodings), weights=self.weights,
                         text=self.texts[0] if self.texts else "",
                         order="reversed" if self.order is None else
                         ",".join(map(str, self.order)))
        elif self.what == "order":
            facts.update(model="the shipped trained checkpoints", weights="trained")
        elif self.what == "extend":
            facts.update(model="the shipped trained checkpoints", weights="trained",
                         factors=",".join(map(str, self.factors)))
        else:
            facts.update(paper=self.paper, weights=self.weights or "the paper's default")
        return {k: str(v) for k, v in facts.items()}


def backend_for(spec: ModelSpec, progress: Callable[[str], None] | None = None,
                loaded=None):
    """A backend of its own for the experiment (see the module's note); ``loaded``, the
    window's backend of ``spec`` if any, lends its weights to a pretrained one."""
    if spec.is_builtin:
        from ..models.builtin.backend import BuiltinBackend
        return BuiltinBackend(spec.config)
    if loaded is not None and hasattr(loaded, "twin"):
        return loaded.twin()
    from ..models.hf import load_backend
    if progress is not None:
        progress("loading the model for the experiment")
    return load_backend(spec.source)


def conversion_left():
    """A model load's conversion's time left, for a check that loads one (its lines
    told its counts without it: the analysis does not import the runtime)."""
    from .conversion_left import ConversionLeft
    return ConversionLeft(time.monotonic)


def run_experiment(job: ExperimentJob, should_stop: Callable[[], bool] | None = None,
                   progress: Callable[[int, int], None] | None = None,
                   say: Callable[[str], None] | None = None):
    """Run the job: a SweepResult, a ProbeResult, a PaperCheck, an EncodingComparison,
    an Extension (the context-extension lab) or a ZooOrderUse (both on the shipped
    checkpoints)."""
    if job.what not in WHATS:
        raise PosvizInputError(f"the experiment must be one of {', '.join(WHATS)}")
    if job.what == "paper":
        from ..analysis.experiments.papers import check_paper
        loaded = {job.spec.source: job.backend} if job.backend is not None else None
        return check_paper(job.paper, should_stop, job.weights, progress, say, loaded,
                           conversion_left)
    if job.what == "order":
        from ..analysis.experiments.order_use import zoo_order_use
        return zoo_order_use(should_stop=should_stop, say=say, progress=progress)
    if job.what == "extend":
        return _extend(job.factors, should_stop, progress, say)
    if job.what == "compare":
        from ..analysis.experiments.encodings import compare_encodings
        from ..models.config import ModelConfig
        config = job.spec.config if job.spec.is_builtin else ModelConfig()
        return compare_encodings(config, job.encodings, job.weights or "random",
                                 job.texts[0], job.order, job.positions, progress,
                                 should_stop, job.ordered, say)      # each model a Stage
    from ..analysis.engine import Engine
    from ..models.limits import guard
    engine = Engine(backend_for(job.spec, say, job.backend))
    seqs = [engine.backend.tokenize(text) for text in job.texts]
    if job.what == "sweep":                  # the command line's and the API's guard
        guard.check_sweep(engine.backend, seqs, job.kind, job.count, job.positions.offset,
                          every_layer=True)         # the window's layer chooser
    else:
        guard.check_probe(engine.backend, list(map(len, seqs)),
                          job.features == "quadratic", job.positions.offset)
    if job.what == "sweep":
        from ..analysis.experiments.sweep import sweep
        return sweep(engine, job.texts, job.kind, job.count, job.seed, job.positions,
                     progress=progress, should_stop=should_stop, every_layer=True)
    from ..analysis.experiments.probe import probe
    return probe(engine, job.texts, job.positions, features=job.features,
                 progress=progress, should_stop=should_stop, say=say)


def _extend(factors, should_stop, progress, say):
    """The context-extension lab, each method a stage ("method 2 of 8, ...") counting
    its lengths: the time left of the method running, and of the run from the methods
    done."""
    from ..analysis.experiments.extension import extend

    def told(stage) -> None:                 # a Stage: its place and its lengths' work
        if say is not None:
            say(stage.retold(f"method {stage.number} of {stage.stages}, {stage}"))
    return extend(None, factors, should_stop, progress, told)


PROGRESS_S = 0.05       # a run's counts reach the GUI thread at most this often


def every_so_often(emit: Callable[[int, int], None],
                   clock: Callable[[], float] = time.monotonic) -> Callable[[int, int], None]:
    """``emit(done, total)`` for a stage's first and last counts and at most every
    PROGRESS_S between: a sweep counted each of its 900,000 runs as a signal, and the
    GUI thread, busy with them, left Cancel unanswered for minutes."""
    last = -math.inf

    def told(done: int, total: int) -> None:
        nonlocal last
        now = clock()
        if done <= 1 or done >= total or now - last >= PROGRESS_S:
            last = now
            emit(done, total)
    return told
