"""The tokenizer of the built-in model's trained checkpoints: a byte-level BPE.

Trained on the training part of a corpus with the ``tokenizers`` library, as GPT-2's is
(bytes first, then merges; the space before a word belongs to it, "Ġthe"), and saved
beside the weights as tokenizer.json. Every text encodes: there is no unknown token.
Its chips read as a real model's do ("play ##ing": a piece inside a word is marked).
The ``tokenizers`` library is imported when a tokenizer is made or read.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ...errors import PosvizInputError
from ..backend import mark_word_pieces
from ..formats.pieces import byte_labels, shown

END = "<|endoftext|>"          # between two sections of a corpus, id 0


class Tokenizer:
    """A byte-level BPE (a ``tokenizers.Tokenizer``), with what posviz asks of one."""

    mask_token_id = None       # no [MASK]: the checkpoints are causal language models

    def __init__(self, inner):
        self.inner = inner
        self.end_id = inner.token_to_id(END)

    @classmethod
    def train(cls, texts: Iterable[str], size: int) -> "Tokenizer":
        """A BPE of ``size`` tokens (END included) learnt from ``texts``."""
        from tokenizers import Tokenizer as Inner
        from tokenizers import decoders, models, pre_tokenizers, trainers
        inner = Inner(models.BPE())
        inner.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
        inner.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(
            vocab_size=size, special_tokens=[END], show_progress=False,
            initial_alphabet=pre_tokenizers.ByteLevel.alphabet())
        inner.train_from_iterator(texts, trainer)
        return cls(inner)

    @classmethod
    def read(cls, path: str | Path) -> "Tokenizer":
        from tokenizers import Tokenizer as Inner
        try:
            return cls(Inner.from_file(str(path)))
        except Exception as error:             # noqa: BLE001 (the library's own errors)
            raise PosvizInputError(f"{path}: not a tokenizer file ({error})") from None

    def save(self, path: str | Path) -> None:
        self.inner.save(str(path))

    def to_str(self) -> str:
        return self.inner.to_str()

    @property
    def size(self) -> int:
        return self.inner.get_vocab_size()

    def encode(self, text: str) -> list[int]:
        return self.inner.encode(text).ids

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        return [encoding.ids for encoding in self.inner.encode_batch(texts)]

    def decode(self, ids) -> str:
        return self.inner.decode([int(i) for i in ids], skip_special_tokens=False)

    def convert_ids_to_tokens(self, token_id: int) -> str:
        return self.inner.id_to_token(int(token_id))

    def chips(self, ids) -> list[str]:
        """How each token reads on its chip: its text, "##" before a piece that
        continues a word, "↵" for a line break and "␣" for a space."""
        raws = [self.convert_ids_to_tokens(i) for i in ids]
        texts = byte_labels(raws) or [self.decode([i]) for i in ids]
        return mark_word_pieces([shown(t) for t in texts], raws, [False] * len(raws))
