"""The built-in instrumented transformer behind the Backend interface, with word-level
tokens."""
from __future__ import annotations

import numpy as np

from ..errors import PosvizInputError
from .backend import Capabilities, TokenSequence, split_words
from .config import ModelConfig
from .encodings import ENCODINGS
from .facts import ModelFacts, weight_facts
from .trace import Trace


class BuiltinBackend:
    """models.transformer.InstrumentedTransformer on the words of a text.

    It runs any order in the original tokens' frame (``run(aligned=True)``), a causal
    one's suffixes from a kept prefix, and batches of orders in one forward."""

    name = "built-in"
    head = None                      # no language-model head

    def __init__(self, config: ModelConfig | None = None):
        self.config = (config or ModelConfig()).validate()
        from .transformer import InstrumentedTransformer  # torch: once a model is built
        self.model = InstrumentedTransformer(self.config)
        self.dtype = self.config.dtype
        self.mask = self.config.mask
        self.encoding = ENCODINGS[self.config.pe]
        self.max_positions = self.encoding.table_length(self.config.max_len)
        self.capabilities = Capabilities(batched=True, aligned=True,
                                         prefix=self.config.causal)

    def tokenize(self, text: str) -> TokenSequence:
        words = split_words(text)
        if not words:
            raise PosvizInputError("the text has no words to show")
        return TokenSequence(tuple(words), tuple(words), (False,) * len(words))

    def run(self, seq, order, position_ids, should_stop=None, *, aligned=False, start=0,
            past=None, keep_past=False, maps=None, scores=False) -> Trace:
        """models.backend.Backend.run; a causal run always keeps its keys and values."""
        if aligned:
            return self.model.run(list(seq.ids), position_ids, should_stop, order=order,
                                  maps=maps, scores=scores)
        return self.model.run([seq.ids[i] for i in order], position_ids, should_stop,
                              start=start, past=past, maps=maps, scores=scores)

    def record(self, seq, orders, position_ids, recorder, *, aligned=False) -> None:
        """models.backend.Backend.record: orders and position ids (B, n)."""
        orders = np.asarray(orders)
        if aligned:
            self.model.record(list(seq.ids), position_ids, recorder, orders=orders)
        else:
            words = np.array(seq.ids, dtype=object)[orders].tolist()       # (B, n)
            self.model.record(words, position_ids, recorder)

    def batch_bytes(self, n: int) -> int:
        """About how many bytes one order of n tokens takes in ``record`` while metrics
        are taken of it layer by layer (analysis.batch_metrics): one layer's working
        tensors and the gap to the reference's maps, and its own score bias (an aligned
        order's positions differ from the others')."""
        cfg = self.config
        item = 8 if cfg.dtype == "float64" else 4
        maps = cfg.heads * n * n
        bias = 8 * maps if self.encoding.acts == "bias" else 0
        return item * (4 * maps + n * (8 * cfg.d_model + 2 * cfg.ff_width)) + 8 * n * n + bias

    def describe(self) -> dict:
        return {"model": "built-in", **self.config.to_dict()}

    def facts(self) -> ModelFacts:
        c = self.config
        count, _, device = weight_facts(self.model)
        return ModelFacts(
            model="built-in", family="built-in", model_type="built-in", scheme=c.pe,
            layers=c.layers, heads=c.heads, kv_heads=c.heads, width=c.d_model,
            max_positions=self.max_positions, mask=c.mask,
            parameters=count + self.encoding.weight_count(c.d_model, c.heads, c.max_len),
            dtype=c.dtype, device=device,
            encoding_parameters=self.encoding.parameters(c.d_model, c.heads))

    def profile(self, reach: int):
        """Its encoding against relative distance (PositionalEncoding.profile)."""
        return self.model.encoding.profile(reach, self.config.causal)

    def machinery(self):
        """None: the built-in encoding's views are rebuilt from its configuration."""
        return None
