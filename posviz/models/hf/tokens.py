"""A Hugging Face tokenizer's tokens as chips: which are pinned, and how each reads."""
from __future__ import annotations

STRUCTURAL = ("cls_token_id", "sep_token_id", "bos_token_id", "eos_token_id", "pad_token_id")


def structural_ids(tokenizer) -> frozenset[int]:
    """The ids of the tokens that frame a sequence: [CLS], [SEP], BOS, EOS and padding.

    Only these are pinned to their slots. Other special tokens ([UNK] for a word the
    vocabulary lacks, [MASK]) stand for content and move like any other token.
    """
    ids = (getattr(tokenizer, name, None) for name in STRUCTURAL)
    return frozenset(int(i) for i in ids if isinstance(i, int))


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

