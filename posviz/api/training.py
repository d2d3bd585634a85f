"""Training the built-in model from Python: what ``posviz train`` runs, writing a
checkpoint folder the built-in model loads as ``weights`` (api.experiments' commands
read it; its options and the guard are theirs)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable

from ..errors import PosvizInputError, argument
from ..models.config import ModelConfig
from .arguments import check_say, check_type, check_whole, takes
from .experiments import refuse_model_seed
from .model import BUILTIN_OPTIONS, builtin_config
from .runs import Said
from .slow_calls import told_when_slow
from .steps import check_progress

if TYPE_CHECKING:
    from .results import Trained


@takes(options=BUILTIN_OPTIONS, also=("model_seed",))
@told_when_slow
def train(out, *, corpus: str = "kjv", steps: int | None = None, length: int | None = None,
          batch: int | None = None, vocab: int | None = None, lr: float | None = None,
          warmup: int | None = None, tokenizer: str | None = None, store: str = "float16",
          config=None, recipe=None, progress: Callable | bool | None = None,
          say: Said | None = None, order_every: int = 0, **options) -> "Trained":
    """Train the built-in model (``options`` as keywords: ``pe``, ``layers``…, or
    ``config``, a ModelConfig; always causal) as a causal language model on ``corpus``
    ("kjv" or a text file) with the shipped checkpoints' recipe unless told, and write
    its checkpoint folder to ``out``, as ``posviz train``; ``.to_dict()`` is ``train
    --json``. A warm-up not shorter than the steps is cut to one step less, and said
    (``notes``; ``say``). ``recipe``: a models.training.checkpoint.Recipe whole, instead of its
    fields. ``progress(p)`` is told the step, loss, tokens a second and time left;
    ``order_every``: measure the model's use of order every that many steps (0: only
    at the end), as ``--order-every``."""
    from ..models.training.checkpoint import Recipe
    from ..models.training.train import train as run
    from .results import Trained
    check_type("out", out, (str, os.PathLike), "the checkpoint folder's path")
    from ..document.files import check_new_folder     # (numpy: not at posviz's import)
    check_new_folder(out, "out")            # before the training, not after it
    check_type("corpus", corpus, (str, os.PathLike), "kjv or a text file's path")
    check_type("tokenizer", tokenizer, (str, os.PathLike, type(None)),
               "a tokenizer.json's path or None")
    check_say(say)
    check_whole("order_every", order_every)
    chosen = {name: value for name, value in (("steps", steps), ("length", length),
              ("batch", batch), ("vocab", vocab), ("lr", lr), ("warmup", warmup))
              if value is not None}
    if recipe is None:
        recipe = Recipe(corpus=corpus, store=store, **chosen)
    elif not isinstance(recipe, Recipe):
        check_type("recipe", recipe, Recipe, "a models.training.checkpoint.Recipe or None")
    elif chosen:
        raise PosvizInputError(f"{argument(next(iter(chosen)))} cannot be given with "
                               f"{argument('recipe')}")
    problems = recipe.problems()
    if problems:
        raise PosvizInputError(problems[0])
    refuse_model_seed(options, "train")
    if options.get("mask", "causal") != "causal":
        raise PosvizInputError(f"train trains a causal language model: "
                               f"{argument('mask', options['mask'])} cannot be trained")
    if config is None:
        config = builtin_config({**options, "mask": "causal"})
    check_type("config", config, ModelConfig, "a ModelConfig or None")
    check_progress(progress)
    if progress is True:                       # the command line's lines, on stderr
        from .steps import StepPrinter, training_line
        say = StepPrinter() if say is None else say
        progress = lambda p: say(training_line(p))            # noqa: E731
    notes = []
    if recipe.warmup >= recipe.steps:
        notes.append(f"the warm-up of {recipe.warmup} steps is not shorter than the "
                     f"{recipe.steps} steps: the learning rate rises over "
                     f"{max(recipe.steps - 1, 0)} steps and decays over the last")
        if say is not None:
            say(f"note: {notes[-1]}")
    checkpoint, _ = run(config, recipe, out, tokenizer, progress or None, say, order_every)
    return Trained(checkpoint, config, recipe, notes)
