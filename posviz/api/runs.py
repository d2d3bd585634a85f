"""A sweep and a probe on a loaded posviz.Model: the guard with the model's own token
counts, then the analysis' run (api.experiments and Model.sweep, Model.probe call
these)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..errors import PosvizInputError, argument, check_whole_number
from ..models.config import Positions

if TYPE_CHECKING:
    from .results import Probe, Sweep

Counted = Callable[[int, int], None]         # progress(done, total); True: on stderr
Said = Callable[[str], None]                 # say(stage)


def refuse_seed(given: bool, loaded: bool = False) -> None:
    """A ``seed`` given to a probe, which draws no orders (posviz.probe, Model.probe,
    ``posviz probe --seed``): refused in one explanation, naming where the built-in
    model's seed goes (``loaded``: the model is loaded already, by posviz.load)."""
    if not given:
        return
    where = "posviz.load's seed" if loaded else argument("model_seed")
    raise PosvizInputError(f"probe draws no orders, so it takes no {argument('seed')}: "
                           f"the built-in model's seed is {where}")


def texts_of(texts, none_is_default: bool = True) -> list[str]:
    """A text or texts as a list; None: the example sentence (or [] for the probe)."""
    if texts is None:
        from ..document.session import DEFAULT_TEXT
        return [DEFAULT_TEXT] if none_is_default else []
    if not isinstance(texts, str) and not hasattr(texts, "__iter__"):
        raise PosvizInputError(f"{argument('texts')} must be a text or a list of texts "
                               f"(got {type(texts).__name__})")
    texts = [texts] if isinstance(texts, str) else list(texts)
    if any(not isinstance(text, str) for text in texts):
        raise PosvizInputError(f"{argument('texts')} must be a text or a list of texts")
    empty = next((i for i, text in enumerate(texts) if not text.strip()), None)
    if empty is not None:
        raise PosvizInputError("the text is empty" if len(texts) == 1 else
                               f"text {empty + 1:,} of {len(texts):,} is empty")
    if none_is_default and not texts:
        raise PosvizInputError(f"{argument('texts')} holds no text")
    from ..errors import naming_text, speaks_flags
    from ..models.limits.encodable import check_encodable
    # named as Python gave them (a flag: by its main)
    with naming_text(None if speaks_flags() else argument("texts")):
        check_encodable(texts)
    return texts


COUNT, SEED = 32, 0                      # a drawn sweep's orders, unless given


def check_sweep(kind: str, count: int | None, positions: str, offset: int, literal: bool,
                texts, seed: int | None = None, layer: int | None = None
                ) -> tuple[Positions, list[str], int, int]:
    """A sweep's own arguments checked before any model: (positions, texts, count,
    seed), the count and seed their defaults when not given. A kind that runs a fixed
    set of orders (swap, reverse, all) refuses a count or a seed given to it, as the
    probe refuses a seed: it would read neither; a kind but swap refuses a ``layer``
    (the swap map's), measuring every layer."""
    from ..analysis.experiments.runs import DRAWN, KINDS, check_kind, check_seed
    from ..models.limits.guard import check_chosen
    check_kind(kind, COUNT)
    for name, value in (("count", count), ("seed", seed)):
        if kind in KINDS and kind not in DRAWN and value is not None:
            raise PosvizInputError(f"{argument(name, value)} does not apply to "
                                   f"{argument('kind', kind)}, which runs a fixed set of "
                                   f"orders (a count and a seed are of random and prefix)")
    check_chosen(argument("kind", kind), ("layer",) if kind == "swap" else (),
                 lambda name: f"measures every layer (a {name} chooses the map of "
                              f"{argument('kind', 'swap')})", layer=layer)
    count, seed = COUNT if count is None else count, SEED if seed is None else seed
    check_kind(kind, count)
    check_seed(seed)
    return Positions(positions, offset, literal).validate(), texts_of(texts), count, seed


def refuse_literal(literal, command: str) -> None:
    """``literal`` given to an experiment that runs no reorder (the probe)."""
    if literal:
        raise PosvizInputError(f"{argument('literal')} does not apply to {command}, which "
                               f"runs no reorder")


def sweep_on(model, texts, *, kind: str = "random", count: int | None = None,
             seed: int | None = None,
             layer: int | None = None, positions: str = "slot", offset: int = 0,
             literal: bool = False, progress: Counted | None = None) -> "Sweep":
    """posviz.sweep on a loaded ``model``."""
    from ..analysis.experiments.runs import sweep_settings
    from ..analysis.experiments.sweep import sweep as run
    from ..analysis.experiments.sweep import sweep_plans
    from ..models.limits import guard
    from .results import Sweep
    where, texts, count, seed = check_sweep(kind, count, positions, offset, literal,
                                            texts, seed, layer)
    # the layer (0..L) of a model loaded already, before any run
    guard.check_view(int(model.describe().get("layers") or 0), 0, layer, first=0)
    # first as a model's name is refused before its load, its texts' words counted (the
    # same input, the same words: 480 words were 482 tokens loaded), then its tokens
    guard.check_texts(model.backend, texts, offset=offset, orders=guard.orders_of_words(
        kind, count, texts, guard.reads_words(model.backend)))
    seqs = [model.backend.tokenize(text) for text in texts]
    guard.check_sweep(model.backend, seqs, kind, count, offset)
    from .steps import RunLines, counted, lines_ended
    with lines_ended(counted(progress, "pair" if kind == "swap" else "run")) as told:
        if isinstance(told, RunLines):      # told before the first run's count
            runs = sum(map(len, sweep_plans(texts, seqs, kind, count, seed)))
            told_reference(model, seqs[0], where, told.stream, runs)
            told(0, runs)
        result = run(model.engine, texts, kind, count, seed, where, layer=layer,
                     progress=told)
    if layer is None and result.pairs:                  # the swap map's: the last
        layer = result.pairs[0].layer
    return Sweep(result, model, where, sweep_settings(kind, count, seed, layer))


def told_reference(model, seq, where: Positions, stream, runs: int = 0) -> None:
    """The first text's (``seq``) original order and its noise floor run before its
    orders, its step and layers told on ``stream`` as report tells them: a 5,000-word
    sweep said nothing for 5.7 s of it after "building the model" (the Engine keeps
    it). Its time left counts the ``runs`` (a forward each) after it: SmolLM2's 3,000
    words said "about 5 s left" with 136 s to go."""
    import numpy as np

    from ..models.reached import afterwards, planning
    from .steps import StepPrinter, layer_ticks
    say, step = StepPrinter(stream), RUN_ORIGINAL
    say(step)
    with afterwards(0.0, runs), \
            planning(model.engine.forwards(seq, np.arange(len(seq)), where)), \
            layer_ticks(model.backend, say, step):
        model.engine.reference(seq, where)


RUN_ORIGINAL = "running the original order"


def check_probe(texts, folds: int, positions: str, offset: int, literal: bool,
                features: str = "linear") -> tuple[Positions, list[str]]:
    """A probe's own arguments checked before any model: (positions, texts)."""
    from ..analysis.experiments.probe import check_features
    check_features(features)
    refuse_literal(literal, "probe")
    if isinstance(texts, str):
        raise PosvizInputError("the probe holds whole texts out, so it needs several: "
                               "give a list of texts")
    if texts is not None and hasattr(texts, "__len__") and not len(texts):
        raise PosvizInputError(f"{argument('texts')} holds no text (None: texts made up "
                               f"for the probe)")
    check_whole_number("folds", folds)
    if folds < 2:
        raise PosvizInputError(f"{argument('folds')} must be at least 2 (got {folds!r})")
    # the folds against the texts: the guard's, after the positions (guard.check)
    return Positions(positions, offset, literal).validate(), texts_of(texts, False)


def probe_on(model, texts=None, *, features: str = "linear", folds: int = 5,
             positions: str = "slot", offset: int = 0, literal: bool = False,
             progress: Counted | None = None, say: Said | None = None) -> "Probe":
    """posviz.probe on a loaded ``model``."""
    from ..analysis.experiments.probe import probe as run
    from ..models.limits import guard
    from .results import Probe
    where, texts = check_probe(texts, folds, positions, offset, literal, features)
    from .arguments import check_say
    check_say(say)
    # first as a model's name is refused before its load, its texts' words counted
    guard.check_texts(model.backend, texts, offset=offset, folds=folds)
    guard.check_probe(model.backend, [len(model.backend.tokenize(text)) for text in texts],
                      features == "quadratic", offset, folds)
    count, told = staged(progress, say, "step")   # True: each stage timed at its pace
    from .steps import lines_ended
    with lines_ended(count):
        result = run(model.engine, texts or None, where, folds, features,
                     progress=count, say=told)
    return Probe(result, model, where, {"features": features, "folds": result.folds},
                 texts)                          # the folds that ran


def staged(progress, say, unit: str):
    """A run told in Stages: its ``progress`` and ``say`` as it is told them. True (or a
    RunLines: the command line's) tells lines on stderr whose count, share and time left
    weigh each stage's work (runtime.run_lines.RunLines, the one rule of them); a
    callable is told the whole run's count (steps.WholeRun)."""
    from .steps import counted, stages
    count = counted(progress, unit)
    return count, stages(say, progress, count)
