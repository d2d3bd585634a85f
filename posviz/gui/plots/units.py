"""Axis and colour-bar labels in their units, as a paper writes them.

Figures and the core name a quantity ("position", "attention weight", "bias added to
the score"); ``with_unit`` gives the label a reader of a figure needs: the quantity and
its unit, or, for a pure ratio or an index, that it is one. style.fit_label and
colorbars.set_bar_label pass every label through it, so a quantity named the same in two
figures reads the same in both. Labels not listed (token axes, "layer", "head") are
shown as they are.
"""
from __future__ import annotations

UNITS = {
    # token cells and positions
    "query": "query (token)",
    "key": "key (token)",
    "position": "position (token index)",
    "dimension": "dimension (index)",
    "Δ = key position − query position": "relative distance Δ = key − query (tokens)",
    "Δ": "relative distance Δ (tokens)",
    "pair i": "rotated pair i (index)",
    "bucket of Δ": "bucket of Δ (index)",
    # attention
    "attention weight": "attention weight (probability)",
    "difference": "difference (probability)",
    # hidden states
    "relative change (log)": "relative change (ratio, log scale)",
    "change (log)": "change (ratio, log)",
    "relative change |h′ − h| / |h|": "relative change |h′ − h| / |h| (ratio)",
    "|h′ − h| / |h|": "|h′ − h| / |h| (ratio)",
    "relative change": "relative change (ratio)",
    "mean token norm |h|": "mean token norm |h| (L2)",
    "norm |h|": "norm |h| (L2)",
    # positional encodings and their machinery
    "value": "value (dimensionless)",
    "cosine": "cosine similarity (dimensionless)",
    "bias added to the score": "bias added to the score (logits)",
    "bias": "bias added to the score (logits)",
    "score q·k / d_head": "score q·k / d_head (logits)",
    "score / d_head": "score q·k / d_head (logits)",
    "slope m_h": "slope m_h (logits per token)",
    "slope m_h (log)": "slope m_h (logits per token, log scale)",
    # experiments
    "mean absolute error (positions)": "mean absolute error (token positions)",
    "variance of the attention output": "variance of the attention output (squared units)",
}


def with_unit(label: str) -> str:
    """``label`` with its unit when UNITS knows the quantity, else ``label``."""
    return UNITS.get(label, label)
