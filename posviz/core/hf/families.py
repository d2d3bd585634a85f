"""What posviz knows of each Hugging Face family: how it encodes position, whether it
masks causally, which head it is loaded with, and how non-default positions reach it.

Everything else (where the values pass) is in core.hf.layout. Positions are computed by
transformers itself, the way the model does when called the ordinary way (default
position ids, eager attention); the only family-specific arithmetic is ``id_shift``, the
index of position 0 in a learned table indexed directly by position ids (RoBERTa's
table starts after its padding row). Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Family:
    """One layout posviz reads."""

    name: str
    position_encoding: str      # "learned", "rope", "alibi", "relative" or "none"
    mask: str                   # "causal" or "bidirectional"
    head: str | None            # the LM head it is loaded with: "causal", "masked", None
    position_ids: bool          # does its forward take position ids? (else: slots only)
    final_norm: bool            # is the last hidden state after a final norm?
    scheme: str                 # in words, for the README and describe()


FAMILY = {f.name: f for f in (
    Family("bert", "learned", "bidirectional", "masked", True, False,
           "learned absolute positions"),
    Family("roberta", "learned", "bidirectional", "masked", True, False,
           "learned absolute positions, offset by the padding index + 1"),
    Family("distilbert", "learned", "bidirectional", "masked", True, False,
           "learned absolute positions"),
    Family("gpt2", "learned", "causal", "causal", True, True,
           "learned absolute positions"),
    Family("opt", "learned", "causal", "causal", True, True,
           "learned absolute positions, offset by 2"),
    Family("gpt_neox", "rope", "causal", "causal", True, True,
           "RoPE on a fraction of each head (rotary_pct)"),
    Family("llama", "rope", "causal", "causal", True, True,
           "RoPE, grouped-query attention"),
    Family("bloom", "alibi", "causal", "causal", False, True,
           "ALiBi: a linear bias per head against distance"),
    Family("t5", "relative", "bidirectional", None, False, True,
           "relative position buckets, a learned bias per head (encoder only)"),
    Family("modernbert", "rope", "bidirectional", "masked", True, True,
           "RoPE, alternating global and local attention"),
)}


# Families that a config can make a decoder (``is_decoder``): transformers then masks
# their attention causally, row by row.
DECODER_CAPABLE = ("bert", "roberta")


def mask(family: str, config) -> str:
    """How the model masks attention: as its family does, but "causal" for a BERT or
    RoBERTa configured as a decoder."""
    if family in DECODER_CAPABLE and getattr(config, "is_decoder", False):
        return "causal"
    return FAMILY[family].mask


def position_offset(family: str, config) -> int:
    """Where position 0 lies in the model's learned table: RoBERTa padding_idx + 1, OPT 2
    (added inside its embedding module), else 0."""
    if family == "roberta":
        return int(getattr(config, "pad_token_id", None) or 0) + 1
    if family == "opt":
        return 2
    return 0


def id_shift(family: str, config) -> int:
    """What to add to posviz's 0-based position ids before passing them: RoBERTa's
    table is indexed by the ids themselves; OPT's module adds its own offset."""
    return position_offset(family, config) if family == "roberta" else 0


def max_positions(family: str, config) -> int | None:
    """The largest position id + 1 the model accepts (None for ALiBi and relative
    buckets, which have no table)."""
    if family in ("bloom", "t5"):
        return None
    table = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions",
                                                                         None)
    if table is None:
        return None
    return table - id_shift(family, config)
