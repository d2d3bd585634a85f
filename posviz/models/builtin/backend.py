"""The built-in instrumented transformer behind the Backend interface: random weights on
the words of a text, or a trained checkpoint's weights on its BPE tokens."""
from __future__ import annotations

from dataclasses import replace

from ...errors import PosvizInputError, TextRefused
from ..backend import Capabilities, TokenSequence, split_words
from ..training.bpe import END
from ..training.checkpoint import RANDOM, TRAINED, find
from ..config import ModelConfig
from ..encodings import ENCODINGS
from ..facts import ModelFacts, weight_facts
from ..request import Request
from ..trace import Trace


class BuiltinBackend:
    """models.builtin.transformer.InstrumentedTransformer with random weights on the words
    of a text, or with a checkpoint's weights (``weights``:
    models.training.checkpoint.WEIGHTS) on its tokenizer's tokens, with its language-model
    head.

    It runs any order in the original tokens' frame (an aligned Request), a causal
    one's suffixes from a kept prefix, and batches of orders in one forward."""

    name = "built-in"
    head = None                      # "causal" with trained weights
    tokenizer = None                 # the checkpoint's (models.training.bpe.Tokenizer)
    checkpoint = None                # models.training.checkpoint.Checkpoint, when trained

    def __init__(self, config: ModelConfig | None = None, weights: str = RANDOM):
        self.config = (config or ModelConfig()).validate()
        self.weights = weights
        from .transformer import InstrumentedTransformer  # torch: once a model is built
        if weights == RANDOM:
            self.model = InstrumentedTransformer(self.config)
        else:
            self.checkpoint = find(weights, self.config)
            self.config = self.checkpoint.config_for(self.config)
            if weights != TRAINED:                    # a folder, as a session saves it
                self.weights = str(self.checkpoint.folder.resolve())
            self.tokenizer = self.checkpoint.tokenizer()
            self.model = InstrumentedTransformer(self.config, vocab=self.checkpoint.vocab)
            self.checkpoint.load_weights(self.model)
            self.name, self.head = "built-in (trained)", "causal"
            self.model.extras["weights"] = self.weights
        self.dtype = self.config.dtype
        self.mask = self.config.mask
        self.encoding = ENCODINGS[self.config.pe]
        self.max_positions = self.encoding.table_length(self.config.max_len)
        self.capabilities = Capabilities(batched=True, aligned=True,
                                         prefix=self.config.causal)

    def tokenize(self, text: str) -> TokenSequence:
        if self.tokenizer is not None:
            ids = self.tokenizer.encode(text.strip())
            if not ids:
                raise TextRefused("the text has no tokens to show")
            chips = self.tokenizer.chips(ids)
            if not self.checkpoint.start_token:
                return TokenSequence(tuple(chips), tuple(ids), (False,) * len(ids))
            # trained with a start-of-text token at slot 0: it runs with one, pinned
            return TokenSequence((END, *chips), (self.tokenizer.end_id, *ids),
                                 (True,) + (False,) * len(ids))
        words = split_words(text)
        if not words:
            raise TextRefused("the text has no words to show")
        return TokenSequence(tuple(words), tuple(words), (False,) * len(words))

    def run(self, seq, request: Request, should_stop=None) -> Trace:
        """models.backend.Backend.run."""
        trace = self.model.run(list(seq.ids), request, should_stop)
        if self.tokenizer is not None:         # it ran ids: its Trace reads as the chips
            trace = replace(trace, tokens=tuple(seq.tokens[i] for i in request.rows()))
        return trace

    def record(self, seq, request: Request, recorder) -> None:
        """models.backend.Backend.record."""
        self.model.record(list(seq.ids), request, recorder)

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
        """Its options, the MLP's width as the number it is (the option's 0 means 4 × d:
        the session file keeps that choice, what a reader sees is the width)."""
        described = {"model": "built-in", **self.config.to_dict(),
                     "d_ff": self.config.ff_width}
        if self.checkpoint is not None:
            described["weights"] = self.weights
        return described

    def weights_text(self) -> str:
        """Which weights run, in a few words: 'random weights (seed 0)', or the training
        record's summary."""
        if self.checkpoint is None:
            return f"random weights (seed {self.config.seed})"
        return self.checkpoint.summary()

    def facts(self) -> ModelFacts:
        c = self.config
        count, _, device = weight_facts(self.model)
        return ModelFacts(
            model="built-in", family="built-in", model_type="built-in", scheme=c.pe,
            layers=c.layers, heads=c.heads, kv_heads=c.heads, width=c.d_model,
            max_positions=self.max_positions, mask=c.mask,
            parameters=count, dtype=c.dtype, device=device, head=self.head,
            encoding_parameters=self.encoding.parameters(c.d_model, c.heads),
            weights=self.weights_text())

    def profile(self, reach: int):
        """Its encoding against relative distance (PositionalEncoding.profile)."""
        return self.model.encoding.profile(reach, self.config.causal)

    def machinery(self):
        """None: the built-in encoding's views are rebuilt from its configuration."""
        return None
