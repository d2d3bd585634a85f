"""How much a causal language model uses the order of its context: the perplexity of a
window's last token after the context before it is shuffled, against the original
order. A model that reads its context as a bag of tokens scores a ratio of 1; one that
reads which token came where scores more.

It asks a model only for next-token logits (``LastLogits``), so it measures the built-in
model's checkpoints and a real causal model alike.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import PosvizInputError, Refused, argument

WINDOWS = 400                    # held-out windows a measurement reads, at most
BATCH = 25                       # windows a forward
# What stays in place besides a start token: the last slot, or the last two
KEPT = {"all_but_last": 1, "all_but_last_two": 2}

# (B, n) token ids -> (B, V) next-token logits at the last slot (torch tensors; torch is
# imported where it runs, so the command line's help stays quick)
LastLogits = Callable[["torch.Tensor"], "torch.Tensor"]


@dataclass(frozen=True)
class OrderUse:
    """The last token's perplexity over ``windows`` held-out windows of ``length``
    slots, in the original order and with the context shuffled."""

    windows: int
    length: int                  # slots a window's input holds (a start token included)
    start_token: bool            # slot 0 holds a start-of-text token that stays put
    original: float              # perplexity of the last token, original order
    shuffled: dict               # {"all_but_last": perplexity, "all_but_last_two": ...}
    seed: int = 0                # the seed that draws the shuffles

    @property
    def ratio(self) -> float:
        """Shuffled all but the last / original: the measure of order use."""
        return self.shuffled["all_but_last"] / self.original

    def to_dict(self) -> dict:
        return {"windows": self.windows, "length": self.length,
                "start_token": self.start_token, "original": self.original,
                "shuffled": dict(self.shuffled), "ratio": self.ratio,
                "ratio_all_but_last_two": self.shuffled["all_but_last_two"] / self.original}


def windows_of(ids: np.ndarray, length: int, count: int = WINDOWS,
               start_id: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Non-overlapping windows of the stream ``ids``: inputs (W, length), a start token
    first when ``start_id`` is given, and each one's next token (W,)."""
    context = length - (start_id is not None)
    chunks = np.asarray(ids)[: (len(ids) // (context + 1)) * (context + 1)]
    chunks = chunks.reshape(-1, context + 1)[:count]                      # (W, context + 1)
    inputs = chunks[:, :context]
    if start_id is not None:
        inputs = np.concatenate([np.full((len(chunks), 1), start_id), inputs], axis=1)
    return inputs, chunks[:, context]


def shuffled(inputs: np.ndarray, kept: int, first: int, seed: int = 0) -> np.ndarray:
    """(W, n) inputs with slots first..n-1-kept of each row permuted (a seeded
    permutation per row); the first ``first`` slots and the last ``kept`` stay."""
    rng = np.random.default_rng(seed)
    out = inputs.copy()
    end = inputs.shape[1] - kept
    for row in out:
        row[first:end] = row[first:end][rng.permutation(end - first)]
    return out


def last_token_perplexity(last_logits: LastLogits, inputs: np.ndarray,
                          targets: np.ndarray) -> float:
    """exp of the mean negative log-likelihood of each row's next token."""
    import torch
    from torch.nn import functional as F
    total = 0.0
    with torch.inference_mode():
        for k in range(0, len(inputs), BATCH):
            logits = last_logits(torch.as_tensor(inputs[k:k + BATCH]))    # (b, V)
            total += F.cross_entropy(logits.double(),
                                     torch.as_tensor(targets[k:k + BATCH]),
                                     reduction="sum").item()
    return float(np.exp(total / len(inputs)))


def order_use(last_logits: LastLogits, ids: np.ndarray, length: int,
              start_id: int | None = None, count: int = WINDOWS,
              seed: int = 0, exact: bool = False, progress=None) -> OrderUse:
    """Measure order use on the held-out stream ``ids`` (see the module's docstring) over
    ``count`` windows, or fewer when the stream makes fewer; ``exact``: refuse then
    (errors.Refused), before any forward. ``progress(done, total)``: each of its passes
    (the original order, then each shuffle) done."""
    available = len(ids) // (length - (start_id is not None) + 1)
    if exact and count > available:
        raise Refused(f"{argument('windows', count)} asks for more windows than exist: the "
                      f"held-out text's {len(ids):,} tokens make {available:,} windows of "
                      f"{length} slots (give at most {available:,}, or a shorter "
                      f"{argument('length')})", "count")
    inputs, targets = windows_of(ids, length, count, start_id)
    if len(inputs) == 0:
        raise PosvizInputError(f"the {len(ids):,} held-out tokens make no window of "
                               f"{length} slots: give a shorter {argument('length')}")
    first = int(start_id is not None)
    passes = 1 + len(KEPT)
    original = last_token_perplexity(last_logits, inputs, targets)
    if progress is not None:
        progress(1, passes)
    after = {}
    for done, (name, kept) in enumerate(KEPT.items(), 2):
        after[name] = last_token_perplexity(last_logits, shuffled(inputs, kept, first, seed),
                                            targets)
        if progress is not None:
            progress(done, passes)
    return OrderUse(len(inputs), length, start_id is not None, original, after, seed)
