"""Several encodings answering the same reorder: the per-layer metrics of the built-in
model with each encoding, one text, one order, side by side.

Each model has the same configuration and the same kind of weights: "random" (drawn from
the same seed, so the blocks are the same and only the encoding differs) or "trained"
(each encoding's shipped checkpoint, trained alike). The text reads as the same tokens
in every model (random weights read words; the shipped checkpoints share one
tokenizer), so one order is the same reorder for all. An order of another tokenization
of the text (the window's) is carried to the models' tokens word by word (carry.py).
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import Cancelled, PosvizInputError, argument, speaks_flags
from ...models.backend import TokenSequence
from ...models.config import ModelConfig, Positions
from ...models.encodings import ENCODINGS
from ..symmetry import METRICS
from .carry import carry_order
from .runs import make_orders
from .stage import Stage, Tally, tell


@dataclass(frozen=True)
class EncodingCurves:
    """One model's per-layer metrics (layer 0 = the input to block 1)."""

    kind: str                          # its encoding (models.encodings)
    title: str                         # the encoding's title, with its paper
    rows: tuple[dict, ...]             # (L + 1,) analysis.symmetry.Comparison.rows()
    floor: float                       # its noise floor
    weights: str                       # "random weights (seed 0)" or its training summary
    order_use: float | None = None     # a trained checkpoint's (its record's), else None

    def curve(self, metric: str) -> np.ndarray:
        """(L + 1,) the metric per layer, NaN where it is undefined."""
        return np.array([np.nan if row[metric] is None else row[metric]
                         for row in self.rows], dtype=float)


@dataclass(frozen=True)
class EncodingComparison:
    text: str
    config: dict                       # the models' ModelConfig but for their encodings
    tokens: tuple[str, ...]            # (n,) in their original order
    order: tuple[int, ...]             # (n,) the reorder: slot j holds tokens[order[j]]
    positions: Positions
    weights: str                       # "random" or "trained"
    models: tuple[EncodingCurves, ...]
    carried: bool = False              # the order was another tokenization's, by words

    @property
    def floor(self) -> float:
        return max(model.floor for model in self.models)

    def to_dict(self) -> dict:
        return {"text": self.text, "config": self.config,
                "tokens": list(self.tokens), "order": list(self.order),
                "positions": self.positions.mode, "offset": self.positions.offset,
                "weights": self.weights, "noise_floor": self.floor,
                "order_carried_by_words": self.carried,
                "models": [{"pe": m.kind, "title": m.title, "weights": m.weights,
                            "order_use": m.order_use,
                            "noise_floor": m.floor, "layers": list(m.rows)}
                           for m in self.models]}


def parse_kinds(text: str) -> tuple[str, ...]:
    """'none,t5' -> ('none', 't5'): each an encoding, at least two, none twice."""
    kinds = tuple(part.strip() for part in text.split(",") if part.strip())
    unknown = [kind for kind in kinds if kind not in ENCODINGS]
    if unknown:
        form = ("encodings separated by commas" if speaks_flags() else
                "a list of encodings (or a comma-separated string)")
        raise PosvizInputError(f"{argument('encodings')} takes {form}, from "
                               f"{', '.join(ENCODINGS)} (got {unknown[0]!r})")
    if len(kinds) < 2 or len(set(kinds)) != len(kinds):
        command = "compare" if speaks_flags() else "compare_encodings"
        raise PosvizInputError(f"{command} needs at least two different encodings (got "
                               f"{text!r})")
    return kinds


def compare_encodings(config: ModelConfig, kinds, weights: str, text: str, order=None,
                      positions: Positions = Positions(),
                      progress: Callable[[int, int], None] | None = None,
                      should_stop: Callable[[], bool] | None = None,
                      ordered: TokenSequence | None = None,
                      say: Callable[[str], None] | None = None) -> EncodingComparison:
    """The built-in model of ``config`` with each encoding of ``kinds`` and ``weights``
    ("random" or "trained") on ``text`` reordered by ``order`` ((n,), or a string
    "I,J,..."; default: reversed); an order of ``ordered`` (another tokenization of the
    text) is carried to the models' tokens word by word."""
    from ...models.builtin.backend import BuiltinBackend
    from ...models.orders import parse_order
    from ..engine import Engine

    # each refused in one line when it has no trained checkpoint
    backends = [BuiltinBackend(config.replace(pe=kind), weights) for kind in kinds]
    seqs = [backend.tokenize(text) for backend in backends]
    if any(seq.tokens != seqs[0].tokens for seq in seqs[1:]):
        raise PosvizInputError("the models read the text as different tokens: one order "
                               "cannot reorder them alike")
    n = len(seqs[0])
    if order is None:                   # the movable tokens reversed: a start token stays
        order = make_orders("reverse", seqs[0], 1, None)[0]
    elif isinstance(order, str):
        order = parse_order(order, n)
    carried = ordered is not None and tuple(ordered.tokens) != seqs[0].tokens
    if carried:
        order = carry_order(ordered, order, seqs[0],
                            f"the built-in model with {weights} weights")
    models = []
    layers = backends[0].config.layers
    # each model a Stage of its blocks entered, its forwards' (Engine.forwards: the
    # original order, its noise floor where a common shift leaves the encoding alike,
    # the reorder), its work its layers × tokens² (a 3,000-word text's 5 models were
    # 4-12 s each told nothing, its time left half the truth), a bias's
    # scores more (3,000 words, three runs at load 5-10: sinusoidal 5.7 / 6.4 / 11.5 s,
    # rope 4.1 / 7.4 / 11.7, alibi 6.6 / 12 / 14, t5 11.6 / 17 / 17.7: 1.4 and 2.0 ×)
    work = [float(layers * n * (n + 4 * backends[0].config.d_model)) * BIAS_WORK.get(kind, 1.0)
            for kind in kinds]
    for done, (kind, backend, seq) in enumerate(zip(kinds, backends, seqs)):
        if should_stop is not None and should_stop():
            raise Cancelled()
        engine = Engine(backend)      # sinusoidal and learned: 2 forwards (no floor's)
        blocks = engine.forwards(seq, order, positions) * layers
        # its blocks' steps declared alike, so a listener weighs them as the same blocks
        # of the models done took (the first forward keeps its maps: 3,000 words, 21 s
        # of a model's 34; weighed alike, t5's time left was told 39 s of 95)
        tell(say, Stage(f"model {done + 1} of {len(kinds)} ({kind})", done + 1,
                        len(kinds), work, steps=(1.0,) * blocks, part=layers))
        with blocks_told(Tally(progress, blocks)) as tally:
            ev = engine.evaluate(seq, order, positions, should_stop)
            tally.to(tally.total)
        record = backend.checkpoint.record if backend.checkpoint is not None else {}
        models.append(EncodingCurves(kind, ENCODINGS[kind].title,
                                     tuple(ev.comparison.rows()), ev.comparison.floor,
                                     backend.weights_text(),
                                     record.get("order_use", {}).get("ratio")))
    shared = {k: v for k, v in backends[0].config.to_dict().items() if k != "pe"}
    shared["d_ff"] = backends[0].config.ff_width     # as report --json says it (not 0)
    return EncodingComparison(text, shared, seqs[0].tokens, tuple(int(i) for i in order),
                              positions, weights, tuple(models), carried)


# a model's work against one without a bias: the mean of three runs (the measurements:
# benchmarks/README.md, "Time left learned from the last run")
BIAS_WORK = {"alibi": 1.4, "t5": 2.0}


@contextmanager
def blocks_told(tally):
    """``tally`` counts the blocks this thread's forwards have entered while inside
    (models.reached), each as the one before it is done."""
    from ...models import reached
    me, entered = threading.get_ident(), [0]

    def told(now) -> None:
        if now.part == 0 and threading.get_ident() == me:
            entered[0] += 1
            tally.to(min(entered[0] - 1, tally.total - 1))
    with reached.listening(told):
        yield tally


__all__ = ["EncodingComparison", "EncodingCurves", "METRICS", "compare_encodings",
           "parse_kinds"]
