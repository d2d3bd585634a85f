"""The experiments from Python: what ``posviz sweep``, ``probe``, ``paper``, ``compare``,
``extend`` and ``order-use`` run (``train``: api.training), each returning a result
whose ``to_dict()`` is the command's ``--json`` and whose ``figure()`` draws the
command's (the Experiments tab's) figure.

Each takes a model as the command line does: ``model`` a loaded posviz.Model, a
pretrained model's name or folder, or None for the built-in model, configured by its
options as keywords (``pe``, ``mask``, ``layers``…; its seed is ``seed``, as ``--seed``,
but in a sweep and a probe, whose ``seed`` seeds the orders: there it is ``model_seed``,
as ``--model-seed``) with ``weights``. The guard
(models.limits.guard) runs before the model is loaded and again before the runs.

A new command joins the same way: its function here or in a module of its own, as
api.training (its checks, then the analysis' call), its result in results.py (``to_dict``: the command's --json; ``job``: what the
window's Experiments tab would run, which draws its figure), its name in
posviz.__all__ and posviz.api.__all__, and its command calling this function.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterable

from ..errors import PosvizInputError, TextRefused, argument, names_text
from ..models.config import ModelConfig, Positions
from .arguments import check_flag, check_say, check_type, check_weights, takes
from .model import (BUILTIN_OPTIONS, EXPERIMENT_OPTIONS, Model, builtin_config, load,
                    order_text, refuse_checkpoint_seed)
from .runs import (Counted, Said, check_probe, check_sweep, probe_on, refuse_seed,
                   sweep_on)
from .slow_calls import told_when_slow
from .steps import check_progress

if TYPE_CHECKING:
    from .results import Comparison, Extended, OrderUsed, Paper, Probe, Sweep


def model_of(model, options: dict, *, weights: str = "random", device: str = "cpu",
             offline: bool = False, texts: Iterable[str] = (), offset: int = 0,
             sweep: tuple | None = None, folds: int | None = None,
             progress=None) -> "Model":
    """``model`` as a loaded posviz.Model: itself, the pretrained model it names, or
    the built-in model of ``options`` (``model_seed``: its seed); the guard refuses
    first what cannot run ``texts`` (guard.check_texts) from position ``offset``, or a
    ``sweep`` (kind, count, texts, layer) whose count or layer cannot be, or a probe's
    ``folds`` more than its texts. With
    ``progress`` True its load's steps are told on stderr ("building the model")."""
    told = progress is True                     # a callable is told counts only
    check_flag("offline", offline)
    from ..models.limits import guard
    if isinstance(model, Model):
        if options or weights != "random":
            named = [*options, *(["weights"] if weights != "random" else [])]
            given = ", ".join(map(argument, named))
            raise PosvizInputError(f"{given} cannot be given with a loaded model, which "
                                   f"has its own settings")
        return model
    named = [name for name in options if name != "dtype"] + (
        ["weights"] if weights != "random" else [])
    if isinstance(model, str) and named:
        raise PosvizInputError(f"{', '.join(map(argument, named))} only "
                               f"{'applies' if len(named) == 1 else 'apply'} to the "
                               f"built-in model, not to {argument('model', model)} (a "
                               f"pretrained model has its own settings)")
    check_weights(weights)
    for seed in ("seed", "model_seed"):
        refuse_checkpoint_seed(options, weights, seed)
    if "model_seed" in options:
        from dataclasses import replace
        from ..models.options import OPTIONS
        said = replace(OPTIONS["seed"], keyword="model_seed").problem(options["model_seed"])
        if said:                        # named as given, not as the model's own ``seed``
            raise PosvizInputError(said)
        options["seed"] = options.pop("model_seed")
    # a sweep's layer (0..L) refused as the model's config is read, before its weights
    view = () if sweep is None or sweep[3] is None else (sweep[3], None, 0)
    orders = None if sweep is None else guard.orders_of_words(
        *sweep[:3], exact=model is None and weights == "random")
    if model is None:
        config = builtin_config(options)
        from ..document.spec import ModelSpec     # trained: its checkpoint's settings
        guard.check_texts(ModelSpec.builtin(config, weights).config, texts, weights=weights,
                          offset=offset, orders=orders, folds=folds, view=view)
        return load(config=config, weights=weights, device=device, progress=told)
    if not isinstance(model, str):
        raise PosvizInputError(f"{argument('model')} must be a posviz.Model, a model's "
                               f"name or folder, or None (got {type(model).__name__})")
    tokens_read = guard.check_texts(model, texts, offset=offset, device=device,
                                    orders=orders, folds=folds, view=view)
    return load(model, device=device, offline=offline, progress=told,
                tokens_read=tokens_read, **options)


def refuse_model_seed(options: dict, command: str) -> None:
    """``model_seed`` given to a command that draws no orders, whose built-in model's
    seed is ``seed`` as its command's is ``--seed``: one name, the other refused."""
    if "model_seed" in options:
        raise PosvizInputError(f"{command} draws no orders, so the built-in model's seed "
                               f"is {argument('seed')}: {argument('model_seed')} names it "
                               f"only in sweep and probe, whose seed draws their orders")


def refuse_order(options: dict, command: str) -> None:
    """An order given to an experiment that runs the orders it needs, refused as the
    command line refuses --order."""
    if "order" in options:
        raise PosvizInputError(f"{argument('order')} does not apply to {command}, which "
                               f"runs the orders it needs")


@takes(options=EXPERIMENT_OPTIONS, also=("order",))
@told_when_slow
def sweep(texts: Iterable[str] | str | None = None, *, model=None, kind: str = "random",
          count: int | None = None, seed: int | None = None, layer: int | None = None,
          positions: str = "slot", offset: int = 0, literal: bool = False,
          weights: str = "random", device: str = "cpu", offline: bool = False,
          progress: Counted | bool | None = None, **options) -> "Sweep":
    """The per-layer median, p10 and p90 of every metric over many orders of each text,
    as ``posviz sweep`` computes them; ``.to_dict()`` is ``sweep --json``, ``.figure()``
    draws the band per layer (``metric=``) or a swap sweep's map (``metric="swap map"``).

    ``kind``: "random" (``count`` reorders of the movable tokens), "prefix" (of all but
    the last), "swap" (every neighbouring swap, and ``pairs``: the n × n map of every
    swap at ``layer``, default the last), "reverse" or "all" (every reorder, at most 7
    movable tokens). ``seed`` seeds the orders (default 0) of ``count`` (default 32); a
    count beyond the orders that exist is refused, and so are a count and a seed given
    to a kind that draws no orders. ``progress(done, total)`` is told after each run.
    """
    from ..models.limits import guard
    check_progress(progress)                    # before a model is loaded
    refuse_order(options, "sweep")
    _, texts, used, _ = check_sweep(kind, count, positions, offset, literal, texts, seed,
                                    layer)
    model = model_of(model, options, weights=weights, device=device, offline=offline,
                     texts=texts, offset=offset,
                     sweep=(kind, used, texts, layer), progress=progress)
    return sweep_on(model, texts, kind=kind, count=count, seed=seed, layer=layer,
                    positions=positions, offset=offset, literal=literal, progress=progress)


@takes(options=EXPERIMENT_OPTIONS, also=("order", "seed"))
@told_when_slow
def probe(texts: Iterable[str] | None = None, *, model=None, features: str = "linear",
          folds: int = 5, positions: str = "slot", offset: int = 0, literal: bool = False,
          weights: str = "random", device: str = "cpu", offline: bool = False,
          progress: Counted | bool | None = None, say: Said | None = None,
          **options) -> "Probe":
    """Per layer, a ridge probe of absolute position held out by text (R², error and
    chance's error), as ``posviz probe`` computes it; ``.to_dict()`` is ``probe
    --json``, ``.figure()`` draws the error per layer against chance. Without
    ``texts``, generated ones (enough for the features). ``features``: "linear" or
    "quadratic" (also the squares, so a norm can be read). ``progress(done, total)``
    counts the texts run, then the layers fitted; ``say(stage)`` is told each stage.
    The built-in model's seed is ``model_seed`` (``--model-seed``); the probe draws no
    orders, so ``seed`` is refused, as ``--seed`` is.
    """
    from ..models.limits import guard
    check_progress(progress)                    # before a model is loaded
    refuse_order(options, "probe")
    refuse_seed("seed" in options)
    _, texts = check_probe(texts, folds, positions, offset, literal, features)
    check_say(say)
    model = model_of(model, options, weights=weights, device=device, offline=offline,
                     texts=texts, offset=offset, folds=folds, progress=progress)
    return probe_on(model, texts or None, features=features, folds=folds, positions=positions,
                    offset=offset, literal=literal, progress=progress, say=say)


@takes()
@told_when_slow
def paper(name: str, weights: str | None = None, *, progress: Counted | bool | None = None,
          say: Said | None = None) -> "Paper":
    """A published claim checked as ``posviz paper NAME`` checks it: its citation, what
    it reports, the weights it ran on, the claim tested there, the measurements and
    whether the claim holds; ``.to_dict()`` is ``paper NAME --json``, ``.figure()``
    draws the check's figure. ``weights``: "random" (what the architecture implies) or
    "trained" (the shipped checkpoints and bundled models); default: random where the
    paper's check has it. A long check tells ``say`` its stages, ``progress`` steps;
    while torch is imported ``say`` is told it again each second, from the
    "posviz-ticks" thread (models.reached.Ticks)."""
    from ..analysis.experiments.papers import check_paper, paper_weights
    from .slow_calls import import_torch
    from ..runtime.experiments import conversion_left
    from .results import Paper
    from .runs import staged
    from .steps import StepPrinter, lines_ended, telling
    check_say(say)
    count, told = staged(progress, say, "step")
    if telling(progress):                  # at once, as the command line says it
        told_here = say or StepPrinter()
        told_here(f"checking {name} on {paper_weights(name, weights)} weights")
        import_torch(told_here)
    with lines_ended(count):
        return Paper(check_paper(name, weights=weights, progress=count, say=told,
                                 load_left=conversion_left), weights)



@takes(options=tuple(name for name in BUILTIN_OPTIONS if name != "pe"),
       also=("pe", "model_seed"))
@names_text
@told_when_slow
def compare_encodings(text: str | None = None, order=None, *, encodings=None,
                      weights: str = "random", config=None, positions: str = "slot",
                      offset: int = 0,
                      literal: bool = False, progress: Counted | bool | None = None,
                      **options) -> "Comparison":
    """The built-in model with each encoding of ``encodings`` (a list, or "none,rope";
    default: all six), the same configuration (``options`` as keywords, ``seed`` its
    seed, as ``--seed``; or ``config``, a ModelConfig) and kind of ``weights`` ("random" or
    "trained"), on ``text`` reordered by
    ``order`` (default: reversed), as ``posviz compare``; ``.to_dict()`` is ``compare
    --json``, ``.figure(metric=)`` draws every encoding's curve per layer."""
    from ..analysis.experiments.encodings import compare_encodings as run, parse_kinds
    from ..document.session import DEFAULT_TEXT
    from ..models.limits import guard
    from ..models.encodings import KINDS
    from .results import Comparison
    check_progress(progress)
    if weights not in ("random", "trained"):
        raise PosvizInputError(f"compare takes {argument('weights')} random or trained: a "
                               f"checkpoint folder holds one encoding")
    check_type("text", text, (str, type(None)), "a string, or None for the example "
               "sentence")
    if text is not None and not text.strip():
        raise TextRefused("the text is empty")
    text = DEFAULT_TEXT if text is None else text
    kinds = parse_kinds(",".join(KINDS) if encodings is None else encodings
                        if isinstance(encodings, str) else order_text(encodings))
    refuse_model_seed(options, "compare_encodings")
    refuse_checkpoint_seed(options, weights)
    if "pe" in options:                   # --pe on the command line: its encodings
        raise PosvizInputError(f"compare_encodings takes its encodings as "
                               f"{argument('encodings')} (got {argument('pe', options['pe'])})")
    where = Positions(positions, offset, literal).validate()
    if config is None:
        config = builtin_config({**options, "pe": kinds[0]}, kinds)
    elif not isinstance(config, ModelConfig):
        check_type("config", config, ModelConfig, "a ModelConfig or None")
    elif options:
        raise PosvizInputError(f"{argument(next(iter(options)))} cannot be given with "
                               f"{argument('config')}")
    for kind in kinds:                    # random weights read words, trained ones BPE
        guard.check_texts(config.replace(pe=kind), [text], weights=weights, offset=offset)
    if order is not None:
        order = order_text(order)
        if weights == "random":           # its tokens are words: checked before a build
            from ..models.backend import split_words
            from ..models.orders import parse_order
            parse_order(order, len(split_words(text)))
    from .steps import ModelLines, StepPrinter, WholeRun, lines_ended, telling
    count = (ModelLines() if progress is True else progress if telling(progress)
             else WholeRun(progress) if progress else None)
    if telling(progress):                  # at once, as the command line says it, and
        StepPrinter()(f"running {len(kinds)} models")   # torch's import (3,000 words:
        from .slow_calls import import_torch       # 6.4 s untold before a count)
        import_torch(StepPrinter())
    with lines_ended(count):
        result = run(config, kinds, weights, text, order, where, count,
                     say=None if count is None else count.stage)
    return Comparison(result)


@takes()
@told_when_slow
def extend(weights: str = "trained", *, factors=(1, 2, 4, 8),
           progress: Counted | bool | None = None, say: Said | None = None) -> "Extended":
    """The context-extension lab, as ``posviz extend``: the trained RoPE checkpoint run
    past its training length with position interpolation, NTK-aware scaling, YaRN and
    DroPE, beside ALiBi, T5 and NoPE as trained, at ``factors`` times the training
    length; ``.to_dict()`` is ``extend --json`` (per method: perplexity, retrieval and
    its standard error, copy, attention by distance, each by length). ``weights``:
    "trained" (the shipped checkpoints) or a folder of the same kinds. ``say`` is told
    each method, ``progress(done, total)`` each length measured."""
    from ..analysis.experiments.extension import check_factors, check_lab_weights, extend as run
    from .results import Extended
    from .steps import counted, lines_ended, stages
    factors = check_factors(factors)
    check_type("weights", weights, (str, os.PathLike), "trained or a folder of "
               "checkpoints")
    check_say(say)
    folder = check_lab_weights(weights)
    count = counted(progress, "length")
    with lines_ended(count):
        return Extended(run(folder, factors, progress=count,
                            say=stages(say, progress, count)), weights)


def check_order_use(model, windows, length, weights) -> None:
    """order_use's own arguments checked before any model, as ``posviz order-use``
    checks its flags (``weights`` None: trained for the built-in model)."""
    whole = [value for value in (windows, length) if value is not None]
    if any(isinstance(v, bool) or not isinstance(v, int) for v in whole) or (
            windows is not None and windows < 1) or (length is not None and length < 3):
        raise PosvizInputError(f"{argument('windows')} must be at least 1 and "
                               f"{argument('length')} at least 3")
    if model is not None and weights is not None:
        raise PosvizInputError(f"{argument('weights')} only applies to the built-in "
                               f"model, not to {argument('model', str(model))} (a "
                               f"pretrained model has its own settings)")
    if model is None and weights == "random":
        raise PosvizInputError(f"order use is measured on a trained model: give "
                               f"{argument('weights')} trained (with {argument('pe')}) "
                               f"or a checkpoint folder, or {argument('model')}")


@takes(options=BUILTIN_OPTIONS, also=("model_seed",))
@told_when_slow
def order_use(model=None, *, windows: int | None = None, length: int | None = None,
              weights: str | None = None, device: str = "cpu", offline: bool = False,
              progress: Counted | bool | None = None, **options) -> "OrderUsed":
    """How much a causal language model uses token order, as ``posviz order-use``: the
    last token's perplexity over held-out windows, in order and with the context before
    it shuffled; ``.to_dict()`` is ``order-use --json``. ``model``: a causal model's
    name, folder or posviz.Model, or None for the built-in model's trained checkpoint
    of ``options`` (``pe``…; ``weights`` "trained", the default, or a checkpoint
    folder). ``windows``: how many (default: WINDOWS, or all the held-out text makes
    if fewer); more than the text makes is refused (errors.Refused). ``length``: slots
    a window holds (default: the checkpoint's training length, 128 for a ``model``).
    ``progress(done, total)`` is told after each pass over the windows (in order, then
    each shuffle)."""
    from ..analysis.experiments.order_use import of_backend
    from ..models.training.order_use import WINDOWS
    from .steps import counted, lines_ended
    check_progress(progress)                    # before a model is loaded
    check_flag("offline", offline)
    from .results import OrderUsed
    check_order_use(model, windows, length, weights)
    refuse_model_seed(options, "order_use")
    if model is None:
        options.setdefault("mask", "causal")      # the zoo's checkpoints are causal
    loaded = model_of(model, options, weights=(weights or "trained") if model is None
                      else "random", device=device, offline=offline, progress=progress)
    count = counted(progress, "pass")
    with lines_ended(count):
        return OrderUsed(of_backend(loaded.backend, windows or WINDOWS, length,
                                    exact=windows is not None, progress=count), loaded)
