"""What a model must offer posviz: tokenize a text, run one ordering into a Trace.

The built-in transformer and every Hugging Face model sit behind this interface, so the
session, the metrics, the plots and the command line never know which one they drive.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from .config import ModelConfig
from .errors import PosvizInputError
from .trace import Trace

WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def split_words(text: str) -> list[str]:
    """Word-level tokens: words (with inner apostrophes) and single punctuation marks."""
    return WORD.findall(text)


@dataclass(frozen=True)
class TokenSequence:
    """A tokenized text in its original order."""

    tokens: tuple[str, ...]        # (n,) what each chip shows
    ids: tuple                     # (n,) what the backend feeds its model (words or ids)
    pinned: tuple[bool, ...]       # (n,) special tokens that keep their slot in every order

    def __len__(self) -> int:
        return len(self.tokens)


def offers(backend, name: str) -> bool:
    """Whether ``backend`` has method ``name`` from the class that defines its ``run``
    or from a subclass of it: a subclass that changes ``run`` alone must not be served
    by a sibling method (a batch, a run in another frame) that still computes the old
    one."""
    def owner(attribute: str) -> type | None:
        return next((c for c in type(backend).__mro__ if attribute in vars(c)), None)
    method, run = owner(name), owner("run")
    return method is not None and (run is None or issubclass(method, run))


class Backend(Protocol):
    name: str                      # shown in the window title and reports
    max_positions: int | None      # largest position id + 1 the model accepts, if bounded
    dtype: str                     # "float32" or "float64"

    def tokenize(self, text: str) -> TokenSequence: ...

    def run(self, seq: TokenSequence, order: np.ndarray, position_ids: np.ndarray,
            should_stop: Callable[[], bool] | None = None) -> Trace:
        """Run tokens seq[order] with the given (n,) position ids.

        If ``should_stop`` returns True at a layer boundary, raise errors.Cancelled.
        """
        ...

    def describe(self) -> dict: ...


class BuiltinBackend:
    """The instrumented transformer with word-level tokens."""

    def __init__(self, config: ModelConfig | None = None):
        self.config = (config or ModelConfig()).validate()
        from .model import InstrumentedTransformer     # torch: only once a model is built
        self.model = InstrumentedTransformer(self.config)
        self.name = "built-in"
        self.dtype = self.config.dtype
        self.max_positions = self.config.max_len if self.config.pe == "learned" else None

    def tokenize(self, text: str) -> TokenSequence:
        words = split_words(text)
        if not words:
            raise PosvizInputError("the text has no words to show")
        return TokenSequence(tuple(words), tuple(words), (False,) * len(words))

    def run(self, seq, order, position_ids, should_stop=None):
        words = [seq.ids[i] for i in order]
        return self.model(words, position_ids, should_stop)

    def run_cached(self, seq, order, position_ids, should_stop=None):
        """As run, and the keys and values a later run_suffix needs (core.prefix)."""
        return self.model.run([seq.ids[i] for i in order], position_ids, should_stop)

    def run_suffix(self, seq, order, position_ids, start, reference_cache, should_stop=None):
        """Slots start..n-1 of run, the earlier ones being run_cached's (core.prefix)."""
        return self.model.run([seq.ids[i] for i in order], position_ids, should_stop,
                              start, reference_cache)[0]

    def run_aligned(self, seq, order, position_ids, should_stop=None) -> Trace:
        """run of the order, recorded in the original tokens' order (model.run_aligned):
        trace.in_slot_order of it is run's Trace, to rounding."""
        return self.model.run_aligned(list(seq.ids), order, position_ids, should_stop)

    def run_batch(self, seq, orders, position_ids, should_stop=None) -> list[Trace]:
        """run for B orders in one forward: orders and position_ids (B, n) -> B Traces."""
        return self.model.run_batch([[seq.ids[i] for i in order] for order in orders],
                                    position_ids, should_stop)

    def compare_batch(self, seq, orders, position_ids, reference: Trace,
                      should_stop=None) -> list:
        """compare(reference, run(...)) for B orders in one forward, without the aligned
        maps (core.batch_metrics): orders and position_ids (B, n) -> B Comparisons."""
        from .batch_metrics import MetricsRecorder, ReferenceTensors
        from .hooks import RESID_PRE
        orders, position_ids = np.asarray(orders), np.asarray(position_ids)
        # In the original tokens' frame nothing is gathered, but a score bias (ALiBi, T5)
        # is then one (h, n, n) per order, float64 while it is built: at n = 512 about
        # 20 MB an order, more than the rest of a chunk. Where the orders' slots share
        # their positions (the default), the slot order shares one bias among them;
        # the two took about as long (128 orders, n = 64 and 128)
        aligned = not (self.model.encoding.adds_bias
                       and bool((position_ids == position_ids[0]).all()))
        recorder = MetricsRecorder(ReferenceTensors(reference), orders, self.config.layers,
                                   should_stop, stop_after=(RESID_PRE,), aligned=aligned)
        if aligned:
            self.model.record_aligned(list(seq.ids), orders, position_ids, recorder)
        else:
            words = np.array(seq.ids, dtype=object)[orders].tolist()       # (B, n)
            self.model.record_batch(words, position_ids, recorder)
        return recorder.comparisons()

    def batch_bytes(self, n: int, traces: bool = True) -> int:
        """About how many bytes one order of n tokens takes in run_batch (recorded
        values, their Trace, the working tensors), or with ``traces`` False in
        compare_batch (one layer's working tensors, the gap to the reference's maps)."""
        cfg = self.config
        item = 8 if cfg.dtype == "float64" else 4
        per_layer = 3 * cfg.heads * n * n + n * (8 * cfg.d_model + 2 * cfg.ff_width)
        if not traces:
            return item * (per_layer + cfg.heads * n * n) + 8 * n * n
        return item * (cfg.layers * per_layer + 3 * n * cfg.d_model)

    def describe(self) -> dict:
        return {"model": "built-in", **self.config.to_dict()}
