"""A Hugging Face base model behind posviz's Backend interface: tokens in, Trace out."""
from __future__ import annotations

import numpy as np
import torch

from ..backend import TokenSequence
from ..errors import PosvizInputError
from ..hooks import ATTN_OUT, FINAL, MLP_OUT, Recorder, trace_from
from ..trace import Trace
from . import layout

STRUCTURAL = ("cls_token_id", "sep_token_id", "bos_token_id", "eos_token_id", "pad_token_id")


def structural_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokens that frame a sequence: [CLS], [SEP], BOS, EOS and padding.

    Only these are pinned to their slots. Other special tokens ([UNK] for a word the
    vocabulary lacks, [MASK]) stand for content and move like any other token.
    """
    ids = (getattr(tokenizer, name, None) for name in STRUCTURAL)
    return frozenset(int(i) for i in ids if isinstance(i, int))


class HFBackend:
    """A Hugging Face base model that runs one ordering of tokens into a Trace.

    The Trace holds what transformers itself computes, recorded through forward hooks
    on its modules under the names of core.hooks (eager attention, so the weights
    exist): hidden[0] is the block input (BERT: the normalized sum of token, position
    and segment embeddings; GPT-2: token plus position embeddings; Llama: token
    embeddings, RoPE acting inside attention), hidden[l] the output of block l, and for
    the pre-norm decoders hidden[L] comes after the final norm. attn_out and mlp_out are
    the two branches of each block.
    """

    dtype = "float32"

    def __init__(self, model, tokenizer, family: str, name: str, path: str):
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.family = family
        self.name = name
        self.path = path
        cfg = model.config
        self.max_positions = (getattr(cfg, "max_position_embeddings", None)
                              or getattr(cfg, "n_positions", None))
        self.position_encoding = "rope" if family == "llama" else "learned"
        self.mask = "bidirectional" if family == "bert" else "causal"
        self._structural = structural_ids(tokenizer)          # pinned
        self._special = set(tokenizer.all_special_ids)       # shown as written, e.g. [UNK]

    # -- Backend -----------------------------------------------------------------------
    def tokenize(self, text: str) -> TokenSequence:
        """The model's own tokens; structural ones ([CLS], [SEP], BOS, EOS, padding) are
        pinned, while [UNK] and other special tokens move like words."""
        if not text.strip():
            raise PosvizInputError("the text is empty")
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
        n = len(order)
        top = int(np.max(position_ids)) if n else 0
        if self.max_positions is not None and top >= self.max_positions:
            raise PosvizInputError(f"position {top} is beyond the "
                                   f"{self.max_positions} positions of {self.name}")
        recorder = Recorder(should_stop, stop_after=(ATTN_OUT, MLP_OUT))
        self.record([seq.ids[i] for i in order], position_ids, recorder)
        return trace_from(
            recorder, self.model.config.num_hidden_layers,
            tokens=tuple(seq.tokens[i] for i in order),
            position_ids=np.asarray(position_ids),
            extras={"model": self.name, "family": self.family,
                    "position_encoding": self.position_encoding, "mask": self.mask,
                    "final_norm": self.family != "bert"})

    def run_cached(self, seq, order, position_ids, should_stop=None):
        """run, and its keys and values for run_suffix (core.hf.prefix)."""
        from .prefix import run_cached
        return run_cached(self, seq, order, position_ids, should_stop)

    def run_suffix(self, seq, order, position_ids, start, reference_cache, should_stop=None):
        """Slots start..n-1 of run, reusing the reference's earlier ones (core.hf.prefix)."""
        from .prefix import run_suffix
        return run_suffix(self, seq, order, position_ids, start, reference_cache, should_stop)

    def record(self, ids, position_ids, recorder: Recorder) -> None:
        """One forward of the (n,) token ids at the (n,) position ids with the model's
        modules tapped by ``recorder`` (core.hf.layout), hooks removed afterwards.

        transformers' output_attentions / output_hidden_states are not asked for: they
        are recorded by the same kind of hooks on the same modules, and would hold every
        map a second time. A pre-norm decoder's last hidden state, after its final norm,
        is recorded as FINAL: transformers reports it as the last of its hidden states.
        """
        ids = torch.tensor([list(ids)])                                     # (1, n)
        pos = torch.as_tensor(np.asarray(position_ids), dtype=torch.long)[None]   # (1, n)
        # An explicit mask of ones: without it, transformers reads non-consecutive
        # position ids as packed sequences and blocks attention between them.
        kwargs = {"attention_mask": torch.ones_like(ids)}
        if self.family == "bert":
            kwargs["token_type_ids"] = torch.zeros_like(ids)
        else:
            kwargs["use_cache"] = False
        with torch.inference_mode(), layout.tap(recorder, self.model, self.family):
            out = self.model(input_ids=ids, position_ids=pos, **kwargs)
            if self.family != "bert":
                recorder.record(FINAL, out.last_hidden_state[0])             # (n, d)

    def describe(self) -> dict:
        cfg = self.model.config
        heads = cfg.num_attention_heads
        info = {
            "model": self.name,
            "family": self.family,
            "layers": cfg.num_hidden_layers,
            "heads": heads,
            "d_model": cfg.hidden_size,
            "position_encoding": self.position_encoding,
            "mask": self.mask,
            "max_positions": self.max_positions,
            "path": self.path,
        }
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

