"""Order use, measured for any causal language model: the built-in model's trained
checkpoints and a real causal model (SmolLM2, a causal model by hub name).

The zoo's held-out text is read (the checkpoint's own for the built-in model, the
shipped checkpoints' for a real one, in its own tokens), cut into windows of the zoo's
training length, and the last token's perplexity is measured in the original order and
with the context before it shuffled (models.training.order_use). A real model was not trained
for this text: it may well have read the King James Bible. What is measured is whether
it uses order, not how well it models the text.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...errors import PosvizInputError
from ...models.training.checkpoint import Checkpoint, zoo
from ...models.training.order_use import WINDOWS, OrderUse, order_use


def held_out_text() -> list[str]:
    """The zoo's held-out sections (the same for every shipped checkpoint)."""
    shipped = zoo()
    if not shipped:
        raise PosvizInputError("no trained checkpoints are installed (resources/"
                               "checkpoints): their held-out text is what is measured")
    return shipped[0].held_out()


def of_checkpoint(checkpoint: Checkpoint, windows: int = WINDOWS,
                  length: int | None = None, exact: bool = False,
                  progress=None) -> OrderUse:
    """The checkpoint's order use on its own held-out text, at its training length
    (``exact``: refuse more ``windows`` than the text makes, else fewer are measured)."""
    import torch
    from ...models.builtin.backend import BuiltinBackend
    from ...models.training.corpus import token_stream
    model = BuiltinBackend(checkpoint.config, str(checkpoint.folder)).model
    tokenizer = checkpoint.tokenizer()
    ids = token_stream(tokenizer, checkpoint.held_out())
    start = tokenizer.end_id if checkpoint.start_token else None
    with torch.inference_mode():
        return order_use(lambda x: model.logits(model.hidden(x)[:, -1]), ids,
                         length or checkpoint.recipe.length, start, windows,
                         exact=exact, progress=progress)


def of_backend(backend, windows: int = WINDOWS, length: int | None = None,
               exact: bool = False, progress=None) -> OrderUse:
    """A real causal model's order use on the zoo's held-out text, in its own tokens;
    its tokenizer's start token (BOS), if it adds one, stays at slot 0; ``length``
    default: a checkpoint's training length, else 128 (``exact``, ``progress``: as
    of_checkpoint, order_use)."""
    import torch
    if getattr(backend, "head", None) != "causal":
        raise PosvizInputError(f"{backend.name} is not a causal language model: order "
                               f"use is the next token's perplexity after a shuffle")
    checkpoint = getattr(backend, "checkpoint", None)
    if checkpoint is not None:
        return of_checkpoint(checkpoint, windows, length, exact, progress)
    tokenizer = backend.tokenizer
    pieces = tokenizer(held_out_text(), add_special_tokens=False)["input_ids"]
    end = tokenizer.eos_token_id
    ids = np.asarray([i for piece in pieces for i in (*piece, *([end] if end is not None
                                                                 else []))])
    probe = tokenizer("a", add_special_tokens=True)["input_ids"]
    start = probe[0] if len(probe) > 1 and probe[0] == tokenizer.bos_token_id else None
    model = backend.model
    device = next(model.parameters()).device

    def last_logits(x):
        return model(input_ids=x.to(device)).logits[:, -1].float().cpu()
    with torch.inference_mode():
        return order_use(last_logits, ids, length or 128, start, windows, exact=exact,
                         progress=progress)


def of_zoo(windows: int = WINDOWS) -> dict[str, OrderUse]:
    """Each shipped checkpoint's order use, by encoding."""
    return {c.config.pe: of_checkpoint(c, windows) for c in zoo()}


@dataclass(frozen=True)
class ZooOrderUse:
    """The shipped checkpoints' order use by encoding, and what they are."""

    uses: dict                   # encoding -> OrderUse
    seed: int
    ran_on: str


def zoo_order_use(windows: int = WINDOWS, should_stop=None, say=None,
                  progress=None) -> ZooOrderUse:
    """of_zoo, telling each checkpoint as it starts, a stage of the run (the window's
    Experiments › Order use tells the time left from the checkpoints done), and
    ``progress(done, total)`` each of its passes (the original order, then each shuffle):
    without them its bar stood still for each checkpoint and the first told no time."""
    from ...errors import Cancelled
    from .stage import Stage
    shipped = zoo()
    if not shipped:
        raise PosvizInputError("no trained checkpoints are installed (resources/"
                               "checkpoints)")
    uses = {}
    for done, checkpoint in enumerate(shipped):
        if should_stop is not None and should_stop():
            raise Cancelled()
        if say is not None:
            say(Stage(f"checkpoint {done + 1} of {len(shipped)}, "
                      f"{checkpoint.config.pe}: {windows} windows", done + 1, len(shipped)))
        uses[checkpoint.config.pe] = of_checkpoint(checkpoint, windows, progress=progress)
    c = shipped[0].config
    return ZooOrderUse(uses, c.seed, f"the shipped trained checkpoints: the built-in "
                       f"model ({c.layers} layers, width {c.d_model}), causal, trained "
                       f"at {shipped[0].recipe.length} tokens, held-out KJV text")

