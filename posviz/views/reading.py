"""What a reorder's numbers say, in words and in the few numbers that qualify them: how
the reorder ran (exact zeros by construction, or rounding as it happens) and how the
hidden-state change spreads over the tokens (a norm-weighted ratio can be one token's).
No Qt here; both read the Comparison and the reference's norms, O(L·n) per reorder.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..analysis.engine import Evaluation
from ..analysis.symmetry import reference_norms
from ..models.options import OPTIONS
from ..models.trace import layer_runs

__all__ = ["ONE_TOKEN", "FRAME_WORDS", "TokenSpread", "frame", "frame_note", "token_spread",
           "one_token_note"]

# A token "carries" a layer's change when its share of the squared change is at least this.
ONE_TOKEN = 0.9


def frame(ev: Evaluation) -> str:
    """How the reorder ran: "reference" (the original order: nothing ran), "aligned"
    (in the original tokens' frame), "prefix" (a causal run from the first moved slot
    on, the slots before it the reference's own rows) or "given" (the whole input as
    given: Positions.literal, or a backend with neither fast frame)."""
    if np.array_equal(ev.order, np.arange(len(ev.order))):
        return "reference"
    if ev.aligned:
        return "aligned"
    return "prefix" if ev.start else "given"


FRAME_NOTES = {
    "reference": "",
    "aligned": ("The reorder ran in the original tokens' frame (each token in its own row, "
                "at its slot's position id): where the symmetry holds the change is "
                "exactly 0 by construction; {literal} shows the rounding instead."),
    "prefix": ("The reorder ran from its first moved slot on: the slots before it keep the "
               "original run's values (exactly 0 there by construction); {literal} takes "
               "the whole input."),
    "given": ("The reorder ran as given, through the ordinary forward: where the symmetry "
              "holds the change is rounding, below the noise floor, not 0."),
}


# How the reorder ran, in a line of ``posviz report``
FRAME_WORDS = {
    "reference": "the original order (every change is 0)",
    "aligned": "in the original tokens' frame (an exact symmetry gives 0; --literal runs "
               "the input as given)",
    "prefix": "from the first moved slot on (the slots before it give 0; --literal runs "
              "the whole input)",
    "given": "as given, through the ordinary forward (an exact symmetry gives rounding, "
             "below the floor)",
}


# A run as given, as the note names it: in a record (the JSON of report and of Python's
# to_dict(), one wording for both), and as the window's control sets it. The command line
# and Python word it at display time (api.report.Report.worded_notes).
RECORD_LITERAL = "a run as given"
WINDOW_LITERAL = f'"{OPTIONS["literal"].label}" (Position ids)'


def frame_note(ev: Evaluation, literal: str = RECORD_LITERAL) -> str:
    """How the reorder ran, and so what a symmetric case shows: '' for the original
    order, and when no curve reaches the floor (the frame then changes nothing seen);
    ``literal`` names what runs a reorder as given, as its reader sets it."""
    c = ev.comparison
    values = np.concatenate([c.hidden_equivariance, c.attention_equivariance,
                             c.pooled_change, c.last_token_change])
    if not (values <= c.floor).any():                                   # NaN compares False
        return ""
    return FRAME_NOTES[frame(ev)].format(literal=literal)


@dataclass(frozen=True)
class TokenSpread:
    """Per layer (L+1,): how the hidden-state change spreads over the n tokens."""

    p25: np.ndarray              # quartiles over tokens of ‖H′[inv i] − H[i]‖ / ‖H[i]‖
    median: np.ndarray
    p75: np.ndarray
    top: np.ndarray              # (L+1, 2) int: the two original tokens that moved most
    top_share: np.ndarray        # (L+1, 2) their cumulative share of ‖H′ − H[order]‖²_F
    norm_token: np.ndarray       # (L+1,) int: the token with the largest ‖H[i]‖
    norm_share: np.ndarray       # (L+1,) its share of ‖H‖²_F


def _shares(squared: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """(L+1, n) -> the k largest entries' tokens (L+1, k) and cumulative shares (L+1, k)."""
    top = np.argsort(-squared, axis=1, kind="stable")[:, :k]            # (L+1, k)
    total = squared.sum(axis=1, keepdims=True)                           # (L+1, 1)
    part = squared[np.arange(len(squared))[:, None], top].cumsum(axis=1)  # (L+1, k)
    return top, np.where(total > 0, part / np.where(total > 0, total, 1.0), 0.0)


def _quartiles(values: np.ndarray) -> np.ndarray:
    """(L+1, n) -> (3, L+1): the 25th, 50th and 75th percentiles of each row, linearly
    interpolated as np.percentile's default (NaN for a row holding one), from one sort:
    a fourth of np.percentile's cost on rows this short, paid at every reorder."""
    n = values.shape[1]
    at = np.array([0.25, 0.5, 0.75]) * (n - 1)                           # (3,)
    below = np.floor(at).astype(np.intp)
    above = np.minimum(below + 1, n - 1)
    ordered = np.sort(values, axis=1)                                    # NaN last
    low, high = ordered[:, below], ordered[:, above]                     # (L+1, 3)
    quartiles = low + (high - low) * (at - below)
    quartiles[np.isnan(ordered[:, -1])] = np.nan
    return quartiles.T


def token_spread(ev: Evaluation) -> TokenSpread:
    """The quartiles of the per-token change, the share of the tokens that moved most,
    and of the token whose hidden state is largest."""
    change = ev.comparison.token_change                               # (L+1, n)
    p25, median, p75 = _quartiles(change)                             # (L+1,) each
    norms = reference_norms(ev.reference).token.astype(np.float64)    # (L+1, n) ‖H[i]‖
    top, share = _shares((change * norms) ** 2, min(2, change.shape[1]))
    norm_token, norm_share = _shares(norms ** 2, 1)
    return TokenSpread(p25, median, p75, top, share, norm_token[:, 0], norm_share[:, 0])


def _spans(layers) -> str:
    return ", ".join(f"layer {a}" if a == b else f"layers {a}–{b}"
                     for a, b in layer_runs(layers))


def _percent(share: float) -> str:
    return f"{np.floor(share * 1000) / 10:.1f}%"      # rounded down: "at least"


def one_token_note(ev: Evaluation, spread: TokenSpread) -> str:
    """When at most two tokens carry ONE_TOKEN of the squared hidden-state change at
    layers above the floor, which and where ('tokens 0 'the' and 10 'warm' carry at
    least 99.9% ... at layers 12–28'), and whose hidden state dominates ‖H‖ there; ''
    otherwise (or with fewer than four tokens, where two are half the text)."""
    c, tokens = ev.comparison, ev.seq.tokens
    if len(tokens) < 4:
        return ""
    above = c.hidden_equivariance > c.floor                           # (L+1,)
    k = np.where(spread.top_share[:, 0] >= ONE_TOKEN, 1,
                 np.where(spread.top_share[:, 1] >= ONE_TOKEN, 2, 0))  # (L+1,)
    groups: dict[tuple, list[int]] = {}
    for layer in np.flatnonzero(above & (k > 0)):
        groups.setdefault(tuple(sorted(spread.top[layer, :k[layer]])), []).append(layer)
    notes = []
    for who, layers in groups.items():
        least = min(spread.top_share[layer, len(who) - 1] for layer in layers)
        named = " and ".join(f"{i} {tokens[i]!r}" for i in who)
        verb = "carries" if len(who) == 1 else "carry"
        notes.append(f"token{'s' * (len(who) > 1)} {named} {verb} at least "
                     f"{_percent(least)} of the squared hidden-state change at "
                     f"{_spans(layers)}")
    if not notes:
        return ""
    text = "A few tokens stand for the layer: " + "; ".join(notes) + "."
    layers = [l for ls in groups.values() for l in ls]
    big = [l for l in layers if spread.norm_share[l] >= ONE_TOKEN]
    if big:
        token = int(spread.norm_token[big[0]])
        text += (f" The hidden state of token {token} {tokens[token]!r} holds at least "
                 f"{_percent(min(spread.norm_share[l] for l in big))} of ‖H‖² at "
                 f"{_spans(sorted(big))}.")
    return text + " The per-token median shows the rest."
