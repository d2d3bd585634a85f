"""A model from Python: posviz.load, and what a loaded Model computes (``compare``:
``posviz report``; ``sweep``, ``probe``: the experiments on it)."""
from __future__ import annotations

import os
import time
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from ..errors import PosvizInputError, TextRefused, argument, names_text, speaks_flags
from ..models.config import ModelConfig, Positions
from ..models.options import MODEL_OPTIONS, OPTIONS, check_scale
from .arguments import (check_flag, check_type, check_weights, check_whole, checks_calls,
                        takes)
from .report import Report
from .slow_calls import kept, told_when_slow
from .steps import Progress, as_progress, layer_ticks, run_progress

if TYPE_CHECKING:          # these import numpy or torch: only when used
    from ..analysis.engine import Engine
    from ..document.session import Session
    from ..document.spec import ModelSpec
    from .results import Probe, Sweep

BUILTIN_OPTIONS = tuple(name for name in MODEL_OPTIONS if OPTIONS[name].chosen)
# the same, where ``seed`` seeds an experiment's orders: the model's is ``model_seed``
EXPERIMENT_OPTIONS = tuple("model_seed" if name == "seed" else name
                           for name in BUILTIN_OPTIONS)


def refuse_checkpoint_seed(options: dict, weights, seed: str = "seed") -> None:
    """A seed (``seed``: its name here) given with trained weights, which it would not
    draw: refused as the command line refuses ``--seed`` with ``--weights``."""
    if seed in options and weights != "random":
        raise PosvizInputError(f"{argument(seed)} draws random weights: it does not "
                               f"apply to {argument('weights', weights)}")


def builtin_config(options: dict, kinds=None) -> ModelConfig:
    """The built-in model's config from option names as the command line knows them
    (``layers``, ``heads``, ``d_model``, ``pe``, ``mask``, ``seed``…); the defaults
    fill the rest. PosvizInputError for an unknown name, a value out of range, or a
    ``pe_scale`` given to no encoding it scales (of ``kinds``, else ``pe``)."""
    known = [f.name for f in fields(ModelConfig)]
    unknown = [name for name in options if name not in known]
    if unknown:
        raise PosvizInputError(f"unknown option {unknown[0]!r} of the built-in model "
                               f"(options: {', '.join(BUILTIN_OPTIONS)})")
    config = ModelConfig(**options).validate()
    check_scale("pe_scale" in options, kinds or [config.pe])
    return config


@takes(options=BUILTIN_OPTIONS)
@told_when_slow
def load(source: str | None = None, *, config: ModelConfig | None = None,
         weights: str = "random", device: str = "cpu", offline: bool = False,
         progress: Progress | bool | None = None, n_tokens: int = 0,
         offload_folder: str | None = None, max_memory: dict | None = None,
         tokens_read: Callable[[Callable[[str], int]], None] | None = None,
         **options) -> "Model":
    """A model to compare orders with.

    ``source`` is a bundled model ("minilm", "smollm2"), a model folder, a .gguf file or
    a hub name "ORG/NAME[@REVISION]" (or "NAME", as "gpt2"): any name that is not a
    folder. A hub name is taken from the local Hugging Face cache, and downloaded into
    it first when it is not there, unless ``offline`` (or HF_HUB_OFFLINE=1). Without
    ``source``, the built-in transformer, configured by ``config`` or by the command
    line's options as keywords (``layers``, ``heads``, ``d_model``, ``d_ff``, ``pe``,
    ``pe_scale``, ``mask``, ``residual``, ``norm``, ``seed``, ``dtype``), e.g.
    ``load(pe="rope", mask="causal", layers=4, seed=0)``; its ``weights`` are "random"
    (drawn from the seed), "trained" (the shipped checkpoint of that encoding and mask)
    or a checkpoint folder written by ``posviz train``.

    ``device`` ("cpu", "cuda", "mps", "auto") is where a pretrained model runs, and
    ``dtype`` ("float32", "bfloat16", "float16") what its weights are kept in (it
    computes in float32 all the same: models.hf.precision); with
    ``offload_folder`` accelerate places its layers (``device_map="auto"``, within
    ``max_memory``, {device: bytes}) on the accelerator, the CPU and that folder.
    ``progress(step, done=None, total=None)`` is told each step of a load, with the
    bytes or tensors done when counted; by default nothing while the load is quick,
    its steps on stderr once it has waited 1 s (api.slow_calls; ``progress=False``:
    nothing, ``True``: every step from the start). A step nothing follows for a second is told again
    with its seconds from a thread of posviz's ("posviz-ticks", models.reached.Ticks):
    ``progress`` may be called from that thread, one call at a time. ``n_tokens``: the longest text you mean to run: the
    guard refuses, before loading, a model with fewer positions or too little memory
    for it (errors.Refused), and a device that is not there. ``tokens_read(count)`` is
    told, once a pretrained model's tokenizer is read and before its weights,
    ``count(text)``: the tokens ``compare`` will give ``text``, so a caller refuses
    there what they cannot take (the command line: an --order of another length).
    """
    from ..document.spec import ModelSpec
    from ..models.limits import guard
    say = as_progress(progress)
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    if source is not None and not isinstance(source, str):
        raise PosvizInputError(f"{argument('source')} must be a model's name, folder or "
                               f".gguf file, as a string, or None for the built-in model "
                               f"(got {type(source).__name__})")
    if source is None and device in ("cuda", "mps"):
        where = "a --model" if speaks_flags() else "a pretrained model (source)"
        raise PosvizInputError(f"{argument('device', device)} applies to {where} "
                               f"only: the built-in model runs on the CPU")
    if source is None and offload_folder is not None:
        where = "a --model" if speaks_flags() else "a pretrained model (source)"
        raise PosvizInputError(f"{argument('offload_folder')} applies to {where} only")
    guard.check_device(device)
    check_flag("offline", offline)
    check_whole("n_tokens", n_tokens)
    if source is None:
        check_weights(weights)
        refuse_checkpoint_seed(options, weights)
        if config is not None:
            check_type("config", config, ModelConfig, "a ModelConfig or None")
        spec = ModelSpec.builtin(config or builtin_config(options), weights)
        guard.check(spec.config, n_tokens)
        from .slow_calls import import_torch
        import_torch(say)
        say("building the model")
        return Model(spec.load(n_tokens=n_tokens), spec, kept(progress))
    dtype = options.pop("dtype", "float32")
    if options or config is not None or weights != "random":
        given = ([argument(name) for name in options]
                 + ([argument("weights")] if weights != "random" else []) or ["config"])
        raise PosvizInputError(f"{', '.join(given)} only "
                               f"{'applies' if len(given) == 1 else 'apply'} to the built-in "
                               f"model, not to {argument('source', source)} (a pretrained "
                               f"model has its own settings)")
    from ..document.session import spec_of
    from ..models.hf.cache import network_allowed
    spec = ModelSpec.pretrained(source, dtype=dtype, offload_folder=offload_folder or "")
    guard.check(source, n_tokens, device=device, dtype=dtype,
                offloaded=offload_folder is not None)
    backend = spec.load(say, device=device, n_tokens=n_tokens,
                        online=not offline and network_allowed(), max_memory=max_memory,
                        tokens_read=tokens_read)
    # a hub model pinned to its commit, read as asked
    return Model(backend, replace(spec_of(backend), dtype=dtype,
                                  offload_folder=offload_folder or ""), kept(progress))


@takes()
@told_when_slow
def load_session(path, *, device: str = "cpu", offline: bool = False,
                 progress: Progress | bool | None = None) -> "Report":
    """The report of a saved .posviz session: its model (a pinned hub model downloaded
    at its commit when allowed and not cached), text, order and positions, compared as
    the window shows them. The report's ``document`` is the file read."""
    check_type("path", path, (str, os.PathLike), "a .posviz file's path")
    check_flag("offline", offline)
    from ..document.scenarios import session_of
    from ..document.session_file import read
    from ..models.limits import guard
    from ..models.hf.cache import network_allowed
    guard.check_device(device)
    doc = read(path)
    say = as_progress(progress)
    session = session_of(doc, say, online=not offline and network_allowed(), device=device)
    spec = doc.spec.pinned(getattr(session.backend, "revision", ""))
    return Model(session.backend, spec).report(session, say, document=doc)


@takes()
def read_texts(path) -> list[str]:
    """The texts of a file, one a line (blank lines and lines starting with '#' left
    out), as ``posviz sweep --texts FILE`` reads them; PosvizInputError if none."""
    from ..analysis.experiments.texts import read_texts as read
    if not isinstance(path, (str, os.PathLike)):
        raise PosvizInputError(f"{argument('path')} must be a file's path (got "
                               f"{type(path).__name__})")
    return read(os.fspath(path), "path")


def order_text(order) -> str:
    """An order as the command line writes it ("5,4,3"), for parse_order to read and
    to refuse in its words (a number alone, too, is written as given)."""
    if isinstance(order, str):
        return order
    try:
        return ",".join(map(str, order))
    except TypeError:                           # not a sequence: shown as given
        return str(order)


@checks_calls
class Model:
    """A loaded model: the built-in transformer or a pretrained one, with the engine
    that runs it (the original order's run is kept between comparisons of one text).
    ``progress`` True (as ``load`` was given it) is the default of its runs' progress."""

    def __init__(self, backend, spec: "ModelSpec", progress=None):
        self.backend = backend
        self.spec = spec
        self._engine = None
        self.progress = progress if isinstance(progress, bool) else None   # its runs'
        if progress is not False and not speaks_flags():   # a script's reports' maps
            import atexit

            from ..models import maps                       # on disk told as they go
            from .slow_calls import LOADED, remove_maps_at_exit, told_removal
            maps.removal_told = told_removal
            LOADED.add(self)
            atexit.unregister(remove_maps_at_exit)          # once, however many models
            atexit.register(remove_maps_at_exit)

    def _told(self, progress):
        """A run's progress argument, the model's when not given (None)."""
        return self.progress if progress is None else progress

    @property
    def name(self) -> str:
        return self.backend.name

    def release(self) -> None:
        """The original order's run the engine keeps let go (the next run makes it anew)."""
        self._engine = None

    @property
    def engine(self) -> "Engine":
        if self._engine is None:
            from ..analysis.engine import Engine
            self._engine = Engine(self.backend)
        return self._engine

    def describe(self) -> dict:
        """The model's settings, as under "config" in ``report --json``."""
        return self.backend.describe()

    def provenance(self, seeds: dict | None = None, options: dict | None = None) -> dict:
        """What a result of this model records of it (document.provenance), with the
        run's ``seeds`` and ``options``: under "provenance" in every ``--json``."""
        from ..document.provenance import provenance
        return provenance(self.describe(), seeds=seeds, options=options,
                          offload_folder=self.spec.offload_folder or None)

    def tokens(self, text: str) -> list[str]:
        """The model's tokens of ``text`` (n of them), as ``order`` indexes them."""
        check_type("text", text, str, "a string")
        return list(self.backend.tokenize(text).tokens)

    def __repr__(self) -> str:
        return f"<posviz.Model {self.name}>"

    @takes()
    @names_text
    @told_when_slow
    def compare(self, text: str | None = None, order: Sequence[int] | str | None = None, *,
                positions: str = "slot", offset: int = 0, literal: bool = False,
                progress: Progress | bool | None = None) -> "Report":
        """Run ``text`` in its original order and in ``order`` and compare them, layer
        by layer, as ``posviz report`` does.

        ``order`` (n,) lists the original index of the token each slot holds:
        ``order[j] = i`` puts token i in slot j (a list, an array or "5,4,3,…"); None
        reverses the movable tokens (special tokens such as [CLS] keep their places).
        ``positions`` "slot" gives slot j position ``offset + j`` whatever token is
        there; "token" lets each token keep its original position. ``literal`` runs
        the reordered input as given (Positions.literal). ``text`` None is the example
        sentence the window opens with. A text longer than the model's positions, or
        whose comparison would not fit in memory, raises errors.Refused before a run.
        ``progress=True`` tells each run on stderr, and a real model's layers within
        it; a callable is told ``(done, total)``, the layers its forwards have entered
        over the whole comparison, as an experiment's runs are; None (the default) is
        the model's (``load``'s True or False), else its runs told once they have
        waited 1 s (api.slow_calls).
        """
        from ..document.session import DEFAULT_TEXT, Session
        from ..models.limits import guard
        from ..models.orders import parse_order
        if text is not None and not isinstance(text, str):
            raise PosvizInputError(f"text must be a string, or None for the example "
                                   f"sentence (got {type(text).__name__})")
        if text is not None and not text.strip():
            raise TextRefused("the text is empty")
        where = Positions(positions, offset, literal).validate()
        text = DEFAULT_TEXT if text is None else text
        # before the tokenizer reads it, as the command line counts it
        guard.check_texts(self.backend, [text], offset=where.offset)
        session = Session(self.backend, text, where, spec=self.spec)
        if order is None:
            session.reverse()
        else:       # read as the command line reads --order, in its words, shown as given
            given = order if isinstance(order, str) or not hasattr(order, "__iter__") else \
                order.tolist() if hasattr(order, "tolist") else order \
                if isinstance(order, (list, tuple)) else list(order)        # [0, 1, 2]
            session.set_order(parse_order(order_text(given), len(session.seq), given=(
                None if isinstance(order, str) or speaks_flags() else given)))
        progress = self._told(progress)
        return self.report(session, run_progress(progress))

    def report(self, session: "Session", say: Progress | None = None,
               document=None) -> "Report":
        """The Report of a session's order against its original order (what the window
        shows for it), after the guard (models.limits.guard); ``say`` is told each run."""
        from ..models.limits import guard
        from ..document.session import Session
        if not isinstance(session, Session):     # m.report("a text"): an AttributeError
            raise PosvizInputError(f"{argument('session')} must be a session (posviz."
                                   f"load_session(path) reads a .posviz file); a text "
                                   f"is compared by compare(text)")
        say = say or as_progress(False)
        seq, order, where = session.seq, session.order, session.positions
        guard.check(self.backend, len(seq), offset=where.offset)
        from ..models.reached import planning
        step = "running the original order"
        say(step)
        # the time left told is the whole report's (a real model's 3 forwards: 50 s)
        with planning(self.engine.forwards(seq, order, where), len(seq)):
            with layer_ticks(self.backend, say, step):
                self.engine.reference(seq, where)     # kept: evaluate below reuses it
            step = "running the chosen order"
            if order.tolist() != list(range(len(seq))):
                say(step)
            began = time.monotonic()
            with layer_ticks(self.backend, say, step):
                evaluation = self.engine.evaluate(seq, order, where)
        report = Report(self, session, evaluation, document)
        report.evaluate_s = time.monotonic() - began
        return report

    @takes()
    @told_when_slow
    def sweep(self, texts: Iterable[str] | str | None = None, kind: str = "random",
              count: int | None = None, seed: int | None = None, *, layer: int | None = None,
              positions: str = "slot", offset: int = 0, literal: bool = False,
              progress: Callable[[int, int], None] | bool | None = None) -> "Sweep":
        """The per-layer median, p10 and p90 of every metric over many orders of each
        text, as ``posviz sweep`` computes them: posviz.sweep on this model."""
        from .runs import sweep_on
        return sweep_on(self, texts, kind=kind, count=count, seed=seed, layer=layer,
                        positions=positions, offset=offset, literal=literal,
                        progress=self._told(progress))

    @takes(also=("seed",))
    @told_when_slow
    def probe(self, texts: Iterable[str] | None = None, *, features: str = "linear",
              folds: int = 5, positions: str = "slot", offset: int = 0,
              literal: bool = False,
              progress: Callable[[int, int], None] | bool | None = None,
              **refused) -> "Probe":
        """Per layer, how well a ridge probe reads absolute position off the hidden
        states, as ``posviz probe`` computes it: posviz.probe on this model (which
        draws no orders: a ``seed`` is refused, as posviz.probe refuses it)."""
        from .runs import probe_on, refuse_seed
        refuse_seed("seed" in refused, loaded=True)
        return probe_on(self, texts, features=features, folds=folds, positions=positions,
                        offset=offset, literal=literal, progress=self._told(progress))
