"""The context-extension lab: the trained RoPE checkpoint run past its training length
with the methods people use, beside the checkpoints whose encodings need no method.

Each method (``METHODS``) is run at lengths from the training length to 8 × it and
more, on the zoo's held-out text, and measured three ways:
- held-out perplexity, the same tokens cut into windows of each length;
- retrieval: what a window's far half adds to the prediction of its last eighth (nats a
  token): their loss with the far half replaced by other held-out text, minus their
  loss with it in place. Perplexity averages over every slot and can hide that a model
  no longer draws on context far away (it predicts well from the near context alone);
  this cannot. Beside it, ``copy``: the share of a repeated span of random tokens that
  the model predicts exactly, the span right after the start token and again at the
  window's end (the models of the zoo, 4 layers of width 64, never learned to copy: it
  stays near 0 at every length);
- where attention goes: the attention weight the last quarter of a window's queries put
  on keys at each distance (in bins that double), averaged over layers and heads.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import numpy as np

from ...errors import Cancelled, PosvizInputError, argument, speaks_flags
from ...models.training.checkpoint import Checkpoint, variant, zoo
from ...models.encodings import RotaryEncoding
from ...models.encodings.rope_scaling import TITLES, RopeScaling
from .stage import Forwards, Stage, Tally, batches, forward_work

FACTORS = (1, 2, 4, 8)           # lengths, in training lengths
TOKENS = 1 << 15                 # held-out predictions per length (32 windows of 1,024)
SPAN = 16                        # tokens of the copied span
TRIALS = 32                      # copy windows per length
FAR_WINDOWS = 48                 # retrieval windows per length
ATTENTION_WINDOWS = 4            # held-out windows whose attention is read per length
DROPE = "drope"                  # the folder of the recalibrated RoPE checkpoint
FIGURES = ("perplexity", "retrieval", "attention")    # what its figure draws, by choice


@dataclass(frozen=True)
class Method:
    """One way to run at a length: which checkpoint, and how its RoPE is scaled."""

    name: str                    # the key in the JSON
    title: str
    checkpoint: str              # a zoo encoding, or DROPE
    scaling: str | None = None   # a rope_scaling method, at factor length / training length

    @property
    def needs(self) -> str:
        return "the recalibrated RoPE checkpoint (drope)" if self.checkpoint == DROPE \
            else f"the trained {self.checkpoint} checkpoint"


METHODS = (
    Method("rope", "RoPE as trained", "rope"),
    Method("pi", TITLES["pi"], "rope", "pi"),
    Method("ntk", TITLES["ntk"], "rope", "ntk"),
    Method("yarn", TITLES["yarn"], "rope", "yarn"),
    Method("drope", "DroPE: RoPE dropped after training, recalibrated without positions "
           "(Gelberg & Cetin 2026)", DROPE),
    Method("alibi", "ALiBi as trained", "alibi"),
    Method("t5", "T5 relative bias as trained", "t5"),
    Method("none", "NoPE as trained", "none"),
)


@dataclass(frozen=True)
class Extension:
    """What ``extend`` measured; ``to_dict`` is ``posviz extend --json``'s shape."""

    train_length: int
    lengths: tuple[int, ...]
    tokens: int                  # held-out predictions per length
    bins: tuple[str, ...]        # the attention-distance bins ("0", "1", "2-3", ...)
    methods: dict                # name -> {"title", "checkpoint", "perplexity",
                                 #   "retrieval", "retrieval_se", "copy", "attention"}:
                                 #   each {length: value}
    ran_on: str
    seed: int | None = None      # the checkpoints' seed (their first weights, windows)

    def to_dict(self) -> dict:
        return {"train_length": self.train_length, "lengths": list(self.lengths),
                "tokens": self.tokens, "span": SPAN, "trials": TRIALS,
                "distance_bins": list(self.bins), "methods": self.methods,
                "ran_on": self.ran_on, "seed": self.seed}


def check_factors(factors) -> tuple[int, ...]:
    """``factors`` as whole numbers rising from 1 to at most 64, else PosvizInputError."""
    try:
        found = tuple(int(f) for f in factors)
        whole = all(float(f) == int(f) for f in factors)
    except (TypeError, ValueError):
        found, whole = (), False
    if not whole or not found or found[0] < 1 or found[-1] > 64 or \
            list(found) != sorted(set(found)):
        # as the user wrote them: "0,3" on the command line (read into (0, 3)), not (0, 3)
        given = (",".join(map(str, factors)) if speaks_flags() and
                 isinstance(factors, tuple) else factors)
        raise PosvizInputError(f"{argument('factors')} must be whole numbers rising from 1 "
                               f"to at most 64, such as "
                               f"{'1,2,4,8' if speaks_flags() else '(1, 2, 4, 8)'} "
                               f"(got {given!r})")
    return found


def distance_bins(longest: int) -> list[tuple[int, int]]:
    """[(low, high)] inclusive: 0, 1, 2-3, 4-7, ... up to ``longest`` - 1."""
    bins, low = [(0, 0)], 1
    while low < longest:
        bins.append((low, min(2 * low, longest) - 1))
        low *= 2
    return bins


def bin_name(low: int, high: int) -> str:
    return str(low) if low == high else f"{low}-{high}"


def check_lab_weights(weights) -> str | None:
    """The checkpoint folder ``weights`` names (None: the shipped zoo, "trained"), or
    PosvizInputError naming the argument: random weights, no such folder, or a folder
    without the checkpoints the methods run (read here, before an output is made)."""
    from ...models.training.checkpoint import RANDOM, TRAINED
    if weights == RANDOM:
        raise PosvizInputError(f"{argument('weights', weights)}: the lab runs trained "
                               f"checkpoints only (trained or a folder of them)")
    if weights != TRAINED and not Path(weights).expanduser().is_dir():
        raise PosvizInputError(f"{argument('weights', weights)}: no such checkpoint folder")
    folder = None if weights == TRAINED else str(weights)
    checkpoints(folder, given=argument("weights", weights))
    return folder


def checkpoints(folder: str | None = None, given: str = "") -> dict[str, Checkpoint]:
    """The checkpoints the methods run: the zoo's by encoding and the DroPE variant
    (missing ones refused, the message led by ``given``, the argument as written)."""
    found = {c.config.pe: c for c in zoo(folder)}
    drope = variant(DROPE, folder)
    if drope is not None:
        found[DROPE] = drope
    missing = sorted({m.checkpoint for m in METHODS} - set(found))
    if missing:
        raise PosvizInputError(f"{given + ': ' if given else ''}the context-extension lab "
                               f"needs trained checkpoints of {', '.join(missing)}"
                               + (f" in {folder}" if folder else
                                  " (scripts/train-zoo trains them)"))
    return found


def _model(checkpoint: Checkpoint, method: Method, length: int, train: int):
    """The checkpoint's model, its RoPE scaled for ``length`` when the method says."""
    from ...models.builtin.backend import BuiltinBackend
    model = BuiltinBackend(checkpoint.config, str(checkpoint.folder)).model
    if method.scaling is not None:
        cfg = checkpoint.config
        model.encoding = RotaryEncoding(cfg.d_head, cfg.pe_scale, scaling=RopeScaling(
            method.scaling, max(length / train, 1.0), train))
    return model


Stoppable = Forwards      # every forward asks should_stop (stage.Forwards)


def retrieval(model, ids: np.ndarray, length: int, start_id: int) -> tuple[float, float]:
    """What the far half of up to FAR_WINDOWS held-out windows of ``length`` slots adds
    to the prediction of their last eighth: the mean loss (nats a token) with slots
    1..length/2 - 1 taken from the next window instead, minus it as it is; and the
    standard error of that mean over the windows."""
    import torch
    from torch.nn import functional as F
    count = min(FAR_WINDOWS, len(ids) // (length + 1))
    if count < 2:
        raise PosvizInputError(f"the held-out text is too short for windows of {length} "
                               f"tokens")
    windows = torch.as_tensor(ids[:count * (length + 1)].reshape(count, length + 1).copy())
    windows[:, 0] = start_id                                          # (W, length + 1)
    other = windows.clone()
    half = length // 2
    other[:, 1:half] = windows.roll(1, dims=0)[:, 1:half]
    last = length // 8
    losses = []
    with torch.inference_mode():
        for batch in (windows, other):
            per_window = []
            for k in range(0, count, 8):
                rows = batch[k:k + 8]
                logits = model.logits(model.hidden(rows[:, :-1]))[:, -last:]   # (b, last, V)
                loss = F.cross_entropy(logits.transpose(1, 2).double(), rows[:, -last:],
                                       reduction="none")                    # (b, last)
                per_window.append(loss.mean(1))
            losses.append(torch.cat(per_window).numpy())                    # (W,)
    gain = losses[1] - losses[0]
    return float(gain.mean()), float(gain.std(ddof=1) / np.sqrt(count))


def copying(model, filler: np.ndarray, length: int, vocab: int, start_id: int,
            seed: int = 0) -> float:
    """The share of a repeated span of random tokens (SPAN, or a quarter of a short
    window) predicted exactly after its first token: the span at slots 1.. and again at
    the window's end, held-out text between."""
    import torch
    rng = np.random.default_rng(seed)
    span = min(SPAN, length // 4)
    gap = length - 1 - 2 * span
    inputs = []
    for trial in range(TRIALS):
        tokens = rng.integers(0, vocab, span)
        tokens[tokens == start_id] = (start_id + 1) % vocab        # never the start token
        offset = (trial * gap) % max(len(filler) - gap, 1)
        inputs.append(np.concatenate([[start_id], tokens, filler[offset:offset + gap],
                                      tokens]))
    batch = torch.as_tensor(np.stack(inputs))                           # (T, length)
    hits = 0
    with torch.inference_mode():
        for k in range(0, TRIALS, 8):
            logits = model.logits(model.hidden(batch[k:k + 8, :-1]))      # (b, n-1, V)
            guess = logits[:, -(span - 1):].argmax(-1)                     # (b, span-1)
            hits += int((guess == batch[k:k + 8, -(span - 1):]).sum())
    return hits / (TRIALS * (span - 1))


def attention_by_distance(model, windows: np.ndarray, bins) -> list[float]:
    """The mean attention mass the last quarter of the queries of ``windows`` (W, n)
    put on keys in each distance bin, over layers, heads and windows."""
    import torch
    n = windows.shape[1]
    queries = np.arange(3 * n // 4, n)
    distance = queries[:, None] - np.arange(n)[None, :]                 # (q, n)
    which = np.full(distance.shape, -1)
    for b, (low, high) in enumerate(bins):
        which[(distance >= low) & (distance <= high)] = b
    mass = np.zeros(len(bins))
    count = 0

    def take(layer, maps):                                              # (h, n, n)
        nonlocal count
        rows = maps[:, queries].double().numpy()                        # (h, q, n)
        for b in range(len(bins)):
            mass[b] += rows[:, which == b].sum()
        count += rows.shape[0] * rows.shape[1]

    from ...models.request import Request
    for window in windows:
        model.run(window.tolist(), Request.original(np.arange(n), maps=take))
    return (mass / max(count, 1)).tolist()


def extend(folder: str | None = None, factors=FACTORS, should_stop=None,
           progress: Callable[[int, int], None] | None = None,
           say: Callable[[str], None] | None = None) -> Extension:
    """Measure every method at each length (see the module's docstring); ``say`` is told
    each method as it starts (a Stage, its forwards' work), ``progress(done, total)``
    each of its forwards run (a batch of windows, a window's maps)."""
    from ...models.training.corpus import token_stream
    from ...models.training.train import perplexity
    found = checkpoints(folder)
    rope = found["rope"]
    train = rope.recipe.length
    lengths = tuple(int(f * train) for f in factors)
    tokenizer = rope.tokenizer()
    start_id = tokenizer.end_id
    ids = token_stream(tokenizer, rope.held_out())                       # (M,)
    count = min(TOKENS, (len(ids) - 1) // lengths[-1] * lengths[-1])
    bins = distance_bins(lengths[-1])
    table = {}
    width = rope.config.d_model
    # a step is a forward (a batch of windows, a window's maps): a length's measures
    # were one step, the 1,024-token one most of a method's time without a word
    parts = [[(batches(count // n), forward_work(8 * n, n, width)),
              (2 * batches(min(FAR_WINDOWS, len(ids) // (n + 1))),
               forward_work(8 * n, n, width)),
              (batches(TRIALS), forward_work(8 * (n - 1), n, width)),
              (ATTENTION_WINDOWS, forward_work(n, n, width))] for n in lengths]
    steps = [w for length in parts for k, w in length for _ in range(k)]
    ends = np.cumsum([sum(k for k, _ in length) for length in parts])
    for number, method in enumerate(METHODS, 1):
        checkpoint = found[method.checkpoint]
        start = tokenizer.end_id if checkpoint.start_token else None
        if say is not None:
            say(Stage(f"{method.title}: {len(lengths)} lengths", number, len(METHODS),
                      (sum(steps),) * len(METHODS), steps))
        row = {"title": method.title, "checkpoint": checkpoint.folder.name,
               "perplexity": {}, "retrieval": {}, "retrieval_se": {}, "copy": {},
               "attention": {}}
        tally = Tally(progress, len(steps))
        for done, n in enumerate(lengths):
            if should_stop is not None and should_stop():
                raise Cancelled()
            model = Forwards(_model(checkpoint, method, n, train), should_stop, tally)
            row["perplexity"][str(n)] = perplexity(model, ids, n, count, start_id=start)
            row["retrieval"][str(n)], row["retrieval_se"][str(n)] = retrieval(
                model, ids, n, start_id)
            row["copy"][str(n)] = copying(model, ids, n, checkpoint.vocab, start_id)
            windows = ids[: ATTENTION_WINDOWS * n].reshape(ATTENTION_WINDOWS, n).copy()
            windows[:, 0] = start_id
            row["attention"][str(n)] = attention_by_distance(
                model, windows, [b for b in bins if b[0] < n])
            tally.to(int(ends[done]))
        table[method.name] = row
    # the checkpoints the figures show, not every one found (learned, sinusoidal)
    used = sorted({found[method.checkpoint].folder.name for method in METHODS})
    where = ("the shipped trained checkpoints" if folder is None
             else f"the checkpoints in {folder}")
    return Extension(train, lengths, count, tuple(bin_name(*b) for b in bins), table,
                     f"{where} ({', '.join(used)}): the built-in model "
                     f"({rope.config.layers} layers, width {rope.config.d_model}), causal, "
                     f"trained at {train} tokens",
                     rope.config.seed)
