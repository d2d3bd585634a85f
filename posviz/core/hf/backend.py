"""A Hugging Face base model behind posviz's Backend interface: tokens in, Trace out."""
from __future__ import annotations

import copy
import inspect
import itertools
import threading

import numpy as np
import torch

from ..backend import TokenSequence
from ..errors import PosvizInputError
from ..hooks import ATTN_OUT, FINAL, MLP_OUT, Recorder, batch_rows, trace_from
from ..symmetry import per_token
from ..trace import Trace
from . import families, layout
from .families import FAMILY

# Families whose mask is bidirectional and whose every position signal is the position
# ids: the original tokens at the position ids an order gives them is that order's run
# with its rows put back (run_aligned). Not a causal family (its mask follows the
# slots), nor T5 or BLOOM (their positions are the slots), nor ModernBERT (the window
# of its local layers follows the slots).
ALIGNED_FAMILIES = frozenset({"bert", "roberta", "distilbert"})

STRUCTURAL = ("cls_token_id", "sep_token_id", "bos_token_id", "eos_token_id", "pad_token_id")


def structural_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokens that frame a sequence: [CLS], [SEP], BOS, EOS and padding.

    Only these are pinned to their slots. Other special tokens ([UNK] for a word the
    vocabulary lacks, [MASK]) stand for content and move like any other token.
    """
    ids = (getattr(tokenizer, name, None) for name in STRUCTURAL)
    return frozenset(int(i) for i in ids if isinstance(i, int))


class HFBackend:
    """A Hugging Face model that runs one ordering of tokens into a Trace.

    The Trace holds what transformers itself computes when the model is called the
    ordinary way on the reordered tokens (eager attention, its own position handling:
    offsets, rotary, ALiBi, relative buckets), recorded through forward hooks on its
    modules under the names of core.hooks: hidden[0] is the block input (BERT: the
    normalized sum of token, position and segment embeddings; GPT-2: token plus position
    embeddings; Llama: token embeddings, RoPE acting inside attention), hidden[l] the
    output of block l, and hidden[L] what the model returns as its last hidden state
    (after the final norm of a pre-norm model). attn_out and mlp_out are the two
    branches of each block.

    ``model`` is the loaded model, with its LM head when the checkpoint has one
    (``head`` "causal" or "masked"); ``base`` the transformer inside it that is tapped.
    """

    dtype = "float32"

    def __init__(self, model, tokenizer, family: str, name: str, path: str,
                 head: str | None = None, device: str = "cpu", tokenizer_lock=None):
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
        self.device = device
        cfg = model.config
        self.position_encoding = FAMILY[family].position_encoding
        self.mask = families.mask(family, cfg)         # a BERT decoder is causal
        self.position_offset = families.position_offset(family, cfg)
        self.max_positions = families.max_positions(family, cfg)
        self._id_shift = families.id_shift(family, cfg)
        self._blocks = len(layout.blocks(self.base, family))
        takes = inspect.signature(self.base.forward).parameters
        self._use_cache = "use_cache" in takes
        self._structural = structural_ids(tokenizer)          # pinned
        self._special = set(tokenizer.all_special_ids)       # shown as written, e.g. [UNK]

    # -- Backend -----------------------------------------------------------------------
    def tokenize(self, text: str) -> TokenSequence:
        """The model's own tokens; structural ones ([CLS], [SEP], BOS, EOS, padding) are
        pinned, while [UNK] and other special tokens move like words."""
        if not text.strip():
            raise PosvizInputError("the text is empty")
        with self._tokenizer_lock:
            encoded = self.tokenizer(text, add_special_tokens=True, verbose=False)
        ids = tuple(int(i) for i in encoded["input_ids"])
        pinned = tuple(i in self._structural for i in ids)
        if all(pinned):
            raise PosvizInputError("the text has no tokens to show")
        vocab = self.model.get_input_embeddings().num_embeddings
        if max(ids) >= vocab:
            raise PosvizInputError(f"the tokenizer gave token id {max(ids)}, but the model "
                                   f"has only {vocab} token embeddings: mismatched files?")
        pieces = [self._piece(i, i in self._special) for i in ids]
        raws = self.tokenizer.convert_ids_to_tokens(list(ids))
        return TokenSequence(tuple(mark_word_pieces(pieces, raws, pinned)), ids, pinned)

    def _piece(self, token_id: int, special: bool) -> str:
        """Readable text of one token: "Ġcat" -> "cat", "▁cat" -> "cat", "##s" kept."""
        raw = self.tokenizer.convert_ids_to_tokens(token_id)
        if special or raw.startswith("##"):
            return raw
        text = self.tokenizer.decode([token_id])
        if "\ufffd" in text:                      # part of a multi-byte character
            text = raw.replace("Ġ", " ").replace("▁", " ")
        return text.strip() or "␣"

    def run(self, seq: TokenSequence, order: np.ndarray, position_ids: np.ndarray,
            should_stop=None) -> Trace:
        """One forward of seq.ids[order] at the given (n,) position ids.

        ``should_stop`` is asked after each branch of each block (through the forward
        hooks); True raises errors.Cancelled and abandons the forward.
        """
        self.check_positions(position_ids)
        return self._run_ids([seq.ids[i] for i in order], tuple(seq.tokens[i] for i in order),
                             np.asarray(position_ids), should_stop)

    @property
    def aligns(self) -> bool:
        """Whether run_aligned computes what run does (ALIGNED_FAMILIES, unmasked: not a
        BERT or RoBERTa configured as a decoder, whose causal mask follows the slots)."""
        return self.family in ALIGNED_FAMILIES and self.mask == "bidirectional"

    def run_aligned(self, seq: TokenSequence, order: np.ndarray, position_ids: np.ndarray,
                    should_stop=None) -> Trace:
        """run of the order recorded in the original tokens' order: the original ids,
        each at the position id the order gives it (row i, and column i of every map,
        token i's). Only where ``aligns``."""
        if not self.aligns:
            raise ValueError(f"a {self.family} model runs its orders in slot order only")
        self.check_positions(position_ids)
        return self._run_ids(list(seq.ids), seq.tokens, per_token(order, position_ids),
                             should_stop)

    def _run_ids(self, ids, tokens, position_ids, should_stop) -> Trace:
        """The Trace of one forward of ``ids`` (n,) at ``position_ids`` (n,)."""
        recorder = Recorder(should_stop, stop_after=(ATTN_OUT, MLP_OUT), layers=self._blocks)
        self.record(ids, position_ids, recorder)
        return trace_from(recorder, self._blocks, tokens=tuple(tokens),
                          position_ids=np.asarray(position_ids), extras=self._extras())

    def _extras(self) -> dict:
        return {"model": self.name, "family": self.family,
                "position_encoding": self.position_encoding, "mask": self.mask,
                "final_norm": FAMILY[self.family].final_norm}

    def check_positions(self, position_ids) -> None:
        """Refuse position ids the model cannot take: beyond its table, or other than the
        slots 0..n-1 for a model that has no position ids (ALiBi, relative buckets)."""
        pos = np.asarray(position_ids)
        top = int(pos.max()) if pos.size else 0
        if self.max_positions is not None and top >= self.max_positions:
            raise PosvizInputError(f"position {top} is beyond the "
                                   f"{self.max_positions} positions of {self.name}")
        if not FAMILY[self.family].position_ids and not np.array_equal(pos,
                                                                       np.arange(pos.size)):
            raise PosvizInputError(
                f"{self.name} ({self.family}, {FAMILY[self.family].scheme.split(':')[0]}) "
                f"takes no position ids: positions are the slots, so only 'slot' positions "
                f"from 0 apply")

    def run_cached(self, seq, order, position_ids, should_stop=None):
        """run, and its keys and values for run_suffix (core.hf.prefix)."""
        from .prefix import run_cached
        with self.hooked:
            return run_cached(self, seq, order, position_ids, should_stop)

    def run_suffix(self, seq, order, position_ids, start, reference_cache, should_stop=None):
        """Slots start..n-1 of run, reusing the reference's earlier ones (core.hf.prefix)."""
        from .prefix import run_suffix
        with self.hooked:
            return run_suffix(self, seq, order, position_ids, start, reference_cache,
                              should_stop)

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
                         self.head, self.device, self._tokenizer_lock)

    def record(self, ids, position_ids, recorder: Recorder, **extra):
        """One forward of the (n,) token ids at the (n,) position ids with the base
        model's modules tapped by ``recorder`` (core.hf.layout), hooks removed afterwards;
        ``extra`` goes to the forward as it is. Returns the base model's output.

        The ordinary call: the token ids with an attention mask of ones (as a tokenizer
        gives them), and the position ids where the family takes them (shifted to where
        position 0 lies in RoBERTa's table; OPT adds its own offset); the others compute
        their positions from the slots. transformers' output_attentions /
        output_hidden_states are not asked for: the same hooks on the same modules
        record them. A pre-norm model's last hidden state, after its final norm, is
        recorded as FINAL: transformers reports it as the last of its hidden states.
        """
        device = self.device
        ids = torch.tensor([list(ids)], device=device)                      # (1, n)
        # An explicit mask of ones: without it, transformers reads non-consecutive
        # position ids as packed sequences and blocks attention between them.
        kwargs = {"attention_mask": torch.ones_like(ids)}
        if FAMILY[self.family].position_ids:
            pos = np.asarray(position_ids) + self._id_shift
            kwargs["position_ids"] = torch.as_tensor(pos, dtype=torch.long,
                                                     device=device)[None]  # (1, n)
        if self._use_cache:
            kwargs["use_cache"] = False
        kwargs.update(extra)
        with self.hooked, torch.inference_mode(), layout.tap(recorder, self.base, self.family):
            out = self.base(input_ids=ids, **kwargs)
            if FAMILY[self.family].final_norm:      # else the last block's output
                recorder.record(FINAL, out.last_hidden_state[0].cpu())       # (n, d)
        return out

    def run_batch(self, seq: TokenSequence, orders, position_ids, should_stop=None) -> list:
        """run for B orders in one forward: orders and position_ids (B, n) -> B Traces,
        each what run gives for its order (to rounding). Every sequence has n tokens,
        so no padding enters: the attention mask is all ones as in run."""
        orders = np.asarray(orders)
        position_ids = np.asarray(position_ids)
        for pos in position_ids:
            self.check_positions(pos)
        recorder = Recorder(should_stop, stop_after=(ATTN_OUT, MLP_OUT))
        self.record_batch([[seq.ids[i] for i in order] for order in orders], position_ids,
                          recorder)
        return [trace_from(rows, self._blocks, tuple(seq.tokens[i] for i in order),
                           position_ids[b], extras=self._extras())
                for b, (order, rows) in enumerate(zip(orders, batch_rows(recorder,
                                                                           len(orders))))]

    def compare_batch(self, seq: TokenSequence, orders, position_ids, reference: Trace,
                      should_stop=None) -> list:
        """compare(reference, run(...)) for B orders in one forward, without the aligned
        maps (core.batch_metrics): orders and position_ids (B, n) -> B Comparisons."""
        from ..batch_metrics import MetricsRecorder, ReferenceTensors
        position_ids = np.asarray(position_ids)
        for pos in position_ids:
            self.check_positions(pos)
        orders = np.asarray(orders)
        recorder = MetricsRecorder(ReferenceTensors(reference), orders, self._blocks,
                                   should_stop, stop_after=(ATTN_OUT, MLP_OUT),
                                   aligned=self.aligns)
        if self.aligns:                 # the original ids, at each order's position ids
            self.record_batch(np.tile(np.asarray(seq.ids), (len(orders), 1)),
                              per_token(orders, position_ids), recorder)
        else:
            self.record_batch(np.asarray(seq.ids)[orders], position_ids, recorder)
        return recorder.comparisons()

    def batch_bytes(self, n: int, traces: bool = True) -> int:
        """About how many bytes one order of n tokens takes in run_batch, or with
        ``traces`` False in compare_batch (one layer's work, the gap to the maps)."""
        cfg = self.model.config
        d = cfg.hidden_size
        ff = getattr(cfg, "intermediate_size", None) or 4 * d
        heads = cfg.num_attention_heads
        per_layer = 3 * heads * n * n + n * (8 * d + 2 * ff)
        if not traces:
            return 4 * (per_layer + heads * n * n) + 8 * n * n
        return 4 * (self._blocks * per_layer + 3 * n * d)

    def record_batch(self, ids, position_ids, recorder: Recorder, **extra):
        """record for B sequences of n token ids at (B, n) position ids at once; every
        recorded value keeps its leading batch axis."""
        device = self.device
        ids = torch.as_tensor(np.asarray(ids, dtype=np.int64), device=device)  # (B, n)
        kwargs = {"attention_mask": torch.ones_like(ids)}
        if FAMILY[self.family].position_ids:
            pos = np.asarray(position_ids) + self._id_shift
            kwargs["position_ids"] = torch.as_tensor(pos, dtype=torch.long,
                                                     device=device)           # (B, n)
        if self._use_cache:
            kwargs["use_cache"] = False
        kwargs.update(extra)
        with self.hooked, torch.inference_mode(), layout.tap(recorder, self.base, self.family,
                                                             batch=ids.shape[0]):
            out = self.base(input_ids=ids, **kwargs)
            if FAMILY[self.family].final_norm:
                recorder.record(FINAL, out.last_hidden_state.cpu())           # (B, n, d)
        return out

    def describe(self) -> dict:
        cfg = self.model.config
        heads = cfg.num_attention_heads
        info = {
            "model": self.name,
            "family": self.family,
            "layers": self._blocks,
            "heads": heads,
            "d_model": cfg.hidden_size,
            "position_encoding": self.position_encoding,
            "mask": self.mask,
            "max_positions": self.max_positions,
            "path": self.path,
            "device": self.device,
            "head": self.head,
        }
        if self.position_offset:
            info["position_offset"] = self.position_offset
        kv = getattr(cfg, "num_key_value_heads", None)
        if kv and kv != heads:
            info["kv_heads"] = kv
        return info


WORD_START = ("Ġ", "▁")      # byte-level BPE (GPT-2, Llama 3) and SentencePiece mark
CONTINUES = "##"             # WordPiece's mark of a piece inside a word, used for all


def mark_word_pieces(pieces: list[str], raws: list[str], pinned) -> list[str]:
    """Labels that show where a word starts, whatever the tokenizer: a piece that
    continues a word reads "##ing", as WordPiece writes it ("play ##ing" is one word in
    two tokens). Tokenizers that mark word starts instead (Ġ, ▁) have their other word
    pieces marked; punctuation, the first piece and pieces after a pinned token are not.
    """
    if not any(raw.startswith(WORD_START) for raw in raws):
        return pieces                          # WordPiece marks its own, or one word
    marked = list(pieces)
    for k in range(1, len(pieces)):
        raw = raws[k]
        if (not pinned[k] and not pinned[k - 1] and not raw.startswith(WORD_START)
                and raw[:1].isalnum()):
            marked[k] = CONTINUES + pieces[k]
    return marked

