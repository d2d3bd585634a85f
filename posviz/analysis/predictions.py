"""What a model predicts after the original order and after the reordered one.

- A causal language model (with its head): the top next tokens after each order, with
  their probabilities, and the KL divergence between the two next-token distributions.
- A masked language model: the top tokens at each [MASK] (the same token, wherever the
  reorder put it), with the KL divergence between the two distributions there.
- Every model, heads or not (the built-in one too): the cosine between the mean-pooled
  last hidden states of the two orders (1 when reordering changed nothing pooled).

The logits come from the model's own head applied to the last hidden states the Trace
recorded (no second forward); models.hf.heads knows where each family keeps its head,
and the built-in model with trained weights computes its own (``logits``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np

from ..models.backend import CONTINUES
from ..models.orders import is_original
from ..models.formats.pieces import (byte_labels, is_byte_fallback, is_byte_level,
                                     sentencepiece_labels, shown)

__all__ = ["TopTokens", "Prediction", "Outputs", "compare_outputs", "pooled_outputs",
           "top_tokens", "kl_divergence", "pooled_cosine", "TOP_K"]

TOP_K = 5


@dataclass(frozen=True)
class TopTokens:
    tokens: tuple[str, ...]          # (k,) readable text of each token
    ids: tuple[int, ...]             # (k,)
    probabilities: tuple[float, ...]  # (k,) in decreasing order


@dataclass(frozen=True)
class Prediction:
    """One predicted distribution compared across the two orders."""

    where: str                       # "next token", or "[MASK] (token 3)"
    original: TopTokens
    reordered: TopTokens
    kl: float                        # KL(original ‖ reordered), nats
    slots: tuple[int, int]           # the slot read in the original and reordered run
    compared: TopTokens | None = None   # the tokens of either top list (m,), and
    compared_reordered: tuple[float, ...] = ()   # their probabilities after the reorder


@dataclass(frozen=True)
class Outputs:
    kind: str                        # "causal", "masked" or "encoder"
    pooled_cosine: float             # cos(mean-pooled last hidden state, both orders)
    predictions: tuple[Prediction, ...] = ()
    note: str = ""
    extra: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)


def kl_divergence(log_p, log_q) -> float:
    """KL(p ‖ q) = Σ p (log p − log q) in nats, from (V,) log-probabilities."""
    p = log_p.exp()
    return float((p * (log_p - log_q)).sum())


def top_tokens(log_probs, tokenizer, k: int = TOP_K) -> TopTokens:
    values, ids = log_probs.topk(k)
    ids = [int(i) for i in ids]
    return TopTokens(tuple(_readable(tokenizer, i) for i in ids), tuple(ids),
                     tuple(float(v) for v in values.exp()))


def _readable(tokenizer, token_id: int) -> str:
    """A predicted token as its chip would read: its text, "##" before a byte-level or
    SentencePiece piece that continues a word, ``⟨EF BC⟩`` for bytes that are no whole
    character (models.formats.pieces)."""
    if tokenizer is None:
        return str(token_id)
    if is_byte_level(tokenizer) or is_byte_fallback(tokenizer):
        raw = tokenizer.convert_ids_to_tokens(token_id)
        read = byte_labels if is_byte_level(tokenizer) else sentencepiece_labels
        labels = read([raw]) if isinstance(raw, str) else None
        if labels is not None:
            text = shown(labels[0])
            return (CONTINUES + text if not labels[0][:1].isspace() and text[:1].isalnum()
                    else text)
    text = tokenizer.decode([token_id])
    if not text.strip() or "\ufffd" in text:
        text = tokenizer.convert_ids_to_tokens(token_id)
    return text.strip() or repr(text)


def pooled_cosine(reference, permuted) -> float:
    """cos between the token means of two (n, d) last hidden states, in [-1, 1] (the
    rounding of equal means can give 1 + 2e-16)."""
    a = np.asarray(reference, np.float64).mean(axis=0)
    b = np.asarray(permuted, np.float64).mean(axis=0)
    norm = np.linalg.norm(a) * np.linalg.norm(b)
    return float(np.clip(a @ b / norm, -1.0, 1.0)) if norm else float("nan")


ENCODER_NOTE = ("This model has no language-model head here: the comparison is the "
                "cosine of the mean-pooled last hidden state after each order.")


# the window's word to a user on the original order (its figures; not in a report's data)
COMPARE_HINT = "Drag a chip or press Reverse to compare two orders."
ORIGINAL_NOTE = ("This is the original order: both columns come from the same run and "
                 "agree by construction.")


def _note(ev, note: str = "") -> str:
    """``note``, after ORIGINAL_NOTE when nothing in ``ev``'s order moved."""
    return " ".join(filter(None, (ORIGINAL_NOTE if is_original(ev.order) else "", note)))


def pooled_outputs(ev) -> Outputs:
    """What any model's evaluation gives without a head: the pooled cosine."""
    return Outputs("encoder", pooled_cosine(ev.reference.hidden[-1], ev.run.hidden[-1]),
                   note=_note(ev, ENCODER_NOTE))


def compare_outputs(backend, ev) -> Outputs:
    """The Outputs of evaluation ``ev`` made by ``backend``."""
    cosine = pooled_cosine(ev.reference.hidden[-1], ev.run.hidden[-1])   # means: any frame
    head = backend.head
    if head is None:
        return Outputs("encoder", cosine, note=_note(ev, ENCODER_NOTE))
    import torch

    from ..models.hf.heads import head_logits
    from ..models.hf.precision import float32_arithmetic

    model = backend.model
    tokenizer = getattr(backend, "tokenizer", None)
    n = len(ev.order)
    if head == "causal":
        slots = [(n - 1, n - 1, "next token")]
    else:
        mask_id = getattr(tokenizer, "mask_token_id", None)
        where = {int(token): slot for slot, token in enumerate(ev.order)}
        slots = [(i, where[i], f"{tokenizer.mask_token} (token {i})")
                 for i, token in enumerate(ev.seq.ids) if token == mask_id]
        if not slots:
            return Outputs("masked", cosine, note=_note(ev, (
                f"Type {getattr(tokenizer, 'mask_token', '[MASK]')} where a word should "
                "be predicted: the model's guesses there are compared across orders.")))
    rows_a = [a for a, _, _ in slots]
    rows_b = [b for _, b, _ in slots]
    with torch.inference_mode(), float32_arithmetic(model):   # half weights: float32
        dtype = next(model.parameters()).dtype
        device = next(model.parameters()).device
        hidden_a = torch.as_tensor(ev.reference.hidden[-1][rows_a]).to(device, dtype)
        hidden_b = torch.as_tensor(ev.slot_hidden(-1)[rows_b]).to(device, dtype)
        logits = getattr(model, "logits", None) or (
            lambda h: head_logits(model, backend.family, h))
        log_a = logits(hidden_a).double().log_softmax(-1).cpu()               # (k, V)
        log_b = logits(hidden_b).double().log_softmax(-1).cpu()
    predictions = tuple(_prediction(label, log_a[j], log_b[j], (a, b), tokenizer)
                        for j, (a, b, label) in enumerate(slots))
    return Outputs(head, cosine, predictions, note=_note(ev))


def _prediction(label: str, log_a, log_b, slots, tokenizer) -> Prediction:
    """Top tokens after each order; the union of both lists with both probabilities."""
    a, b = top_tokens(log_a, tokenizer), top_tokens(log_b, tokenizer)
    ids = tuple(dict.fromkeys(a.ids + b.ids))
    compared = TopTokens(tuple(_readable(tokenizer, i) for i in ids), ids,
                         tuple(float(log_a[i].exp()) for i in ids))
    return Prediction(label, a, b, kl_divergence(log_a, log_b), slots, compared,
                      tuple(float(log_b[i].exp()) for i in ids))
