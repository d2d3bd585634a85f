"""A Hugging Face base model behind posviz's Backend interface: tokens in, Trace out."""
from __future__ import annotations

import numpy as np
import torch

from ..backend import TokenSequence
from ..errors import Cancelled, PosvizInputError
from ..trace import Trace


class HFBackend:
    """A Hugging Face base model that runs one ordering of tokens into a Trace.

    The Trace holds what transformers itself reports (eager attention, so the weights
    exist): hidden[0] is the block input (BERT: the normalized sum of token, position
    and segment embeddings; GPT-2: token plus position embeddings; Llama: token
    embeddings, RoPE acting inside attention), hidden[l] the output of block l, and for
    the pre-norm decoders hidden[L] comes after the final norm. attn_out and mlp_out are
    the two branches of each block, recorded by forward hooks.
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
        self._special = set(tokenizer.all_special_ids)
        self._record: list | None = None       # branch outputs of the running forward
        self._should_stop = None               # asked by the hooks during a forward
        for attn, mlp in self._branches():
            attn.register_forward_hook(self._keep)
            mlp.register_forward_hook(self._keep)

    # -- the family's layout -----------------------------------------------------------
    def _branches(self) -> list[tuple]:
        """(attention branch, MLP branch) modules per block, whose outputs add to the
        residual stream (BERT: the projections before each add & norm)."""
        m = self.model
        if self.family == "bert":
            return [(layer.attention.output.dense, layer.output.dense)
                    for layer in m.encoder.layer]
        if self.family == "gpt2":
            return [(block.attn, block.mlp) for block in m.h]
        return [(layer.self_attn, layer.mlp) for layer in m.layers]

    def _embeddings(self):
        """(token embedding, learned position embedding or None) modules."""
        m = self.model
        if self.family == "bert":
            return m.embeddings.word_embeddings, m.embeddings.position_embeddings
        if self.family == "gpt2":
            return m.wte, m.wpe
        return m.embed_tokens, None

    def _keep(self, module, inputs, output) -> None:
        if self._record is not None:
            self._record.append(output[0] if isinstance(output, tuple) else output)
            if self._should_stop is not None and self._should_stop():
                raise Cancelled("superseded by a newer request")

    # -- Backend -----------------------------------------------------------------------
    def tokenize(self, text: str) -> TokenSequence:
        """The model's own tokens; special tokens (e.g. [CLS], [SEP], BOS) are pinned."""
        if not text.strip():
            raise PosvizInputError("the text is empty")
        encoded = self.tokenizer(text, add_special_tokens=True, verbose=False)
        ids = tuple(int(i) for i in encoded["input_ids"])
        pinned = tuple(i in self._special for i in ids)
        if all(pinned):
            raise PosvizInputError("the text has no tokens to show")
        vocab = self.model.get_input_embeddings().num_embeddings
        if max(ids) >= vocab:
            raise PosvizInputError(f"the tokenizer gave token id {max(ids)}, but the model "
                                   f"has only {vocab} token embeddings: mismatched files?")
        return TokenSequence(tuple(self._piece(i, p) for i, p in zip(ids, pinned)),
                             ids, pinned)

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
        ids = torch.tensor([[seq.ids[i] for i in order]])                  # (1, n)
        pos = torch.as_tensor(np.asarray(position_ids), dtype=torch.long)[None]   # (1, n)
        # An explicit mask of ones: without it, transformers reads non-consecutive
        # position ids as packed sequences and blocks attention between them.
        kwargs = {"attention_mask": torch.ones_like(ids)}
        if self.family == "bert":
            kwargs["token_type_ids"] = torch.zeros_like(ids)
        else:
            kwargs["use_cache"] = False
        token_table, position_table = self._embeddings()
        self._record = []
        self._should_stop = should_stop
        try:
            with torch.inference_mode():
                out = self.model(input_ids=ids, position_ids=pos, output_attentions=True,
                                 output_hidden_states=True, **kwargs)
                embeddings = token_table(ids[0])                            # (n, d)
                encodings = position_table(pos[0]) if position_table is not None else None
            branches = self._record
        finally:
            self._record = self._should_stop = None
        hidden = torch.cat(out.hidden_states)                               # (L+1, n, d)
        maps = list(out.attentions)                                         # L x (1, h, n, n)
        del out                                   # the maps' only other owner
        attention = _stack_freeing(maps)                                    # (L, h, n, n)
        L = attention.shape[0]
        attn_out = mlp_out = None
        if len(branches) == 2 * L:
            attn_out = torch.cat(branches[0::2]).numpy()                   # (L, n, d)
            mlp_out = torch.cat(branches[1::2]).numpy()
        return Trace(
            tokens=tuple(seq.tokens[i] for i in order),
            position_ids=np.asarray(position_ids),
            embeddings=embeddings.numpy(),
            encodings=None if encodings is None else encodings.numpy(),
            hidden=hidden.numpy(),
            attention=attention.numpy(),
            attn_out=attn_out,
            mlp_out=mlp_out,
            extras={"model": self.name, "family": self.family,
                    "position_encoding": self.position_encoding, "mask": self.mask,
                    "final_norm": self.family != "bert"},
        )

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


def _stack_freeing(maps: list) -> torch.Tensor:
    """A list of L tensors (1, h, n, n) -> one (L, h, n, n), emptying the list as it
    copies, so each layer's map is freed at once (transformers' attentions are 75 MB
    at n = 512 for MiniLM; ``torch.cat`` would hold them and the result together).
    """
    out = torch.empty((len(maps), *maps[0].shape[1:]), dtype=maps[0].dtype)
    for i in range(len(maps)):
        out[i] = maps[i][0]
        maps[i] = None
    return out
