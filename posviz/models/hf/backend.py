"""A Hugging Face base model behind posviz's Backend interface: tokens in, Trace out."""
from __future__ import annotations

import contextlib
import copy
import inspect
import itertools
import threading
from dataclasses import replace

import numpy as np
import torch

from ...boot import TRIM_EACH_LAYER_FROM
from ...errors import PosvizInputError, TextRefused
from .. import maps as layer_maps
from ..backend import Capabilities, TokenSequence, mark_word_pieces
from ..hooks import FINAL, Recorder, trace_from
from ..orders import sees_in_frame
from ..formats.pieces import (byte_labels, is_byte_fallback, is_byte_level,
                              sentencepiece_labels, shown)
from ..request import Request
from ..trace import Trace
from . import layout
from .precision import arithmetic_of, float32_arithmetic
from .families import Family, facts_of
from .tokens import structural_ids


class HFBackend:
    """A Hugging Face model that runs one ordering of tokens into a Trace.

    The Trace holds what transformers itself computes when the model is called the
    ordinary way on the reordered tokens (eager attention, its own position handling:
    offsets, rotary, ALiBi, relative buckets), recorded through forward hooks on its
    modules under the names of models.hooks: hidden[0] is the block input (BERT: the
    normalized sum of token, position and segment embeddings; GPT-2: token plus position
    embeddings; Llama: token embeddings, RoPE acting inside attention), hidden[l] the
    output of block l, and hidden[L] what the model returns as its last hidden state
    (after the final norm of a pre-norm model). attn_out and mlp_out are the two
    branches of each block.

    ``model`` is the loaded model, with its LM head when the checkpoint has one
    (``head`` "causal" or "masked"); ``base`` the transformer inside it that is tapped.
    What it can do besides a run follows from its family record and its mask.
    ``source`` is what loads it again (a bundled name, a hub name, a folder) and
    ``revision`` the hub commit its files came from ("" when not from the hub);
    ``weights`` how its weights came to be when not as a checkpoint holds them (a GGUF
    de-quantized), said in its description, facts and every figure's provenance.
    """

    def __init__(self, model, tokenizer, family: Family, name: str, path: str,
                 head: str | None = None, device: str = "cpu", tokenizer_lock=None,
                 source: str = "", revision: str = "", dtype: str = "float32",
                 weights: str = ""):
        self.dtype = dtype                  # its weights; half precision computes in
                                            #   float32 (precision.py)
        self.weights = weights
        # Held while hooks are on the modules (a forward, a prefix run): twin() copies
        # the modules only between two of them
        self.hooked = threading.RLock()
        # A fast tokenizer may change its own settings in a call: one call at a time,
        # among the twins that share it
        self._tokenizer_lock = tokenizer_lock or threading.Lock()
        self.model = model.eval()
        self.base = model.base_model if head else model
        self.head = head
        self.tokenizer = tokenizer
        self.family = family
        self.name = name
        self.path = path
        self.source = source or path
        self.revision = revision
        self.device = device
        cfg = model.config
        self.position_encoding = family.encoding_of(cfg)
        self.mask = family.mask_of(cfg)                  # a BERT decoder is causal
        self.position_offset = family.table_offset(cfg)
        self.max_positions = family.max_positions(cfg)
        self._id_shift = family.id_shift(cfg)
        self._blocks = len(family.blocks(self.base))
        causal = self.mask == "causal"
        # a causal model's frame needs its mask as given: a BERT made a decoder builds
        # its own, and a sliding window would be lost
        windowed = getattr(cfg, "use_sliding_window", True) and getattr(
            cfg, "sliding_window", None)
        self.capabilities = Capabilities(batched=True, aligned=family.aligned and not (
                                             causal and (family.decoder_capable or windowed)),
                                         prefix=family.prefix and causal,
                                         position_ids=family.position_ids)
        takes = inspect.signature(self.base.forward).parameters
        self._use_cache = "use_cache" in takes
        # the keyword a cache goes in: "cache" from transformers 5.2x on, before it
        # "past_key_values" (which now warns on every call)
        self._cache_keyword = "cache" if "cache" in takes else "past_key_values"
        self._structural = structural_ids(tokenizer)          # pinned
        self._special = set(tokenizer.all_special_ids)       # shown as written, e.g. [UNK]
        self._byte_level = is_byte_level(tokenizer)           # GPT-2's byte alphabet
        self._byte_fallback = is_byte_fallback(tokenizer)     # SentencePiece's <0x..>

    # -- Backend -----------------------------------------------------------------------
    def tokenize(self, text: str) -> TokenSequence:
        """The model's own tokens; structural ones ([CLS], [SEP], BOS, EOS, padding) are
        pinned, while [UNK] and other special tokens move like words."""
        if not text.strip():
            raise TextRefused("the text is empty")
        with self._tokenizer_lock:
            encoded = self.tokenizer(text, add_special_tokens=True, verbose=False)
        ids = tuple(int(i) for i in encoded["input_ids"])
        pinned = tuple(i in self._structural for i in ids)
        if all(pinned):
            raise TextRefused("the text has no tokens to show")
        vocab = self.model.get_input_embeddings().num_embeddings
        if max(ids) >= vocab:
            raise PosvizInputError(f"the tokenizer gave token id {max(ids)}, but the model "
                                   f"has only {vocab} token embeddings: mismatched files?")
        raws = self.tokenizer.convert_ids_to_tokens(list(ids))
        texts = (byte_labels(raws) if self._byte_level else sentencepiece_labels(raws)
                 if self._byte_fallback else None)
        pieces = ([raw if i in self._special else shown(text)
                   for i, raw, text in zip(ids, raws, texts)] if texts is not None
                  else [self._piece(i, i in self._special) for i in ids])
        return TokenSequence(tuple(mark_word_pieces(pieces, raws, pinned)), ids, pinned)

    def _piece(self, token_id: int, special: bool) -> str:
        """Readable text of one token: "Ġcat" -> "cat", "▁cat" -> "cat", "##s" kept."""
        raw = self.tokenizer.convert_ids_to_tokens(token_id)
        if special or raw.startswith("##"):
            return raw
        text = self.tokenizer.decode([token_id])
        if "\ufffd" in text:                      # part of a multi-byte character
            text = raw.replace("Ġ", " ").replace("▁", " ")
        return shown(text)

    def run(self, seq: TokenSequence, request: Request, should_stop=None) -> Trace:
        """models.backend.Backend.run: one forward of the request's order of seq.ids.
        ``should_stop`` is asked after each branch of each block (through the forward
        hooks); True raises errors.Cancelled and abandons the forward."""
        if request.batched:
            raise ValueError("a batch of orders runs through record, with a recorder")
        m = request.n - request.start
        branches = 2 * self._blocks * m * self.model.config.hidden_size * 4
        recorder = Recorder(should_stop, layers=self._blocks, maps=request.maps,
                            scores=request.scores,
                            branches=("whole" if branches <= layer_maps.BRANCHES_WHOLE
                                      else "norms"),
                            trim=m >= TRIM_EACH_LAYER_FROM)
        cache = self._record(seq, request, recorder)
        trace = trace_from(recorder, self._blocks,
                           tokens=tuple(seq.tokens[i] for i in request.rows()),
                           position_ids=request.row_positions(), extras=self._extras())
        return _with_past(trace, cache) if request.keep_past else trace

    def record(self, seq: TokenSequence, request: Request, recorder: Recorder) -> None:
        """models.backend.Backend.record."""
        self._record(seq, request, recorder)

    def _record(self, seq: TokenSequence, request: Request, recorder: Recorder):
        """The forward of ``request`` tapped by ``recorder``; the DynamicCache it ran
        with (a suffix's, or one kept for later suffixes), else None. Aligned: the
        original ids at the position ids of their slots, under the mask in their frame
        (a causal model's)."""
        for pos in request.position_ids.reshape(-1, request.n):
            self.check_positions(pos)
        if request.aligned and not self.capabilities.aligned:
            raise ValueError(f"a {self.family.name} model runs its orders in slot order")
        ids = np.asarray(seq.ids)[request.rows()]                       # (m,) or (B, n)
        mask = self._frame_mask(request.order) if request.aligned else None
        cache = None
        if request.start or request.keep_past:
            if not self.capabilities.prefix:
                raise ValueError(f"a {self.family.name} model runs every order in full")
            cache = self._cache(request.past, request.start)
        with self._calls_with(cache, request.n):
            self._forward(ids, request.row_positions(), recorder, mask)
        return cache

    def batch_bytes(self, n: int) -> int:
        """About how many bytes one order of n tokens takes in ``record`` while metrics
        are taken of it layer by layer: one layer's work, the gap to the maps."""
        cfg = self.model.config
        d = cfg.hidden_size
        ff = getattr(cfg, "intermediate_size", None) or 4 * d
        heads = cfg.num_attention_heads
        frame_mask = 4 * n * n if self.mask == "causal" and self.capabilities.aligned else 0
        return 4 * (4 * heads * n * n + n * (8 * d + 2 * ff)) + 8 * n * n + frame_mask

    def check_positions(self, position_ids) -> None:
        """Refuse position ids the model cannot take: beyond its table, or other than the
        slots 0..n-1 for a model that has no position ids (ALiBi, relative buckets)."""
        pos = np.asarray(position_ids)
        top = int(pos.max()) if pos.size else 0
        if self.max_positions is not None and top >= self.max_positions:
            raise PosvizInputError(f"position {top} is beyond the "
                                   f"{self.max_positions} positions of {self.name}")
        if not self.family.position_ids and not np.array_equal(pos, np.arange(pos.size)):
            raise PosvizInputError(
                f"{self.name} ({self.family.name}, {self.family.scheme.split(':')[0]}) "
                f"takes no position ids: positions are the slots, so only 'slot' positions "
                f"from 0 apply")

    def describe(self) -> dict:
        cfg = self.model.config
        heads = cfg.num_attention_heads
        info = {"model": self.name, "family": self.family.name, "layers": self._blocks,
                "heads": heads, "d_model": cfg.hidden_size,
                "position_encoding": self.position_encoding, "mask": self.mask,
                "max_positions": self.max_positions, "path": self.path,
                "device": self.device, "head": self.head}
        if self.revision:
            info["revision"] = self.revision
        if self.weights:
            info["weights"] = self.weights
        if self.dtype != "float32":
            info["dtype"] = self.dtype
            info["computes_in"] = arithmetic_of(self.dtype)
        placed = layers_on(self.model)
        if placed:
            info["layers_on"] = placed
        if self.position_offset:
            info["position_offset"] = self.position_offset
        kv = getattr(cfg, "num_key_value_heads", None)
        if kv and kv != heads:
            info["kv_heads"] = kv
        return info

    def facts(self):
        """The model facts; where accelerate placed the modules, their devices: "cpu (5
        modules) and disk (3 modules)"."""
        placed = layers_on(self.model)
        where = " and ".join(f"{device} ({count} module{'s' * (count != 1)})"
                             for device, count in placed.items()) or self.device
        return replace(facts_of(self.model, self.family, self.name, self.head, where),
                       weights=self.weights, computes_in=arithmetic_of(self.dtype))

    def profile(self, reach: int):
        """None: a real model's encoding is read from its weights (``machinery``)."""
        return None

    def machinery(self):
        """The model's own positional machinery, read from its weights
        (models.hf.machinery)."""
        from .machinery import machinery_of
        return machinery_of(self)

    def twin(self) -> "HFBackend":
        """Another backend on the same weights, for another thread (an experiment beside
        the window's evaluations): module objects of its own, so that the hooks one
        thread's forward attaches are never called by the other's, sharing every
        parameter and buffer (no second copy of the weights) and the tokenizer."""
        with self.hooked:               # no forward's hooks are on the modules now
            shared = {id(t): t for t in itertools.chain(self.model.parameters(),
                                                         self.model.buffers())}
            model = copy.deepcopy(self.model, shared)
        return HFBackend(model, self.tokenizer, self.family, self.name, self.path,
                         self.head, self.device, self._tokenizer_lock, self.source,
                         self.revision, self.dtype, self.weights)

    # -- one forward ---------------------------------------------------------------------
    def _extras(self) -> dict:
        """Its description, the one record a figure's provenance and the JSON's read
        (document.provenance), with the dtypes the floor reads and its final norm."""
        computes = arithmetic_of(self.dtype)                 # what the floor reads
        return {**self.describe(), "dtype": self.dtype,
                **({"computes_in": computes} if computes != self.dtype else {}),
                "final_norm": self.family.final_norm}

    def _frame_mask(self, orders) -> torch.Tensor | None:
        """A causal model's mask in the original tokens' frame, for orders (n,) or (B, n):
        token i sees token k where the order puts k no later than i, (B, 1, n, n) as
        the scores' addend (0 or the dtype's lowest); None for a bidirectional model."""
        if self.mask != "causal":
            return None
        orders = np.asarray(orders).reshape(-1, np.shape(orders)[-1])          # (B, n)
        slot_of = torch.as_tensor(np.argsort(orders, axis=1), device=self.device)
        sees = sees_in_frame(slot_of)                                          # (B, n, n)
        dtype = self.model.dtype
        return torch.zeros(sees.shape, dtype=dtype, device=self.device).masked_fill_(
            ~sees, torch.finfo(dtype).min)[:, None]

    def _forward(self, ids, position_ids, recorder: Recorder, mask=None):
        """One forward of the token ids (n,) or (B, n) at position ids of the same shape
        with the base model's modules tapped by ``recorder`` (models.hf.layout), hooks
        removed afterwards; a batch keeps its leading axis in every recorded value.

        The ordinary call: the token ids with an attention mask of ones (as a tokenizer
        gives them; ``mask``, a causal model's (B, 1, n, n) in the tokens' frame, instead
        when given), and the position ids where the family takes them (shifted to where
        position 0 lies in RoBERTa's table; OPT adds its own offset); the others compute
        their positions from the slots. transformers' output_attentions /
        output_hidden_states are not asked for: the same hooks on the same modules
        record them. A pre-norm model's last hidden state, after its final norm, is
        recorded as FINAL: transformers reports it as the last of its hidden states.
        """
        ids = torch.as_tensor(np.asarray(ids, dtype=np.int64), device=self.device)
        single = ids.dim() == 1
        ids = ids.reshape(-1, ids.shape[-1])                                # (B, n)
        # An explicit mask of ones: without it, transformers reads non-consecutive
        # position ids as packed sequences and blocks attention between them.
        kwargs = {"attention_mask": torch.ones_like(ids) if mask is None else mask}
        if self.family.position_ids:
            pos = np.asarray(position_ids).reshape(ids.shape) + self._id_shift
            kwargs["position_ids"] = torch.as_tensor(pos, dtype=torch.long, device=self.device)
        if self._use_cache:
            kwargs["use_cache"] = False
        with self.hooked, torch.inference_mode(), float32_arithmetic(self.model), layout.tap(
                recorder, self.base, self.family, batch=None if single else ids.shape[0]):
            out = self.base(input_ids=ids, **kwargs)
            if self.family.final_norm:                  # else the last block's output
                last = out.last_hidden_state                                # (B, n, d)
                recorder.record(FINAL, layout.host(last[0] if single else last))
        return out

    # -- prefix reuse: the keys and values of the slots before ---------------------------
    @staticmethod
    def _cache(past, start: int):
        """A DynamicCache holding the first ``start`` slots of ``past`` (a Trace.past: per
        layer (keys, values), (1, kv_heads, n, d_head) each), or empty."""
        from transformers import DynamicCache

        cache = DynamicCache()
        for layer, (keys, values) in enumerate(past or () if start else ()):
            cache.update(keys[:, :, :start], values[:, :, :start], layer)
        return cache

    @contextlib.contextmanager
    def _calls_with(self, cache, total: int):
        """While inside, a call of the base model uses ``cache`` (use_cache on) and
        attends over ``total`` slots, the cached ones and its own; nothing without one.
        Both go through the ordinary forward and its hooks, so what is recorded is
        what a run records."""
        if cache is None:
            yield
            return

        def add_cache(_module, args, kwargs):
            kwargs[self._cache_keyword] = cache
            kwargs["use_cache"] = True
            kwargs["attention_mask"] = torch.ones((1, total), dtype=torch.long,
                                                  device=self.device)
            return args, kwargs
        with self.hooked:
            handle = self.base.register_forward_pre_hook(add_cache, with_kwargs=True)
            try:
                yield
            finally:
                handle.remove()


def _with_past(trace: Trace, cache) -> Trace:
    """The Trace keeping a DynamicCache's (keys, values) per layer."""
    from dataclasses import replace

    if hasattr(cache, "layers"):                                   # transformers >= 4.56
        kv = [(layer.keys.detach(), layer.values.detach()) for layer in cache.layers]
    else:                                                          # older
        kv = [(k.detach(), v.detach()) for k, v in zip(cache.key_cache, cache.value_cache)]
    return replace(trace, past=kv)


def layers_on(model) -> dict[str, int]:
    """How many of the model's modules accelerate placed on each device ("cpu", "disk",
    "cuda:0", ...), when it placed them (device_map), else {}."""
    placed = getattr(model, "hf_device_map", None) or {}
    counts: dict[str, int] = {}
    for where in placed.values():
        where = f"cuda:{where}" if isinstance(where, int) else str(where)
        counts[where] = counts.get(where, 0) + 1
    return counts if set(counts) != {"cpu"} or len(placed) > 1 else {}
