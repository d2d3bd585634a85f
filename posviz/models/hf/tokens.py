"""A Hugging Face tokenizer's tokens: which are pinned (models.backend marks word pieces)."""
from __future__ import annotations

STRUCTURAL = ("cls_token_id", "sep_token_id", "bos_token_id", "eos_token_id", "pad_token_id")


def structural_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokens that frame a sequence: [CLS], [SEP], BOS, EOS and padding.

    Only these are pinned to their slots. Other special tokens ([UNK] for a word the
    vocabulary lacks, [MASK]) stand for content and move like any other token.
    """
    ids = (getattr(tokenizer, name, None) for name in STRUCTURAL)
    return frozenset(int(i) for i in ids if isinstance(i, int))
