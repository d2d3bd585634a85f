"""The plots' tabs, in their order. A figure names its own tab (``Figure.tab``) and row;
the panel lays each tab out from its figures."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Tab:
    title: str
    tip: str
    even: bool = False        # its rows, and the figures of a row, share the room evenly
    by_content: bool = False  # a figure with nothing to plot leaves the room to the others


ATTENTION = Tab("Attention", "The selected head before and after the reorder, all heads "
                "at once, and the symmetry metrics per layer", even=True)
TOKENS = Tab("Tokens and norms", "Which tokens changed at the selected layer, and how large "
             "the residual stream and its branches are")
POSITIONS = Tab("Positions", "The positional encoding itself: its table, the similarity "
                "between positions and its effect against distance", by_content=True)
OUTPUTS = Tab("Outputs", "What the model predicts after the original and the reordered input")
TABS = (ATTENTION, TOKENS, POSITIONS, OUTPUTS)
